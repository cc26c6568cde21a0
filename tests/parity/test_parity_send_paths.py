"""The path of a ``Send`` task, on both libraries: ``(PUSH, index, False)`` in a snapshot's
tasks, in the ``langgraph_path`` a node's config carries and in the debug stream."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from langchain_core.runnables import RunnableConfig
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    items: list[str]
    done: Annotated[list, operator.add]


def test_send_task_paths() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def work(item: str, config: RunnableConfig) -> dict:
            trace.note(f"path of {item}", config["metadata"]["langgraph_path"])
            return {"done": [item]}

        graph = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_conditional_edges(
                api.START, lambda s: [api.Send("work", i) for i in s["items"]], ["work"]
            )
            .compile(checkpointer=api.MemorySaver(), interrupt_before=["work"])
        )
        cfg = {"configurable": {"thread_id": "1"}}
        graph.invoke({"items": ["a", "b"], "done": []}, cfg)
        trace.note("paths", [t.path for t in graph.get_state(cfg).tasks])
        debug = [c for c in graph.stream(None, cfg, stream_mode="debug") if c["type"] == "task"]
        trace.note("debug paths", sorted(str(c["payload"].get("path")) for c in debug))

    check_parity(scenario)
