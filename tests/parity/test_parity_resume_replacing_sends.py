"""``Command(resume=..., goto=[Send(...)])`` on a step paused in a fan-out, on both libraries:
the goto's Sends replace the step's pending Send tasks, so a task that already finished is
dropped with its writes, and the answer goes to the new task that asks (its id is not the
paused one's). The run's result, the state and the history match, with each durability."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_resume_whose_sends_replace_the_pending_ones(durability: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def p(state: State) -> dict:
            trace.ran("p")
            return {"log": ["p"]}

        def q(state: State) -> dict:
            trace.ran("q")
            return {"log": [f"q {api.interrupt('continue?')} {state['log']}"]}

        builder = api.StateGraph(State).add_node("p", p).add_node("q", q)
        builder.add_conditional_edges(
            api.START, lambda s: [api.Send("p", s), api.Send("q", s)], ["p", "q"]
        )
        g = builder.compile(checkpointer=api.MemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        trace.call("first", g.invoke, {"log": ["in"]}, config, durability=durability)
        resume = api.Command(resume="yes", goto=[api.Send("q", {"log": ["other"]})])
        trace.call("resume", g.invoke, resume, config, durability=durability)
        trace.state("state", g.get_state(config))
        trace.history("history", g.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["resume"] == {"log": ["in", "q yes ['other']"]}
