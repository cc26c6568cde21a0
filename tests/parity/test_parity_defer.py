"""``add_node(..., defer=True)`` on both libraries: the node runs once, after every other
task of the run, whether it is reached by plain edges or by a join."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def branches(api: Api, trace: Trace, *, join: bool):
    """START → a → (b → b2, c) → d, d deferred (reached by two edges, or by a join)."""

    def make(name: str):
        def node(state: State) -> dict:
            trace.ran(name)
            return {"log": [name]}

        return node

    builder = api.StateGraph(State)
    for name in ("a", "b", "b2", "c"):
        builder.add_node(name, make(name))
    builder.add_node("d", make("d"), defer=True)
    builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("a", "c").add_edge("b", "b2")
    if join:
        builder.add_edge(["b2", "c"], "d")
    else:
        builder.add_edge("b2", "d").add_edge("c", "d")
    builder.add_edge("d", api.END)
    return builder.compile(checkpointer=api.MemorySaver())


@pytest.mark.parametrize("join", [False, True], ids=["edges", "join"])
def test_deferred_node_runs_once_at_the_end(join: bool):
    def scenario(api: Api, trace: Trace) -> None:
        graph = branches(api, trace, join=join)
        cfg = {"configurable": {"thread_id": "d"}}
        trace.call("result", graph.invoke, {"log": []}, cfg)
        trace.history("history", graph.get_state_history(cfg))
        again = {"configurable": {"thread_id": "d2"}}
        trace.call("updates", graph.stream, {"log": []}, again, stream_mode="updates")

    ours = check_parity(scenario)
    assert ours["executions"]["d"] == 2  # once per run


def test_deferred_node_after_an_interrupt_before_it():
    def scenario(api: Api, trace: Trace) -> None:
        graph = branches(api, trace, join=False)
        cfg = {"configurable": {"thread_id": "i"}}
        trace.call("paused", graph.invoke, {"log": []}, cfg, interrupt_before=["d"])
        trace.state("state", graph.get_state(cfg))
        trace.call("resumed", graph.invoke, None, cfg)

    check_parity(scenario)
