"""``add_messages`` without langchain-core: dict messages, and no import of langchain-core
by ``import durable_debug``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from durable_debug import REMOVE_ALL_MESSAGES, START, MemorySaver, MessagesState, StateGraph
from durable_debug.graph import message


@pytest.fixture
def no_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behave as if langchain-core were not installed."""
    monkeypatch.setattr(message, "_langchain", lambda: None)


def test_dict_messages_get_ids_and_merge_by_id(no_langchain: None) -> None:
    merged = message.add_messages(
        [{"role": "user", "content": "hi", "id": "1"}, "second"],
        [("ai", "hello"), {"role": "user", "content": "edited", "id": "1"}],
    )
    assert [(m["role"], m["content"]) for m in merged] == [
        ("user", "edited"),
        ("user", "second"),
        ("assistant", "hello"),
    ]
    assert merged[0]["id"] == "1" and all(isinstance(m["id"], str) for m in merged)
    assert len({m["id"] for m in merged}) == 3
    kept = message.add_messages(merged, [{"type": "remove", "id": merged[1]["id"]}])
    assert [m["content"] for m in kept] == ["edited", "hello"]
    fresh = message.add_messages(kept, [{"type": "remove", "id": REMOVE_ALL_MESSAGES}, "new"])
    assert [m["content"] for m in fresh] == ["new"]
    with pytest.raises(ValueError, match="no message has id 'zzz'"):
        message.add_messages(kept, [{"type": "remove", "id": "zzz"}])
    with pytest.raises(TypeError, match="without langchain-core a message is a dict"):
        message.add_messages([], [42])


def test_chatbot_on_dict_messages_saves_and_reloads(no_langchain: None) -> None:
    def bot(state: MessagesState) -> dict:
        return {"messages": [{"role": "assistant", "content": state["messages"][-1]["content"]}]}

    graph = StateGraph(MessagesState).add_node("bot", bot).add_edge(START, "bot")
    app = graph.compile(checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [{"role": "user", "content": "ping"}]}, cfg)
    app.invoke({"messages": "pong"}, cfg)
    values = app.get_state(cfg).values["messages"]
    assert [(m["role"], m["content"]) for m in values] == [
        ("user", "ping"),
        ("assistant", "ping"),
        ("user", "pong"),
        ("assistant", "pong"),
    ]


def test_importing_durable_debug_does_not_import_langchain() -> None:
    code = "import sys, durable_debug; print('langchain_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
