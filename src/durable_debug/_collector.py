"""A switch for Python's cyclic garbage collector around work that builds many objects at once.

Reading a page of checkpoints, or a thread list, or a graph of a thread's checkpoints allocates
thousands of small containers that hold no reference cycles. Left on, the collector runs many
times while they are built, finds nothing to free, and promotes them a generation each time,
until they set off a collection of the whole heap:

    with collector_paused():
        page = [decode(row) for row in rows]

Used by the checkpoint layer (:mod:`durable_debug.checkpoint.latest`, the LangGraph SQLite
reader) and the inspect layer (the thread list and the checkpoint graph), so it sits below both.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, for code that builds many objects
    holding no cycles; it is turned back on (if it was on) when the block ends.

    Keep the block short and free of awaits: the pause holds for every thread and task of the
    process while it lasts.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
