"""StateGraph: building and compiling, and the errors a wrong shape gives."""

from __future__ import annotations

import operator
from typing import Annotated

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
        ("__start__", "first"),
        ("first", "second"),
        ("second", "__end__"),
    ]


def test_a_state_schema_without_annotations_is_one_value() -> None:
    graph = (
        StateGraph(Annotated[list, operator.add])
        .add_node("a", lambda state: [f"a saw {len(state)}"])
        .add_node("b", lambda state: ["b"])
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=MemorySaver())
    )
    cfg = {"configurable": {"thread_id": "t"}}
    assert graph.invoke(["in"], cfg) == ["in", "a saw 1", "b"]
    snapshot = graph.get_state(cfg)
    assert snapshot.values == ["in", "a saw 1", "b"]
    history = list(graph.get_state_history(cfg))
    assert [t.result for t in history[1].tasks] == [["b"]]
    assert list(graph.stream(["x"], {"configurable": {"thread_id": "u"}})) == [
        {"a": ["a saw 1"]},
        {"b": ["b"]},
    ]
    last = StateGraph(int).add_node("n", lambda n: n * 2).add_edge(START, "n").compile()
    assert last.invoke(21) == 42


def test_a_state_schema_that_is_not_a_type_warns() -> None:
    with pytest.warns(UserWarning, match="Invalid state_schema: 'State'"):
        StateGraph("State")


def test_an_annotated_class_is_a_state_schema() -> None:
    class Plain:
        count: int
        log: Annotated[list, operator.add]

    class Written(Plain):
        def __init__(self, count: int | None) -> None:
            self.count = count
            self.log = ["object"]

    seen = []

    def first(state: dict) -> dict:
        seen.append(state)
        return {"count": state["count"] + 1, "log": ["first"]}

    graph = (
        StateGraph(Plain)
        .add_node("first", first)
        .add_node("second", lambda state: Written(None))
        .add_edge(START, "first")
        .add_edge("first", "second")
        .compile()
    )
    # Nodes receive a dict; an object's attributes named like keys are its writes.
    assert graph.invoke({"count": 1, "log": []}) == {"count": None, "log": ["first", "object"]}
    assert seen == [{"count": 1, "log": []}]


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
