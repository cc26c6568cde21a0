"""LangGraph's ``langgraph.pregel.remote``: :class:`RemoteGraph`, a graph that runs on a
LangGraph API server, used like a compiled graph.

    remote = RemoteGraph("agent", url="http://localhost:2024")
    remote.invoke({"messages": [...]}, {"configurable": {"thread_id": thread}})
    builder.add_node("agent", remote)      # or as a node of a local graph

It is a client of the server's HTTP API through ``langgraph_sdk`` (imported only when a
client is made from ``url=``: durable_debug itself does not need it). ``invoke`` / ``stream``
create a run on the server and read its event stream; ``get_state``, ``get_state_history``,
``update_state`` and ``get_graph`` read and write the server's thread and assistant. As a node
of a local graph, the node's config gives the remote run its thread (LangGraph's behaviour:
the same ``thread_id``, created on the server when missing) and the namespace its chunks are
streamed under when the local run streams subgraphs; an interrupt of the remote run pauses
the local task (:class:`~durable_debug.errors.GraphInterrupt`), a ``Command(graph=PARENT)``
it sends back becomes the task's command (:class:`~durable_debug.errors.ParentCommand`) and an
``error`` event raises :class:`RemoteException`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.checkpoint.names import INTERRUPT, NS_SEP
from durable_debug.graph.calls import merge_configs
from durable_debug.graph.interrupts import current_scratchpad
from durable_debug.graph.stream_parts import GraphOutput
from durable_debug.graph.types import (
    Command,
    GraphInterrupt,
    Interrupt,
    ParentCommand,
    PregelTask,
    Send,
    StateSnapshot,
    from_langgraph,
)
from durable_debug.pregel.remote_stream import (
    V3_SUPPORTED_KWARGS,
    AsyncRemoteGraphRunStream,
    RemoteGraphRunStream,
)

logger = logging.getLogger(__name__)

__all__ = ["RemoteException", "RemoteGraph"]

SDK_PACKAGE = "langgraph-sdk"
"""The distribution that provides ``langgraph_sdk`` (what to install for ``url=``)."""

LANGGRAPH_STREAM_KEY = "__pregel_stream"
"""The ``configurable`` key under which LangGraph's own engine hands a node the stream of a
run that streams subgraphs (a callable taking ``(namespace, mode, chunk)`` with a ``modes``
set): a RemoteGraph run as a node of a LangGraph graph forwards its chunks there."""

LANGGRAPH_TASK_ID_KEY = "__pregel_task_id"
"""LangGraph's ``configurable`` key of the running task's id (never sent to the server)."""

LANGGRAPH_STRICT_RESUME_KEY = "__pregel_strict_resume"
"""LangGraph's ``configurable`` key asking a resume to match interrupts strictly (never sent)."""

CHECKPOINT_MAP_KEY = "checkpoint_map"
"""The ``configurable`` key of a nested checkpoint's enclosing checkpoints, by namespace."""

_CONFIG_DROPPED = frozenset(
    {
        "checkpoint_ns",
        "checkpoint_id",
        CHECKPOINT_MAP_KEY,
        LANGGRAPH_TASK_ID_KEY,
        LANGGRAPH_STRICT_RESUME_KEY,
    }
)
"""``configurable`` keys that address the caller's own checkpoints: the remote run has its
own, so they are left out of the config sent to the server."""

_CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", CHECKPOINT_MAP_KEY)
"""The keys of the server's checkpoint object, read from and written to ``configurable``."""

DEFAULT_HISTORY_LIMIT = 10
"""How many states ``get_state_history`` asks the server for when no ``limit`` is given."""

StreamSink = Callable[[tuple[str, ...], str, Any], None]
"""Where a remote run's chunks go when the local run calling it streams subgraphs."""


class RemoteException(Exception):
    """The remote run reported an error (an ``error`` event); the message is its payload."""


