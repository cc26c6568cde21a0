"""A thread's checkpoints as rows and metadata only: what a checkpoint tree needs, no state.

The widget's DAG shows each checkpoint's id, parent, step, source, the nodes that run next,
the nodes whose writes made it, and whether it holds an interrupt or an error. None of that
needs the state values: the next nodes follow from the trigger channels that hold a value
(which the inspect layer reads, as it reads a thread list's heads) and the rest from metadata
and the pending writes' channels. So a saver that is an
:class:`~durable_debug.checkpoint.base.OutlineSaver` reads a thread's rows (with their debug
records), its writes (the
value only for errors, interrupts and the run input's key names) and its trigger channels'
blobs, and no state blob is loaded. On durable_debug's SQLite and PostgreSQL layouts that
is one read session of three plain queries (:func:`sql_read_outline`: the same queries in
each dialect, :class:`OutlineSql`); the memory saver takes the same three parts from its dicts
(:mod:`durable_debug.checkpoint.memory_outline`); all build the rows with
:func:`outline_rows`.

    rows = await aread_outline(sqlite_saver, "job-1", "")                   # oldest first
    newer = await aread_outline(sqlite_saver, "job-1", "", since=rows[-1].checkpoint_id)

With ``since``, only checkpoints from that one on are read, plus the parents of the newer
ones (their writes grow while the next step runs). None when the saver cannot: the caller
then reads the thread through the saver protocol.

A graph built from channels (the low-level ``Pregel``) runs its nodes from channels of any
name. The caller passes those as ``subscribers`` (channel → the nodes it triggers): they are
read as trigger channels too, whether each holds a value (not the value itself) and what its
subscribers have seen of it.
"""

from __future__ import annotations

import json
import json.scanner
import sqlite3
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from durable_debug._collector import collector_paused
from durable_debug.checkpoint.base import OutlineSaver, SubgraphHeadsSaver
from durable_debug.checkpoint.names import (
    BRANCH_PREFIX,
    ERROR,
    INPUT_KEYS,
    INTERRUPT,
    JOIN_PREFIX,
    TRIGGER_CHANNELS,
    trigger_channel_sql,
)

if TYPE_CHECKING:
    from durable_debug.checkpoint.sqlite import SqliteSaver

__all__ = [
    "OWN_SQLITE_LATEST_MARK",
    "OWN_SQLITE_OUTLINE_ROWS",
    "OWN_SQLITE_OUTLINE_WRITES",
    "OWN_SQLITE_TRIGGER_BLOBS",
    "PG_OUTLINE",
    "SQLITE_OUTLINE",
    "VALUED_WRITE_CHANNELS",
    "OutlineRow",
    "OutlineSql",
    "TaskWrites",
    "alatest_mark",
    "aread_outline",
    "aread_outline_into",
    "asubgraph_heads",
    "memory_read_outline",
    "outline_rows",
    "pg_latest_mark",
    "pg_read_outline",
    "sql_outline_queries",
    "sql_read_outline",
    "sqlite_latest_mark",
    "sqlite_read_outline",
    "sqlite_subgraph_heads",
]

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
    ``("", 0)`` for a thread without checkpoints; None when ``saver`` cannot say so cheaply
    (it is no :class:`~durable_debug.checkpoint.base.OutlineSaver`).

    A view that watches a thread compares this with what it showed last: a new checkpoint,
    or new writes on the newest one (an error, an interrupt), means it should read again.
    """
    if not isinstance(saver, OutlineSaver):
        return None
    return await saver.alatest_mark(thread_id, checkpoint_ns)


async def sqlite_latest_mark(
    saver: SqliteSaver, thread_id: str, checkpoint_ns: str
) -> tuple[str, int]:
    """:meth:`OutlineSaver.alatest_mark` on durable_debug's SQLite layout (one index query)."""
    rows = await saver.aquery(OWN_SQLITE_LATEST_MARK, (thread_id, checkpoint_ns))
    return (str(rows[0][0]), int(rows[0][1])) if rows else ("", 0)


