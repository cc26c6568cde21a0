"""How much a thread costs to store: notebook 04's de-duplication, in numbers.

    stats = storage_stats(graph, {"configurable": {"thread_id": "demo-1"}})
    stats.blob_bytes, stats.naive_bytes, round(stats.savings, 2)    # (118, 307, 0.62)

A saver stores one blob per (channel, version), shared by every checkpoint that points at it.
``naive_bytes`` is what storing every channel's value again at every checkpoint would take.
"""

from __future__ import annotations

from typing import NamedTuple

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.detail import blobs_of
from durable_debug.inspect.thread import aread_thread

__all__ = ["StorageStats", "astorage_stats", "storage_stats"]


class StorageStats(NamedTuple):
    """Storage figures for one thread (state channels only; sizes as the saver serializes)."""

    thread_id: str
    checkpoints: int
    """Number of checkpoints, every branch included."""
    pointers: int
    """Entries in all pointer maps together (one per checkpoint and channel)."""
    blobs: int
    """Distinct (channel, version) blobs: what the saver actually stores."""
    blob_bytes: int
    """Bytes of those distinct blobs."""
    naive_bytes: int
    """Bytes if every checkpoint stored a full copy of every channel."""
    pending_writes: int
    """Pending writes kept on the thread's checkpoints."""
    unmeasured: int
    """Blobs whose size is unknown (the serializer refused the value); not in the byte counts."""

    @property
    def savings(self) -> float:
        """Fraction of the naive bytes that de-duplication saves (0.0 for an empty thread)."""
        return 1.0 - self.blob_bytes / self.naive_bytes if self.naive_bytes else 0.0


async def astorage_stats(graph: GraphLike, config: RunnableConfig) -> StorageStats:
    """Count the thread's checkpoints, distinct blobs and bytes, against full copies."""
    thread = await aread_thread(graph, config)
    distinct: dict[tuple[str, str], int | None] = {}
    pointers = naive = 0
    for record in thread:
        for blob in blobs_of(thread, record):
            pointers += 1
            distinct[(blob["channel"], blob["version"])] = blob["size"]
            if blob["size"] is not None:
                naive += blob["size"]
    sizes = [size for size in distinct.values() if size is not None]
    return StorageStats(
        thread_id=thread.thread_id,
        checkpoints=len(thread),
        pointers=pointers,
        blobs=len(distinct),
        blob_bytes=sum(sizes),
        naive_bytes=naive,
        pending_writes=sum(len(record.pending_writes) for record in thread),
        unmeasured=len(distinct) - len(sizes),
    )


def storage_stats(graph: GraphLike, config: RunnableConfig) -> StorageStats:
    """Sync twin of :func:`astorage_stats`."""
    return run_sync(astorage_stats(graph, config))
