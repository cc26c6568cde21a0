"""``astream_events(version="v2")`` for what a node calls: a chat model's
``on_chat_model_start`` / ``on_chat_model_end`` and a LangChain tool's ``on_tool_start`` /
``on_tool_end``, under the node's run (``parent_ids``), with the node's ``langgraph_*``
metadata; and the graph's and nodes' metadata (``thread_id``, ``langgraph_path``)."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity

SHOWN_METADATA = (
    "thread_id",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
)


class State(TypedDict):
    log: Annotated[list, operator.add]
    reply: str


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """Data as users read it: message contents, tool inputs and outputs."""
    shown: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and "messages" in value:
            value = [[m.content for m in batch] for batch in value["messages"]]
        elif hasattr(value, "content"):
            value = value.content
        shown[key] = value
    return shown


async def test_chat_model_and_tool_events_inside_a_node():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    @tool
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    async def scenario(api: Api, trace: Trace) -> None:
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi there")]))

        async def answer(state: State) -> dict:
            reply = await model.ainvoke([HumanMessage(content="question")])
            loud = await shout.ainvoke({"text": reply.content})
            return {"log": ["answer"], "reply": loud}

        g = (
            api.StateGraph(State)
            .add_node("answer", answer)
            .add_edge(api.START, "answer")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "nested"}}
        runs: dict[str, str] = {}
        shown = []
        async for event in g.astream_events({"log": []}, cfg, version="v2"):
            if event["event"] == "on_chat_model_stream":
                continue
            run = runs.setdefault(event["run_id"], f"run{len(runs)}")
            shown.append(
                {
                    "event": event["event"],
                    "name": event["name"],
                    "run": run,
                    "parents": [runs.get(p, "unknown") for p in event["parent_ids"]],
                    "metadata": {
                        k: event["metadata"][k] for k in SHOWN_METADATA if k in event["metadata"]
                    },
                    "data": summary(event["data"]) if event["name"] != "LangGraph" else None,
                }
            )
        trace.note("events", shown)

    ours = await acheck_parity(scenario)
    kinds = [(e["event"], e["name"]) for e in ours["events"]]
    assert ("on_chat_model_end", "GenericFakeChatModel") in kinds
    assert ("on_tool_end", "shout") in kinds
    tool_end = next(e for e in ours["events"] if e["event"] == "on_tool_end")
    assert tool_end["data"]["output"] == "HI THERE"
    assert tool_end["parents"] == ["run0", "run1"]


async def test_runnables_a_node_invokes_have_their_own_events():
    from langchain_core.runnables import RunnableLambda

    double = RunnableLambda(lambda x: x * 2, name="double")

    async def scenario(api: Api, trace: Trace) -> None:
        async def node(state: State) -> dict:
            first = await double.ainvoke(21)
            return {"log": [first, double.invoke(first)]}

        g = api.StateGraph(State).add_node("node", node).add_edge(api.START, "node").compile()
        runs: dict[str, str] = {}
        shown = []
        async for event in g.astream_events({"log": []}, version="v2"):
            run = runs.setdefault(event["run_id"], f"run{len(runs)}")
            shown.append(
                (
                    event["event"],
                    event["name"],
                    run,
                    [runs.get(p, "unknown") for p in event["parent_ids"]],
                    event["data"],
                    event["metadata"].get("langgraph_node"),
                )
            )
        trace.note("events", shown)

    ours = await acheck_parity(scenario)
    nested = [e for e in ours["events"] if e[1] == "double"]
    assert [e[0] for e in nested] == ["on_chain_start", "on_chain_end"] * 2
    assert nested[1][4] == {"output": 42, "input": 21}
    assert all(e[3] == ["run0", "run1"] and e[5] == "node" for e in nested)


async def test_a_retriever_a_node_calls_has_its_events():
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class Shelf(BaseRetriever):
        """Finds the documents whose text contains the query."""

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            texts = ["durable graphs", "time travel", "graphs in notebooks"]
            return [Document(page_content=t) for t in texts if query in t]

    shelf = Shelf()

    async def scenario(api: Api, trace: Trace) -> None:
        async def look_up(state: State) -> dict:
            found = await shelf.ainvoke("graphs")
            return {"log": [d.page_content for d in found]}

        g = api.StateGraph(State).add_node("look_up", look_up).add_edge(api.START, "look_up")
        runs: dict[str, str] = {}
        shown = []
        async for event in g.compile().astream_events({"log": []}, version="v2"):
            run = runs.setdefault(event["run_id"], f"run{len(runs)}")
            data = event["data"]
            if "output" in data and isinstance(data["output"], list):
                data = {**data, "output": [getattr(d, "page_content", d) for d in data["output"]]}
            parents = [runs.get(p, "unknown") for p in event["parent_ids"]]
            shown.append((event["event"], event["name"], run, parents, event["tags"], data))
        trace.note("events", shown)

    ours = await acheck_parity(scenario)
    ends = [e for e in ours["events"] if e[0] == "on_retriever_end"]
    assert [e[5]["output"] for e in ends] == [["durable graphs", "graphs in notebooks"]]