def _sanitize_value(value: Any) -> Any:
    """``value`` reduced to what JSON carries: strings, numbers, booleans and UUIDs as they
    are, dicts (string keys only) and lists/tuples (as lists) with their items reduced, None
    for anything else (dropped by the caller)."""
    if isinstance(value, (str, int, float, bool, UUID)):
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and (kept := _sanitize_value(item)) is not None:
                out[key] = kept
        return out
    if isinstance(value, (list, tuple)):
        return [kept for item in value if (kept := _sanitize_value(item)) is not None]
    return None


def _import_sdk() -> Any:
    """``langgraph_sdk``, or ImportError saying which package to install."""
    try:
        import langgraph_sdk
    except ImportError as exc:
        raise ImportError(
            f"RemoteGraph(url=...) needs the {SDK_PACKAGE} package: pip install {SDK_PACKAGE}"
            " (or pass client= / sync_client= yourself)"
        ) from exc
    return langgraph_sdk


def _drawing() -> tuple[Any, Any, Any]:
    """``(Graph, Node, Edge)``: LangChain's drawable graph classes when langchain-core is
    installed (what LangGraph returns), else the engine's own."""
    try:
        drawing = importlib.import_module("langchain_core.runnables.graph")
    except ImportError:
        from durable_debug.graph import drawing as ours

        return ours.DrawableGraph, ours.Node, ours.Edge
    return drawing.Graph, drawing.Node, drawing.Edge


def _merge_tracing_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """``headers`` with LangSmith's distributed-tracing headers of the current run tree
    added (its ``baggage`` appended to one already given), or as they are outside a traced
    run. A new dict: the caller's is not changed."""
    try:
        import langsmith
    except ImportError as exc:
        raise ImportError(
            "RemoteGraph(distributed_tracing=True) needs the langsmith package: "
            "pip install langsmith"
        ) from exc
    run_tree = langsmith.get_current_run_tree()
    if run_tree is None:
        return headers
    tracing: dict[str, str] = run_tree.to_headers()
    if not headers:
        return tracing
    merged = {**headers, **tracing}
    if "baggage" in headers and "baggage" in tracing:
        merged["baggage"] = f"{headers['baggage']},{tracing['baggage']}"
    return merged


def _command_payload(command: Command[Any]) -> dict[str, Any]:
    """A :class:`Command` as the server's ``command`` field (``Send`` as ``{node, input}``)."""
    goto = command.goto
    targets = list(goto) if isinstance(goto, (list, tuple)) else [goto]
    wire = [{"node": t.node, "input": t.arg} if isinstance(t, Send) else t for t in targets]
    return {
        "graph": command.graph,
        "update": command.update,
        "resume": command.resume if command.has_resume else None,
        "goto": wire if isinstance(goto, (list, tuple)) else wire[0],
    }


def _command_from_payload(data: Mapping[str, Any]) -> Command[Any]:
    """The :class:`Command` a ``command`` event of the server describes."""
    kwargs: dict[str, Any] = {"graph": data.get("graph"), "update": data.get("update")}
    if data.get("goto") is not None:
        kwargs["goto"] = data["goto"]
    if data.get("resume") is not None:
        kwargs["resume"] = data["resume"]
    return Command(**kwargs)


def _interrupt(payload: Any) -> Interrupt[Any]:
    """An interrupt as the server sends it (its fields as a dict), or one already made."""
    return Interrupt(**payload) if isinstance(payload, dict) else payload


@dataclass
class _ParentStream:
    """The stream of the local run calling this remote graph: which modes it streams and
    where each chunk goes."""

    modes: frozenset[str]
    send: StreamSink


