"""A node returning a list that holds ``Command`` objects, on both libraries: each item is
an update (a Command's update and goto, a dict's keys), all applied in order, so a reducer
gets every one; on a one-value state too (Sends carrying Commands)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    a: int
    log: Annotated[list, operator.add]


def test_dicts_and_commands_in_one_list() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def first(state: State) -> list:
            return [{"a": 1, "log": ["dict"]}, api.Command(update={"log": ["cmd"]}, goto="b")]

        def route(state: State) -> str:
            trace.note("route saw", dict(state))
            return "__end__"

        graph = (
            api.StateGraph(State)
            .add_node("first", first)
            .add_node("b", lambda state: {"log": ["b"]})
            .add_edge(api.START, "first")
            .add_conditional_edges("first", route)
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"a": 0, "log": []}, cfg)
        trace.history("history", graph.get_state_history(cfg))

    check_parity(scenario)


def test_sends_that_carry_commands_on_a_one_value_state() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        class Node:
            def __init__(self, name: str) -> None:
                self.name = name
                self.__name__ = name

            def __call__(self, state: Any) -> Any:
                update = [self.name] if isinstance(state, list) else [f"{self.name}|{state}"]
                if isinstance(state, api.Command):
                    return [state, api.Command(update=update)]
                return update

        def fan(state: list) -> list:
            return [
                api.Send("2", api.Command(goto=api.Send("2", 3))),
                api.Send("2", api.Command(goto=api.Send("2", 4))),
                "3.1",
            ]

        def to_three(state: list) -> Literal["3"]:
            return "3"

        builder = api.StateGraph(Annotated[list, operator.add])
        for name in ("1", "2", "3", "3.1"):
            builder.add_node(Node(name))
        builder.add_edge(api.START, "1")
        builder.add_conditional_edges("1", fan)
        builder.add_conditional_edges("2", to_three)
        trace.call("run", builder.compile().invoke, ["0"])

    check_parity(scenario)


def test_sends_that_carry_commands_are_saved_with_a_checkpointer() -> None:
    """A Send's argument that is a ``Command`` (with a Send of its own) is saved in the
    step's writes and pending Sends, as LangGraph saves it."""

    def scenario(api: Api, trace: Trace) -> None:
        def fan(state: list) -> list:
            return [api.Send("2", api.Command(update=["c"], goto=api.Send("2", 3)))]

        def two(state: Any) -> Any:
            if isinstance(state, api.Command):
                return [state, api.Command(update=["2|cmd"])]
            return [f"2|{state}"]

        builder = api.StateGraph(Annotated[list, operator.add])
        builder.add_node("1", lambda state: ["1"])
        builder.add_node("2", two)
        builder.add_edge(api.START, "1")
        builder.add_conditional_edges("1", fan)
        graph = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, ["0"], cfg)
        trace.history("history", graph.get_state_history(cfg))

    check_parity(scenario)