OWN_SQLITE_SUBGRAPH_HEADS = """
SELECT c.checkpoint_ns, c.metadata
FROM (SELECT checkpoint_ns, max(checkpoint_id) AS newest FROM checkpoints
       WHERE thread_id = ? AND checkpoint_ns <> '' GROUP BY checkpoint_ns) AS n
JOIN checkpoints c
  ON c.thread_id = ? AND c.checkpoint_ns = n.checkpoint_ns AND c.checkpoint_id = n.newest
"""
"""durable_debug's SQLite layout: each subgraph namespace of a thread with its newest
checkpoint's metadata (the primary key's range for the thread; no state is read)."""


async def asubgraph_heads(saver: Any, thread_id: str) -> list[tuple[str, Any]] | None:
    """``(namespace, metadata of its newest checkpoint)`` for every subgraph namespace of a
    thread, decoding no state; None when ``saver`` cannot say so cheaply (it is no
    :class:`~durable_debug.checkpoint.base.SubgraphHeadsSaver`: the caller then lists the
    thread's checkpoints)."""
    if not isinstance(saver, SubgraphHeadsSaver):
        return None
    return list(await saver.asubgraph_heads(thread_id))


async def sqlite_subgraph_heads(saver: Any, thread_id: str) -> list[tuple[str, Any]]:
    """:meth:`SubgraphHeadsSaver.asubgraph_heads` on durable_debug's SQLite layout (one
    query)."""
    rows = await saver.aquery(OWN_SQLITE_SUBGRAPH_HEADS, (thread_id, thread_id))
    return [(str(ns), _fast_json(metadata, saver.serde)) for ns, metadata in rows]


# --- the lean outline: rows, writes and trigger blobs in three plain queries ------------------

_SINCE = """checkpoint_id IN (
        SELECT p.checkpoint_id FROM checkpoints p
         WHERE p.thread_id = {p} AND p.checkpoint_ns = {p} AND p.checkpoint_id >= {p}
        UNION SELECT p.parent_checkpoint_id FROM checkpoints p
         WHERE p.thread_id = {p} AND p.checkpoint_ns = {p} AND p.checkpoint_id > {p})"""
"""The checkpoints from a given id on and the parents of the newer ones (two index ranges:
an ``OR`` of the two would scan the whole thread); ``p``: the dialect's placeholder."""

_OUTLINE_ROWS = """
SELECT checkpoint_id, parent_checkpoint_id, {checkpoint}, {metadata}, {{debug}} FROM checkpoints
WHERE thread_id = {p} AND checkpoint_ns = {p}{{since}}
ORDER BY checkpoint_id
"""

VALUED_WRITE_CHANNELS = (ERROR, INTERRUPT, INPUT_KEYS)
"""The write channels whose value a tree reads (an error's text, the interrupts, the run
input's key names); of the others only the channel is read."""

_VALUED_LIST = ", ".join(f"'{name}'" for name in VALUED_WRITE_CHANNELS)

_OUTLINE_WRITES = f"""
SELECT checkpoint_id, task_id, channel, type,
       CASE WHEN channel IN ({_VALUED_LIST}) THEN blob END
FROM checkpoint_writes
WHERE thread_id = {{p}} AND checkpoint_ns = {{p}}{{{{since}}}}
ORDER BY checkpoint_id, task_id, idx
"""

_TRIGGER_BLOBS = """
SELECT channel, version, type, {{value}} FROM checkpoint_blobs
WHERE thread_id = {p} AND checkpoint_ns = {p} AND {{where}}
"""

_SQLITE_ROW_TRIGGER_BLOBS = """
SELECT DISTINCT b.channel, b.version, b.type, {value}
  FROM checkpoints c
 CROSS JOIN json_each(c.checkpoint, '$.channel_versions') AS v
 CROSS JOIN json_each(v.value) AS ch
 CROSS JOIN checkpoint_blobs b
    ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
   AND b.channel = ch.value AND b.version = v.key
 WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.{since}
   AND {where}
"""

PG_CHANNEL_VERSION_PAIRS = """LATERAL (
    SELECT ch.channel,
           CASE WHEN jsonb_typeof(v.value) = 'array' THEN v.key ELSE v.value #>> '{{}}' END
      FROM jsonb_each(c.checkpoint -> 'channel_versions') AS v,
           jsonb_array_elements_text(CASE WHEN jsonb_typeof(v.value) = 'array'
               THEN v.value ELSE jsonb_build_array(v.key) END) AS ch(channel)
    ) AS p(channel, version)"""
