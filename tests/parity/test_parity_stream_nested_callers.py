"""Graphs a node runs itself (not as a subgraph node), and what the streams around it see, as
in LangGraph: a sync node streaming a graph gets every chunk of it, each time; a graph a node
invokes on a thread of its own sends its ``messages`` and ``tools`` chunks to a caller
streaming subgraphs, under the namespace ``()``, and nothing to a caller that does not."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from parity_harness import Api, Trace, acheck_parity, check_parity

pytestmark = pytest.mark.parity


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def messages_state(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.graph import MessagesState
    else:
        from durable_debug.graph import MessagesState
    return MessagesState


def one_node_graph(api: Api, node: Any, checkpointer: Any = None) -> Any:
    return (
        api.StateGraph(messages_state(api))
        .add_node(node)
        .add_edge(api.START, node.__name__)
        .compile(checkpointer=checkpointer)
    )


def chat_and_echo(state: Any) -> dict[str, Any]:
    echo.invoke({"text": "done"})
    return {"messages": [GenericFakeChatModel(messages=iter(["one two"])).invoke("hi")]}


async def achat_and_echo(state: Any) -> dict[str, Any]:
    await echo.ainvoke({"text": "done"})
    return {"messages": [await GenericFakeChatModel(messages=iter(["one two"])).ainvoke("hi")]}


def shown(part: dict[str, Any]) -> tuple[Any, ...]:
    """A v2 part as a user reads it: its namespace, mode, and the token with its node's
    metadata, or the tool event."""
    data = part["data"]
    ns = tuple(segment.split(":")[0] for segment in part["ns"])  # task ids differ by design
    if part["type"] == "messages":
        message, metadata = data
        keys = ("langgraph_node", "langgraph_step", "langgraph_triggers", "langgraph_path")
        return (ns, "messages", message.content, {k: metadata.get(k) for k in keys})
    if part["type"] == "tools":
        return (ns, "tools", data["event"], data.get("tool_name"))
    return (ns, part["type"], data)


@pytest.mark.parametrize("thread", ["child", "parent"])
@pytest.mark.parametrize("saved", [False, True], ids=["unsaved", "saved"])
def test_a_graph_on_its_own_thread_streams_to_a_caller_streaming_subgraphs(
    thread: str, saved: bool
) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        child = one_node_graph(api, chat_and_echo, api.MemorySaver() if saved else None)

        def node(state: Any) -> dict[str, Any]:
            child.invoke({"messages": []}, {"configurable": {"thread_id": thread}})
            return {}

        caller = one_node_graph(api, node, api.MemorySaver())
        config = {"configurable": {"thread_id": "parent"}}
        for subgraphs in (True, False):
            parts = caller.stream(
                {"messages": []},
                config,
                stream_mode=["messages", "tools", "updates"],
                subgraphs=subgraphs,
                version="v2",
            )
            trace.note(f"subgraphs={subgraphs}", [shown(p) for p in parts])

    check_parity(scenario)


async def test_a_graph_on_its_own_thread_streams_to_an_async_caller_streaming_subgraphs() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        child = one_node_graph(api, achat_and_echo)

        async def node(state: Any) -> dict[str, Any]:
            await child.ainvoke({"messages": []}, {"configurable": {"thread_id": "child"}})
            return {}

        parts = one_node_graph(api, node).astream(
            {"messages": []},
            {"configurable": {"thread_id": "parent"}},
            stream_mode=["messages", "tools"],
            subgraphs=True,
            version="v2",
        )
        trace.note("parts", [shown(p) async for p in parts])

    await acheck_parity(scenario)


def test_a_sync_node_streaming_a_graph_twice_gets_all_its_chunks_each_time() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        sub = one_node_graph(api, chat_and_echo)
        received: list[list[Any]] = []

        def node(state: Any) -> dict[str, Any]:
            for _ in range(2):
                stream = sub.stream(
                    {"messages": []}, stream_mode=["messages", "tools"], version="v2"
                )
                received.append([shown(p) for p in stream])
            return {}

        one_node_graph(api, node).invoke({"messages": []})
        trace.note("received", received)
        # leaving a stream early ends it, and the node goes on
        early: list[Any] = []

        def leaves_early(state: Any) -> dict[str, Any]:
            for part in sub.stream({"messages": []}, stream_mode="tools", version="v2"):
                early.append(shown(part))
                break
            return {}

        one_node_graph(api, leaves_early).invoke({"messages": []})
        trace.note("early", early)

    check_parity(scenario)


@pytest.mark.parametrize("outer_subgraphs", [False, True])
def test_a_graph_a_node_streams_gives_its_chunks_under_the_node_namespace(
    outer_subgraphs: bool,
) -> None:
    """The node's own stream gets every chunk of the graph it streams (with the node's
    namespace in v2 parts and with ``subgraphs=True``), and a caller streaming subgraphs gets
    them too."""

    def scenario(api: Api, trace: Trace) -> None:
        from typing_extensions import TypedDict

        class State(TypedDict, total=False):
            x: int

        def inc(state: State) -> dict[str, Any]:
            return {"x": state.get("x", 0) + 1}

        inner = api.StateGraph(State).add_node("inc", inc).add_edge(api.START, "inc").compile()
        seen: list[Any] = []

        def node(state: State) -> dict[str, Any]:
            parts = inner.stream({"x": 1}, stream_mode=["updates", "values"], version="v2")
            seen.append(("v2", [shown(p) for p in parts]))
            chunks = inner.stream({"x": 1}, stream_mode="updates", subgraphs=True)
            seen.append(("subgraphs", [(len(ns), chunk) for ns, chunk in chunks]))
            seen.append(("v1", list(inner.stream({"x": 1}, stream_mode="updates"))))
            seen.append(("invoke", inner.invoke({"x": 5})))
            return {}

        outer = api.StateGraph(State).add_node("node", node).add_edge(api.START, "node").compile()
        parts = outer.stream(
            {}, stream_mode=["updates", "values"], subgraphs=outer_subgraphs, version="v2"
        )
        trace.note("outer", [shown(p) for p in parts])
        trace.note("node", seen)

    check_parity(scenario)


def test_a_node_streaming_messages_under_a_v3_event_stream_gets_chunks() -> None:
    """A graph a node streams with ``stream_mode="messages"`` gets message chunks even while
    its caller runs under ``stream_events(version="v3")``."""

    def scenario(api: Api, trace: Trace) -> None:
        from typing_extensions import TypedDict

        model = GenericFakeChatModel(messages=iter(["nested legacy path"]))

        def call_model(state: Any) -> dict[str, Any]:
            return {"messages": model.invoke(state["messages"])}

        inner = one_node_graph(api, call_model)

        class Outer(TypedDict, total=False):
            text: str
            kinds: list[str]

        def call_subgraph(state: Outer, config: RunnableConfig) -> dict[str, Any]:
            parts = list(inner.stream({"messages": "hi"}, config, stream_mode="messages"))
            return {
                "kinds": sorted({type(message).__name__ for message, _ in parts}),
                "text": "".join(message.content for message, _ in parts),
            }

        outer = (
            api.StateGraph(Outer)
            .add_node("call_subgraph", call_subgraph)
            .add_edge(api.START, "call_subgraph")
            .compile()
        )
        trace.note("output", outer.stream_events({}, version="v3").output)

    check_parity(scenario)


def test_messages_and_events_carry_the_graph_run_metadata() -> None:
    """LangGraph's graph run adds ``ls_integration`` to the metadata every run under it
    inherits: a message a node returns streams with it, a chat model's call keeps its own,
    and ``astream_events`` gives it on the graph's and the nodes' events; a config's own
    value wins."""

    def scenario(api: Api, trace: Trace) -> None:
        from langchain_core.messages import AIMessage

        def answer(state: Any) -> dict[str, Any]:
            return {"messages": [AIMessage(content="returned", id="r1")]}

        def chat(state: Any) -> dict[str, Any]:
            return {"messages": [GenericFakeChatModel(messages=iter(["hi"])).invoke("x")]}

        graph = (
            api.StateGraph(messages_state(api))
            .add_node(answer)
            .add_node(chat)
            .add_edge(api.START, "answer")
            .add_edge("answer", "chat")
            .compile()
        )
        for label, config in (("default", None), ("own", {"metadata": {"ls_integration": "x"}})):
            pairs = graph.stream({"messages": []}, config, stream_mode="messages")
            seen = [(m.content, md.get("ls_integration"), md["langgraph_node"]) for m, md in pairs]
            trace.note(f"messages {label}", seen)

        async def events() -> list[Any]:
            return [
                (e["event"], e["name"], e["metadata"].get("ls_integration"))
                async for e in graph.astream_events({"messages": []}, version="v2")
                if e["event"].startswith("on_chain")
            ]

        import asyncio

        trace.note("events", asyncio.run(events()))

    check_parity(scenario)
