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
import math
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["to_jsonable"]

_MAX_DEPTH = 64


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