"""durable_debug's PostgreSQL layout: each ``(channel, version)`` a checkpoint row ``c``
points at, from its ``channel_versions`` (grouped by version, or a plain channel → version
map written before maps were grouped), to ``CROSS JOIN``; braces escaped for ``format``."""

_PG_ROW_TRIGGER_BLOBS = (
    """
SELECT DISTINCT p.channel, p.version, b.type, {value}
  FROM checkpoints c
 CROSS JOIN """
    + PG_CHANNEL_VERSION_PAIRS
    + """
 CROSS JOIN LATERAL (
    SELECT b.channel, b.type, b.blob FROM checkpoint_blobs AS b
     WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
       AND b.channel = p.channel COLLATE "C" AND b.version = p.version COLLATE "C"
     LIMIT 1) AS b  -- LIMIT: a primary-key lookup per pointer, never a scan of the thread
 WHERE c.thread_id = %s AND c.checkpoint_ns = %s AND c.{since}
   AND {where}
"""
)


class OutlineSql(NamedTuple):
    """One SQL layout's outline queries (durable_debug's tables on SQLite or PostgreSQL): the
    same three reads, in its dialect."""

    p: str
    """The placeholder."""
    rows: str
    """The checkpoint rows with their debug records (format with ``since`` and ``debug``)."""
    writes: str
    """The writes of the same checkpoints, the value only where a tree needs it (format with
    ``since``)."""
    blobs: str
    """Every trigger channel's blob of a thread, for a first read (format with ``value``, the
    blob column or a ``CASE`` on it, and ``where``, the condition on ``channel``)."""
    row_blobs: str
    """The trigger blobs the rows of a later read point at (format with ``since``, ``value``
    and ``where``, on ``b.blob`` and :attr:`row_channel`)."""
    row_channel: str
    """The channel name column of :attr:`row_blobs`, compared byte-wise."""
    debug: str
    """The debug record column, as text."""

    @property
    def since(self) -> str:
        """:data:`_SINCE` in this dialect."""
        return _SINCE.format(p=self.p)


SQLITE_OUTLINE = OutlineSql(
    "?",
    _OUTLINE_ROWS.format(p="?", checkpoint="checkpoint", metadata="metadata"),
    _OUTLINE_WRITES.format(p="?"),
    _TRIGGER_BLOBS.format(p="?"),
    _SQLITE_ROW_TRIGGER_BLOBS,
    "ch.value",
    "debug",
)
"""durable_debug's SQLite layout (JSON stored as text)."""

_PG_CHECKPOINT = """CASE WHEN jsonb_typeof(checkpoint) = 'object' THEN
    '{{"v":' || coalesce((checkpoint -> 'v')::text, 'null')
    || ',"id":' || coalesce((checkpoint -> 'id')::text, 'null')
    || ',"ts":' || coalesce((checkpoint -> 'ts')::text, 'null')
    || ',"channel_versions":' || coalesce((checkpoint -> 'channel_versions')::text, '{{}}')
    || ',"versions_seen":' || coalesce((checkpoint -> 'versions_seen')::text, '{{}}') || '}}'
  ELSE checkpoint::text END"""
"""The part of a stored checkpoint a tree reads, as JSON text that starts as SQLite's stored
text does (``{"v":1,"id":…,"ts":…,"channel_versions":{…}``: ``jsonb`` prints its keys in
another order), so a checkpoint that names no trigger channel is not decoded
(``_untriggered_ts``); a value that is not an object is read as it is (and refused)."""

PG_OUTLINE = OutlineSql(
    "%s",
    _OUTLINE_ROWS.format(p="%s", checkpoint=_PG_CHECKPOINT, metadata="metadata::text"),
    _OUTLINE_WRITES.format(p="%s"),
    _TRIGGER_BLOBS.format(p="%s"),
    _PG_ROW_TRIGGER_BLOBS,
    '(p.channel COLLATE "C")',
    "debug::text",
)
"""durable_debug's PostgreSQL layout (``jsonb`` columns read as text; key columns compare
byte-wise, ``COLLATE "C"``)."""

OWN_SQLITE_OUTLINE_ROWS = SQLITE_OUTLINE.rows
"""durable_debug's SQLite layout: a thread's checkpoint rows with their debug records
(``since``: ``""``, or ``AND`` :data:`_SINCE` for a later read; ``debug``: the column, or
``NULL`` in a file older than the column, read as it is)."""

