"""Graph lifecycle callbacks: ``on_interrupt`` when a run pauses, ``on_resume`` when it resumes.

    class Watch(GraphCallbackHandler):
        def on_interrupt(self, event: GraphInterruptEvent) -> None:
            print("paused at", event.checkpoint_id, event.interrupts)

    graph.invoke(inputs, {"configurable": {"thread_id": "1"}, "callbacks": [Watch()]})

Only handlers deriving from :class:`GraphCallbackHandler` in a run's ``callbacks`` (a list, one
handler, or a LangChain callback manager) hear these events; other LangChain handlers do not.
As in LangGraph 1.2: a run (or a subgraph's run) that resumes from a saved checkpoint (input
``None`` or a ``Command``) reports :class:`GraphResumeEvent` before its first step; the graph
run that stops on interrupts (its nodes' ``interrupt()`` calls, or ``interrupt_before`` /
``interrupt_after``) reports :class:`GraphInterruptEvent` before its callback run ends. A
handler that raises is logged and skipped, unless its ``raise_error`` is true: the run then
fails with that error (LangChain's rule for every handler).

LangChain is imported with this module: the engine imports it only when a run has callbacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.callbacks.manager import ahandle_event, handle_event

from durable_debug.checkpoint.names import NS_SEP
from durable_debug.graph.types import Interrupt

__all__ = [
    "GraphCallbackHandler",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
    "report_lifecycle",
]

GraphLifecycleStatus: TypeAlias = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]
"""Where the run stood when a lifecycle event was taken (LangGraph's loop statuses)."""


@dataclass(frozen=True)
class GraphInterruptEvent:
    """A run paused on interrupts."""

    run_id: UUID | None
    """The graph's callback run id (None when the run has none)."""
    status: GraphLifecycleStatus
    """``"pending"`` for interrupts raised by nodes, ``"interrupt_before"`` /
    ``"interrupt_after"`` for a static breakpoint."""
    checkpoint_id: str
    """The checkpoint the run paused on."""
    checkpoint_ns: tuple[str, ...]
    """The graph's namespace, one part per level (``()`` for the graph run itself)."""
    interrupts: tuple[Interrupt[Any], ...]
    """The interrupts asked (empty for a static breakpoint)."""


@dataclass(frozen=True)
class GraphResumeEvent:
    """A run resumed from a saved checkpoint."""

    run_id: UUID | None
    """The graph's callback run id (None when the run has none)."""
    status: GraphLifecycleStatus
    """``"pending"``: the run is about to run its next step."""
    checkpoint_id: str
    """The checkpoint the run resumed from."""
    checkpoint_ns: tuple[str, ...]
    """The graph's namespace, one part per level (``()`` for the graph run itself)."""


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent
"""Either lifecycle event."""


class GraphCallbackHandler(BaseCallbackHandler):
    """Base class of handlers that hear a graph run's lifecycle: pass an instance in
    ``config["callbacks"]``; override :meth:`on_interrupt` and :meth:`on_resume` (plain or
    ``async def``)."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run paused on ``event.interrupts``."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run resumed from ``event.checkpoint_id``."""


def graph_handlers(callbacks: Any) -> list[GraphCallbackHandler]:
    """The :class:`GraphCallbackHandler` instances of ``callbacks`` (a handler, a list of
    handlers, or a callback manager: its handlers); TypeError for anything else."""
    if callbacks is None:
        return []
    if isinstance(callbacks, BaseCallbackManager):
        handlers: Sequence[Any] = callbacks.handlers
    elif isinstance(callbacks, BaseCallbackHandler):
        handlers = [callbacks]
    elif isinstance(callbacks, Sequence) and not isinstance(callbacks, (str, bytes)):
        handlers = callbacks
    else:
        raise TypeError(
            f"config['callbacks'] must be a handler, a sequence of handlers or a callback "
            f"manager, not {type(callbacks).__name__}"
        )
    return [h for h in handlers if isinstance(h, GraphCallbackHandler)]


class _Dispatch(BaseCallbackManager):
    """A callback manager holding only the graph handlers, bound to a run id."""

    def __init__(self, handlers: list[GraphCallbackHandler], run_id: UUID | None) -> None:
        super().__init__(handlers=list(handlers), inheritable_handlers=list(handlers))
        self.run_id = run_id


class SyncGraphCallbackManager(_Dispatch):
    """Sends lifecycle events to graph handlers from synchronous code."""

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        """Call every handler's ``on_interrupt``."""
        handle_event(self.handlers, "on_interrupt", None, event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        """Call every handler's ``on_resume``."""
        handle_event(self.handlers, "on_resume", None, event)


class AsyncGraphCallbackManager(_Dispatch):
    """Sends lifecycle events to graph handlers from asynchronous code."""

    @property
    def is_async(self) -> bool:
        """True: this manager's methods are coroutines."""
        return True

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        """Call (or await) every handler's ``on_interrupt``."""
        await ahandle_event(self.handlers, "on_interrupt", None, event)

    async def on_resume(self, event: GraphResumeEvent) -> None:
        """Call (or await) every handler's ``on_resume``."""
        await ahandle_event(self.handlers, "on_resume", None, event)


def get_sync_graph_callback_manager_for_config(
    config: dict[str, Any], *, run_id: UUID | None = None
) -> SyncGraphCallbackManager:
    """A manager sending lifecycle events to the graph handlers of ``config["callbacks"]``."""
    return SyncGraphCallbackManager(graph_handlers(config.get("callbacks")), run_id)


def get_async_graph_callback_manager_for_config(
    config: dict[str, Any], *, run_id: UUID | None = None
) -> AsyncGraphCallbackManager:
    """Async twin of :func:`get_sync_graph_callback_manager_for_config`."""
    return AsyncGraphCallbackManager(graph_handlers(config.get("callbacks")), run_id)


async def report_lifecycle(
    config: dict[str, Any],
    graph_run: Any,
    *,
    status: str,
    checkpoint_id: str,
    checkpoint_ns: str,
    interrupts: tuple[Interrupt[Any], ...] | None = None,
) -> None:
    """Send the run's lifecycle event to its graph handlers: an interrupt when
    ``interrupts`` is given, else a resume. ``graph_run``: the run's ``callbacks.GraphRun``
    (its id is the events' ``run_id``), or None."""
    manager = get_async_graph_callback_manager_for_config(config)
    if not manager.handlers:
        return
    run_id = graph_run.run.run_id if graph_run is not None else None
    state = cast("GraphLifecycleStatus", status)
    ns = tuple(checkpoint_ns.split(NS_SEP)) if checkpoint_ns else ()
    if interrupts is None:
        await manager.on_resume(GraphResumeEvent(run_id, state, checkpoint_id, ns))
    else:
        await manager.on_interrupt(
            GraphInterruptEvent(run_id, state, checkpoint_id, ns, tuple(interrupts))
        )
