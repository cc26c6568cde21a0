"""Shared helpers for the engine tests (imported by name: conftest modules are not importable)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from durable_debug import MemorySaver


class LogState(TypedDict):
    """A plain key and an append-only key, as in notebook 01."""

    value: str
    log: Annotated[list, operator.add]


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    """Config for ``thread``."""
    return {"configurable": {"thread_id": thread, **extra}}


def checkpoint_count(saver: MemorySaver) -> int:
    """How many checkpoints the saver holds, over all threads."""
    return sum(len(c) for ns in saver.storage.values() for c in ns.values())