OWN_SQLITE_OUTLINE_WRITES = SQLITE_OUTLINE.writes
"""The writes of the same checkpoints: the value only where a tree needs it (an error's text,
the interrupts, the run input's key names), else the channel alone."""

OWN_SQLITE_TRIGGER_BLOBS = SQLITE_OUTLINE.blobs.format(
    value="blob", where=trigger_channel_sql("channel")
)
"""Every trigger channel's blob of a thread (the first read: one pass, no JSON in SQL)."""


def _blobs_query(dialect: OutlineSql, later: bool, count: int) -> str:
    """The trigger blobs query of a first read (``later``: of a later one), with ``count``
    more channels bound as parameters after the thread's, whose value is not read (only its
    kind: whether the channel holds a value)."""
    query, channel, blob = (
        (dialect.row_blobs, dialect.row_channel, "b.blob")
        if later
        else (dialect.blobs, "channel", "blob")
    )
    named = trigger_channel_sql(channel)
    if not count:
        value, where = blob, named
    else:
        marks = ", ".join([dialect.p] * count)
        where = f"({named} OR {channel} IN ({marks}))"
        stored = trigger_channel_sql(channel if not later else "b.channel")
        value = f"CASE WHEN {stored} THEN {blob} END"
    if later:
        return query.format(since=dialect.since, value=value, where=where)
    return query.format(value=value, where=where)


class TaskWrites(NamedTuple):
    """What one task's saved writes say, as a tree shows it."""

    finished: bool
    """It wrote its output (or said it writes nothing)."""
    failed: bool
    """Its last error write holds a message."""
    interrupts: int
    """How many interrupts its last interrupt write holds."""


class OutlineRow(NamedTuple):
    """One checkpoint of :func:`aread_outline`: what its tree mark needs, no state value."""

    checkpoint_id: str
    parent_id: str | None
    metadata: dict[str, Any]
    ts: str
    triggers: dict[str, Any]
    """The trigger channels that hold a value (the Send packets' channel too): channel →
    value, loaded only where the value decides which nodes run (a join's sources, the
    packets), None for the others. Which tasks they schedule is the inspect layer's reading."""
    versions: dict[str, str]
    """The versions of :attr:`triggers` (engine form, comparable with :attr:`seen`'s)."""
    seen: dict[str, dict[str, str]]
    """``versions_seen`` cut to the triggers: node → trigger channel → the version it saw."""
    tasks: dict[str, TaskWrites]
    """Task id → what its writes say, for the tasks with writes saved on this checkpoint."""
    debug: dict[str, Any] | None = None
    """Its debug record (:mod:`durable_debug.checkpoint.records`), None if it has none; read
    only: rows that store the same record text share one dict."""


async def aread_outline(
    saver: Any, thread_id: str, checkpoint_ns: str, *, since: str | None = None
) -> list[OutlineRow] | None:
    """The checkpoints of one thread as a tree needs them, oldest first; None when ``saver``
    cannot read them so (it is no :class:`~durable_debug.checkpoint.base.OutlineSaver`).

    ``since``: a checkpoint id; only the checkpoints from it on are read, plus the parents of
    newer ones. A damaged row raises a located
    :class:`~durable_debug.checkpoint.serde.CorruptPayloadError`.
    """
    if not isinstance(saver, OutlineSaver):
        return None
    return list(await saver.aread_outline(thread_id, checkpoint_ns, since=since))


