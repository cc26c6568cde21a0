"""Each thread's newest checkpoint in one query: what a thread list needs, and no more.

A thread list shows every thread's checkpoint count, latest step and status. The status comes
from the newest top-level checkpoint's trigger channels (which nodes run next: ``__start__``,
``branch:to:*``, ``join:*``, the Send packets of ``__pregel_tasks``) and its special writes
(errors, interrupts, resumes) — not from its state values, which are never loaded here.

    rows = await alatest_rows(sqlite_saver)   # [LatestRow('job-1', 5, CheckpointTuple(...)), …]

:func:`alatest_rows` answers for durable_debug's :class:`SqliteSaver` (one query on its
connection) and for any saver with an ``alatest_rows`` method (the LangGraph layout readers);
None for the others, which are then read thread by thread.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from durable_debug.checkpoint._rows import ParsedCheckpoint
from durable_debug.checkpoint.base import CheckpointTuple
from durable_debug.checkpoint.names import (
    SPECIAL_WRITES_SQL,
    is_trigger_channel,
    trigger_channel_sql,
)
from durable_debug.checkpoint.serde import SerdeError

__all__ = [
    "LatestRow",
    "alatest_rows",
    "bulk_decoding",
    "is_trigger_channel",
    "split_writes",
]


class LatestRow(NamedTuple):
    """A thread's newest top-level checkpoint, as the one listing query returns it."""

    thread_id: str
    checkpoints: int
    """Checkpoints of the thread (top-level namespace)."""
    tuple: CheckpointTuple | None
    """The newest checkpoint with its trigger channels and its pending writes — the values of
    errors, interrupts and resumes; None for every other write — but not its state values;
    None when it could not be decoded."""
    error: str | None = None
    """Why it could not be decoded."""


def triggers_only(parsed: ParsedCheckpoint) -> ParsedCheckpoint:
    """``parsed`` with a pointer map of its trigger channels only: what a listing selected the
    blobs of, so reassembling it reads no state and misses no blob."""
    triggers = {
        version: kept
        for version, channels in parsed.pointers.items()
        if (kept := [c for c in channels if is_trigger_channel(c)])
    }
    return parsed._replace(pointers=triggers)


def latest_writes_sql(table: str, value_column: str) -> str:
    """A listing's subquery of the writes saved on checkpoint ``c`` (a ``group_concat`` of
    JSON arrays ``[task, channel, type, hex or null, path]``, read by :func:`split_writes`):
    the value of each special write, only the channel of the others. ``table`` and
    ``value_column`` name the writes table of a layout (ours, or LangGraph's)."""
    return f"""(SELECT group_concat(json_array(w.task_id, w.channel, w.type,
                   CASE WHEN w.channel IN {SPECIAL_WRITES_SQL}
                        THEN hex(w.{value_column}) END, w.task_path))
          FROM {table} w
         WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = ''
           AND w.checkpoint_id = c.checkpoint_id)"""


LATEST_PER_THREAD_SQL = """FROM (SELECT thread_id, max(checkpoint_id) AS checkpoint_id,
               count(*) AS n
        FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) AS latest
JOIN checkpoints c ON c.thread_id = latest.thread_id AND c.checkpoint_ns = ''
 AND c.checkpoint_id = latest.checkpoint_id"""
"""The tail of a listing query: each thread's newest top-level checkpoint as ``c``, and its
checkpoint count as ``latest.n`` (the same in both layouts' ``checkpoints`` tables)."""


OWN_SQLITE_LATEST = f"""
SELECT latest.n, c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
       c.checkpoint,
       json_object('step', json_extract(c.metadata, '$.step'),
                   'source', json_extract(c.metadata, '$.source')),
       (SELECT group_concat(json_array(ch.value, v.key, b.type, hex(b.blob)))
          FROM json_each(c.checkpoint, '$.channel_versions') AS v
         CROSS JOIN json_each(v.value) AS ch
          LEFT JOIN checkpoint_blobs b
            ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' AND b.channel = ch.value
           AND b.version = v.key
         WHERE b.type IS NULL OR {trigger_channel_sql("ch.value")}),
       {latest_writes_sql("checkpoint_writes", "blob")}
{LATEST_PER_THREAD_SQL}"""
"""durable_debug's SQLite layout: per thread, its count, newest checkpoint row (its metadata
reduced to ``step`` and ``source``), one pass over its pointer map that looks up each entry's
blob and keeps the trigger channels' blobs and every entry whose blob is not stored (type
null: a lost row breaks the thread even though the listing decodes no state), and its writes
(the values of the special ones, only the channel of the others: enough to know the task
finished)."""


@contextlib.contextmanager
def bulk_decoding() -> Iterator[None]:
    """Pause the cyclic garbage collector while a listing decodes every thread's checkpoint.

    Decoding allocates many small containers and frees none, so every automatic collection
    would walk all of them again for nothing; the values hold no cycles. The collector is
    turned back on (if it was on) when the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def alatest_rows(saver: Any) -> list[LatestRow] | None:
    """Each thread's newest top-level checkpoint in one query, or None if ``saver`` cannot."""
    own = getattr(saver, "alatest_rows", None)
    if own is not None:
        return list(await own())
    from durable_debug.checkpoint.sqlite import SqliteSaver

    if not isinstance(saver, SqliteSaver):
        return None

    rows = await saver.aquery(OWN_SQLITE_LATEST)
    with bulk_decoding():
        return _own_rows(rows, saver)


def _own_rows(rows: list[tuple[Any, ...]], saver: Any) -> list[LatestRow]:
    from durable_debug.checkpoint._rows import missing_blob, parse_checkpoint_row, to_tuple

    listing_serde = _ListingSerde(saver._blob_serde)
    found: list[LatestRow] = []
    for count, *row in rows:
        thread_id = str(row[0])
        try:
            parsed = parse_checkpoint_row(row[:6], saver.serde)
            blobs: dict[tuple[str, str, str, str], tuple[str, bytes]] = {}
            for channel, version, kind, data in json.loads(f"[{row[6]}]") if row[6] else ():
                if kind is None:
                    raise missing_blob(channel, version).located(
                        thread=thread_id, checkpoint=parsed.checkpoint_id, channel=channel
                    )
                blobs[(thread_id, "", channel, version)] = (kind, bytes.fromhex(data or ""))
            writes = [
                (task, channel, kind, data or b"")
                for task, channel, kind, data, _ in split_writes(row[7])
            ]
            tup = to_tuple(triggers_only(parsed), blobs, writes, listing_serde)
            found.append(LatestRow(thread_id, int(count), tup))
        except SerdeError as exc:
            found.append(LatestRow(thread_id, int(count), None, str(exc)))
    found.sort(key=lambda r: r.thread_id)
    return found


def split_writes(text: Any) -> list[tuple[str, str, str, bytes | None, str]]:
    """The writes of a listing query (``group_concat`` of JSON arrays ``[task, channel, type,
    hex or null, path]``): the value as bytes for a special write, None for the others."""
    if not text:
        return []
    return [
        (
            task,
            channel,
            "null" if data is None else kind,
            None if data is None else bytes.fromhex(data),
            path,
        )
        for task, channel, kind, data, path in json.loads(f"[{text}]")
    ]


class _ListingSerde:
    """Loads the values a listing fetched; a write fetched without its value loads as None."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return None if data[0] == "null" else self.inner.loads_typed(data)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)
