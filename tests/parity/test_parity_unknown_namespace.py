"""A run or a read given a ``checkpoint_ns`` that no node of the graph explains (a graph a
node's function or a tool invokes, which LangGraph does not detect as a subgraph, or a
namespace a LangGraph server passes on): as in LangGraph, the graph runs at the top level of
the thread (from its newest checkpoint), a read of that namespace uses the graph's own
channels, and writing into it is refused."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def build(api: Api, saver: Any) -> Any:
    graph = api.StateGraph(State).add_node("a", lambda s: {"log": ["a"]})
    graph = graph.add_node("b", lambda s: {"log": ["b"]})
    graph = graph.add_edge(api.START, "a").add_edge("a", "b")
    return graph.compile(checkpointer=saver)


def test_a_run_given_a_namespace_no_node_explains_runs_at_the_top_level():
    def scenario(api: Api, trace: Trace) -> None:
        graph = build(api, api.MemorySaver())
        inside = {"configurable": {"thread_id": "t", "checkpoint_ns": "tools:1"}}
        top = {"configurable": {"thread_id": "t"}}
        trace.call("updates", graph.stream, {"log": []}, inside, stream_mode="updates")
        trace.state("state there", graph.get_state(inside))
        trace.history("history there", graph.get_state_history(inside))
        trace.state("top-level state", graph.get_state(top))
        trace.call("invoked again", graph.invoke, {"log": ["again"]}, inside)
        # LangGraph's message is its first sentence, which ours goes on to explain
        trace.call("update there", graph.update_state, inside, {"log": ["x"]}, message=False)

    ours = check_parity(scenario)
    assert ours["state there"]["values"] == {}
    assert ours["top-level state"]["values"] == {"log": ["a", "b"]}
    assert ours["invoked again"] == {"log": ["a", "b", "again", "a", "b"]}
    assert ours["update there"] == {"raised": "ValueError"}


def test_a_run_without_a_saver_under_such_a_namespace_runs():
    def scenario(api: Api, trace: Trace) -> None:
        def look(state: State, config: RunnableConfig) -> dict[str, Any]:
            metadata = config["metadata"]
            trace.note("metadata", {k: metadata.get(k) for k in ("checkpoint_ns", "task_id")})
            trace.note("namespace", config["configurable"]["checkpoint_ns"].partition(":")[0])
            return {"log": ["look"]}

        graph = api.StateGraph(State).add_node("look", look).add_edge(api.START, "look")
        graph = graph.compile()
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": "ns-1", "task_id": "x"}}
        trace.call("values", graph.stream, {"log": []}, config, stream_mode="values")

    ours = check_parity(scenario)
    assert ours["values"][-1] == {"log": ["look"]}
    assert ours["metadata"] == {"checkpoint_ns": "ns-1", "task_id": "x"}
    assert ours["namespace"] == "look"