async def aread_outline_into(
    saver: Any,
    thread_id: str,
    checkpoint_ns: str,
    take: Callable[[list[OutlineRow]], None],
    *,
    since: str | None = None,
    subscribers: Mapping[str, Sequence[str]] | None = None,
) -> bool:
    """Read as :func:`aread_outline` does and hand the rows to ``take``; False (``take`` not
    called) when ``saver`` cannot read an outline.

    ``subscribers``: channels other than the engine's trigger channels that run nodes (a
    ``Pregel``'s), each with the nodes it triggers; read as trigger channels (see the module
    docstring). durable_debug's SQLite, PostgreSQL, Redis and memory savers read them; another
    outline saver then answers False.

    The rows are built and ``take`` runs in one pause of the garbage collector, with no await
    inside it: what ``take`` keeps of the rows is built alongside them, and the rows are gone
    before the collector is back on, so its first collection walks only what ``take`` kept.
    """
    if not isinstance(saver, OutlineSaver):
        return False
    dialect = _own_sql_layout(saver)
    if dialect is not None:
        rows, writes, blobs = await sql_outline_queries(
            saver, dialect, thread_id, checkpoint_ns, since, tuple(subscribers or ())
        )
        with collector_paused():  # many small containers, no cycles
            take(outline_rows(rows, writes, blobs, saver, thread_id, subscribers))
        return True
    memory = sys.modules.get("durable_debug.checkpoint.memory")
    own_memory = getattr(memory, "MemorySaver", None)
    if own_memory is not None and _reads_as(saver, own_memory):
        from durable_debug.checkpoint.memory_outline import memory_outline_parts

        rows, writes, blobs = memory_outline_parts(
            cast(Any, saver),
            thread_id,
            checkpoint_ns,
            since,
            VALUED_WRITE_CHANNELS,
            tuple(subscribers or ()),
        )
        with collector_paused():
            take(outline_rows(rows, writes, blobs, saver, thread_id, subscribers))
        return True
    own_redis = getattr(sys.modules.get("durable_debug.checkpoint.redis"), "RedisSaver", None)
    if own_redis is not None and _reads_as(saver, own_redis):
        rows, writes, blobs = await cast(Any, saver)._outline_parts(
            thread_id, checkpoint_ns, since, tuple(subscribers or ())
        )
        with collector_paused():
            take(outline_rows(rows, writes, blobs, saver, thread_id, subscribers))
        return True
    if subscribers:
        return False
    listed = list(await saver.aread_outline(thread_id, checkpoint_ns, since=since))
    with collector_paused():
        take(listed)
    return True


def _reads_as(saver: Any, cls: Any) -> bool:
    """Whether ``saver`` reads its outline with ``cls``'s own method (not a subclass's)."""
    return getattr(type(saver), "aread_outline", None) is getattr(cls, "aread_outline", None)


def _own_sql_layout(saver: Any) -> OutlineSql | None:
    """The outline queries of durable_debug's SQLite or PostgreSQL saver when ``saver`` is one
    (its module imports this one: a saver of it means it is loaded), unless a subclass reads
    its outline otherwise; None for any other saver."""
    for module, name, dialect in (
        ("durable_debug.checkpoint.sqlite", "SqliteSaver", SQLITE_OUTLINE),
        ("durable_debug.checkpoint.postgres", "PostgresSaver", PG_OUTLINE),
    ):
        own = getattr(sys.modules.get(module), name, None)
        if own is not None and _reads_as(saver, own):
            return dialect
    return None


async def sql_read_outline(
    saver: Any, dialect: OutlineSql, thread_id: str, checkpoint_ns: str, since: str | None
) -> list[OutlineRow]:
    """:meth:`OutlineSaver.aread_outline` on durable_debug's SQLite or PostgreSQL layout: one
    read session of three plain queries (rows, writes, trigger blobs)."""
    rows, writes, blobs = await sql_outline_queries(saver, dialect, thread_id, checkpoint_ns, since)
    with collector_paused():  # many small containers, no cycles
        return outline_rows(rows, writes, blobs, saver, thread_id)


async def sqlite_read_outline(
    saver: SqliteSaver, thread_id: str, checkpoint_ns: str, *, since: str | None = None
) -> list[OutlineRow]:
    """:meth:`OutlineSaver.aread_outline` on durable_debug's SQLite layout: one read session
    of three plain queries (rows, writes, trigger blobs)."""
    return await sql_read_outline(saver, SQLITE_OUTLINE, thread_id, checkpoint_ns, since)


