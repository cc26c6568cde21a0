"""``astream_events(version="v2")``: the chunks of one run turned into LangChain-style events.

    async for event in graph.astream_events(inputs, config, version="v2"):
        if event["event"] == "on_chat_model_stream":
            print(event["data"]["chunk"].content, end="")

:class:`GraphEvents` reads the ``values``, ``updates`` and ``debug`` (for the tasks and their
step) chunks of the run, a consumer of the same event sequence as every stream mode, and
gives, as LangGraph does: ``on_chain_start`` for the graph; per node ``on_chain_start``
(input), ``on_chain_stream`` (its output) and ``on_chain_end``; the graph's
``on_chain_stream`` with each update; the graph's ``on_chain_end`` with the final state. The
runs under a node — its conditional edges, a runnable node's steps, the chat models, tools,
prompts and runnables it calls, with their ``_stream`` events — come as ``__events__`` chunks
from the run's callback tap (``chat_stream.py``) and are placed under the node's run
(``parent_ids``: the graph's, the node's, then any run between). Every event has ``event``,
``name``, ``run_id``, ``parent_ids``, ``tags``, ``metadata`` and ``data``. :class:`RunEvents`
does that for each subgraph too (the run is streamed with ``subgraphs=True``), under the node
that runs it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.checkpoint.names import END, INTERRUPT, NS_END, NS_SEP
from durable_debug.graph.algo import PULL, PUSH
from durable_debug.graph.chat_stream import GRAPH_RUN_METADATA
from durable_debug.graph.push import CALL_STARTED
from durable_debug.graph.runner import run_metadata
from durable_debug.graph.streams import EVENTS_MODE

__all__ = ["EventFilter", "GraphEvents", "RunEvents"]


class GraphEvents:
    """Turns the chunks of one run into ``astream_events`` v2 events."""

    def __init__(
        self,
        name: str,
        config: RunnableConfig,
        *,
        parents: Sequence[str] = (),
        namespace: str = "",
        node_streams: bool = True,
        own_tags: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.run_id = str(config.get("run_id") or uuid.uuid4())
        """The graph run's id: the config's ``run_id`` when it gives one, as in LangGraph."""
        self.parents = list(parents)
        """Run ids above this graph's run: none for the graph streamed; for a subgraph, the
        runs of the graphs and the node that run it."""
        self.namespace = namespace
        """The subgraph's namespace ("" for the graph streamed)."""
        self.node_streams = node_streams
        """Whether its nodes have ``on_chain_stream`` events: not in a graph a node function
        runs with ``invoke`` (LangGraph streams only the graphs it streams)."""
        self.inherited: list[str] = list(config.get("tags") or [])
        """The run's tags, which every run under this graph's carries too."""
        self.tags: list[str] = [*own_tags, *self.inherited]
        """This graph's run's tags: its own (a subgraph's ``seq:step:1``), then the run's."""
        self.metadata: dict[str, Any] = {**GRAPH_RUN_METADATA, **run_metadata(dict(config))}
        self.nodes: dict[str, dict[str, Any]] = {}
        """Task id → run id, input, metadata and tags of the node's run."""
        self.updates: list[Any] = []
        """Updates waiting for their task's end event (the graph streams after the node)."""
        self.call_updates = 0
        """How many of :attr:`updates` are ``@task`` calls' that finished: they go out before
        the next event, or, for an entrypoint, between its ``on_chain_stream`` and its
        ``on_chain_end`` (where LangGraph's stream hands them over while it returns)."""
        self.calls: set[str] = set()
        """Task ids of ``@task`` calls: their runs are the callback runs under their caller's
        (``__events__`` chunks), not node runs of the graph."""
        self.returns_end = False
        """An entrypoint's graph: its node's output is its return value, not ``{END: v}``."""
        self.output: Any = None
        self.input: Any = None
        self.nested: dict[str, str | None] = {}
        """Run id of a nested run reported → its parent's run id."""
        self.chunk_modes: Sequence[str] | str | None = None
        """The ``stream_mode`` given to ``astream_events``: the graph's ``on_chain_stream``
        events carry those modes' chunks (``(mode, chunk)`` for a list), as LangGraph's do;
        None: its updates."""

    def _event(
        self,
        kind: str,
        name: str,
        run_id: str,
        data: dict[str, Any],
        *,
        parents: list[str],
        tags: list[str],
        metadata: dict[str, Any],
    ) -> dict[str, Any]:
        return {
            "event": kind,
            "name": name,
            "run_id": run_id,
            "parent_ids": parents,
            "tags": tags,
            "metadata": metadata,
            "data": data,
        }

    def _graph(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return self._event(
            kind,
            self.name,
            self.run_id,
            data,
            parents=self.parents,
            tags=self.tags,
            metadata=self.metadata,
        )

    def graph_start(self, input: Any) -> dict[str, Any]:
        """The graph's ``on_chain_start``."""
        self.input = input
        return self._graph("on_chain_start", {"input": input})

    def graph_end(self) -> Iterable[dict[str, Any]]:
        """Updates still waiting, then the graph's ``on_chain_end`` with the final state (and,
        for a subgraph, its input, as a nested run's end carries it)."""
        if not self.namespace:
            yield from self._flush()
            yield self._graph("on_chain_end", {"output": self.output})
            return
        yield self._graph("on_chain_end", {"output": self.output, "input": self.input})

    def _flush(self, count: int | None = None) -> Iterable[dict[str, Any]]:
        """The graph's ``on_chain_stream`` of the first ``count`` waiting updates (all)."""
        count = len(self.updates) if count is None else count
        updates, self.updates = self.updates[:count], self.updates[count:]
        self.call_updates = max(0, self.call_updates - count)
        for chunk in updates:
            yield self._graph("on_chain_stream", {"chunk": chunk})

    def on_chunk(self, mode: str, chunk: Any) -> Iterable[dict[str, Any]]:
        """The events one ``(mode, chunk)`` of the run gives."""
        chosen = self.chunk_modes
        if chosen is not None and not self.namespace:
            if mode in chosen:
                self.updates.append(chunk if isinstance(chosen, str) else (mode, chunk))
            if mode not in ("values", "debug", EVENTS_MODE):
                return
        elif mode == "updates":
            if not self.namespace:  # a subgraph's run streams no updates of its own
                self.updates.append(chunk)
            return
        if mode == "debug" and chunk["payload"].get("id") in self.calls:
            if chunk["type"] == "task_result":  # its update goes out with the next event
                self.call_updates = len(self.updates)
            return
        if mode == "debug" and chunk["type"] == "task":
            yield from self._flush()
            yield self._node_start(chunk["payload"], chunk["step"])
            return
        if mode == "debug" and chunk["type"] == "task_result":
            yield from self._node_end(chunk["payload"])
            yield from self._flush()
            return
        if mode == "debug":  # checkpoints: no event of their own
            return
        if mode == EVENTS_MODE and chunk["event"] == CALL_STARTED:
            self.calls.add(chunk["task_id"])
            return
        if mode == EVENTS_MODE:
            yield from self._flush()
            yield self._nested(chunk)
            return
        yield from self._flush()
        if mode == "values":  # the graph's output: the state, without the pending interrupts
            if isinstance(chunk, dict) and INTERRUPT in chunk:
                chunk = {k: v for k, v in chunk.items() if k != INTERRUPT}
            self.output = chunk

    def _node_start(self, task: dict[str, Any], step: int) -> dict[str, Any]:
        node = {
            "run_id": str(uuid.uuid4()),
            "input": task["input"],
            "tags": [f"graph:step:{step}", *self.inherited],
            "metadata": {
                **self.metadata,
                "langgraph_step": step,
                "langgraph_node": task["name"],
                "langgraph_triggers": tuple(task["triggers"]),
                **_path_of(task),
                "langgraph_checkpoint_ns": _joined(self.namespace, f"{task['name']}:{task['id']}"),
            },
        }
        self.nodes[task["id"]] = node
        return self._node_event("on_chain_start", task["name"], node, {"input": task["input"]})

    def _node_end(self, task: dict[str, Any]) -> Iterable[dict[str, Any]]:
        node = self.nodes.get(task["id"])
        if node is None or task["error"] is not None or task["interrupts"]:
            return
        output = task["result"]
        if self.returns_end and isinstance(output, dict) and END in output:
            output = output[END]
        if self.node_streams:
            yield self._node_event("on_chain_stream", task["name"], node, {"chunk": output})
        if self.returns_end:  # an entrypoint's calls' updates come before its end
            yield from self._flush(self.call_updates)
        yield self._node_event(
            "on_chain_end", task["name"], node, {"output": output, "input": node["input"]}
        )

    def _node_event(
        self, kind: str, name: str, node: dict[str, Any], data: dict[str, Any]
    ) -> dict[str, Any]:
        return self._event(
            kind,
            name,
            node["run_id"],
            data,
            parents=[*self.parents, self.run_id],
            tags=node["tags"],
            metadata=node["metadata"],
        )

    def _nested(self, reported: dict[str, Any]) -> dict[str, Any]:
        """An event of a chat model or tool run inside a node (see ``chat_stream.py``)."""
        run_id = reported["run_id"]
        self.nested[run_id] = reported.get("parent_run_id")
        chain: list[str] = []
        parent = reported.get("parent_run_id")
        while parent is not None and parent not in chain:
            chain.insert(0, parent)
            parent = self.nested.get(parent)
        ns = str(reported["metadata"].get("langgraph_checkpoint_ns", ""))
        node = None
        for part in reversed(ns.split(NS_SEP)):  # a call's run is under its caller's node
            node = self.nodes.get(part.rpartition(NS_END)[2])
            if node is not None:
                break
        parents = [*self.parents, self.run_id] + ([node["run_id"]] if node else []) + chain
        return self._event(
            reported["event"],
            reported["name"],
            run_id,
            reported["data"],
            parents=parents,
            tags=reported["tags"],
            metadata=reported["metadata"],
        )


def _path_of(task: dict[str, Any]) -> dict[str, Any]:
    """``langgraph_path`` of an edge-triggered task (a Send task's index is not in its
    payload, so its node events go without the key)."""
    if tuple(task["triggers"]) == (PUSH,):
        return {}
    return {"langgraph_path": (PULL, task["name"])}


def _joined(namespace: str, own: str) -> str:
    return f"{namespace}{NS_SEP}{own}" if namespace else own


class RunEvents:
    """The events of a run streamed with its subgraphs: one :class:`GraphEvents` per
    namespace. A subgraph's run starts (``on_chain_start`` under the node that runs it) with
    its first chunk and ends before that node's own end, as LangGraph reports them."""

    def __init__(self, root: GraphEvents, graph_at: Any) -> None:
        self.root = root
        self.graph_at = graph_at
        """Namespace → (name of the graph that runs there, whether it is the node itself)."""
        self.levels: dict[tuple[str, ...], GraphEvents] = {(): root}

    def on_item(
        self, namespace: tuple[str, ...], mode: str, chunk: Any
    ) -> Iterable[dict[str, Any]]:
        """The events of one ``(namespace, mode, chunk)`` of the run."""
        if mode == "debug" and chunk["type"] == "task_result":
            yield from self._close_under(namespace, chunk["payload"])
        level = self.levels.get(namespace)
        if level is None:
            yield from self._open(namespace)
            level = self.levels[namespace]
        yield from level.on_chunk(mode, chunk)

    def _open(self, namespace: tuple[str, ...]) -> Iterable[dict[str, Any]]:
        parent_ns = namespace[:-1]
        if parent_ns not in self.levels:
            yield from self._open(parent_ns)
        parent = self.levels[parent_ns]
        task_id = namespace[-1].partition(NS_END)[2]
        node = parent.nodes.get(task_id, {})
        name, is_node = self.graph_at(NS_SEP.join(namespace))
        level = GraphEvents(
            name,
            {"tags": parent.inherited, "metadata": node.get("metadata", {})},
            parents=[*parent.parents, parent.run_id, *([node["run_id"]] if node else [])],
            namespace=NS_SEP.join(namespace),
            node_streams=is_node,
            own_tags=("seq:step:1",),  # a child run of the node's run (its first step)
        )
        self.levels[namespace] = level
        yield level.graph_start(node.get("input"))

    def _close_under(
        self, namespace: tuple[str, ...], task: dict[str, Any]
    ) -> Iterable[dict[str, Any]]:
        """End the subgraph runs of a task that finished, deepest first."""
        own = f"{task['name']}{NS_END}{task['id']}"
        for ns in sorted(self.levels, key=len, reverse=True):
            inside = len(ns) > len(namespace) and ns[: len(namespace)] == namespace
            if inside and ns[len(namespace)] == own:
                yield from self.levels.pop(ns).graph_end()


class EventFilter:
    """``astream_events``' include/exclude filters on an event's name, type and tags.

    An event passes when it matches no ``exclude_*`` and, if any ``include_*`` is given, at
    least one of them. Its type is what follows ``on_`` up to the last ``_`` (``"chain"``,
    ``"chat_model"``).
    """

    def __init__(
        self,
        include_names: Sequence[str] | None,
        include_types: Sequence[str] | None,
        include_tags: Sequence[str] | None,
        exclude_names: Sequence[str] | None,
        exclude_types: Sequence[str] | None,
        exclude_tags: Sequence[str] | None,
    ) -> None:
        self.include = (set(include_names or ()), set(include_types or ()), set(include_tags or ()))
        self.exclude = (set(exclude_names or ()), set(exclude_types or ()), set(exclude_tags or ()))
        self.filters = any(self.include) or any(self.exclude)

    def __call__(self, event: dict[str, Any]) -> bool:
        """True if ``event`` is to be yielded."""
        if not self.filters:
            return True
        name, kind, tags = event["name"], event["event"][3:].rpartition("_")[0], event["tags"]

        def hits(names: set[str], types: set[str], wanted_tags: set[str]) -> bool:
            return name in names or kind in types or bool(wanted_tags.intersection(tags))

        if hits(*self.exclude):
            return False
        return not any(self.include) or hits(*self.include)
