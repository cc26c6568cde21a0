"""What a conditional edge is given, and updates written as ``(key, value)`` pairs, on both
libraries: an edge reads the state through the schema its function's first parameter is
annotated with (a private schema included), else through its node's schema with the node's
other returned keys merged under it; ``Command(update=[(key, value), ...])`` writes each pair,
a key named twice reaching its reducer twice."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    total: Annotated[int, operator.add]
    label: str


class Private(TypedDict):
    secret: str


def test_an_edge_reads_through_its_annotated_schema_or_gets_the_returned_keys() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def first(state: State) -> dict:
            return {"total": 1, "secret": "s", "label": "one"}

        def second(state: Private) -> dict:
            return {"total": 1, "label": state["secret"], "extra": "only returned"}

        def route_private(state: Private) -> str:
            trace.note("private edge saw", dict(state))
            return "second"

        def route_state(state: State) -> str:
            trace.note("state edge saw", dict(state))
            return "third"

        def route_plain(state: dict) -> str:
            trace.note("plain edge saw", dict(state))
            return "__end__"

        graph = (
            api.StateGraph(State)
            .add_node("first", first)
            .add_node("second", second)
            .add_node("third", lambda state: {"total": 10})
            .add_edge(api.START, "first")
            .add_conditional_edges("first", route_private)
            .add_conditional_edges("second", route_state)
            .add_conditional_edges("second", route_plain)
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"total": 0, "label": ""}, cfg)

    check_parity(scenario)


def test_command_updates_given_as_pairs() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        class Log(TypedDict):
            log: Annotated[str, lambda a, b: ", ".join(x for x in (a, b) if x)]

        def one(state: Log) -> object:
            return api.Command(update=[("log", "one.0"), ("log", "one.1")])

        def ask(state: Log) -> dict:
            api.interrupt("go on?")
            return {"log": "asked"}

        graph = (
            api.StateGraph(Log)
            .add_node("one", one)
            .add_node("ask", ask)
            .add_edge(api.START, "one")
            .add_edge("one", "ask")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": "in"}, cfg)
        resume = api.Command(resume="yes", update=[("log", "r.0"), ("log", "r.1")])
        trace.call("resume", graph.invoke, resume, cfg)
        trace.call("edit", graph.update_state, cfg, api.Command(update=[("log", "e.0")]))
        trace.call("state", lambda: graph.get_state(cfg).values)

    check_parity(scenario)
