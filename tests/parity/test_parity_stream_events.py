"""``astream_events(version="v2")`` on both libraries: the graph's and each node's
on_chain_start / on_chain_stream / on_chain_end, and on_chat_model_stream token chunks, with
the metadata users filter on (``langgraph_node``, ``langgraph_step``)."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any

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


async def test_astream_events_filters():
    async def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(State)
            .add_node("plan", lambda s: {"log": ["plan"]})
            .add_node("act", lambda s: {"log": ["act"]})
            .add_edge(api.START, "plan")
            .add_edge("plan", "act")
            .compile(checkpointer=api.MemorySaver())
        )
        for label, filters in (
            ("names", {"include_names": ["act"]}),
            ("tags", {"include_tags": ["graph:step:1"]}),
            ("types minus a name", {"include_types": ["chain"], "exclude_names": ["plan"]}),
        ):
            cfg = {"configurable": {"thread_id": label}}
            events = g.astream_events({"log": []}, cfg, version="v2", **filters)
            trace.note(label, [(e["event"], e["name"]) async for e in events])

    ours = await acheck_parity(scenario)
    assert ours["names"] == [
        ("on_chain_start", "act"),
        ("on_chain_stream", "act"),
        ("on_chain_end", "act"),
    ]


def _brief(value: Any) -> Any:
    """Event data as users read it: messages and prompt values by their text."""
    if isinstance(value, dict):
        return {k: _brief(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_brief(v) for v in value]
    if hasattr(value, "content"):
        return value.content
    if hasattr(value, "to_string"):
        return value.to_string()
    return value


async def test_a_runnable_node_is_streamed_and_conditional_edges_have_events():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    async def scenario(api: Api, trace: Trace) -> None:
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi there")]))
        wrap = RunnableLambda(lambda m: {"log": [m.content]}, name="wrap")
        chain = ChatPromptTemplate.from_messages([("human", "{reply}")]) | model | wrap

        def plan(state: State) -> dict:
            return {"log": ["plan"], "reply": state["reply"] + "!"}

        def route(state: State) -> str:
            return "act" if len(state["reply"]) < 2 else api.END

        builder = api.StateGraph(State).add_node("plan", plan).add_node("act", chain)
        builder.add_edge(api.START, "plan").add_edge("act", "plan")
        builder.add_conditional_edges("plan", route, ["act", api.END])
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "runnable"}, "tags": ["mine"]}
        runs: dict[str, str] = {}
        shown = []
        async for event in g.astream_events({"log": [], "reply": ""}, cfg, version="v2"):
            run = runs.setdefault(event["run_id"], f"run{len(runs)}")
            shown.append(
                (
                    event["event"],
                    event["name"],
                    run,
                    [runs.get(p, "unknown") for p in event["parent_ids"]],
                    event["tags"],
                    event["metadata"].get("langgraph_node"),
                    _brief(event["data"]),
                )
            )
        trace.note("events", shown)

    ours = await acheck_parity(scenario)
    kinds = [(e[0], e[1]) for e in ours["events"]]
    assert ("on_chain_start", "route") in kinds  # the conditional edge, under plan's run
    assert ("on_chain_stream", "wrap") in kinds  # the runnable node was streamed
    assert ("on_prompt_start", "ChatPromptTemplate") in kinds
    tokens = [e for e in ours["events"] if e[0] == "on_chat_model_stream"]
    assert [e[6]["chunk"] for e in tokens] == ["hi", " ", "there"]
    assert all(e[1] == "GenericFakeChatModel" and e[4] == ["seq:step:2", "mine"] for e in tokens)


async def test_a_runnable_nodes_chat_model_tokens_reach_stream_mode_messages():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    async def scenario(api: Api, trace: Trace) -> None:
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi there")]))
        wrap = RunnableLambda(lambda m: {"reply": m.content}, name="wrap")
        chain = ChatPromptTemplate.from_messages([("human", "hello")]) | model | wrap
        g = api.StateGraph(State).add_node("chat", chain).add_edge(api.START, "chat").compile()
        items = [i async for i in g.astream({"log": []}, stream_mode="messages")]
        trace.note(
            "messages",
            [(m.content, type(m).__name__, meta["langgraph_node"]) for m, meta in items],
        )

    ours = await acheck_parity(scenario)
    assert [m[0] for m in ours["messages"]] == ["hi", " ", "there"]


async def test_start_with_a_conditional_edge_and_a_run_that_pauses():
    async def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            return {"log": [api.interrupt("go on?")]}

        builder = api.StateGraph(State).add_node("plan", lambda s: {"log": ["plan"]})
        builder.add_node("ask", ask).add_conditional_edges(api.START, lambda s: "plan")
        builder.add_edge("plan", "ask")
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "pause"}, "tags": ["mine"]}
        runs: dict[str, str] = {}
        shown = []
        async for event in g.astream_events({"log": [], "reply": ""}, cfg, version="v2"):
            run = runs.setdefault(event["run_id"], f"run{len(runs)}")
            parents = [runs.get(p, "unknown") for p in event["parent_ids"]]
            kind, name, tags = event["event"], event["name"], event["tags"]
            shown.append((kind, name, run, parents, tags, event["data"]))
        trace.note("events", shown)

    ours = await acheck_parity(scenario)
    hidden = [e for e in ours["events"] if "langsmith:hidden" in e[4]]
    assert [(e[0], e[1]) for e in hidden][:2] == [
        ("on_chain_start", "__start__"),
        ("on_chain_start", "Unnamed"),  # the lambda: a run without a name in an async run
    ]
    assert ours["events"][-1][5] == {"output": {"log": ["plan"], "reply": ""}}


async def test_a_subgraph_node_with_a_chat_model_and_a_conditional_edge():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    async def scenario(api: Api, trace: Trace) -> None:
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="yo")]))

        def ask(state: State) -> dict:
            return {"log": [model.invoke("question").content]}

        inner = api.StateGraph(State).add_node("ask", ask).add_edge(api.START, "ask")
        inner = inner.add_conditional_edges("ask", lambda s: api.END).compile()
        g = api.StateGraph(State).add_node("sub", inner).add_edge(api.START, "sub")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "sub"}, "tags": ["mine"]}
        runs: dict[str, str] = {}
        shown = []
        async for event in g.astream_events({"log": [], "reply": ""}, cfg, version="v2"):
            run = runs.setdefault(event["run_id"], f"run{len(runs)}")
            parents = [runs.get(p, "unknown") for p in event["parent_ids"]]
            node = event["metadata"].get("langgraph_node")
            data = _brief(event["data"])
            shown.append((event["event"], event["name"], run, parents, event["tags"], node, data))
        trace.note("events", shown)

    ours = await acheck_parity(scenario)
    inner_run = next(e for e in ours["events"] if e[1] == "LangGraph" and e[2] != "run0")
    assert inner_run[4] == ["seq:step:1", "mine"]  # a child of the node's run