def _parent_stream(config: RunnableConfig | None) -> _ParentStream | None:
    """The stream of the local run a remote run is a subgraph of, when that run streams
    subgraphs: LangGraph's (handed in the config) or ours (the running task's, when
    ``config`` is a task's: it names a namespace)."""
    configurable = (config or {}).get("configurable") or {}
    handed = configurable.get(LANGGRAPH_STREAM_KEY)
    if handed is not None:

        def send(ns: tuple[str, ...], mode: str, data: Any) -> None:
            handed((ns, mode, data))

        return _ParentStream(frozenset(handed.modes), send)
    if not configurable.get("checkpoint_ns"):
        return None
    pad = current_scratchpad()
    sink = pad.nesting.stream if pad is not None and pad.nesting is not None else None
    if sink is None:
        return None
    return _ParentStream(sink.modes, sink.send)


class _Run:
    """One ``stream`` / ``astream`` call: the request sent to the server, then each event
    it answers turned into what the caller sees (sync and async share it)."""

    def __init__(
        self,
        graph: RemoteGraph,
        input: Any,
        config: RunnableConfig | None,
        *,
        context: Any,
        stream_mode: str | Sequence[str] | None,
        interrupt_before: Any,
        interrupt_after: Any,
        subgraphs: bool,
        headers: dict[str, str] | None,
        params: Any,
        version: str,
        kwargs: dict[str, Any],
    ) -> None:
        if version not in ("v1", "v2"):
            raise ValueError(f"RemoteGraph.stream: unknown version {version!r}; use 'v1' or 'v2'")
        self.subgraphs = subgraphs
        self.version = version
        self.parent = _parent_stream(config)
        self.modes, self.requested, self.single = graph._stream_modes(stream_mode, self.parent)
        caller_ns = ((config or {}).get("configurable") or {}).get("checkpoint_ns")
        self.caller_ns: tuple[str, ...] = tuple(caller_ns.split(NS_SEP)) if caller_ns else ()
        sent_config = graph._sanitize_config(merge_configs(graph.config, config))
        thread_id = (sent_config.get("configurable") or {}).pop("thread_id", None)
        command = None
        input = from_langgraph(input)
        if isinstance(input, Command):
            command, input = _command_payload(input), None
        self.request: dict[str, Any] = {
            "thread_id": thread_id,
            "assistant_id": graph.assistant_id,
            "input": input,
            "command": command,
            "config": sent_config,
            "context": context,
            "stream_mode": self.modes,
            "interrupt_before": interrupt_before,
            "interrupt_after": interrupt_after,
            "stream_subgraphs": subgraphs or self.parent is not None,
            "if_not_exists": "create",
            "headers": _merge_tracing_headers(headers) if graph.distributed_tracing else headers,
            "params": params,
            **kwargs,
        }

    def handle(self, part: Any) -> Iterator[Any]:
        """What the caller sees of one server event (nothing, or one item); raises on the
        remote run's interrupt (when called as a subgraph), parent command or error."""
        event: str = part.event
        mode, _, rest = event.partition(NS_SEP)
        ns = tuple(rest.split(NS_SEP)) if rest else ()
        data = part.data
        if mode == "command" and isinstance(data, dict) and data.get("graph") == Command.PARENT:
            raise ParentCommand(_command_from_payload(data))
        ns = self.caller_ns + ns
        if self.parent is not None and mode in self.parent.modes:
            self.parent.send(ns, mode, data)
        if mode == "updates":
            if self.caller_ns and isinstance(data, dict) and INTERRUPT in data:
                raise GraphInterrupt([_interrupt(i) for i in data[INTERRUPT]])
        elif mode == "error":
            raise RemoteException(data)
        if mode not in self.requested:
            return
        # Subgraph events asked for only because the caller's run streams subgraphs. Chat
        # messages stay: the server streams each message once, whatever its namespace.
        if not self.subgraphs and rest and mode != "messages":
            return
        if mode == "messages":
            part = part._replace(data=tuple(data))
            data = part.data
        if self.version == "v2":
            interrupts: tuple[Interrupt[Any], ...] = ()
            if mode == "values" and isinstance(data, dict):
                interrupts = tuple(_interrupt(i) for i in data.pop(INTERRUPT, ()))
            yield {"type": mode, "ns": ns, "data": data, "interrupts": interrupts}
        elif self.subgraphs:
            yield (ns, data) if self.single else (ns, mode, data)
        else:
            yield data if self.single else part


