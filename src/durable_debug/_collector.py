"""A switch for Python's cyclic garbage collector around work that builds many objects at once.

Reading a page of checkpoints, or a thread list, or a graph of a thread's checkpoints allocates
thousands of small containers that hold no reference cycles. Left on, the collector runs many
times while they are built, finds nothing to free, and promotes them a generation each time,
until they set off a collection of the whole heap:

    with collector_paused():
        page = [decode(row) for row in rows]

A reader that builds many objects in batches and consumes each before the next (a listing's
pages) calls :func:`collect_young` between batches instead. Used by the checkpoint layer (the
listings, :mod:`durable_debug.checkpoint.latest`, the LangGraph SQLite reader) and the inspect
layer (the thread list and the checkpoint graph), so it sits below both.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collect_young", "collector_paused"]


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


def collect_young() -> None:
    """Collect the two young generations now, if the collector is on.

    For a reader that builds objects in batches and lets each batch go before building the
    next (a listing's pages): called between batches, it finds the last batch gone, so the
    young collections never see a batch alive. Left to itself, the collector runs its
    middle-generation collection at every tenth young one, wherever the reader is; the batch
    alive then is moved to the oldest generation, and enough of those set off a collection
    of the whole heap, whose cost grows with the heap (measured: two or three per 100,000
    checkpoints listed, a sixth of the listing's CPU time). Cheap when little is alive: it
    walks only the young generations.
    """
    if gc.isenabled():
        gc.collect(1)
