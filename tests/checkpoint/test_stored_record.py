"""``stored_record``: what the in-memory saver keeps of a debug record is what the SQL savers
give back after storing its JSON text, whether it is copied directly (plain JSON data, such
as recorded calls) or goes through the text (anything else)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    ToolMessage,
    message_to_dict,
)
from pydantic import field_serializer

from durable_debug.checkpoint.records import TASK_CALLS, aread_records, record_text, stored_record
from durable_debug.graph.recording import stored_value


class Name(str):
    """A str subclass (JSON writes it as a string)."""


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types, with dict keys in the same order (and NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


CALL = {
    "i": 0,
    "kind": "chat_model",
    "name": "Model",
    "hash": "9c1f",
    "input": "2 messages, last HumanMessage: hi",
    "output": "",
    "value": stored_value(
        AIMessage("", id="a", tool_calls=[{"name": "add", "args": {"b": 2, "a": 1}, "id": "c"}])
    ),
    "ms": 0.25,
}


@pytest.mark.parametrize(
    "extra",
    [
        {
            "task_calls": {
                "t2": {"node": "tools", "calls": []},
                "t1": {"node": "agent", "calls": [CALL]},
            }
        },
        {"z": ("a", ("b",)), "a": {"y": -0.0, "x": 1e308, "é": "☃", "s": "\ud800", "n": 10**30}},
        {"f": [float("nan")], "g": {"h": float("inf")}},  # bare words in the text
        {"k": {2: "a", 1: None}},  # non-string keys: the text turns them into strings
        {"k": {Name("b"): Name("v"), "a": True}},  # subclasses
    ],
)
def test_a_stored_record_is_the_record_read_back_from_its_json_text(extra: dict[str, Any]) -> None:
    record = {"graph_fingerprint": "3f9a", **extra}
    kept = stored_record(record)
    assert _same(kept, json.loads(record_text(record) or "{}"))
    assert kept is not record


def test_a_record_json_cannot_hold_still_fails_as_before() -> None:
    with pytest.raises(TypeError):
        stored_record({"x": {"y": object()}})
    with pytest.raises(TypeError):
        stored_record({"x": {1: "a", "b": "c"}})  # keys that do not sort, as json.dumps says


async def test_recorded_calls_read_back_alike_from_memory_and_sqlite(tmp_path: Path) -> None:
    """The calls a run records (a chat model's answer, a streamed one, a tool's plain and
    unusual outputs) read back from ``MemorySaver``, which copies each recorded call once as
    it is taken, equal to those ``SqliteSaver`` gives back from its JSON text: same values,
    types and key order (only the timings differ)."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.tools import tool
    from typing_extensions import TypedDict

    from durable_debug import END, START, MemorySaver, SqliteSaver, StateGraph

    @tool
    def plain(a: int) -> dict[str, Any]:
        """Plain JSON data."""
        return {"b": [a, None, True, 0.5], "a": {"z": "é", "y": []}}

    @tool
    def unusual(a: int) -> dict[str, Any]:
        """Data a JSON round trip changes."""
        return {"t": ("x", (a,)), "s": Name("v"), Name("k"): 1e308}

    class State(TypedDict):
        n: int

    def work(state: State) -> State:
        answer = AIMessage(
            "hi", id="m1", tool_calls=[{"name": "plain", "args": {"a": 1}, "id": "c1"}]
        )
        model = GenericFakeChatModel(messages=iter([answer, AIMessage("streamed", id="m2")]))
        model.invoke("?")
        list(model.stream("again?"))
        plain.invoke({"a": 1})
        return {"n": state["n"] + 1}

    def odd(state: State) -> State:  # a step of its own: its record is copied through JSON
        unusual.invoke({"a": 2})
        return {"n": state["n"] + 1}

    builder = StateGraph(State).add_node("work", work).add_node("odd", odd)
    graph = builder.add_edge(START, "work").add_edge("work", "odd").add_edge("odd", END)
    read: list[list[dict[str, Any]]] = []
    for saver in (MemorySaver(), SqliteSaver(str(tmp_path / "calls.db"))):
        app = graph.compile(checkpointer=saver)
        await app.ainvoke({"n": 0}, {"configurable": {"thread_id": "t"}})
        records = await aread_records(saver, "t")
        calls = [
            {k: v for k, v in call.items() if k != "ms"}
            for _, record in sorted(records.items())
            for task in (record.get(TASK_CALLS) or {}).values()
            for call in task["calls"]
        ]
        read.append(calls)
    assert [c["kind"] for c in read[0]] == ["chat_model", "chat_model", "tool", "tool"]
    assert "chunks" in read[0][1] and "value" in read[0][3]
    assert _same(read[0], read[1])


class Stamped(AIMessage):
    """A message class whose dump is not its fields (a field serializer)."""

    @field_serializer("content")
    def _upper(self, content: Any) -> Any:
        return content.upper() if isinstance(content, str) else content


@pytest.mark.parametrize(
    "message",
    [
        AIMessage("", id="a", tool_calls=[{"name": "add", "args": {"b": 2, "a": 1}, "id": "c"}]),
        AIMessage([{"type": "text", "text": "hi"}], response_metadata={"t": (1, (2,))}),
        AIMessage("x", usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}),
        AIMessageChunk(content="part", id="k"),
        ToolMessage("3", tool_call_id="c", name="add", artifact={"rows": [1, 2]}),
        ToolMessage("3", tool_call_id="c", artifact=object()),  # not JSON: not kept
        HumanMessage("hi", extra_field="kept too"),
        HumanMessage(Name("a str subclass")),
        Stamped(content="shout"),
    ],
)
def test_a_recorded_message_is_kept_as_message_to_dict_through_json(message: Any) -> None:
    """A model's or tool's message is kept as ``message_to_dict`` gives it, as the record's
    JSON text reads back (its fields read directly when that is the same), or not at all
    when that is not JSON data."""
    kept = stored_value(message)
    try:
        expected = json.loads(
            json.dumps({"message": message_to_dict(message)}, sort_keys=True, allow_nan=False)
        )
    except TypeError:
        assert kept is None
        return
    assert kept is not None
    assert _same(stored_record({"v": kept})["v"], expected)