def _last_output(last: Any, version: str, seen: bool) -> Any:
    """What ``invoke`` returns: the last ``values`` chunk (a :class:`GraphOutput` for
    ``version="v2"``), or None when the server sent none."""
    if not seen:
        logger.warning("No events received from remote graph")
        return None
    if version == "v2":
        return GraphOutput(value=last["data"], interrupts=tuple(last.get("interrupts", ())))
    return last


class RemoteGraph:
    """A graph deployed on a LangGraph API server, with a compiled graph's interface
    (``invoke``, ``stream``, ``get_state``, ``update_state``, ``get_state_history``,
    ``get_graph`` and their async forms), usable as a node of a local graph.

    Give ``url`` (and ``api_key`` / ``headers``) to make the sync and async clients of
    ``langgraph_sdk``, or ``client`` / ``sync_client`` made already; the sync methods need the
    sync client and the async ones the async client. ``name`` (default: the assistant id)
    is the node's name in ``add_node(remote)``; ``distributed_tracing=True`` sends the
    current LangSmith trace's headers with each run.
    """

    assistant_id: str
    name: str

    def __init__(
        self,
        assistant_id: str,
        /,
        *,
        url: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        client: Any = None,
        sync_client: Any = None,
        config: RunnableConfig | None = None,
        name: str | None = None,
        distributed_tracing: bool = False,
    ) -> None:
        self.assistant_id = assistant_id
        self.name = assistant_id if name is None else name
        self.config = config
        self.distributed_tracing = distributed_tracing
        if url is not None and (client is None or sync_client is None):
            sdk = _import_sdk()
            if client is None:
                client = sdk.get_client(url=url, api_key=api_key, headers=headers)
            if sync_client is None:
                sync_client = sdk.get_sync_client(url=url, api_key=api_key, headers=headers)
        self.client = client
        self.sync_client = sync_client

    def __repr__(self) -> str:
        return f"RemoteGraph({self.assistant_id!r}, name={self.name!r})"

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The graph's name (a node added as ``add_node(remote)`` is named so)."""
        base = name or self.name
        return f"{base}{suffix}" if suffix else base

    # -- clients and configs -------------------------------------------------------------

    def _validate_client(self) -> Any:
        if self.client is None:
            raise ValueError(
                "Async client is not initialized: please provide `url` or `client` when "
                "initializing `RemoteGraph`."
            )
        return self.client

    def _validate_sync_client(self) -> Any:
        if self.sync_client is None:
            raise ValueError(
                "Sync client is not initialized: please provide `url` or `sync_client` when "
                "initializing `RemoteGraph`."
            )
        return self.sync_client

    def copy(self, update: dict[str, Any]) -> RemoteGraph:
        """A new RemoteGraph with the same settings, ``update``'s replacing theirs."""
        attrs = {
            "name": self.name,
            "config": self.config,
            "client": self.client,
            "sync_client": self.sync_client,
            "distributed_tracing": self.distributed_tracing,
            **update,
        }
        assistant_id = attrs.pop("assistant_id", self.assistant_id)
        return type(self)(assistant_id, **attrs)

    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> RemoteGraph:
        """A copy whose config is this one's with ``config`` (and ``kwargs``) merged over."""
        merged = merge_configs(merge_configs(self.config, config), dict(kwargs))
        return self.copy({"config": merged})

    def _sanitize_config(self, config: RunnableConfig) -> RunnableConfig:
        """The part of ``config`` the server can take: ``recursion_limit``, string ``tags``,
        and ``metadata`` / ``configurable`` reduced to JSON values, without the keys that
        address the caller's own checkpoints (``checkpoint_ns``, ``checkpoint_id``,
        ``checkpoint_map``, the task id)."""
        sanitized: dict[str, Any] = {}
        if "recursion_limit" in config:
            sanitized["recursion_limit"] = config["recursion_limit"]
        if "tags" in config:
            sanitized["tags"] = [tag for tag in config["tags"] if isinstance(tag, str)]
        if "metadata" in config:
            sanitized["metadata"] = {
                key: kept
                for key, value in config["metadata"].items()
                if isinstance(key, str) and (kept := _sanitize_value(value)) is not None
            }
        if "configurable" in config:
            sanitized["configurable"] = {
                key: kept
                for key, value in config["configurable"].items()
                if isinstance(key, str)
                and key not in _CONFIG_DROPPED
                and (kept := _sanitize_value(value)) is not None
            }
        return sanitized

    @staticmethod
    def _thread_id(config: RunnableConfig, method: str) -> Any:
        configurable = config.get("configurable") or {}
        if "thread_id" not in configurable:
            raise ValueError(
                f"RemoteGraph.{method} needs a thread: config={{'configurable': "
                "{'thread_id': ...}}"
            )
        return configurable["thread_id"]

    @staticmethod
    def _get_checkpoint(config: RunnableConfig | None) -> dict[str, Any] | None:
        """The server's checkpoint object for ``config`` (None when it names none)."""
        if config is None:
            return None
        configurable = config.get("configurable") or {}
        checkpoint = {k: configurable[k] for k in _CHECKPOINT_KEYS if k in configurable}
        return checkpoint or None

    @staticmethod
    def _get_config(checkpoint: Mapping[str, Any]) -> RunnableConfig:
        """The config addressing a checkpoint the server names."""
        return {
            "configurable": {
                "thread_id": checkpoint["thread_id"],
                "checkpoint_ns": checkpoint["checkpoint_ns"],
                "checkpoint_id": checkpoint["checkpoint_id"],
                CHECKPOINT_MAP_KEY: checkpoint.get(CHECKPOINT_MAP_KEY, {}),
            }
        }

    # -- drawing -------------------------------------------------------------------------

    def _drawable(self, graph: Mapping[str, Any]) -> Any:
        drawable, node_type, edge_type = _drawing()
        nodes = {}
        for node in graph["nodes"]:
            node_id = str(node["id"])
            data = node.get("data", {})
            name = node.get("name")
            if name is None:
                name = data.get("name", node_id) if isinstance(data, dict) else node_id
            nodes[node_id] = node_type(
                id=node_id, name=name, data=data, metadata=node.get("metadata")
            )
        edges = [edge_type(**edge) for edge in graph["edges"]]
        return drawable(nodes=nodes, edges=edges)

    def get_graph(
        self,
        config: RunnableConfig | None = None,
        *,
        xray: int | bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Any:
        """The assistant's graph as the server draws it (``GET
        /assistants/{assistant_id}/graph``; ``xray`` includes subgraphs, to that depth when
        an int). ``config`` is not used."""
        graph = self._validate_sync_client().assistants.get_graph(
            assistant_id=self.assistant_id, xray=xray, headers=headers, params=params
        )
        return self._drawable(graph)

    async def aget_graph(
        self,
        config: RunnableConfig | None = None,
        *,
        xray: int | bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Any:
        """Async :meth:`get_graph`."""
        graph = await self._validate_client().assistants.get_graph(
            assistant_id=self.assistant_id, xray=xray, headers=headers, params=params
        )
        return self._drawable(graph)

    # -- state ---------------------------------------------------------------------------

    def _create_state_snapshot(self, state: Mapping[str, Any]) -> StateSnapshot:
        """A :class:`StateSnapshot` of a thread state the server sent (its tasks' errors as
        exceptions, a task's subgraph state as a snapshot or the config of its checkpoint)."""
        tasks = []
        for task in state["tasks"]:
            if task.get("state"):
                sub: Any = self._create_state_snapshot(task["state"])
            elif task.get("checkpoint"):
                sub = {"configurable": task["checkpoint"]}
            else:
                sub = None
            error = task.get("error")
            tasks.append(
                PregelTask(
                    id=task["id"],
                    name=task["name"],
                    path=(),
                    error=Exception(error) if error else None,  # type: ignore[arg-type]  # LangGraph gives the remote error as an exception
                    interrupts=tuple(_interrupt(i) for i in task["interrupts"]),
                    state=sub,
                    result=task.get("result"),
                )
            )
        parent = state.get("parent_checkpoint")
        return StateSnapshot(
            values=state["values"],
            next=tuple(state["next"] or ()),
            config=self._get_config(state["checkpoint"]),
            metadata=dict(state["metadata"] or {}),  # type: ignore[arg-type]  # the server's metadata, as it sent it
            created_at=state["created_at"],
            parent_config=self._get_config(parent) if parent else None,
            tasks=tuple(tasks),
            interrupts=tuple(i for task in tasks for i in task.interrupts),
        )

    def get_state(
        self,
        config: RunnableConfig,
        *,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> StateSnapshot:
        """The thread's state at the checkpoint ``config`` names (its latest when none)."""
        merged = merge_configs(self.config, config)
        thread_id = self._thread_id(merged, "get_state")
        state = self._validate_sync_client().threads.get_state(
            thread_id=thread_id,
            checkpoint=self._get_checkpoint(merged),
            subgraphs=subgraphs,
            headers=headers,
            params=params,
        )
        return self._create_state_snapshot(state)

    async def aget_state(
        self,
        config: RunnableConfig,
        *,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> StateSnapshot:
        """Async :meth:`get_state`."""
        merged = merge_configs(self.config, config)
        thread_id = self._thread_id(merged, "aget_state")
        state = await self._validate_client().threads.get_state(
            thread_id=thread_id,
            checkpoint=self._get_checkpoint(merged),
            subgraphs=subgraphs,
            headers=headers,
            params=params,
        )
        return self._create_state_snapshot(state)

    def _history_request(
        self,
        config: RunnableConfig,
        method: str,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
        headers: dict[str, str] | None,
        params: Any,
    ) -> dict[str, Any]:
        merged = merge_configs(self.config, config)
        return {
            "thread_id": self._thread_id(merged, method),
            "limit": limit or DEFAULT_HISTORY_LIMIT,
            "before": self._get_checkpoint(before),
            "metadata": filter,
            "checkpoint": self._get_checkpoint(merged),
            "headers": headers,
            "params": params,
        }

    def get_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's states, newest first (``limit``: at most that many, 10 by default;
        ``filter``: metadata to match; ``before``: older than that checkpoint)."""
        request = self._history_request(
            config, "get_state_history", filter, before, limit, headers, params
        )
        for state in self._validate_sync_client().threads.get_history(**request):
            yield self._create_state_snapshot(state)

    async def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Async :meth:`get_state_history`."""
        request = self._history_request(
            config, "aget_state_history", filter, before, limit, headers, params
        )
        for state in await self._validate_client().threads.get_history(**request):
            yield self._create_state_snapshot(state)

    def bulk_update_state(self, config: RunnableConfig, updates: Any) -> RunnableConfig:
        """Not supported by the server's API: raises NotImplementedError (as LangGraph)."""
        raise NotImplementedError("RemoteGraph.bulk_update_state is not supported")

    async def abulk_update_state(self, config: RunnableConfig, updates: Any) -> RunnableConfig:
        """Not supported by the server's API: raises NotImplementedError (as LangGraph)."""
        raise NotImplementedError("RemoteGraph.abulk_update_state is not supported")

    def update_state(
        self,
        config: RunnableConfig,
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> RunnableConfig:
        """Write ``values`` to the thread as if ``as_node`` had returned them; the config of
        the checkpoint the server made."""
        merged = merge_configs(self.config, config)
        thread_id = self._thread_id(merged, "update_state")
        response = self._validate_sync_client().threads.update_state(
            thread_id=thread_id,
            values=values,
            as_node=as_node,
            checkpoint=self._get_checkpoint(merged),
            headers=headers,
            params=params,
        )
        return self._get_config(response["checkpoint"])

    async def aupdate_state(
        self,
        config: RunnableConfig,
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        params: Any = None,
    ) -> RunnableConfig:
        """Async :meth:`update_state`."""
        merged = merge_configs(self.config, config)
        thread_id = self._thread_id(merged, "aupdate_state")
        response = await self._validate_client().threads.update_state(
            thread_id=thread_id,
            values=values,
            as_node=as_node,
            checkpoint=self._get_checkpoint(merged),
            headers=headers,
            params=params,
        )
        return self._get_config(response["checkpoint"])

    # -- runs ----------------------------------------------------------------------------

    @staticmethod
    def _stream_modes(
        stream_mode: str | Sequence[str] | None,
        parent: _ParentStream | None,
        default: str = "updates",
    ) -> tuple[list[str], list[str], bool]:
        """``(modes asked of the server, modes the caller asked for, whether the caller
        asked for one mode as a string)``. The server is also asked for the modes the
        caller's run streams (to forward them) and always for ``updates`` (where it reports
        interrupts); ``messages`` is asked as ``messages-tuple``, ``events`` not at all."""
        single = True
        if not stream_mode:
            modes = [default]
        elif isinstance(stream_mode, str):
            modes = [stream_mode]
        else:
            single = False
            modes = list(stream_mode)
        requested = list(modes)
        if parent is not None:  # each once (LangGraph's client may ask for one twice)
            modes.extend(m for m in sorted(parent.modes) if m not in modes)
        if "messages" in modes:
            modes.remove("messages")
            modes.append("messages-tuple")
        if "messages-tuple" in requested:
            requested.remove("messages-tuple")
            requested.append("messages")
        if "updates" not in modes:
            modes.append("updates")
        if "events" in modes:
            modes.remove("events")
        return modes, requested, single

    def stream(
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: str | Sequence[str] | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Create a run on the server (on the config's thread, made if missing; else a
        thread-less run) and yield its chunks in the shapes a compiled graph's ``stream``
        gives (``stream_mode`` default ``"updates"``; ``subgraphs``; ``version="v2"``
        parts). ``input`` may be a :class:`Command`; other keywords go to the SDK's
        ``runs.stream``."""
        run = _Run(
            self,
            input,
            config,
            context=context,
            stream_mode=stream_mode,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            subgraphs=subgraphs,
            headers=headers,
            params=params,
            version=version,
            kwargs=kwargs,
        )
        for part in self._validate_sync_client().runs.stream(**run.request):
            yield from run.handle(part)

    async def astream(
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: str | Sequence[str] | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        subgraphs: bool = False,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        run = _Run(
            self,
            input,
            config,
            context=context,
            stream_mode=stream_mode,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            subgraphs=subgraphs,
            headers=headers,
            params=params,
            version=version,
            kwargs=kwargs,
        )
        async for part in self._validate_client().runs.stream(**run.request):
            for item in run.handle(part):
                yield item

    def invoke(
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any:
        """Run on the server to the end and return the last state it streamed (a
        :class:`GraphOutput` with ``version="v2"``; None, with a warning logged, when the
        server streamed none)."""
        last: Any = None
        seen = False
        for chunk in self.stream(
            input,
            config,
            context=context,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            headers=headers,
            stream_mode="values",
            params=params,
            version=version,
            **kwargs,
        ):
            last, seen = chunk, True
        return _last_output(last, version, seen)

    async def ainvoke(
        self,
        input: dict[str, Any] | Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        headers: dict[str, str] | None = None,
        params: Any = None,
        version: Literal["v1", "v2"] = "v1",
        **kwargs: Any,
    ) -> Any:
        """Async :meth:`invoke`."""
        last: Any = None
        seen = False
        async for chunk in self.astream(
            input,
            config,
            context=context,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            headers=headers,
            stream_mode="values",
            params=params,
            version=version,
            **kwargs,
        ):
            last, seen = chunk, True
        return _last_output(last, version, seen)

    # -- v3 event streams ----------------------------------------------------------------

    def _reject_v3_unsupported(
        self,
        *,
        control: Any,
        transformers: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        extra_kwargs: Mapping[str, Any],
    ) -> None:
        """Raise NotImplementedError naming the first argument a v3 event stream of a
        remote graph cannot take."""
        given = (
            ("control", control),
            ("transformers", transformers),
            ("interrupt_before", interrupt_before),
            ("interrupt_after", interrupt_after),
        )
        for name, value in given:
            if value:
                raise NotImplementedError(
                    f"RemoteGraph.stream_events(version='v3') does not support `{name}=`."
                )
        unknown = set(extra_kwargs) - V3_SUPPORTED_KWARGS
        if unknown:
            raise NotImplementedError(
                "RemoteGraph.stream_events(version='v3') does not support the following "
                f"kwargs: {sorted(unknown)!r}. Supported: {sorted(V3_SUPPORTED_KWARGS)!r}."
            )

    def _v3_request(
        self, config: RunnableConfig | None, headers: dict[str, str] | None
    ) -> tuple[RunnableConfig, dict[str, Any]]:
        """The config sent with a v3 run and the arguments of the SDK's ``threads.stream``."""
        sanitized = self._sanitize_config(merge_configs(self.config, config))
        thread_id = (sanitized.get("configurable") or {}).pop("thread_id", None)
        if self.distributed_tracing:
            headers = _merge_tracing_headers(headers)
        return sanitized, {
            "thread_id": thread_id,
            "assistant_id": self.assistant_id,
            "headers": headers,
        }

    def stream_events(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: Literal["v1", "v2", "v3"] = "v2",
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        control: Any = None,
        transformers: Sequence[Any] | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> RemoteGraphRunStream:
        """``version="v3"``: the server's v3 event stream of a new run, as a context manager
        (``with remote.stream_events(x, version="v3") as run: for snap in run.values``);
        only ``metadata`` and ``headers`` may be passed besides the input and config. Other
        versions raise NotImplementedError, as LangGraph's RemoteGraph does."""
        if version != "v3":
            raise NotImplementedError(
                f"stream_events(version={version!r}) is not supported. Use astream_events() "
                "for v1/v2, or stream_events(version='v3') on a supported subclass."
            )
        self._reject_v3_unsupported(
            control=control,
            transformers=transformers,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            extra_kwargs=kwargs,
        )
        sync_client = self._validate_sync_client()
        sanitized, request = self._v3_request(config, headers)
        return RemoteGraphRunStream(
            sync_client=sync_client,
            sdk_thread=sync_client.threads.stream(**request),
            input=input,
            config=sanitized,
            metadata=kwargs.get("metadata"),
        )

    async def astream_events(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: Literal["v1", "v2", "v3"] = "v2",
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        control: Any = None,
        transformers: Sequence[Any] | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> AsyncRemoteGraphRunStream:
        """Async :meth:`stream_events`: ``async with await remote.astream_events(x,
        version="v3") as run``. ``v1`` / ``v2`` raise NotImplementedError (use
        :meth:`astream`), as LangGraph's RemoteGraph does."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.astream_events(version={version!r}) is not implemented; use "
                "astream() for v1/v2 streaming or version='v3'."
            )
        self._reject_v3_unsupported(
            control=control,
            transformers=transformers,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            extra_kwargs=kwargs,
        )
        client = self._validate_client()
        sanitized, request = self._v3_request(config, headers)
        return AsyncRemoteGraphRunStream(
            client=client,
            sdk_thread=client.threads.stream(**request),
            input=input,
            config=sanitized,
            metadata=kwargs.get("metadata"),
        )
