"""``astream_log`` and ``astream_events(version="v1")`` on both libraries: the run-log paths
and final outputs of the graph's and the nodes' runs, and the v1 events of the graph and its
nodes."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def _graph(api: Api) -> Any:
    return (
        api.StateGraph(State)
        .add_node("plan", lambda s: {"log": ["plan"]})
        .add_node("act", lambda s: {"log": ["act"]})
        .add_edge(api.START, "plan")
        .add_edge("plan", "act")
        .compile(checkpointer=api.MemorySaver())
    )


async def test_astream_log_reports_each_node_run_and_the_final_state():
    async def scenario(api: Api, trace: Trace) -> None:
        g = _graph(api)
        cfg = {"configurable": {"thread_id": "log"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LangChain deprecates astream_log
            patches = [p async for p in g.astream_log({"log": []}, cfg)]
        paths = sorted({op["path"] for p in patches for op in p.ops})
        trace.note("node paths", [p for p in paths if p.startswith("/logs/")])
        trace.note(
            "node outputs",
            [
                (op["path"], op["value"])
                for p in patches
                for op in p.ops
                if op["path"].endswith("/final_output")
            ],
        )
        trace.note(
            "streamed",
            [op["value"] for p in patches for op in p.ops if op["path"] == "/streamed_output/-"],
        )

    ours = await acheck_parity(scenario)
    assert ("/logs/act/final_output", {"log": ["act"]}) in ours["node outputs"]
    assert ours["streamed"] == [{"plan": {"log": ["plan"]}}, {"act": {"log": ["act"]}}]


async def test_astream_events_v1_names_the_graph_and_node_runs():
    async def scenario(api: Api, trace: Trace) -> None:
        g = _graph(api)
        cfg = {"configurable": {"thread_id": "v1"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            events = [
                (e["event"], e["name"], e["parent_ids"])
                async for e in g.astream_events({"log": []}, cfg, version="v1")
                if e["name"] in ("LangGraph", "plan", "act")
            ]
        trace.note("events", events)
        state = await g.aget_state(cfg)
        trace.note("state", state.values)

    ours = await acheck_parity(scenario)
    assert ours["events"][0] == ("on_chain_start", "LangGraph", [])
    assert ("on_chain_end", "act", []) in ours["events"]
    assert ours["state"] == {"log": ["plan", "act"]}
