"""``add_messages`` without langchain-core (dict messages, and no import of langchain-core by
``import durable_debug``), its error for a stored message whose id is not a string, and its
conversion of ``(role, text)`` pairs compared with LangGraph's."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

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
    with pytest.raises(
        ValueError, match="Attempting to delete a message with an ID that doesn't exist \\('zzz'\\)"
    ):
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


def test_a_stored_message_with_a_list_id_fails_the_next_turn_naming_it(tmp_path) -> None:
    """A crafted or damaged checkpoint can rebuild a LangChain message whose id is a list
    (loading sets fields without validating them); the next turn's ``add_messages`` names the
    message and its id instead of failing on an unhashable key."""
    import sqlite3

    import msgpack
    from langchain_core.messages import AIMessage

    from durable_debug import SqliteSaver

    path = tmp_path / "chat.db"

    def bot(state: MessagesState) -> dict:
        return {"messages": [AIMessage("echo")]}

    builder = StateGraph(MessagesState).add_node("bot", bot).add_edge(START, "bot")
    cfg = {"configurable": {"thread_id": "chat"}}
    with SqliteSaver(str(path)) as saver:
        builder.compile(checkpointer=saver).invoke({"messages": [("user", "hi")]}, cfg)
    fields = {"content": "x", "type": "ai", "id": [1], "tool_calls": [], "invalid_tool_calls": []}
    crafted = msgpack.packb(
        [msgpack.ExtType(12, msgpack.packb(["langchain_core.messages.ai:AIMessage", fields]))]
    )
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE checkpoint_blobs SET blob = ?, type = 'msgpack' WHERE channel = 'messages'",
            (crafted,),
        )
    with SqliteSaver(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        with pytest.raises(TypeError, match=r"message 0 of the current messages \(AIMessage\)"):
            graph.invoke({"messages": [("user", "again")]}, cfg)
        with pytest.raises(TypeError, match=r"has the id \[1\], a list"):
            graph.invoke({"messages": [("user", "again")]}, cfg)


def test_user_pairs_become_the_messages_langgraph_makes() -> None:
    """``("user", text)`` input is converted without LangChain's general dispatch: the same
    messages as LangGraph's ``add_messages`` makes of every kind of pair."""
    from langgraph.graph.message import add_messages as langgraph_add_messages

    existing: list[Any] = [HumanMessage("before", id="b0")]
    pairs: list[Any]
    for pairs in (
        [("user", "hi")],
        [("human", "hi"), ("user", "again")],
        [("user", [{"type": "text", "text": "blocks"}])],
        [("ai", "an answer"), ("user", "then a question")],
        [("system", "be brief")],
    ):
        ours = message.add_messages(existing, pairs)
        theirs = langgraph_add_messages(existing, pairs)
        for mine, other in zip(ours[1:], theirs[1:], strict=True):
            other.id = mine.id  # new ids are random on both sides
            assert type(mine) is type(other) and mine == other
            assert mine.__pydantic_fields_set__ == other.__pydantic_fields_set__
    with pytest.raises(NotImplementedError):
        message.add_messages(existing, [("user", "a", "third item")])


def _merge_both_ways(
    monkeypatch: pytest.MonkeyPatch, left: list[Any], right: list[Any], **options: Any
) -> tuple[Any, Any]:
    """``add_messages(left, right)`` as it runs, and by the general way (a position per id),
    each on its own copies of the messages: the result or the error."""
    import copy

    def outcome() -> Any:
        try:
            merged = message.add_messages(copy.deepcopy(left), copy.deepcopy(right), **options)
        except (ValueError, TypeError) as exc:
            return type(exc), str(exc)
        return [(type(m).__name__, m.id, m.content) for m in merged]

    quick = outcome()
    with monkeypatch.context() as patched:
        patched.setattr(message, "_all_new", lambda *args: False)
        general = outcome()
    return quick, general


@pytest.mark.parametrize("seed", range(60))
def test_new_messages_appended_at_once_merge_as_the_general_way(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Messages whose ids are all new are appended without a position per id: the same list,
    or the same error, as the general way for any mix of new, repeated, replacing, removing
    and odd ids."""
    import random

    from langchain_core.messages import AIMessage, RemoveMessage

    rng = random.Random(seed)
    left = [
        rng.choice([HumanMessage, AIMessage])(f"l{i}", id=f"id{i}")
        for i in range(rng.randrange(0, 30))
    ]
    right: list[Any] = []
    for j in range(rng.randrange(1, 4)):
        kind = rng.randrange(10)
        if kind < 5:  # a new id (most often)
            right.append(AIMessage(f"r{j}", id=f"new{j}"))
        elif kind == 5:  # an id of the left side: replaces it
            right.append(AIMessage(f"r{j}", id=f"id{rng.randrange(40)}"))
        elif kind == 6:  # twice the same new id
            right.append(AIMessage(f"r{j}", id="twice"))
        elif kind == 7:
            right.append(RemoveMessage(id=f"id{rng.randrange(40)}"))
        elif kind == 8:
            right.append(AIMessage(f"r{j}", id=f"new{j}"))
            right[-1].id = 7  # an id that is no string (hashable)
        else:
            right.append(AIMessage(f"r{j}", id=f"new{j}"))
            if rng.random() < 0.5:
                right[-1].id = ["un", "hashable"]
            elif left:
                left[-1].id = ["un", "hashable"]
    quick, general = _merge_both_ways(monkeypatch, left, right)
    assert quick == general
    quick, general = _merge_both_ways(monkeypatch, left, right, format="nope")
    assert quick == general and isinstance(quick, tuple)  # an unknown format: an error
