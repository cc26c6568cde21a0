"""A sync node of a sync run sees no running event loop, as in LangGraph's sync run, which
calls nodes outside any loop: ``asyncio.run()`` inside it works (a sync node calling an
async client that way is common), from a script and from a worker thread alike, and its
result is saved as any other."""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: int
    seen: Annotated[list, operator.add]


async def _fetch(value: int) -> int:
    await asyncio.sleep(0)
    return value + 1


def _graph(api: Api) -> object:
    def fetch(state: State) -> dict:
        try:
            asyncio.get_running_loop()
            seen = "a running loop"
        except RuntimeError:
            seen = "no running loop"
        return {"value": asyncio.run(_fetch(state["value"])), "seen": [seen]}

    def double(state: State) -> dict:
        return {"value": state["value"] * 2, "seen": ["double"]}

    return (
        api.StateGraph(State)
        .add_node("fetch", fetch)
        .add_node("double", double)
        .add_edge(api.START, "fetch")
        .add_edge("fetch", "double")
        .compile(checkpointer=api.MemorySaver())
    )


def test_a_sync_node_can_call_asyncio_run() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = _graph(api)
        config = {"configurable": {"thread_id": "run"}}
        trace.note("result", graph.invoke({"value": 1, "seen": []}, config))
        trace.note("state", graph.get_state(config).values)

    check_parity(scenario)


def test_a_sync_node_can_call_asyncio_run_from_a_worker_thread() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = _graph(api)
        results: list[object] = []

        def work() -> None:
            config = {"configurable": {"thread_id": "worker"}}
            results.append(graph.invoke({"value": 5, "seen": []}, config))

        worker = threading.Thread(target=work)
        worker.start()
        worker.join(60)
        trace.note("result", results)

    check_parity(scenario)
