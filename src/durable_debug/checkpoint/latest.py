"""Each thread's newest checkpoint in one query: what a thread list needs, and no more.

A thread list shows every thread's checkpoint count, latest step and status. The status comes
from the newest top-level checkpoint's trigger channels (which nodes run next: ``__start__``,
``branch:to:*``, ``join:*``, the Send packets of ``__pregel_tasks``) and its special writes
(errors, interrupts, resumes) — not from its state values, which are never loaded here.

    heads = await alatest_heads(sqlite_saver)  # [LatestHead('job-1', 5, '1ef…', 3, …), …]

:func:`alatest_heads` answers for every
:class:`~durable_debug.checkpoint.base.LatestHeadsSaver`: durable_debug's :class:`SqliteSaver`
(one query on its connection, :func:`sqlite_latest_heads`), LangGraph's SQLite layout (one
query) and its PostgreSQL layout (whole newest checkpoints, cut down by
:func:`heads_of_rows`); None for the others, which are then read thread by thread.

A head holds raw facts only (which trigger channels hold a value, at which version, what each
node has seen, the writes); which tasks they schedule and what the writes say about them is
the inspect layer's reading (:mod:`durable_debug.inspect.listing`). A thread whose newest
checkpoint holds no trigger channel with a value schedules nothing, so its versions_seen is not
even decoded.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from durable_debug._collector import collector_paused
from durable_debug.checkpoint._rows import (
    _SPECIAL_SHAPES,
    _check_special_write,
    full_version,
    missing_blob,
    ungroup_versions,
)
from durable_debug.checkpoint.base import (
    NULL_TASK_ID,
    CheckpointTuple,
    LatestHeadsSaver,
    PendingWrite,
)
from durable_debug.checkpoint.errors import StoreUnavailableError
from durable_debug.checkpoint.names import (
    SPECIAL_WRITES,
    SPECIAL_WRITES_SQL,
    is_trigger_channel,
    parse_trigger,
    trigger_channel_sql,
    valued_trigger_sql,
)

if TYPE_CHECKING:
    from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.checkpoint.serde import CorruptPayloadError, SerdeError

__all__ = [
    "LatestHead",
    "LatestRow",
    "alatest_heads",
    "head_of",
    "heads_of_rows",
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


class LatestHead(NamedTuple):
    """What a thread list reads of a thread's newest top-level checkpoint: no state values."""

    thread_id: str
    checkpoints: int
    """Checkpoints of the thread (top-level namespace)."""
    checkpoint_id: str = ""
    step: Any = None
    """``metadata["step"]`` as stored (None when absent)."""
    triggers: Mapping[str, Any] = {}
    """The trigger channels that hold a value: channel → value, loaded only where the value
    decides which nodes run (a join's sources, the Send packets); None for the others."""
    versions: Mapping[str, str] = {}
    """The versions of :attr:`triggers` (comparable with :attr:`seen`'s)."""
    seen: Mapping[str, Mapping[str, str]] = {}
    """``versions_seen``: node → channel → version, for (at least) the nodes the triggers
    name: what decides whether each has seen its trigger's version."""
    writes: Sequence[PendingWrite] = ()
    """Its pending writes ``(task_id, channel, value)``: the value of each special write
    (error, interrupt, resume), None for the others (their channel says the task finished)."""
    task_ids: Mapping[tuple[str, Any], str] | None = None
    """Task path → task id where the store says it (LangGraph's layouts), else None."""
    error: str | None = None
    """Why the checkpoint could not be read (the other fields are then empty)."""


def head_of(
    thread_id: str,
    checkpoints: int,
    saved: CheckpointTuple,
    task_ids: Mapping[tuple[str, Any], str] | None = None,
) -> LatestHead:
    """A head cut from a whole checkpoint (a saver that returns whole newest checkpoints)."""
    checkpoint = saved.checkpoint
    values = checkpoint["channel_values"]
    versions = checkpoint["channel_versions"]
    triggers = {k: v for k, v in values.items() if is_trigger_channel(k)}
    return LatestHead(
        thread_id,
        checkpoints,
        str(saved.config["configurable"]["checkpoint_id"]),
        saved.metadata.get("step"),
        triggers,
        {k: versions.get(k, "") for k in triggers},
        checkpoint["versions_seen"],
        [(t, c, v if c in SPECIAL_WRITES else None) for t, c, v in saved.pending_writes or ()],
        task_ids,
    )


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


OWN_SQLITE_HEADS = f"""
SELECT latest.n, c.thread_id, c.checkpoint_id, json_extract(c.metadata, '$.step'),
       (SELECT CASE WHEN count(*) THEN
                 '[' || group_concat(json_array(ch.value, v.key, b.type,
                          CASE WHEN {valued_trigger_sql("ch.value")} THEN hex(b.blob) END))
                 || '],' || coalesce(json_extract(c.checkpoint, '$.versions_seen'), 'null')
                 || ',[' || coalesce({latest_writes_sql("checkpoint_writes", "blob")}, '') || ']'
               END
          FROM json_each(json_extract(c.checkpoint, '$.channel_versions')) AS v
         CROSS JOIN json_each(v.value) AS ch
          LEFT JOIN checkpoint_blobs b
            ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' AND b.channel = ch.value
           AND b.version = v.key
         WHERE {trigger_channel_sql("ch.value")} AND (b.type IS NULL OR b.type != 'empty'))
{LATEST_PER_THREAD_SQL}"""
"""durable_debug's SQLite layout: per thread, its count, newest checkpoint id and step, and —
only when some trigger channel of its pointer map holds a value — one text of three JSON
values: those trigger channels (``[channel, stored version, type, hex or null]``: the value
only where it decides which nodes run; type null for an entry whose blob row is lost, which
breaks the thread), the checkpoint's versions_seen, and its writes (as
:func:`latest_writes_sql` reads them). A thread with no trigger holding a value schedules
nothing, so nothing else of it is read. State blobs are never looked up."""


