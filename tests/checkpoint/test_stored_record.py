"""``stored_record``: what the in-memory saver keeps of a debug record is what the SQL savers
give back after storing its JSON text, whether it is copied directly (plain JSON data, such
as recorded calls) or goes through the text (anything else)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from durable_debug.checkpoint.records import record_text, stored_record
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
