"""``astream_events(version="v2")`` on both libraries: the graph's and each node's
on_chain_start / on_chain_stream / on_chain_end, and on_chat_model_stream token chunks, with
the metadata users filter on (``langgraph_node``, ``langgraph_step``)."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]
    reply: str


def event_of(trace: Trace, event: dict, graph_run: str) -> dict:
    """What users read of an event; chat model events keep only the chunk's content."""
    metadata = event["metadata"]
    data = dict(event["data"])
    if event["event"] == "on_chat_model_stream":
        data = {"chunk": data["chunk"].content}
        name = "chat model"
    else:
        name = event["name"]
    return {
        "event": event["event"],
        "name": name,
        "data": trace.normalize(data),
        "node": metadata.get("langgraph_node"),
        "step": metadata.get("langgraph_step"),
        "run_id is a str": isinstance(event["run_id"], str),
        "graph is first parent": event["parent_ids"][:1] == [graph_run],
        "parents": len(event["parent_ids"]),
    }


async def test_astream_events_of_nodes_and_a_chat_model():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    async def scenario(api: Api, trace: Trace) -> None:
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi there")]))

        def plan(state: State) -> dict:
            return {"log": ["plan"]}

        async def answer(state: State) -> dict:
            reply = await model.ainvoke("question")
            return {"log": ["answer"], "reply": reply.content}

        g = (
            api.StateGraph(State)
            .add_node("plan", plan)
            .add_node("answer", answer)
            .add_edge(api.START, "plan")
            .add_edge("plan", "answer")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "events"}}
        events = [e async for e in g.astream_events({"log": []}, cfg, version="v2")]
        graph_run = events[0]["run_id"]
        wanted = ("on_chain_start", "on_chain_stream", "on_chain_end", "on_chat_model_stream")
        names = ("LangGraph", "plan", "answer")
        trace.note(
            "events",
            [
                event_of(trace, e, graph_run)
                for e in events
                if e["event"] in wanted
                and (e["name"] in names or e["event"] == "on_chat_model_stream")
            ],
        )

    ours = await acheck_parity(scenario)
    tokens = [e["data"]["chunk"] for e in ours["events"] if e["event"] == "on_chat_model_stream"]
    assert tokens == ["hi", " ", "there"]
