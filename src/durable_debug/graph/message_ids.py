"""Stable ids for the messages written to a ``DeltaChannel`` key, as LangGraph gives them.

LangGraph rebuilds a ``DeltaChannel`` by replaying its saved writes, so it gives each message
written there an id before the write is saved (or an id-less message would read back with a
new id every time, and nothing could target it, e.g. ``RemoveMessage``). This engine saves the
whole value, but a user reads the same ids only if they are given the same way: a message
object without an id gets a UUID, and a message dict in a written list (``{"role": "user",
"content": ...}``) becomes a LangChain message with one (a dict that does not convert raises,
before anything is saved). Messages in an ``Overwrite`` get ids too; other values are left as
they are. The writes are replaced, never the caller's lists and dicts (only the ids of
message objects are set in place).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from durable_debug.graph.channels import MISSING, Channel, overwrite_value
from durable_debug.graph.public_channels import DeltaChannel

__all__ = ["ensure_message_ids"]

_ROLES = frozenset({"user", "human", "assistant", "ai", "tool", "system", "function"})
_TYPES = frozenset({"human", "ai", "tool", "system", "function", "remove"})


def ensure_message_ids(
    channels: Mapping[str, Channel], writes: Sequence[tuple[str, Any]]
) -> list[tuple[str, Any]]:
    """``writes`` with the messages written to ``DeltaChannel`` keys given ids."""
    out = list(writes)
    for i, (key, value) in enumerate(out):
        if isinstance(channels.get(key), DeltaChannel):
            new = _with_ids(value)
            if new is not value:
                out[i] = (key, new)
    return out


def _with_ids(value: Any) -> Any:
    replaced = overwrite_value(value)
    if replaced is not MISSING:
        if isinstance(replaced, (list, tuple)):
            for item in replaced:
                _stamp(item)
        return value
    if isinstance(value, list):
        items = [_list_item(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    if isinstance(value, dict) and _is_message_dict(value) and not value.get("id"):
        return {**value, "id": str(uuid.uuid4())}
    _stamp(value)
    return value


def _list_item(item: Any) -> Any:
    if isinstance(item, dict) and _is_message_dict(item):
        from langchain_core.messages import convert_to_messages

        message = convert_to_messages([item])[0]
        if not message.id:
            message.id = str(uuid.uuid4())
        return message
    _stamp(item)
    return item


def _stamp(item: Any) -> None:
    base = _base_message()
    if base is not None and isinstance(item, base) and item.id is None:
        item.id = str(uuid.uuid4())


def _is_message_dict(item: dict[Any, Any]) -> bool:
    return item.get("role") in _ROLES or item.get("type") in _TYPES


def _base_message() -> type[Any] | None:
    """LangChain's ``BaseMessage`` when langchain-core is installed (messages are its)."""
    try:
        from langchain_core.messages import BaseMessage
    except ImportError:
        return None
    return BaseMessage
