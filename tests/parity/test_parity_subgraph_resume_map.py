"""A resume map answering one of the parallel interrupts a subgraph paused on: on both
libraries the answer reaches that interrupt (its node finishes, the other asks again), and a
later map answers the rest without running the finished node again."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def test_answering_one_of_a_subgraphs_parallel_interrupts() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def a(state: State) -> dict:
            trace.ran("a")
            return {"log": [f"a:{api.interrupt('A')}"]}

        def b(state: State) -> dict:
            trace.ran("b")
            return {"log": [f"b:{api.interrupt('B')}"]}

        child = (
            api.StateGraph(State)
            .add_node("a", a)
            .add_node("b", b)
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .compile()
        )
        graph = (
            api.StateGraph(State)
            .add_node("child", child)
            .add_edge(api.START, "child")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}}
        paused = graph.invoke({"log": []}, cfg)
        # a and b run side by side: the order their interrupts come in is the order they
        # paused, on either library, so only which questions were asked is compared
        trace.note("paused", sorted(i.value for i in paused["__interrupt__"]))
        asked = {i.value: i.id for i in graph.get_state(cfg).interrupts}
        trace.note("after A", graph.invoke(api.Command(resume={asked["A"]: "yes"}), cfg))
        trace.state("state after A", graph.get_state(cfg))
        asked = {i.value: i.id for i in graph.get_state(cfg).interrupts}
        trace.note("after B", graph.invoke(api.Command(resume={asked["B"]: "ok"}), cfg))

    check_parity(scenario)
