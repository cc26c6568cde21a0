"""StateGraph: building and compiling, and the errors a wrong shape gives."""

from __future__ import annotations

import pytest
from graph_support import LogState

from durable_debug import END, START, MemorySaver, StateGraph


def noop(state: dict) -> dict:
    return {}


def test_edge_to_an_unknown_node_names_it() -> None:
    b = StateGraph(LogState).add_node("a", noop).add_edge(START, "a").add_edge("a", "zzz")
    with pytest.raises(ValueError, match=r"edge ending at unknown node 'zzz' \(nodes: a\)"):
        b.compile()


def test_edge_from_an_unknown_node_names_it() -> None:
    b = StateGraph(LogState).add_node("a", noop).add_edge(START, "a").add_edge("ghost", "a")
    with pytest.raises(ValueError, match="edge starting at unknown node 'ghost'"):
        b.compile()


def test_no_edge_from_start_is_an_error() -> None:
    with pytest.raises(ValueError, match="Graph must have an entrypoint"):
        StateGraph(LogState).add_node("a", noop).compile()


def test_join_and_path_map_and_interrupts_are_checked() -> None:
    base = StateGraph(LogState).add_node("a", noop).add_node("b", noop).add_edge(START, "a")
    with pytest.raises(ValueError, match="join starting at unknown node 'x'"):
        StateGraph(LogState).add_node("a", noop).add_edge(START, "a").add_edge(
            ["a", "x"], "a"
        ).compile()
    with pytest.raises(ValueError, match="path map .* names unknown node 'nope'"):
        StateGraph(LogState).add_node("a", noop).add_edge(START, "a").add_conditional_edges(
            "a", lambda s: "x", {"x": "nope"}
        ).compile()
    with pytest.raises(ValueError, match="interrupt_before names unknown node 'c'"):
        base.compile(interrupt_before=["c"])


def test_node_names_must_be_unique_and_not_reserved() -> None:
    b = StateGraph(LogState).add_node("a", noop)
    with pytest.raises(ValueError, match="already present"):
        b.add_node("a", noop)
    with pytest.raises(ValueError, match="reserved"):
        b.add_node(END, noop)
    b.add_node("log", noop)  # a node may share a state key's name, as in LangGraph 1.2


def test_add_node_takes_the_function_name_and_add_sequence_chains() -> None:
    def first(state: dict) -> dict:
        return {"log": ["first"]}

    def second(state: dict) -> dict:
        return {"log": ["second"]}

    g = (
        StateGraph(LogState)
        .add_sequence([first, second])
        .add_edge(START, "first")
        .compile(checkpointer=MemorySaver())
    )
    out = g.invoke({"log": []}, {"configurable": {"thread_id": "seq"}})
    assert out["log"] == ["first", "second"]
    assert [(e.source, e.target) for e in g.get_graph().edges] == [
        ("first", "second"),
        ("__start__", "first"),
        ("second", "__end__"),
    ]


def test_state_schema_must_be_a_typeddict_dataclass_or_pydantic_model() -> None:
    with pytest.raises(TypeError, match="TypedDict, dataclass or pydantic"):
        StateGraph(int)


def test_get_graph_marks_conditional_edges_and_command_destinations() -> None:
    from typing import Literal

    def route(state: dict) -> Literal["b", "__end__"]:
        return "b"

    g = (
        StateGraph(LogState)
        .add_node("a", noop, destinations=("b",))
        .add_node("b", noop)
        .add_edge(START, "a")
        .add_conditional_edges("a", route)
        .compile()
    )
    edges = {(e.source, e.target, e.conditional) for e in g.get_graph().edges}
    assert edges == {
        ("__start__", "a", False),
        ("a", "b", True),
        ("a", "__end__", True),
        ("b", "__end__", False),
    }
    assert "a -.-> b" in g.get_graph().draw_mermaid()
