"""The production notebook's human review gate with the sync API: interrupt_before,
update_state, resume; and the same gate placed after a node (interrupt_after)."""

from __future__ import annotations

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class TicketState(TypedDict, total=False):
    ticket: str
    draft: str
    approved: bool
    reviewer: str
    sent: str


def review_graph(api: Api, trace: Trace, **compile_kwargs: object) -> object:
    """START → draft_response → send_response → END, with sync nodes."""

    def draft_response(state: TicketState) -> dict:
        trace.ran("draft_response")
        return {"draft": f"Re: {state['ticket']}"}

    def send_response(state: TicketState) -> dict:
        trace.ran("send_response")
        approval = "approved" if state.get("approved") else "unapproved"
        return {"sent": f"{state['draft']} ({approval} by {state.get('reviewer', 'nobody')})"}

    builder = api.StateGraph(TicketState)
    builder.add_node("draft_response", draft_response)
    builder.add_node("send_response", send_response)
    builder.add_edge(api.START, "draft_response")
    builder.add_edge("draft_response", "send_response")
    builder.add_edge("send_response", api.END)
    return builder.compile(checkpointer=api.MemorySaver(), **compile_kwargs)


def test_interrupt_before_then_update_state_then_resume():
    def scenario(api: Api, trace: Trace) -> None:
        graph = review_graph(api, trace, interrupt_before=["send_response"])
        config = {"configurable": {"thread_id": "job-7"}}
        trace.call("first pass", graph.invoke, {"ticket": "printer on fire"}, config=config)
        trace.state("paused", graph.get_state(config))
        trace.call("update", graph.update_state, config, {"approved": True, "reviewer": "josh"})
        trace.state("reviewed", graph.get_state(config))
        trace.call("result", graph.invoke, None, config=config)
        trace.call("again", graph.invoke, None, config=config)
        trace.history("history", graph.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["paused"]["next"] == ("send_response",)
    assert ours["reviewed"]["source"] == "update"
    assert ours["result"]["sent"] == "Re: printer on fire (approved by josh)"
    assert ours["executions"] == {"draft_response": 1, "send_response": 1}


def test_interrupt_after_stops_once_then_resumes():
    def scenario(api: Api, trace: Trace) -> None:
        graph = review_graph(api, trace, interrupt_after=["draft_response"])
        config = {"configurable": {"thread_id": "job-8"}}
        trace.call("first pass", graph.invoke, {"ticket": "no ink"}, config=config)
        trace.state("paused", graph.get_state(config))
        trace.call("result", graph.invoke, None, config=config)
        trace.history("history", graph.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["paused"]["next"] == ("send_response",)
    assert ours["result"]["sent"] == "Re: no ink (unapproved by nobody)"


def test_interrupt_before_given_to_invoke_and_fresh_input_on_a_paused_thread():
    def scenario(api: Api, trace: Trace) -> None:
        graph = review_graph(api, trace)
        config = {"configurable": {"thread_id": "job-9"}}
        trace.call(
            "paused by invoke kwarg",
            graph.invoke,
            {"ticket": "paper jam"},
            config,
            interrupt_before=["send_response"],
        )
        trace.state("paused", graph.get_state(config))
        # fresh input on a paused thread starts over (the scheduled send is discarded)
        trace.call("restart", graph.invoke, {"ticket": "toner"}, config)
        trace.history("history", graph.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["restart"]["sent"] == "Re: toner (unapproved by nobody)"


def test_interrupt_before_every_node():
    def scenario(api: Api, trace: Trace) -> None:
        graph = review_graph(api, trace, interrupt_before="*")
        config = {"configurable": {"thread_id": "job-10"}}
        trace.call("1", graph.invoke, {"ticket": "wifi"}, config)
        trace.call("2", graph.invoke, None, config)
        trace.call("3", graph.invoke, None, config)
        trace.history("history", graph.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["executions"] == {"draft_response": 1, "send_response": 1}
