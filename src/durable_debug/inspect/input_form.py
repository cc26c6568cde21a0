"""The fields of a graph's input, for a form that starts a new run: one per key, with its type
and default, never ``None`` unless the schema says so.

    input_fields(graph, ["topic", "notes"])
    # [{"key": "topic", "type": "str", "kind": "string", "default": "", "has_default": False},
    #  {"key": "notes", "type": "list[str]", "kind": "array", "default": [], "has_default": False}]

``kind`` is the JSON kind the form edits the key as (string, integer, number, boolean, array,
object, or json for anything else); ``default`` is the schema's default when it has one
(``has_default``), else the empty value of that kind — "" , 0, false, [], {} — and for a key
whose type cannot be told, "" edited as JSON text. LangGraph's and durable_debug's graphs,
with TypedDict, dataclass or pydantic input schemas, and a graph seen only through its saver
(every key as JSON) are read alike.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import typing
from collections.abc import Iterable
from typing import Any

from durable_debug.inspect.access import GraphLike

__all__ = ["input_fields"]

_EMPTY: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
    "json": "",
}
"""What a field of each kind starts as when the schema gives no default (never None)."""


def _input_class(graph: GraphLike) -> Any:
    """The class of the graph's input schema (TypedDict, dataclass, pydantic model), or None."""
    from durable_debug.graph.schema import StateSchema

    schema = getattr(getattr(graph, "builder", None), "input_schema", None)
    return schema.schema if isinstance(schema, StateSchema) else schema  # durable_debug wraps it


def _hints(cls: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # a forward reference that does not resolve: the raw annotations
        return dict(getattr(cls, "__annotations__", {}) or {})


def _defaults(cls: Any) -> dict[str, Any]:
    """Defaults the schema declares (dataclass fields, pydantic fields, TypedDict: none)."""
    found: dict[str, Any] = {}
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            if field.default is not dataclasses.MISSING:
                found[field.name] = field.default
            elif field.default_factory is not dataclasses.MISSING:
                found[field.name] = field.default_factory()
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict):
        for name, info in model_fields.items():
            if not info.is_required():
                found[name] = info.get_default(call_default_factory=True)
    return found


def _strip(tp: Any) -> Any:
    """``tp`` without ``Annotated[...]``, ``Required``/``NotRequired`` and ``Optional``."""
    while True:
        origin = typing.get_origin(tp)
        wrapper = getattr(origin, "_name", "") in ("Required", "NotRequired")
        if origin is typing.Annotated or (origin is not None and wrapper):
            tp = typing.get_args(tp)[0]
        elif origin is typing.Union or type(tp).__name__ == "UnionType":
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _kind(tp: Any) -> str:
    tp = _strip(tp)
    origin = typing.get_origin(tp) or tp
    if origin is str:
        return "string"
    if origin is bool:
        return "boolean"
    if origin is int:
        return "integer"
    if origin is float:
        return "number"
    if isinstance(origin, type):
        if issubclass(origin, (list, tuple, set, frozenset)) or origin in (
            collections.abc.Sequence,
            collections.abc.Set,
        ):
            return "array"
        if issubclass(origin, dict) or origin is collections.abc.Mapping:
            return "object"
    return "json"


def _label(tp: Any) -> str:
    """A short readable type: ``str``, ``list[str]``, ``list`` (without typing's prefixes)."""
    tp = _strip(tp)
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__
    return repr(tp).replace("typing.", "").replace("collections.abc.", "")


def input_fields(graph: GraphLike, keys: Iterable[str]) -> list[dict[str, Any]]:
    """One field per input key: the input schema's keys when the graph has one, else ``keys``
    (the state's channels) as JSON fields."""
    cls = _input_class(graph)
    hints = _hints(cls) if cls is not None else {}
    defaults = _defaults(cls) if cls is not None else {}
    names = list(hints) or list(keys)
    fields = []
    for name in names:
        tp = hints.get(name)
        kind = _kind(tp) if tp is not None else "json"
        has_default = name in defaults
        fields.append(
            {
                "key": name,
                "type": _label(tp) if tp is not None else "any",
                "kind": kind,
                "default": defaults[name] if has_default else _EMPTY[kind],
                "has_default": has_default,
            }
        )
    return fields
