"""What building a graph refuses, and the words it says it with: each mistake names what is
wrong before anything runs; the shorthands do what their longhand does."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, CachePolicy, MemorySaver, RetryPolicy, StateGraph


class S(TypedDict):
    log: Annotated[list, operator.add]


def step(name: str) -> Any:
    return lambda state: {"log": [name]}


def test_add_node_refuses_what_is_not_a_node() -> None:
    graph = StateGraph(S)
    with pytest.raises(TypeError, match="needs a function to run"):
        graph.add_node("a")
    with pytest.raises(ValueError, match="Pass a name for this node"):
        graph.add_node(lambda state: {})
    with pytest.raises(TypeError, match="A node name must be a string"):
        graph.add_node(3, step("a"))  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="Node 'a' must be a function"):
        graph.add_node("a", "not callable")  # type: ignore[call-overload]
    graph.add_node("a", step("a"))
    with pytest.raises(ValueError, match="already present"):
        graph.add_node("a", step("a"))
    with pytest.raises(ValueError, match="reserved"):
        graph.add_node("x:y", step("x"))
    with pytest.raises(TypeError, match="error_handler of node 'b' must be a function"):
        graph.add_node("b", step("b"), error_handler="nope")  # type: ignore[arg-type]


def test_edges_refuse_start_and_end_in_the_wrong_place() -> None:
    graph = StateGraph(S).add_node("a", step("a")).add_node("b", step("b"))
    with pytest.raises(ValueError, match="END cannot be the start of an edge"):
        graph.add_edge(END, "a")
    with pytest.raises(ValueError, match="START cannot be the end of an edge"):
        graph.add_edge("a", START)
    with pytest.raises(ValueError, match="needs at least one start node"):
        graph.add_edge([], "a")
    with pytest.raises(ValueError, match="END cannot be a start node"):
        graph.add_edge(["a", END], "b")
    with pytest.raises(ValueError, match="Need to add_node `__start__` first"):
        graph.add_edge([START, "a"], "b")
    with pytest.raises(ValueError, match="START cannot be an end node"):
        graph.add_edge(["a", "b"], START)
    with pytest.raises(TypeError, match="conditional edge"):
        graph.add_conditional_edges("a", "not callable")  # type: ignore[arg-type]


def test_compile_names_edges_to_nodes_that_do_not_exist() -> None:
    join = StateGraph(S).add_node("a", step("a")).add_node("b", step("b"))
    join.add_edge(START, "a").add_edge(["a", "b"], "c")
    with pytest.raises(ValueError, match="join ending at unknown node 'c'"):
        join.compile()
    edge = StateGraph(S).add_node("a", step("a")).add_edge(START, "a").add_edge("ghost", "a")
    with pytest.raises(ValueError, match="ghost"):
        edge.compile()
    branch = StateGraph(S).add_node("a", step("a")).add_edge(START, "a")
    branch.add_conditional_edges("a", lambda s: "b", {"b": "nowhere"})
    with pytest.raises(ValueError, match="nowhere"):
        branch.compile()


def test_shorthands_and_a_one_source_join_are_plain_edges() -> None:
    graph = StateGraph(S).add_node("a", step("a")).add_node("b", step("b"))
    graph.set_conditional_entry_point(lambda state: "a", ["a"])
    graph.add_edge(["a"], "b").set_finish_point("b")
    out = graph.compile().invoke({"log": []})
    assert out == {"log": ["a", "b"]}


def test_node_defaults_apply_to_nodes_without_their_own() -> None:
    attempts: list[str] = []

    def flaky(state: S) -> dict:
        attempts.append("flaky")
        if len(attempts) < 2:
            raise ConnectionError("once")
        return {"log": ["flaky"]}

    graph = StateGraph(S).add_node("flaky", flaky).add_edge(START, "flaky")
    graph.set_node_defaults(
        retry_policy=RetryPolicy(initial_interval=0, jitter=False), cache_policy=CachePolicy()
    )
    out = graph.compile(checkpointer=MemorySaver()).invoke(
        {"log": []}, {"configurable": {"thread_id": "t"}}
    )
    assert out == {"log": ["flaky"]} and attempts == ["flaky", "flaky"]
    with pytest.raises(ValueError, match="set_node_defaults.*greater than 0"):
        StateGraph(S).set_node_defaults(timeout=0)
