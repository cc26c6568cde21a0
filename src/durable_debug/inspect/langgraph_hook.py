"""LangGraph's side of the execution hook: its callbacks turned into durable_debug TaskEvents.

LangGraph has no task observer like ``durable_debug.graph.hooks``, but it starts a callback run
for every task it executes, tagged ``graph:step:N`` and carrying ``langgraph_node`` and the
task's namespace ``node:task_id`` in its metadata (and ``thread_id``, copied from the config).
A task restored from saved writes is not executed, so it starts no run, as in durable_debug.

    remove = add_langgraph_observer(events.append)   # same TaskEvent as the engine's hook
    await lg_graph.ainvoke(inputs, config)
    remove()

The handler reaches every LangGraph run through ``langchain_core``'s configure hook, registered
once per process the first time an observer is added; with no observer it returns at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any
from uuid import UUID

from durable_debug.checkpoint.names import NS_END, NS_SEP, START
from durable_debug.graph.hooks import TaskEvent, TaskObserver
from durable_debug.inspect.process_callbacks import ProcessCallbacks

__all__ = ["add_langgraph_observer", "langgraph_available"]

logger = logging.getLogger(__name__)

_observers: ProcessCallbacks[TaskObserver] = ProcessCallbacks(
    "durable_debug_task_observer", lambda: _make_handler()
)


def langgraph_available() -> bool:
    """True when ``langchain_core`` (which LangGraph runs its callbacks through) is installed."""
    try:
        import langchain_core.callbacks  # noqa: F401
    except ImportError:
        return False
    return True


def add_langgraph_observer(observer: TaskObserver) -> Callable[[], None]:
    """Call ``observer`` with a :class:`TaskEvent` for every LangGraph task execution.

    Returns the function that removes it. Does nothing (and returns a no-op remover) when
    LangGraph is not installed.
    """
    if not langgraph_available():
        return lambda: None
    return _observers.add(observer)


def _make_handler() -> Any:
    from langchain_core.callbacks import BaseCallbackHandler

    class TaskCallbackHandler(BaseCallbackHandler):
        """Reports LangGraph task runs to durable_debug's task observers."""

        run_inline = True  # keep events in order, on the graph's own thread or loop

        def __init__(self) -> None:
            super().__init__()
            self._running: dict[UUID, TaskEvent] = {}

        def on_chain_start(
            self,
            serialized: Any,
            inputs: Any,
            *,
            run_id: UUID,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            if not _observers.listeners:
                return
            event = _task_event(tags, metadata, kwargs.get("name"))
            if event is not None:
                self._running[run_id] = event
                _notify(event)

        def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
            self._finish(run_id, "ok", None)

        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            kinds = {type(error).__name__, *(cls.__name__ for cls in type(error).__mro__)}
            if "GraphBubbleUp" in kinds or "GraphInterrupt" in kinds:
                self._finish(run_id, "interrupt", None)
            elif isinstance(error, asyncio.CancelledError):
                self._finish(run_id, "cancelled", None)
            else:
                self._finish(run_id, "error", repr(error))

        def _finish(self, run_id: UUID, outcome: Any, error: str | None) -> None:
            start = self._running.pop(run_id, None)
            if start is not None and _observers.listeners:
                _notify(start._replace(kind="finish", outcome=outcome, error=error))

    return TaskCallbackHandler()


def _task_event(
    tags: list[str] | None, metadata: dict[str, Any] | None, name: Any
) -> TaskEvent | None:
    """The start event of a task run, or None for any other run (graph, nested runnable)."""
    meta = metadata or {}
    node = meta.get("langgraph_node")
    step = meta.get("langgraph_step")
    callers = _callers(meta.get("langgraph_path"))
    if node is None or name != node:
        return None
    if not callers and f"graph:step:{step}" not in (tags or ()):
        return None
    if node == START:
        # LangGraph runs the input as a task when START has conditional edges (a Send
        # fan-out); it is the graph's entry, not a user's node, and durable_debug's engine
        # does not report it either.
        return None
    task_ns = str(meta.get("langgraph_checkpoint_ns") or "")
    parent_ns, _, own = task_ns.rpartition(NS_SEP)
    task_id = own.rpartition(NS_END)[2]
    for _ in range(callers):  # a @task call's namespace is under its callers': theirs
        parent_ns = parent_ns.rpartition(NS_SEP)[0]
    thread_id = meta.get("thread_id")
    return TaskEvent(
        kind="start",
        thread_id=None if thread_id is None else str(thread_id),
        checkpoint_ns=parent_ns,
        checkpoint_id=str(meta.get("checkpoint_id") or ""),
        step=int(step) if isinstance(step, int) else -1,
        node=str(node),
        task_id=task_id,
        outcome=None,
        error=None,
    )


def _callers(path: Any) -> int:
    """How many tasks called the task at ``path``: 0 for a node's task or a Send, one per
    level for a functional-API ``@task`` call (``(PUSH, caller's path, index, ...)``)."""
    count = 0
    while isinstance(path, tuple) and len(path) > 2 and isinstance(path[1], tuple):
        count += 1
        path = path[1]
    return count


def _notify(event: TaskEvent) -> None:
    for observer in list(_observers.listeners):
        try:
            observer(event)
        except Exception:
            logger.exception("task observer %r failed on %s", observer, event)
