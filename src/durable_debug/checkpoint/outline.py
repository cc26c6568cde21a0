"""A thread's checkpoints as rows and metadata only: what a checkpoint tree needs, no state.

The widget's DAG shows each checkpoint's id, parent, step, source, the nodes that run next,
the nodes whose writes made it, and whether it holds an interrupt or an error. None of that
needs the state values: the next nodes come from the trigger channels (the same reduction
as :mod:`durable_debug.checkpoint.latest`) and the rest from metadata and the pending writes'
channels. So one query per thread reads the rows, the trigger channels' blobs and the writes
(with the value only for errors, interrupts, resumes and the run input's key names), and no
state blob is loaded.

    tuples = await alist_outline(sqlite_saver, "job-1", "")            # oldest first
    newer = await alist_outline(sqlite_saver, "job-1", "", since=tuples[-1].config)

With ``since``, only checkpoints from that one on are read, plus the parents of the newer
ones (their writes grow while the next step runs). None when the saver cannot (any saver
other than durable_debug's :class:`~durable_debug.checkpoint.sqlite.SqliteSaver`): the caller
then reads the thread in full.
"""

from __future__ import annotations

import json
from typing import Any

from durable_debug.checkpoint.base import CheckpointTuple, RunnableConfig, config_checkpoint_id
from durable_debug.checkpoint.latest import _ListingSerde, split_writes, triggers_only

__all__ = ["OWN_SQLITE_LATEST_MARK", "OWN_SQLITE_OUTLINE", "alatest_mark", "alist_outline"]

OWN_SQLITE_OUTLINE = """
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint,
       c.metadata,
       (SELECT group_concat(json_array(b.channel, b.version, b.type, hex(b.blob)))
          FROM json_each(c.checkpoint, '$.channel_versions') AS v
         CROSS JOIN json_each(v.value) AS ch
         CROSS JOIN checkpoint_blobs b
            ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
           AND b.channel = ch.value AND b.version = v.key
         WHERE ch.value = '__start__' OR ch.value = '__pregel_tasks'
            OR ch.value LIKE 'branch:to:%' OR ch.value LIKE 'join:%'),
       (SELECT group_concat(json_array(w.task_id, w.channel, w.type,
                   CASE WHEN w.channel IN ('__error__', '__interrupt__', '__resume__',
                                           '__input_keys__')
                        THEN hex(w.blob) END, w.task_path))
          FROM checkpoint_writes w
         WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
           AND w.checkpoint_id = c.checkpoint_id)
FROM checkpoints c
WHERE c.thread_id = ? AND c.checkpoint_ns = ?
  AND (c.checkpoint_id >= ? OR c.checkpoint_id IN (
        SELECT p.parent_checkpoint_id FROM checkpoints p
         WHERE p.thread_id = ? AND p.checkpoint_ns = ? AND p.checkpoint_id > ?))
ORDER BY c.checkpoint_id
"""
"""durable_debug's SQLite layout: a thread's checkpoint rows from a given id on (and the
parents of the newer ones), each with its trigger channels' blobs (found through its pointer
map) and its writes (values only for the special channels, as the thread listing reads them,
and for the run input's key list the engine saves in place of the input's state writes)."""


async def alist_outline(
    saver: Any, thread_id: str, checkpoint_ns: str, *, since: RunnableConfig | None = None
) -> list[CheckpointTuple] | None:
    """The checkpoints of one thread without their state values, oldest first; None when
    ``saver`` cannot read them so (see the module docstring)."""
    from durable_debug.checkpoint.sqlite import SqliteSaver

    if not isinstance(saver, SqliteSaver):
        return None
    from durable_debug.checkpoint._rows import parse_checkpoint_row, to_tuple

    start = config_checkpoint_id(since) or ""
    params = (thread_id, checkpoint_ns, start, thread_id, checkpoint_ns, start)
    rows = await saver.aquery(OWN_SQLITE_OUTLINE, params)
    serde = _ListingSerde(saver._blob_serde)
    found: list[CheckpointTuple] = []
    for row in rows:
        parsed = parse_checkpoint_row(row[:6], saver.serde)
        blobs = {
            (parsed.thread_id, parsed.checkpoint_ns, channel, version): (
                kind,
                bytes.fromhex(data or ""),
            )
            for channel, version, kind, data in (json.loads(f"[{row[6]}]") if row[6] else ())
        }
        writes = [
            (task, channel, kind, data or b"")
            for task, channel, kind, data, _ in split_writes(row[7])
        ]
        found.append(to_tuple(triggers_only(parsed), blobs, writes, serde))
    return found


OWN_SQLITE_LATEST_MARK = """
SELECT c.checkpoint_id,
       (SELECT count(*) FROM checkpoint_writes w
         WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
           AND w.checkpoint_id = c.checkpoint_id)
FROM checkpoints c
WHERE c.thread_id = ? AND c.checkpoint_ns = ?
ORDER BY c.checkpoint_id DESC LIMIT 1
"""
"""durable_debug's SQLite layout: a thread's newest checkpoint id and how many writes it has."""


async def alatest_mark(saver: Any, thread_id: str, checkpoint_ns: str) -> tuple[str, int] | None:
    """``(newest checkpoint id, its pending writes)`` of a thread, read from the index alone,
    ``("", 0)`` for a thread without checkpoints; None when ``saver`` cannot say so cheaply.

    A view that watches a thread compares this with what it showed last: a new checkpoint,
    or new writes on the newest one (an error, an interrupt), means it should read again.
    """
    from durable_debug.checkpoint.sqlite import SqliteSaver

    if not isinstance(saver, SqliteSaver):
        return None
    rows = await saver.aquery(OWN_SQLITE_LATEST_MARK, (thread_id, checkpoint_ns))
    return (str(rows[0][0]), int(rows[0][1])) if rows else ("", 0)