async def sql_outline_queries(
    saver: Any,
    dialect: OutlineSql,
    thread_id: str,
    checkpoint_ns: str,
    since: str | None,
    subscribed: tuple[str, ...] = (),
) -> tuple[list[Any], list[Any], list[Any]]:
    """The three queries of :func:`sql_read_outline`, in one read session (on PostgreSQL one
    ``REPEATABLE READ`` transaction); the blobs of the ``subscribed`` channels too (their kind
    only: empty or not)."""
    from durable_debug.checkpoint._sql import snapshot_read

    thread = (thread_id, checkpoint_ns)
    where = thread if since is None else (*thread, *thread, since, *thread, since)
    clause = "" if since is None else f" AND {dialect.since}"
    blobs_query = _blobs_query(dialect, since is not None, len(subscribed))
    blobs_args = (*where, *subscribed)
    writes_query = dialect.writes.format(since=clause)

    @snapshot_read
    async def read(s: Any) -> tuple[list[Any], list[Any], list[Any]]:
        try:
            rows = await s.fetch(dialect.rows.format(since=clause, debug=dialect.debug), where)
        except sqlite3.OperationalError as exc:  # a SQLite file older than the debug column
            if "debug" not in str(exc):
                raise
            rows = await s.fetch(dialect.rows.format(since=clause, debug="NULL"), where)
        writes = await s.fetch(writes_query, where)
        blobs = await s.fetch(blobs_query, blobs_args)
        return rows, writes, blobs

    found: tuple[list[Any], list[Any], list[Any]] = await saver._run(
        saver._in_session, read, False, where={"thread": thread_id}
    )
    return found


async def pg_read_outline(
    saver: Any, thread_id: str, checkpoint_ns: str, *, since: str | None = None
) -> list[OutlineRow]:
    """:meth:`OutlineSaver.aread_outline` on durable_debug's PostgreSQL layout: one
    ``REPEATABLE READ`` transaction of three plain queries (rows, writes, trigger blobs)."""
    return await sql_read_outline(saver, PG_OUTLINE, thread_id, checkpoint_ns, since)


async def memory_read_outline(
    saver: Any, thread_id: str, checkpoint_ns: str, *, since: str | None = None
) -> list[OutlineRow]:
    """:meth:`OutlineSaver.aread_outline` on durable_debug's memory saver: the three parts
    taken from its dicts (:mod:`durable_debug.checkpoint.memory_outline`)."""
    from durable_debug.checkpoint.memory_outline import memory_outline_parts

    rows, writes, blobs = memory_outline_parts(
        saver, thread_id, checkpoint_ns, since, VALUED_WRITE_CHANNELS
    )
    with collector_paused():  # many small containers, no cycles
        return outline_rows(rows, writes, blobs, saver, thread_id)


