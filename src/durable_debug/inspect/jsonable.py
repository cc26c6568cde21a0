"""Channel values made displayable: everything that crosses to the widget goes through here.

    to_jsonable({"when": datetime(2024, 1, 2), "tags": {"b", "a"}, "raw": b"xyz"})
    # {'when': '2024-01-02T00:00:00', 'tags': ['a', 'b'], 'raw': '<3 bytes>'}

Dataclasses and pydantic models become dicts, tuples and sets lists, dates ISO strings, bytes
``"<N bytes>"``, non-finite floats strings; anything else its ``repr``. The result is plain JSON
(``json.dumps`` with ``allow_nan=False`` accepts it).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import enum
import json
import math
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["CLIP_BYTES", "CLIP_CHARS", "CLIP_ITEMS", "clip", "clip_jsonable", "to_jsonable"]

_MAX_DEPTH = 64

CLIP_CHARS = 2000
"""Characters of a string shown before it is cut (the rest is asked for with "show all")."""
CLIP_ITEMS = 100
"""Items of a list, or keys of a dict, shown before it is cut."""
CLIP_BYTES = 16_000
"""JSON bytes one clipped value aims at: past it, cut again with a tenth of the limits."""


def to_jsonable(value: Any) -> Any:
    """Return a JSON-compatible copy of ``value`` for display (see the module docstring)."""
    return _convert(value, 0, set())


def _convert(value: Any, depth: int, seen: set[int]) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, enum.Enum):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if depth >= _MAX_DEPTH:
        return "<too deep>"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (_dt.timedelta, uuid.UUID, decimal.Decimal)):
        return str(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if id(value) in seen:
        return "<cycle>"
    seen = seen | {id(value)}
    if isinstance(value, Mapping):
        return {_key(k): _convert(v, depth + 1, seen) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_convert(v, depth + 1, seen) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [_convert(v, depth + 1, seen) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _convert(getattr(value, f.name), depth + 1, seen)
            for f in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return _convert(dump(), depth + 1, seen)
        except Exception:  # a model that cannot dump itself is still shown, by repr
            return repr(value)
    return repr(value)


def _key(key: Any) -> str:
    converted = to_jsonable(key)
    return converted if isinstance(converted, str) else repr(key)


def clip(value: Any) -> tuple[Any, bool]:
    """``value`` (already JSON-ready) cut for display, and whether anything was cut.

    Strings longer than :data:`CLIP_CHARS` keep their start, then ``… (N characters)``;
    lists and dicts longer than :data:`CLIP_ITEMS` keep their first items and end with a
    ``… N more items`` entry (a ``"…"`` key for a dict). When the result is still longer than
    :data:`CLIP_BYTES` as JSON, it is cut again with a tenth of both limits.
    """
    cut = [False]
    result = _clip(value, CLIP_CHARS, CLIP_ITEMS, cut)
    if cut[0] and len(json.dumps(result)) > CLIP_BYTES:
        result = _clip(value, CLIP_CHARS // 10, CLIP_ITEMS // 10, cut)
    elif not cut[0] and len(json.dumps(value)) > CLIP_BYTES:
        cut[0] = True
        result = _clip(value, CLIP_CHARS // 10, CLIP_ITEMS // 10, cut)
    return result, cut[0]


def clip_jsonable(value: Any) -> tuple[Any, bool]:
    """``clip(to_jsonable(value))``, without converting the items of a long list (or tuple)
    that the cut leaves out: a 10,000-row channel converts its first :data:`CLIP_ITEMS`."""
    if type(value) not in (list, tuple) or len(value) <= CLIP_ITEMS:
        return clip(to_jsonable(value))
    seen = {id(value)}
    head = [_convert(item, 1, seen) for item in value[:CLIP_ITEMS]]
    for chars, items in ((CLIP_CHARS, CLIP_ITEMS), (CLIP_CHARS // 10, CLIP_ITEMS // 10)):
        result = _clip(head[:items], chars, items, [True])
        result.append(f"… {len(value) - items:,} more items")
        if len(json.dumps(result)) <= CLIP_BYTES:
            break
    return result, True


def _clip(value: Any, chars: int, items: int, cut: list[bool]) -> Any:
    if isinstance(value, str):
        if len(value) <= chars:
            return value
        cut[0] = True
        return f"{value[:chars]}… ({len(value):,} characters)"
    if isinstance(value, list):
        kept = [_clip(v, chars, items, cut) for v in value[:items]]
        if len(value) > items:
            cut[0] = True
            kept.append(f"… {len(value) - items:,} more items")
        return kept
    if isinstance(value, dict):
        pairs = list(value.items())
        kept_dict = {k: _clip(v, chars, items, cut) for k, v in pairs[:items]}
        if len(pairs) > items:
            cut[0] = True
            kept_dict["…"] = f"{len(pairs) - items:,} more keys"
        return kept_dict
    return value
