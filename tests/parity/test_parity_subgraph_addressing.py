"""Which checkpoints a graph run inside a node addresses, on both libraries: one invoked
with a thread of its own runs as a top-level graph there (its own saver, namespace ""), one
a node invokes without naming it (through a dict, as a tool runs an agent) is read through
the parent with the parent's channels and cannot be updated there, and ``get_subgraphs``
lists subgraphs by whole namespace segments."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


class Count(TypedDict):
    count: int


def test_a_graph_invoked_with_its_own_thread() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        saver = api.MemorySaver()
        child = (
            api.StateGraph(Count)
            .add_node("n", lambda state: {"count": (state.get("count") or 0) + 1})
            .add_edge(api.START, "n")
            .compile(checkpointer=saver)
        )
        child_cfg = {"configurable": {"thread_id": "child"}}

        def call(state: State) -> dict:
            child.invoke({}, config=child_cfg)
            return {"log": ["called"]}

        parent = (
            api.StateGraph(State)
            .add_node("call", call)
            .add_edge(api.START, "call")
            .compile(checkpointer=saver)
        )
        cfg = {"configurable": {"thread_id": "parent"}}
        parent.invoke({"log": []}, cfg)
        parent.invoke({"log": []}, cfg)
        state = child.get_state(child_cfg)
        trace.note("child", (state.values, state.config["configurable"]["checkpoint_ns"]))
        trace.note(
            "parent namespaces",
            sorted({t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)}),
        )

    check_parity(scenario)


def test_a_graph_a_node_runs_without_naming_it() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        agents = {
            "helper": api.StateGraph(State)
            .add_node("work", lambda state: {"log": ["worked"]})
            .add_edge(api.START, "work")
            .compile()
        }

        def tools(state: dict) -> dict:
            agents["helper"].invoke({"log": ["asked"]})
            return {"log": ["tool done"]}

        parent = (
            api.StateGraph(State)
            .add_node("tools", tools)
            .add_edge(api.START, "tools")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        namespaces = [ns for ns, _ in parent.stream({"log": []}, cfg, subgraphs=True) if ns]
        inner = {"configurable": {"thread_id": "t", "checkpoint_ns": namespaces[0][0]}}
        trace.note("inner values", parent.get_state(inner).values)
        trace.note("inner history", [s.values for s in parent.get_state_history(inner)])
        trace.call("update", parent.update_state, inner, {"log": ["edit"]}, message=False)

    check_parity(scenario)


@pytest.mark.parametrize("namespace", ["a", "a|b", "a_b", "b", "c", None])
def test_get_subgraphs_matches_whole_segments(namespace: Any) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def leaf() -> Any:
            return (
                api.StateGraph(State)
                .add_node("w", lambda state: {})
                .add_edge(api.START, "w")
                .compile()
            )

        graphs = {"a|b": leaf(), "a_b": leaf(), "b": leaf()}
        graphs["a"] = (
            api.StateGraph(State).add_node("b", graphs["a|b"]).add_edge(api.START, "b").compile()
        )
        parent = (
            api.StateGraph(State)
            .add_node("a", graphs["a"])
            .add_node("a_b", graphs["a_b"])
            .add_node("b", graphs["b"])
            .add_node("c", lambda state: {})
            .add_edge(api.START, "a")
            .compile()
        )
        names = {id(g): n for n, g in graphs.items()}
        found = parent.get_subgraphs(namespace=namespace, recurse=True)
        trace.note("found", [(ns, names.get(id(g))) for ns, g in found])

    check_parity(scenario)
