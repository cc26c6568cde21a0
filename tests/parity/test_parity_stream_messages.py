"""Stream mode ``"messages"`` on both libraries: token chunks of a chat model a node calls
(sync or async, without passing its config), messages a node returns, each with the node's
metadata; messages a node got as input are not sent again."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from parity_harness import Api, Trace, acheck_parity

pytestmark = pytest.mark.parity

METADATA_KEYS = ("langgraph_node", "langgraph_step", "langgraph_triggers", "langgraph_path")


def messages_state(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.graph import MessagesState

        return MessagesState
    import durable_debug

    return durable_debug.MessagesState


def pair(trace: Trace, item: Any) -> dict:
    """A ``(message, metadata)`` pair as type, content, labelled id and the metadata users read."""
    message, metadata = item
    return {
        "type": type(message).__name__,
        "content": message.content,
        "id": trace.label("m", message.id),
        "metadata": {k: metadata.get(k) for k in (*METADATA_KEYS, "thread_id")},
        "ns": metadata["langgraph_checkpoint_ns"].partition(":")[0],
    }


def chat_graph(api: Api, *, sync: bool) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage

    model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hello there")]))

    def chat(state: dict) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    async def achat(state: dict) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def tool(state: dict) -> dict:
        # returns what it got plus one new message: only the new one is streamed
        return {"messages": [*state["messages"], ToolMessage("42", tool_call_id="call-1")]}

    return (
        api.StateGraph(messages_state(api))
        .add_node("chat", chat if sync else achat)
        .add_node("tool", tool)
        .add_edge(api.START, "chat")
        .add_edge("chat", "tool")
        .compile(checkpointer=api.MemorySaver())
    )


@pytest.mark.parametrize("sync", [True, False], ids=["sync model", "async model"])
async def test_messages_mode_streams_tokens_and_returned_messages(sync):
    async def scenario(api: Api, trace: Trace) -> None:
        g = chat_graph(api, sync=sync)
        question = {"messages": [{"role": "user", "content": "hi"}]}
        cfg = {"configurable": {"thread_id": "m"}}
        items = [i async for i in g.astream(question, cfg, stream_mode="messages")]
        trace.note("messages", [pair(trace, i) for i in items])
        cfg = {"configurable": {"thread_id": "both"}}
        modes = ["messages", "updates"]
        items = [i async for i in g.astream(question, cfg, stream_mode=modes)]
        trace.note("modes", [mode for mode, _ in items])

    ours = await acheck_parity(scenario)
    assert [m["content"] for m in ours["messages"]] == ["hello", " ", "there", "42"]
