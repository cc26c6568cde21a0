"""A run given a subgraph's checkpoint config (``checkpoint_ns`` naming the subgraph, with the
``checkpoint_map`` ``get_state(subgraphs=True)`` gives): on both libraries it forks the parent
checkpoint the map names and runs the whole graph from there, the subgraph starting from its
own checkpoint the config names."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: Annotated[list, operator.add]


def _summary(history: list) -> list:
    return [(s.metadata.get("source"), s.next, s.values) for s in history]


def test_time_travel_to_a_subgraph_interrupt() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            trace.ran("ask")
            return {"value": [f"a:{api.interrupt('Q?')}"]}

        executor = (api.StateGraph(State).add_node("ask", ask).add_edge(api.START, "ask")).compile(
            checkpointer=True
        )
        graph = (
            api.StateGraph(State)
            .add_node("executor", executor)
            .add_edge(api.START, "executor")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}}
        graph.invoke({"value": []}, cfg)
        sub_config = graph.get_state(cfg, subgraphs=True).tasks[0].state.config
        trace.note("first answer", graph.invoke(api.Command(resume="first"), cfg))
        trace.note("travel", graph.invoke(None, sub_config))
        trace.note("after travel", _summary(list(graph.get_state_history(cfg))))
        trace.note("second answer", graph.invoke(api.Command(resume="second"), cfg))
        trace.note("final", _summary(list(graph.get_state_history(cfg))))

    check_parity(scenario)


class Doc(TypedDict):
    draft: str
    log: Annotated[list, operator.add]


def test_a_fork_made_inside_a_finished_subgraph() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def write(state: Doc) -> dict:
            trace.ran("write")
            return {"draft": "long draft", "log": ["write"]}

        def ask(state: Doc) -> dict:
            verdict = api.interrupt({"draft": state["draft"]})
            return {"draft": f"{state['draft']} [{verdict}]", "log": ["ask"]}

        review = api.StateGraph(Doc).add_node("write", write).add_node("ask", ask)
        review = review.add_edge(api.START, "write").add_edge("write", "ask")
        graph = (
            api.StateGraph(Doc)
            .add_node("review", review.compile())
            .add_edge(api.START, "review")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        graph.invoke({"draft": "", "log": []}, cfg)
        namespace = graph.get_state(cfg).tasks[0].state["configurable"]["checkpoint_ns"]
        graph.invoke(api.Command(resume="ok"), cfg)
        inside = {"configurable": {"thread_id": "t", "checkpoint_ns": namespace}}
        before_ask = next(s for s in graph.get_state_history(inside) if s.next == ("ask",))
        fork = graph.update_state(before_ask.config, {"draft": "short draft"})
        mapped = fork["configurable"]["checkpoint_map"]
        trace.note("fork map", [trace.namespace(ns) for ns in mapped])
        # The parent's task runs with a new id there, so the subgraph starts over.
        trace.note("run from the fork", graph.invoke(None, fork))
        trace.note("parent after", _summary(list(graph.get_state_history(cfg))))

    check_parity(scenario)
