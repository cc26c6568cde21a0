"""The memory saver's outline: a thread's tree from its dicts, no state value decoded.

:class:`~durable_debug.checkpoint.memory.MemorySaver` keeps what the SQL savers' tables keep
(checkpoints without values, one blob per channel version, writes per task), so it hands the
same three parts to :func:`~durable_debug.checkpoint.outline.outline_rows` that the SQL
savers read with their three queries: the checkpoint rows (the stored checkpoint cut to its
id, time, trigger channels and ``versions_seen``; the metadata; the debug record), the writes
(the value only for errors, interrupts and the run input's key names) and the trigger
channels' blobs (:func:`~durable_debug.checkpoint.outline.memory_read_outline` builds the
rows from them). Only the blobs a tree needs are decoded, there; no state blob is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.names import is_trigger_channel

if TYPE_CHECKING:
    from durable_debug.checkpoint.memory import MemorySaver

__all__ = ["memory_latest_mark", "memory_outline_parts"]


def memory_outline_parts(
    saver: MemorySaver,
    thread_id: str,
    checkpoint_ns: str,
    since: str | None,
    valued: tuple[str, ...],
    subscribed: tuple[str, ...] = (),
) -> tuple[list[Any], list[Any], list[Any]]:
    """``(rows, writes, blobs)`` of a thread as
    :func:`~durable_debug.checkpoint.outline.outline_rows` takes them, oldest first; ``since``:
    the checkpoints from that id on and the parents of newer ones; ``valued``: the write
    channels whose value is kept; ``subscribed``: channels read as trigger channels too (a
    ``Pregel``'s)."""
    stored = saver.storage.get(thread_id, {}).get(checkpoint_ns, {})
    if since is None:
        ids = sorted(stored)
    else:
        wanted = {cid for cid in stored if cid >= since}
        wanted.update(
            parent
            for cid in [c for c in wanted if c > since]
            if (parent := stored[cid].parent_id) is not None and parent in stored
        )
        ids = sorted(wanted)
    extra = frozenset(subscribed)
    all_blobs, all_writes, records = saver.blobs, saver.writes, saver.records
    rows: list[Any] = []
    writes: list[Any] = []
    blobs: dict[tuple[str, str], Any] = {}
    for cid in ids:
        checkpoint, metadata, parent_id = stored[cid]
        versions: dict[str, str] = {}
        for channel, version in checkpoint["channel_versions"].items():
            if is_trigger_channel(channel) or channel in extra:
                blob = all_blobs.get((thread_id, checkpoint_ns, channel, version))
                if blob is not None:  # a channel without a value has no blob (nor a trigger)
                    version = str(version)
                    versions[channel] = version
                    blobs[(channel, version)] = blob
        record = {
            "id": checkpoint["id"],
            "ts": checkpoint["ts"],
            "channel_versions": versions,
            "versions_seen": checkpoint["versions_seen"],
        }
        debug = records.get((thread_id, checkpoint_ns, cid))
        rows.append((cid, parent_id, record, dict(metadata), debug))
        bucket = all_writes.get((thread_id, checkpoint_ns, cid))
        if bucket:
            for (task_id, _idx), write in sorted(bucket.items()):
                kind, data = write.blob
                read = write.channel in valued
                writes.append((cid, task_id, write.channel, kind, data if read else None))
    blob_rows = [
        (channel, version, kind, data if is_trigger_channel(channel) else None)
        for (channel, version), (kind, data) in blobs.items()
    ]
    return rows, writes, blob_rows


def memory_latest_mark(saver: MemorySaver, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
    """:meth:`~durable_debug.checkpoint.base.OutlineSaver.alatest_mark` on the memory saver:
    the newest checkpoint id and how many writes it has, ``("", 0)`` for none."""
    stored = saver.storage.get(thread_id, {}).get(checkpoint_ns)
    if not stored:
        return ("", 0)
    newest = max(stored)
    return (newest, len(saver.writes.get((thread_id, checkpoint_ns, newest), ())))
