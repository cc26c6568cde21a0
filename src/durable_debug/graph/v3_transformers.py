"""The built-in transformers of v3 streaming (public at ``langgraph.stream.transformers``).

Every run registers :class:`ValuesTransformer`, :class:`MessagesTransformer`,
:class:`LifecycleTransformer` and :class:`SubgraphTransformer`; the others (updates, custom,
checkpoints, debug, tasks) are registered by ``compile(transformers=[...])`` or
``stream_events(..., transformers=[...])``. Each projects one stream mode's chunks of its own
scope (the run's graph, or a subgraph handle's namespace) onto a channel named after the mode.
Lifecycle and subgraph discovery read the ``tasks`` mode: a subgraph starts with the first task
event in its namespace and ends with the result of the parent task that runs it (a namespace
segment is ``node:task_id``); ``tasks`` events themselves are then kept out of the main log.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from typing_extensions import NotRequired, TypedDict

from durable_debug.graph.types import GraphDrained, GraphInterrupt
from durable_debug.graph.v3_channel import (
    APump,
    ProtocolEvent,
    Pump,
    StreamChannel,
    StreamTransformer,
)
from durable_debug.graph.v3_mux import StreamMux
from durable_debug.graph.v3_run import (
    AsyncSubgraphRunStream,
    Handle,
    SubgraphRunStream,
    SubgraphStatus,
)

__all__ = [
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]

_log = logging.getLogger(__name__)


class _ModeProjection(StreamTransformer):
    """Projects the chunks of one stream mode from its own scope onto ``run.<mode>``."""

    _native = True
    mode: ClassVar[str]

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {self.mode: self._log}

    def _own(self, event: ProtocolEvent) -> bool:
        return event["method"] == self.mode and event["params"]["namespace"] == self._scope_list

    def process(self, event: ProtocolEvent) -> bool:
        if self._own(event):
            self._log.push(event["params"]["data"])
        return True


class ValuesTransformer(_ModeProjection):
    """``run.values``: the state after each step of the run's own graph (a subgraph's
    states are on its handle)."""

    mode = "values"
    required_stream_modes = ("values",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._latest: Any = None
        self._interrupted = False
        self._interrupts: list[Any] = []

    @property
    def error(self) -> BaseException | None:
        """The error the run ended with, or None."""
        return self._log._error

    def process(self, event: ProtocolEvent) -> bool:
        if self._own(event):
            self._latest = event["params"]["data"]
            interrupts = event["params"].get("interrupts", ())
            if interrupts:
                self._interrupted = True
                self._interrupts.extend(interrupts)
            self._log.push(event["params"]["data"])
        return True


class CustomTransformer(_ModeProjection):
    """``run.custom``: what the graph's nodes passed to their stream writer."""

    mode = "custom"
    required_stream_modes = ("custom",)


class UpdatesTransformer(_ModeProjection):
    """``run.updates``: ``{node: update}`` for each task as its step is saved."""

    mode = "updates"
    required_stream_modes = ("updates",)


class CheckpointsTransformer(_ModeProjection):
    """``run.checkpoints``: each checkpoint saved (only with a checkpointer)."""

    mode = "checkpoints"
    required_stream_modes = ("checkpoints",)


class DebugTransformer(_ModeProjection):
    """``run.debug``: the ``debug`` mode's events (checkpoints, tasks and their results)."""

    mode = "debug"
    required_stream_modes = ("debug",)


class TasksTransformer(_ModeProjection):
    """``run.tasks``: each task's start and result payloads."""

    mode = "tasks"
    required_stream_modes = ("tasks",)