async def pg_latest_mark(saver: Any, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
    """:meth:`OutlineSaver.alatest_mark` on durable_debug's PostgreSQL layout (one index
    query)."""
    rows = await saver.aquery(OWN_SQLITE_LATEST_MARK.replace("?", "%s"), (thread_id, checkpoint_ns))
    return (str(rows[0][0]), int(rows[0][1])) if rows else ("", 0)


_SCAN: Any = cast(Any, json.scanner).make_scanner(json.JSONDecoder())
"""The C JSON scanner: ``json.loads`` minus its whitespace handling, for the stored columns
``encode_json`` writes compactly."""


def _fast_json(text: Any, serde: Any) -> Any:
    """A stored JSON column: the C scanner when the text is plain JSON, else
    ``decode_json`` (wrapped values, or an error that names what is wrong); a dict (what the
    memory saver holds) as it is."""
    if type(text) is dict:
        return text
    if type(text) is str and "$serde" not in text:
        try:
            value, end = _SCAN(text, 0)
            if end == len(text):
                return value
        except (StopIteration, ValueError, RecursionError):
            pass
    from durable_debug.checkpoint._json_columns import decode_json

    return decode_json(text, serde)


_NO_PARENTS: dict[str, Any] = {}
_NO_RECORD: dict[str, Any] = {}
"""The part of a stored checkpoint a tree reads when it holds no trigger channel: nothing."""

_TRIGGER_MARKS = tuple(
    [f'"{name}"' for name in TRIGGER_CHANNELS]
    + [f'"{prefix}' for prefix in (BRANCH_PREFIX, JOIN_PREFIX)]
)
"""How a trigger channel's name starts in a stored checkpoint's ``channel_versions``."""


def _untriggered_ts(
    text: Any, checkpoint_id: str, marks: tuple[str, ...] = _TRIGGER_MARKS
) -> str | None:
    """The ``ts`` of a stored checkpoint whose ``channel_versions`` names no trigger channel
    (no node is scheduled from it), read without decoding the rest of it; None when the text
    is not in the form ``encode_json`` writes (``{"v":1,"id":…,"ts":…,"channel_versions":{…}``
    first, a flat map without escapes) or names a trigger channel: then it is decoded whole.

    Most checkpoints of a long thread are of this kind (updates, finished runs), and the tree
    needs nothing else of them.
    """
    if type(text) is not str:
        return None
    head = '{"v":1,"id":"' + checkpoint_id + '","ts":'
    if not text.startswith(head) or "\\" in text or text[-1] != "}":
        return None
    try:
        ts, end = _SCAN(text, len(head))
    except (StopIteration, ValueError):
        return None
    if type(ts) is not str or not text.startswith(',"channel_versions":{', end):
        return None
    start = end + 21
    close = text.find("}", start)
    versions = text[start:close]
    if close < 0 or "{" in versions or text[close + 1 : close + 2] not in (",", "}"):
        return None
    for mark in marks:
        if mark in versions:
            return None
    return ts


def outline_rows(
    rows: list[Any],
    writes: list[Any],
    blobs: list[Any],
    saver: Any,
    thread_id: str,
    subscribers: Mapping[str, Sequence[str]] | None = None,
) -> list[OutlineRow]:
    """Turn the three queries of :func:`aread_outline` into :class:`OutlineRow` s
    (``subscribers``: see :func:`aread_outline_into`).

    ``rows``: ``(checkpoint_id, parent_id, checkpoint, metadata, debug)``, the stored
    checkpoint and metadata as JSON text or already as dicts (the memory saver's), the debug
    record as JSON text, a dict or None; ``writes``: ``(checkpoint_id, task_id, channel,
    type, blob)``, the blob only for the channels :data:`OWN_SQLITE_OUTLINE_WRITES` reads;
    ``blobs``: ``(channel, stored version, type, blob)`` of the trigger channels. ``saver``
    gives the serializers (its ``_blob_serde`` if it has one, else its ``serde``)."""
    from durable_debug.checkpoint._rows import (
        EMPTY,
        _check_metadata,
        _check_record,
        _check_special_write,
        full_version,
        missing_blob,
    )
    from durable_debug.checkpoint.base import NULL_TASK_ID
    from durable_debug.checkpoint.names import (
        BRANCH_PREFIX,
        ERROR,
        INTERRUPT,
        JOIN_PREFIX,
        NOT_FINISHING,
        TASKS,
        TRIGGER_CHANNELS,
        parse_trigger,
    )
    from durable_debug.checkpoint.records import parse_record
    from durable_debug.checkpoint.serde import SerdeError

    serde = saver.serde
    loads = getattr(saver, "_blob_serde", serde).loads_typed
    stored = {(str(c), str(v)): (str(t), b) for c, v, t, b in blobs}
    decoded: dict[tuple[str, str], Any] = {}
    full: dict[str, str] = {}
    triggers: dict[str, Any] = {}
    prefixes = (BRANCH_PREFIX, JOIN_PREFIX)
    fixed: Any = TRIGGER_CHANNELS
    marks = _TRIGGER_MARKS
    if subscribers:
        fixed = frozenset(TRIGGER_CHANNELS).union(subscribers)
        marks = (*marks, *(f'"{name}"' for name in subscribers))
    per_checkpoint: dict[str, dict[str, list[Any]]] = {}
    checkpoint_id = channel = ""
    try:
        for checkpoint_id, task, channel, kind, data in writes:
            if task == NULL_TASK_ID:
                continue
            state = per_checkpoint.setdefault(checkpoint_id, {}).setdefault(task, [False, 0, 0])
            if channel == ERROR:
                state[1] = 1 if loads((kind, data or b"")) else 0
            elif channel == INTERRUPT:
                value = loads((kind, data or b""))
                _check_special_write(task, channel, value)
                state[2] = len(value or ())
            elif channel == INPUT_KEYS:  # stands for the run input's state writes
                if loads((kind, data or b"")):
                    state[0] = True
            elif channel not in NOT_FINISHING:
                state[0] = True
    except SerdeError as exc:
        raise exc.located(thread=thread_id, checkpoint=checkpoint_id, channel=channel) from None
    found: list[OutlineRow] = []
    records: dict[Any, Any] = {}
    """Stored debug record text → the record parsed (rows with the same text share it)."""
    field = "checkpoint"
    for checkpoint_id, parent_id, checkpoint_text, metadata_text, debug_text in rows:
        try:
            field = "checkpoint"
            ts = _untriggered_ts(checkpoint_text, checkpoint_id, marks)
            if ts is None:
                record = _fast_json(checkpoint_text, serde)
                if type(record) is not dict:
                    from durable_debug.checkpoint.serde import CorruptPayloadError

                    raise CorruptPayloadError("the stored checkpoint is not a JSON object")
                if record.get("id") != checkpoint_id or type(record.get("ts")) is not str:
                    _check_record(record, checkpoint_id)  # raises, naming what is wrong
                ts = record["ts"]
            else:
                record = _NO_RECORD
            field = "metadata"
            metadata = _fast_json(metadata_text, serde)
            if type(metadata) is not dict:
                from durable_debug.checkpoint.serde import CorruptPayloadError

                raise CorruptPayloadError("the stored metadata is not a JSON object")
            if not (
                type(metadata.get("step", 0)) is int
                and type(metadata.get("source", "")) is str
                and type(metadata.get("parents", _NO_PARENTS)) is dict
            ):
                _check_metadata(metadata)  # raises, naming the key
            if debug_text is None:
                debug = None
            elif type(debug_text) is dict:
                debug = debug_text
            else:  # most checkpoints of a thread store the same record: parse each text once
                debug = records.get(debug_text, records)
                if debug is records:
                    debug = records[debug_text] = parse_record(debug_text)
            field = "checkpoint"
            present: list[tuple[str, str]] = []
            versions = record.get("channel_versions")
            for key, value in versions.items() if type(versions) is dict else ():
                for name in value if type(value) is list else (key,):
                    if name in fixed or name.startswith(prefixes):
                        version = key if type(value) is list else str(value)
                        blob = stored.get((name, version))
                        if blob is None:
                            raise missing_blob(name, version)
                        if blob[0] != EMPTY:
                            present.append((name, version))
            values: dict[str, Any] = {}
            full_versions: dict[str, str] = {}
            seen: dict[str, dict[str, str]] = {}
            seen_by = record.get("versions_seen")
            for name, version in present:
                mine = full.get(version) or full.setdefault(version, full_version(version))
                full_versions[name] = mine
                if name == TASKS:
                    values[name] = _blob_value(decoded, stored, loads, name, version)
                    continue
                trigger = triggers.get(name)
                if trigger is None:
                    trigger = triggers[name] = parse_trigger(name)
                if trigger is None:
                    values[name] = None
                    for node in (subscribers or _NO_RECORD).get(name, ()):
                        was = _seen_version(seen_by, node, name)
                        if was is not None:
                            seen.setdefault(node, {})[name] = full.get(was) or full.setdefault(
                                was, full_version(was)
                            )
                    continue
                values[name] = (
                    _blob_value(decoded, stored, loads, name, version) if trigger.sources else None
                )
                was = _seen_version(seen_by, trigger.node, name)
                if was is not None:
                    seen.setdefault(trigger.node, {})[name] = full.get(was) or full.setdefault(
                        was, full_version(was)
                    )
        except SerdeError as exc:
            raise exc.located(thread=thread_id, checkpoint=checkpoint_id, field=field) from None
        tasks = per_checkpoint.get(checkpoint_id)
        found.append(
            OutlineRow(
                checkpoint_id,
                parent_id or None,
                metadata,
                ts,
                values,
                full_versions,
                seen,
                {t: TaskWrites(s[0], bool(s[1]), s[2]) for t, s in tasks.items()} if tasks else {},
                debug,
            )
        )
    return found


def _blob_value(
    decoded: dict[tuple[str, str], Any], stored: Any, loads: Any, channel: str, version: str
) -> Any:
    """A trigger blob's value, decoded once per read."""
    key = (channel, version)
    if key not in decoded:
        kind, data = stored[key]
        decoded[key] = loads((kind, data or b""))
    return decoded[key]


def _seen_version(seen_by: Any, node: str, channel: str) -> str | None:
    """The stored version of ``channel`` that ``node`` last saw, None if it saw none."""
    seen = seen_by.get(node) if type(seen_by) is dict else None
    if type(seen) is not dict:
        return None
    for key, value in seen.items():
        if type(value) is list:
            if channel in value:
                return str(key)
        elif key == channel:
            return str(value)
    return None