async def alatest_heads(saver: Any) -> list[LatestHead] | None:
    """Each thread's newest top-level checkpoint as a :class:`LatestHead` (in one query where
    the store allows it), sorted by thread id; None if ``saver`` cannot list them so (it is
    no :class:`~durable_debug.checkpoint.base.LatestHeadsSaver`).

    Also None when a stored JSON text SQLite cannot parse stops the query (SQLite fails the
    whole query, not the row): read thread by thread, the damaged thread is named.
    """
    if not isinstance(saver, LatestHeadsSaver):
        return None
    try:
        return list(await saver.alatest_heads())
    except (sqlite3.OperationalError, StoreUnavailableError) as exc:
        if MALFORMED_JSON in str(exc):
            return None
        raise


async def sqlite_latest_heads(saver: SqliteSaver) -> list[LatestHead]:
    """:meth:`~durable_debug.checkpoint.base.LatestHeadsSaver.alatest_heads` on
    durable_debug's SQLite layout: one query on its connection."""
    rows = await saver.aquery(OWN_SQLITE_HEADS)
    with collector_paused():
        return _own_heads(rows, saver)


MALFORMED_JSON = "malformed JSON"
"""What SQLite's JSON functions say of a text they cannot parse."""


def heads_of_rows(rows: Sequence[LatestRow], lookup: Any) -> list[LatestHead]:
    """Heads cut from whole newest checkpoints (a saver that reads those, as LangGraph's
    PostgreSQL layout does); ``lookup``: a config → task ids function, or None."""
    heads = []
    for row in rows:
        if row.tuple is None:
            heads.append(LatestHead(row.thread_id, row.checkpoints, error=row.error))
            continue
        task_ids = None if lookup is None else lookup(row.tuple.config)
        heads.append(head_of(row.thread_id, row.checkpoints, row.tuple, task_ids))
    heads.sort(key=lambda h: h.thread_id)
    return heads


def _own_heads(rows: list[tuple[Any, ...]], saver: SqliteSaver) -> list[LatestHead]:
    loads = saver._blob_serde.loads_typed
    heads: list[LatestHead] = []
    append = heads.append
    for count, thread_id, checkpoint_id, step, facts in rows:
        if facts is None:  # no trigger channel holds a value: it schedules nothing
            append(LatestHead(thread_id, count, checkpoint_id, step))
            continue
        channel = None
        try:
            try:
                entries, seen_stored, writes_stored = json.loads(f"[{facts}]")
            except (ValueError, RecursionError) as exc:
                raise CorruptPayloadError(f"the stored checkpoint is malformed ({exc})") from None
            if type(seen_stored) is not dict:
                raise CorruptPayloadError("the stored versions_seen is not a JSON object")
            triggers: dict[str, Any] = {}
            versions: dict[str, str] = {}
            seen: dict[str, dict[str, str]] = {}
            for channel, version, kind, data in entries:
                if kind is None:
                    raise missing_blob(channel, version)
                triggers[channel] = None if data is None else loads((kind, bytes.fromhex(data)))
                versions[channel] = full_version(version)
                trigger = parse_trigger(channel)
                if trigger is not None and trigger.node not in seen:
                    node_seen = seen_stored.get(trigger.node)
                    if node_seen is not None:
                        seen[trigger.node] = ungroup_versions(node_seen)
            channel = None
            writes = _special_writes(writes_stored, loads) if writes_stored else []
        except SerdeError as exc:
            place = {"thread": thread_id, "checkpoint": checkpoint_id}
            if channel is not None:
                place["channel"] = channel
            where = exc.located(**place)
            append(LatestHead(thread_id, count, error=str(where)))
            continue
        append(LatestHead(thread_id, count, checkpoint_id, step, triggers, versions, seen, writes))
    heads.sort(key=lambda h: h.thread_id)
    return heads


def _special_writes(stored: list[Any], loads: Any) -> list[PendingWrite]:
    """The writes of a listing query (JSON arrays ``[task, channel, type, hex or null, path]``),
    each special write's value loaded and its shape checked (as reading the checkpoint checks
    it), None for the value of the others."""
    writes: list[PendingWrite] = []
    for task, channel, kind, data, _ in stored:
        if data is None:
            writes.append((task, channel, None))
            continue
        value = loads((kind, bytes.fromhex(data)))
        if channel in _SPECIAL_SHAPES and task != NULL_TASK_ID:
            _check_special_write(task, channel, value)
        writes.append((task, channel, value))
    return writes


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