class MessagesTransformer(StreamTransformer):
    """``run.messages``: one LangChain ``ChatModelStream`` (``AsyncChatModelStream`` on the
    async lane) per chat model call of the run's own graph and per whole AI message a node
    returns. Model calls stream their content-block events (``message-start`` … ``message-
    finish``, routed by the call's run id); a returned message is replayed as such events.
    Token chunks of the ``messages`` mode and tool messages are not projected."""

    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._by_run: dict[str, Any] = {}
        self._ignored_runs: set[str] = set()
        self._pump_fn: Pump | None = None
        self._apump_fn: APump | None = None
        self._scope_list = list(scope)

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _bind_pump(self, pump: Pump) -> None:
        self._pump_fn = pump

    def _bind_apump(self, pump: APump) -> None:
        self._apump_fn = pump

    def _make_stream(self, *, node: str | None, message_id: str | None) -> Any:
        from langchain_core.language_models.chat_model_stream import (
            AsyncChatModelStream,
            ChatModelStream,
        )

        if self._apump_fn is not None:
            stream: Any = AsyncChatModelStream(namespace=[], node=node, message_id=message_id)
            stream.set_arequest_more(self._apump_fn)
        elif self._pump_fn is not None:
            stream = ChatModelStream(namespace=[], node=node, message_id=message_id)
            stream.set_request_more(self._pump_fn)
        else:
            stream = AsyncChatModelStream(namespace=[], node=node, message_id=message_id)
        return stream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "messages" or event["params"]["namespace"] != self._scope_list:
            return True
        from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage

        payload, metadata = event["params"]["data"]
        node = metadata.get("langgraph_node") if metadata else None
        run_id = str(metadata.get("run_id", "")) if metadata else ""
        if isinstance(payload, dict) and "event" in payload:
            self._route(payload, run_id, node)
        elif isinstance(payload, BaseMessage) and not isinstance(
            payload, (AIMessageChunk, ToolMessage)
        ):
            self._replay(payload, node)
        return True

    def _route(self, payload: dict[str, Any], run_id: str, node: str | None) -> None:
        kind = payload.get("event")
        if kind == "message-start":
            if payload.get("role") == "tool":
                self._ignored_runs.add(run_id)
                return
            message_id = payload.get("message_id")
            stream = self._make_stream(
                node=node, message_id=None if message_id is None else str(message_id)
            )
            self._by_run[run_id] = stream
            self._log.push(stream)
            stream.dispatch(payload)
        elif run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
        elif run_id in self._by_run:
            self._by_run[run_id].dispatch(payload)
            if kind == "message-finish":
                del self._by_run[run_id]

    def _replay(self, message: Any, node: str | None) -> None:
        from langchain_core.language_models._compat_bridge import message_to_events

        stream = self._make_stream(node=node, message_id=message.id)
        for step in message_to_events(message, message_id=message.id):
            stream.dispatch(step)
        self._log.push(stream)

    def finalize(self) -> None:
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        for stream in list(self._by_run.values()):
            stream.fail(err)
        self._by_run.clear()
        self._ignored_runs.clear()


class LifecyclePayload(TypedDict, total=False):
    """An item of ``run.lifecycle`` (and of its ``lifecycle`` events): a subgraph's namespace
    and what happened to it."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: NotRequired[str]
    trigger_call_id: NotRequired[str]
    cause: NotRequired[dict[str, str]]
    error: NotRequired[str]


def _status_of_error(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    if isinstance(err, GraphDrained):
        return "drained", None
    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def _status_of_result(result: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    if result.get("interrupts"):
        return "interrupted", None
    if result.get("error"):
        return "failed", str(result["error"])
    return "completed", None


class _SubgraphTracker(StreamTransformer):
    """Finds subgraphs from ``tasks`` events (see the module) and reports them to
    ``_on_started`` / ``_on_terminal``; keeps ``tasks`` events out of the main log. A subgraph
    started by an agent's tool call (its task carries ``lc_agent_name`` metadata) is named
    after the agent, with the tool call as ``cause``."""

    required_stream_modes = ("tasks",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._seen: set[tuple[str, ...]] = set()
        self._open: dict[tuple[str, ...], str] = {}
        self._lc_by_ns: dict[tuple[str, ...], str | None] = {}
        self._pending_tool_calls: dict[str, str] = {}
        self._pending_cause: dict[str, str] | None = None

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        raise NotImplementedError

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        raise NotImplementedError

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        ns = tuple(event["params"]["namespace"])
        data = event["params"]["data"]
        if "result" in data:
            for child, status, error in self._closed_by(ns, data):
                self._on_terminal(child, status, error)
        else:
            self._task_started(ns, data)
        return False

    def _task_started(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        metadata = data.get("metadata") or {}
        if ns not in self._lc_by_ns:
            self._lc_by_ns[ns] = metadata.get("lc_agent_name")
        self._note_tool_call(data)
        if not self._should_track(ns) or ns in self._seen:
            return
        self._seen.add(ns)
        name, sep, task_id = ns[-1].partition(":")
        trigger = task_id if sep else None
        agent = metadata.get("lc_agent_name")
        cause = None
        if agent is not None and trigger is not None:
            call_id = self._pending_tool_calls.get(trigger)
            if call_id:
                cause = {"type": "toolCall", "tool_call_id": str(call_id)}
        self._pending_cause = cause
        self._on_started(ns, agent if agent is not None else (name or None), trigger)
        if trigger is not None:
            self._open[ns] = trigger

    def _note_tool_call(self, data: dict[str, Any]) -> None:
        """Remember the tool call a task runs (its input is a tool call with context, or a
        list of tool calls), by task id: a subgraph under that task was started by it."""
        task_id = data.get("id")
        if not isinstance(task_id, str):
            return
        payload = data.get("input")
        call_id = None
        if isinstance(payload, dict) and isinstance(payload.get("tool_call"), dict):
            call_id = payload["tool_call"].get("id")
        elif isinstance(payload, list):
            call_id = next(
                (c["id"] for c in payload if isinstance(c, dict) and isinstance(c.get("id"), str)),
                None,
            )
        if isinstance(call_id, str):
            self._pending_tool_calls[task_id] = call_id

    def _closed_by(
        self, ns: tuple[str, ...], result: dict[str, Any]
    ) -> list[tuple[tuple[str, ...], SubgraphStatus, str | None]]:
        task_id = result.get("id")
        if not task_id:
            return []
        closed = []
        for child, parent_task in list(self._open.items()):
            if child[:-1] == ns and parent_task == task_id:
                closed.append((child, *_status_of_result(result)))
                del self._open[child]
        return closed

    def finalize(self) -> None:
        for ns in list(self._open):
            self._on_terminal(ns, "completed", None)
        self._open.clear()

    def fail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        for ns in list(self._open):
            self._on_terminal(ns, status, error)
        self._open.clear()


class LifecycleTransformer(_SubgraphTracker):
    """``run.lifecycle`` (and ``lifecycle`` events in the main log): a
    :class:`LifecyclePayload` when a subgraph at any depth below the scope starts and when it
    ends (``completed`` / ``failed`` / ``interrupted`` / ``drained``)."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) > depth and ns[:depth] == self.scope

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        if trigger_call_id is None:
            return  # no task to end it: only finalize / fail would
        payload: LifecyclePayload = {"event": "started", "namespace": list(ns)}
        if graph_name:
            payload["graph_name"] = graph_name
        payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        payload: LifecyclePayload = {"event": status, "namespace": list(ns)}
        if error is not None:
            payload["error"] = error
        self._channel.push(payload)


