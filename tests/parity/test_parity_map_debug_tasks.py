"""``pregel.debug.map_debug_tasks``: a task's payload with its config's own metadata and
tags (not the engine's keys, not ``seq:step`` tags), hidden tasks left out, as LangGraph's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity

pytestmark = pytest.mark.parity


@dataclass
class Task:
    id: str
    name: str
    config: dict[str, Any] | None
    input: Any = None
    triggers: list[str] = field(default_factory=lambda: ["x"])


def test_map_debug_tasks():
    def scenario(api: Api, trace: Trace) -> None:
        if api.name == "langgraph":
            from langgraph.pregel.debug import map_debug_tasks
        else:
            from durable_debug.pregel.debug import map_debug_tasks
        metadata = {"langgraph_node": "n", "thread_id": "t", "lc_agent_name": "agent"}
        tasks = [
            Task("1", "plain", None),
            Task("2", "own", {"metadata": metadata, "tags": ["seq:step:1", "mine"]}),
            Task("3", "engine only", {"metadata": {"langgraph_step": 1}, "tags": ["seq:step:2"]}),
            Task("4", "hidden", {"tags": ["langsmith:hidden"]}),
            Task("5", "tags only", {"tags": ["a", "b"]}),
        ]
        trace.note("payloads", list(map_debug_tasks(tasks)))
        trace.note("metadata untouched", metadata)

    check_parity(scenario)
