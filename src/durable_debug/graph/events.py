"""``astream_events(version="v2")``: the chunks of one run turned into LangChain-style events.

    async for event in graph.astream_events(inputs, config, version="v2"):
        if event["event"] == "on_chat_model_stream":
            print(event["data"]["chunk"].content, end="")

:class:`GraphEvents` reads the ``values``, ``updates``, ``messages`` and ``debug`` (for the
tasks and their step) chunks of the run, a consumer of the same event sequence as every stream
mode, and gives, as LangGraph does: ``on_chain_start`` for the graph; per node
``on_chain_start`` (input), ``on_chain_stream`` (its output) and ``on_chain_end``; the graph's
``on_chain_stream`` with each update; ``on_chat_model_stream`` for token chunks; the graph's
``on_chain_end`` with the final state. Every event has ``event``, ``name``, ``run_id``,
``parent_ids``, ``tags``, ``metadata`` and ``data``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from durable_debug.checkpoint.base import RunnableConfig

__all__ = ["GraphEvents"]


class GraphEvents:
    """Turns the chunks of one run into ``astream_events`` v2 events."""

    def __init__(self, name: str, config: RunnableConfig) -> None:
        self.name = name
        self.run_id = str(uuid.uuid4())
        self.tags: list[str] = list(config.get("tags") or [])
        self.metadata: dict[str, Any] = dict(config.get("metadata") or {})
        self.nodes: dict[str, dict[str, Any]] = {}
        """Task id → run id, input, metadata and tags of the node's run."""
        self.updates: list[Any] = []
        """Updates waiting for their task's end event (the graph streams after the node)."""
        self.output: Any = None

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
            kind, self.name, self.run_id, data, parents=[], tags=self.tags, metadata=self.metadata
        )

    def graph_start(self, input: Any) -> dict[str, Any]:
        """The graph's ``on_chain_start``."""
        return self._graph("on_chain_start", {"input": input})

    def graph_end(self) -> Iterable[dict[str, Any]]:
        """Updates still waiting, then the graph's ``on_chain_end`` with the final state."""
        yield from self._flush()
        yield self._graph("on_chain_end", {"output": self.output})

    def _flush(self) -> Iterable[dict[str, Any]]:
        updates, self.updates = self.updates, []
        for chunk in updates:
            yield self._graph("on_chain_stream", {"chunk": chunk})

    def on_chunk(self, mode: str, chunk: Any) -> Iterable[dict[str, Any]]:
        """The events one ``(mode, chunk)`` of the run gives."""
        if mode == "updates":
            self.updates.append(chunk)
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
        yield from self._flush()
        if mode == "values":
            self.output = chunk
        elif mode == "messages":
            yield from self._chat_chunk(*chunk)

    def _node_start(self, task: dict[str, Any], step: int) -> dict[str, Any]:
        node = {
            "run_id": str(uuid.uuid4()),
            "input": task["input"],
            "tags": [f"graph:step:{step}"],
            "metadata": {
                **self.metadata,
                "langgraph_step": step,
                "langgraph_node": task["name"],
                "langgraph_triggers": tuple(task["triggers"]),
                "langgraph_checkpoint_ns": f"{task['name']}:{task['id']}",
            },
        }
        self.nodes[task["id"]] = node
        return self._node_event("on_chain_start", task["name"], node, {"input": task["input"]})

    def _node_end(self, task: dict[str, Any]) -> Iterable[dict[str, Any]]:
        node = self.nodes.get(task["id"])
        if node is None or task["error"] is not None or task["interrupts"]:
            return
        output = task["result"]
        yield self._node_event("on_chain_stream", task["name"], node, {"chunk": output})
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
            parents=[self.run_id],
            tags=node["tags"],
            metadata=node["metadata"],
        )

    def _chat_chunk(self, message: Any, metadata: dict[str, Any]) -> Iterable[dict[str, Any]]:
        if not type(message).__name__.endswith("Chunk"):
            return  # a whole message a node returned: not a chat model event
        ns = str(metadata.get("langgraph_checkpoint_ns", ""))
        task_id = ns.rpartition(":")[2]
        node = self.nodes.get(task_id)
        parents = [self.run_id] + ([node["run_id"]] if node else [])
        name = str(metadata.get("ls_model_name") or metadata.get("ls_provider") or "chat_model")
        yield self._event(
            "on_chat_model_stream",
            name,
            str(message.id or ""),
            {"chunk": message},
            parents=parents,
            tags=list(metadata.get("tags") or []),
            metadata=metadata,
        )
