"""to_jsonable: what the widget receives for any channel value."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid

import pydantic

from durable_debug.inspect import to_jsonable


class Color(enum.Enum):
    RED = 1


@dataclasses.dataclass
class Ticket:
    id: int
    tags: frozenset


class Message(pydantic.BaseModel):
    role: str
    at: dt.datetime


def test_values_become_plain_json():
    when = dt.datetime(2024, 1, 2, 3, 4, 5)
    value = {
        "ticket": Ticket(7, frozenset({"b", "a"})),
        "message": Message(role="user", at=when),
        "tuple": (1, 2.5, None),
        "raw": b"xyz",
        "color": Color.RED,
        "id": uuid.UUID(int=1),
        "nan": float("nan"),
        5: "int key",
        "other": object,
    }
    out = to_jsonable(value)
    json.dumps(out, allow_nan=False)
    assert out["ticket"] == {"id": 7, "tags": ["a", "b"]}
    assert out["message"] == {"role": "user", "at": "2024-01-02T03:04:05"}
    assert out["tuple"] == [1, 2.5, None]
    assert out["raw"] == "<3 bytes>"
    assert out["color"] == "Color.RED"
    assert out["id"] == "00000000-0000-0000-0000-000000000001"
    assert out["nan"] == "nan" and out["5"] == "int key"
    assert out["other"] == "<class 'object'>"


def test_cycles_do_not_recurse_forever():
    loop: list = [1]
    loop.append(loop)
    assert to_jsonable(loop) == [1, "<cycle>"]


def test_clip_cuts_long_strings_lists_and_dicts_and_says_how_much():
    from durable_debug.inspect.jsonable import CLIP_BYTES, clip

    small = {"a": [1, 2], "b": "text"}
    assert clip(small) == (small, False)
    cut, was_cut = clip(
        {"s": "x" * 5000, "l": list(range(250)), "d": {str(i): i for i in range(150)}}
    )
    assert was_cut
    assert cut["s"].startswith("x" * 100) and cut["s"].endswith("… (5,000 characters)")
    assert cut["l"][:3] == [0, 1, 2] and cut["l"][-1] == "… 150 more items"
    assert cut["d"]["…"] == "50 more keys"
    many, _ = clip(["y" * 1999] * 100)  # each item under the limit, the whole far over it
    assert len(json.dumps(many)) <= CLIP_BYTES


def test_clip_jsonable_is_clip_of_to_jsonable_for_long_lists() -> None:
    from durable_debug.inspect.jsonable import CLIP_ITEMS, clip, clip_jsonable

    rows = [{"id": i, "payload": "y" * 200, "when": dt.date(2024, 1, 2)} for i in range(1_000)]
    small = [(i, {i}) for i in range(CLIP_ITEMS + 1)]
    looped: list[object] = [1]
    looped += [looped, *range(CLIP_ITEMS * 2)]
    for value in (rows, tuple(rows), small, looped, rows[:CLIP_ITEMS], "x" * 5_000, {"a": rows}):
        assert clip_jsonable(value) == clip(to_jsonable(value))
