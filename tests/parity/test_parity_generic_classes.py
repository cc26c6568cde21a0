"""LangGraph's generic public classes are generic here too, so annotations written for
LangGraph (``-> StateGraph[State, None, State, State]``, ``-> Command[Literal["b"]]``) run
unchanged, and a node annotated ``-> Command[Literal["even", "odd"]]`` draws its edges to
those nodes as LangGraph's ``get_graph()`` does."""

from __future__ import annotations

from typing import Any, Literal, Union

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

from durable_debug import StateGraph
from durable_debug.graph.pregel import CompiledStateGraph
from durable_debug.types import CachePolicy, Command, Interrupt

pytestmark = pytest.mark.parity


class State(TypedDict):
    x: int


def build() -> StateGraph[State, None, State, State]:
    """A module-level annotation as LangGraph's tests write them (evaluated by the test)."""
    return StateGraph(State)


def test_the_generic_classes_take_langgraphs_parameters() -> None:
    import typing

    assert typing.get_type_hints(build)["return"] == StateGraph[State, None, State, State]
    assert StateGraph[State] is not None
    assert CompiledStateGraph[State, None, State, State] is not None
    assert Command[Literal["b"]] is not None
    assert Interrupt[int] is not None
    assert CachePolicy[Any] is not None


def test_a_command_return_annotation_draws_its_destinations() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def a(state: State) -> Any:
            return api.Command(goto="even")

        def odd(state: State) -> Any:
            return {}

        # The annotations LangGraph code writes (evaluated here, the library's own Command).
        a.__annotations__["return"] = api.Command[Literal["even", "odd"]]
        odd.__annotations__["return"] = Union[api.Command[Literal["a"]], dict]  # noqa: UP007

        graph = (
            api.StateGraph(State)
            .add_node("a", a)
            .add_node("even", lambda state: {})
            .add_node("odd", odd)
            .add_edge(api.START, "a")
            .compile()
        )
        edges = graph.get_graph().edges
        trace.note("edges", sorted((e.source, e.target, e.conditional) for e in edges))
        trace.call("run", graph.invoke, {"x": 1})

    check_parity(scenario)
