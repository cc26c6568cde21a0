"""The metadata of ``messages`` chunks and of a node's config, on both libraries: the run's
``metadata``, the address keys of its ``configurable`` (``thread_id``, not the other keys),
LangGraph's per-node keys, and the call's own tags under ``tags``."""

from __future__ import annotations

from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity

pytestmark = pytest.mark.parity

langchain_fake = pytest.importorskip("langchain_core.language_models.fake_chat_models")


def message_state(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.graph import MessagesState
    else:
        from durable_debug.graph.message import MessagesState
    return MessagesState


def get_config(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.config import get_config as found
    else:
        from durable_debug.config import get_config as found
    return found


def test_message_chunk_and_node_config_metadata() -> None:
    from langchain_core.messages import AIMessage

    def scenario(api: Api, trace: Trace) -> None:
        def call(state: dict) -> dict:
            metadata = get_config(api)()["metadata"]
            trace.note("node config metadata keys", sorted(metadata))
            model = langchain_fake.GenericFakeChatModel(messages=iter([AIMessage("hi there")]))
            return {"messages": [model.invoke(state["messages"])]}

        sub = (
            api.StateGraph(message_state(api))
            .add_node("inner", call)
            .add_edge(api.START, "inner")
            .compile()
        )
        graph = (
            api.StateGraph(message_state(api))
            .add_node("sub", sub)
            .add_edge(api.START, "sub")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {
            "configurable": {"thread_id": "t", "user": "u"},
            "metadata": {"m": 1},
            "tags": ["mine"],
        }
        keys, tags = set(), set()
        for _ns, (_msg, metadata) in graph.stream(
            {"messages": [("user", "hello")]}, cfg, stream_mode="messages", subgraphs=True
        ):
            keys.add(tuple(sorted(k for k in metadata if k != "lc_versions")))
            tags.add(tuple(metadata.get("tags") or ()))
        trace.note("message metadata keys", sorted(keys))
        trace.note("message tags", sorted(tags))

    check_parity(scenario)