class SubgraphTransformer(_SubgraphTracker):
    """``run.subgraphs``: a handle (``SubgraphRunStream`` / ``AsyncSubgraphRunStream``) per
    subgraph directly below the scope, with its own pipeline of the run's transformers; the
    events of its namespace (and deeper) are fed to it. Grandchildren are on the handle's own
    ``subgraphs``."""

    _native = True
    supports_sync = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Handle] = StreamChannel()
        self._handles: dict[tuple[str, ...], Handle] = {}
        self._mux: StreamMux | None = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) == depth + 1 and ns[:depth] == self.scope

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        if self._mux is None:
            return
        try:
            child = self._mux.make_child(ns)
        except RuntimeError:
            return
        kind = AsyncSubgraphRunStream if child.is_async else SubgraphRunStream
        handle = kind(child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    @staticmethod
    def _mark(handle: Handle, status: SubgraphStatus, error: str | None) -> bool:
        """Record the handle's end (once: False when it had ended already)."""
        if handle._seen_terminal:
            return False
        handle.status = status
        if error is not None and handle.error is None:
            handle.error = error
        handle._seen_terminal = True
        return True

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark(handle, status, error) or handle._mux._events._closed:
            return
        if status == "failed":
            handle._mux.fail(RuntimeError(error or "Subgraph failed"))
        else:
            handle._mux.close()

    async def _aon_terminal(
        self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None
    ) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark(handle, status, error) or handle._mux._events._closed:
            return
        if status == "failed":
            await handle._mux.afail(RuntimeError(error or "Subgraph failed"))
        else:
            await handle._mux.aclose()

    def _handle_of(self, event: ProtocolEvent) -> Handle | None:
        ns = tuple(event["params"]["namespace"])
        depth = len(self.scope)
        if len(ns) <= depth:
            return None
        handle = self._handles.get(ns[: depth + 1])
        if handle is None or handle._mux._events._closed:
            return None
        return handle

    def process(self, event: ProtocolEvent) -> bool:
        keep = super().process(event)
        handle = self._handle_of(event)
        if handle is not None:
            handle._observe_event(event)
            handle._mux.push(event)
        return keep

    async def aprocess(self, event: ProtocolEvent) -> bool:
        keep = True
        if event["method"] == "tasks":
            ns = tuple(event["params"]["namespace"])
            data = event["params"]["data"]
            if "result" in data:
                for child, status, error in self._closed_by(ns, data):
                    await self._aon_terminal(child, status, error)
            else:
                self._task_started(ns, data)
            keep = False
        handle = self._handle_of(event)
        if handle is not None:
            handle._observe_event(event)
            await handle._mux.apush(event)
        return keep

    def finalize(self) -> None:
        first: BaseException | None = None
        for ns in list(self._open):
            try:
                self._on_terminal(ns, "completed", None)
            except BaseException as error:
                first = first or error
        self._open.clear()
        for handle in self._handles.values():
            if self._mark(handle, "completed", None) and not handle._mux._events._closed:
                try:
                    handle._mux.close()
                except BaseException as error:
                    first = first or error
        if first is not None:
            raise first

    async def afinalize(self) -> None:
        first: BaseException | None = None
        for ns in list(self._open):
            try:
                await self._aon_terminal(ns, "completed", None)
            except BaseException as error:
                first = first or error
        self._open.clear()
        for handle in self._handles.values():
            if self._mark(handle, "completed", None) and not handle._mux._events._closed:
                try:
                    await handle._mux.aclose()
                except BaseException as error:
                    first = first or error
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark(handle, status, error)
            if not handle._mux._events._closed:
                try:
                    handle._mux.fail(err)
                except Exception:
                    _log.warning(
                        "Error failing subgraph pipeline at %s", handle.path, exc_info=True
                    )

    async def afail(self, err: BaseException) -> None:
        status, error = _status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark(handle, status, error)
            if not handle._mux._events._closed:
                try:
                    await handle._mux.afail(err)
                except Exception:
                    _log.warning(
                        "Error failing subgraph pipeline at %s", handle.path, exc_info=True
                    )
