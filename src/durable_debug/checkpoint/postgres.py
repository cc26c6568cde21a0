"""PostgresSaver: checkpoints in PostgreSQL, for many workers and machines (psycopg 3).

The same four tables as :class:`~durable_debug.checkpoint.sqlite.SqliteSaver`, with the
checkpoint and metadata columns as ``jsonb``. A step (its tasks' writes, the new blobs, the
checkpoint row) is written in one statement, and a checkpoint is read with its blobs and
pending writes in one query; setup takes an advisory lock, so many workers may start at once.
Needs the ``postgres`` extra: ``pip install 'durable-debug[postgres]'``.

    with PostgresSaver.from_conn_string("postgresql://localhost/app") as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke(inputs, config)          # or: async with …: await graph.ainvoke(…)

Connections: a pool that lives on the savers' I/O loop (:mod:`durable_debug.checkpoint._io`),
not on the caller's loop, so one saver serves sync code, ``asyncio.run`` scripts and notebook
cells alike; besides it, one connection that reads and writes straight from whichever loop
calls, one call at a time, so the usual sequence of steps costs no hand-off between threads
(a call that finds it busy takes a pooled one); and one for the thread leases.
The connection string may carry ``options=-csearch_path=myschema`` to keep the tables in a
schema of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import os
import re
import struct
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar, cast

from durable_debug.checkpoint._connected import is_statements_only
from durable_debug.checkpoint._io import run_soon_on_io_loop
from durable_debug.checkpoint._libpq import (
    Blobs,
    answer,
    blobs_array,
    encode,
    fetch,
    fetch_together,
    flush,
    prepared,
    python_rows,
)
from durable_debug.checkpoint._pg_steps import PgStepQueue
from durable_debug.checkpoint._rows import BlobKey, BlobRow, WriteRow, parse_checkpoint_row
from durable_debug.checkpoint._schema import (
    DatabaseSetupError,
    apply_migrations,
    newer_schema_error,
    schema_version,
)
from durable_debug.checkpoint._sql import (
    Fence,
    Session,
    SqlSaver,
    WriteValues,
    _Page,
    is_snapshot_read,
)
from durable_debug.checkpoint.base import SerializerProtocol, StepQueue
from durable_debug.checkpoint.errors import StoreClosedError, StoreUnavailableError
from durable_debug.checkpoint.lease import (
    LEASE_LOST_MARK,
    LeaseLostError,
    holder_proof,
    release_confirmed,
    release_sent,
    release_unconfirmed,
)
from durable_debug.checkpoint.outline import (
    PG_CHANNEL_VERSION_PAIRS,
    OutlineRow,
    pg_latest_mark,
    pg_read_outline,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg import pq
    from psycopg_pool import AsyncConnectionPool

__all__ = ["MIGRATIONS", "AsyncPostgresSaver", "DatabaseSetupError", "PostgresSaver"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Key columns compare byte-wise (COLLATE "C") so that history is ordered exactly as the other
# savers order it, whatever the database's locale.
MIGRATIONS: list[str] = [
    """CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)""",
    """CREATE TABLE checkpoints (
        thread_id TEXT COLLATE "C" NOT NULL,
        checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
        checkpoint_id TEXT COLLATE "C" NOT NULL,
        parent_checkpoint_id TEXT COLLATE "C",
        checkpoint JSONB NOT NULL,
        metadata JSONB NOT NULL DEFAULT '{}',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    )""",
    """CREATE TABLE checkpoint_blobs (
        thread_id TEXT COLLATE "C" NOT NULL,
        checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
        channel TEXT COLLATE "C" NOT NULL,
        version TEXT COLLATE "C" NOT NULL,
        type TEXT NOT NULL,
        blob BYTEA,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    )""",
    """CREATE TABLE checkpoint_writes (
        thread_id TEXT COLLATE "C" NOT NULL,
        checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
        checkpoint_id TEXT COLLATE "C" NOT NULL,
        task_id TEXT COLLATE "C" NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BYTEA NOT NULL,
        task_path TEXT COLLATE "C" NOT NULL DEFAULT '',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    )""",
    # 4: version maps stored grouped by version (channel → version becomes version → channels)
    """UPDATE checkpoints SET checkpoint = checkpoint || jsonb_build_object(
        'channel_versions', (
            SELECT coalesce(jsonb_object_agg(version, channels), '{}') FROM (
                SELECT pointer.value AS version, jsonb_agg(pointer.key) AS channels
                FROM jsonb_each_text(checkpoint -> 'channel_versions') AS pointer
                GROUP BY pointer.value) AS grouped),
        'versions_seen', (
            SELECT coalesce(jsonb_object_agg(seen.key, (
                SELECT coalesce(jsonb_object_agg(version, channels), '{}') FROM (
                    SELECT pointer.value AS version, jsonb_agg(pointer.key) AS channels
                    FROM jsonb_each_text(seen.value) AS pointer
                    GROUP BY pointer.value) AS grouped)), '{}')
            FROM jsonb_each(checkpoint -> 'versions_seen') AS seen))""",
    # 5, 6: every page of history is an index range scan, never a sort (SqlSaver._page_query):
    # all namespaces of one thread, newest first; every thread, newest first.
    """CREATE INDEX checkpoints_thread_order ON checkpoints
        (thread_id, checkpoint_id, checkpoint_ns)""",
    """CREATE INDEX checkpoints_order ON checkpoints (checkpoint_id, thread_id, checkpoint_ns)""",
    # 7 (one writer per thread): who holds each thread, until when (server clock)
    """CREATE TABLE thread_leases (
        thread_id TEXT COLLATE "C" PRIMARY KEY,
        token TEXT NOT NULL,
        holder TEXT NOT NULL,
        since TIMESTAMPTZ NOT NULL,
        expires TIMESTAMPTZ NOT NULL
    )""",
    # 8: a channel without a value is kept in the checkpoint's empty_versions, with no blob row
    # (checkpoint/_rows.py); recorded so an older durable_debug refuses the database.
    "SELECT 8",
    # 9: each checkpoint's debug record (checkpoint/records.py) in a column of its own, never
    # in metadata; older rows have none (their record keys are read from their metadata).
    "ALTER TABLE checkpoints ADD COLUMN debug JSONB",
    # 10: a lease records its holder's proof of life (lease.holder_proof), so a holder found
    # dead on its own host frees the thread at once
    "ALTER TABLE thread_leases ADD COLUMN proof TEXT NOT NULL DEFAULT ''",
]
"""Schema migrations; the index of each statement is the schema version it creates."""

LEASE_ACQUIRE = """INSERT INTO thread_leases (thread_id, token, holder, since, expires, proof)
VALUES (%s, %s, %s, clock_timestamp(), clock_timestamp() + make_interval(secs => %s::float8),
    %s)
ON CONFLICT (thread_id) DO UPDATE SET
    token = EXCLUDED.token, holder = EXCLUDED.holder,
    since = EXCLUDED.since, expires = EXCLUDED.expires, proof = EXCLUDED.proof
WHERE thread_leases.expires < clock_timestamp()
RETURNING token, holder, since"""
"""Take a thread's lease unless a live one holds it; times are the server's, so the clocks of
the worker machines do not matter. Concurrent takers queue on the row, and the loser's WHERE is
evaluated against the winner's committed row."""

LEASE_TAKE_ABANDONED = """UPDATE thread_leases
SET token = %s, holder = %s, since = clock_timestamp(),
    expires = clock_timestamp() + make_interval(secs => %s::float8), proof = %s
WHERE thread_id = %s AND expires < clock_timestamp()
RETURNING token, holder, since"""
"""Take a thread's lease only if the one there expired (its holder died): recovery."""

LEASE_STEAL = """UPDATE thread_leases
SET token = %s, holder = %s, since = clock_timestamp(),
    expires = clock_timestamp() + make_interval(secs => %s::float8), proof = %s
WHERE thread_id = %s AND token = %s
RETURNING token, holder, since"""
"""Take a thread's lease from a token whose holder was found dead on this host, only if that
token still holds it."""

LEASE_RENEW = """UPDATE thread_leases
SET expires = clock_timestamp() + make_interval(secs => %s::float8)
WHERE thread_id = %s AND token = %s RETURNING thread_id"""

LEASE_RELEASE = "DELETE FROM thread_leases WHERE thread_id = %s AND token = %s"
"""Give a thread's lease back, if ``token`` still holds it."""

LEASE_ABANDONED = """SELECT thread_id, proof, expires < clock_timestamp() FROM thread_leases
ORDER BY expires, thread_id"""

SETUP_LOCK = 0x64645F636B7074  # pg_advisory_xact_lock key: one migrating worker at a time
MIGRATIONS_TABLE_EXISTS = "SELECT 1 WHERE to_regclass('checkpoint_migrations') IS NOT NULL"
INSERT_MIGRATION = "INSERT INTO checkpoint_migrations (v) VALUES (%s)"

SELECT_CHECKPOINTS = """SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint::text, metadata::text FROM checkpoints"""

SELECT_BLOBS = """SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[])
    AS k(thread_id, checkpoint_ns, channel, version)
JOIN checkpoint_blobs AS b
  ON b.thread_id = k.thread_id COLLATE "C"
 AND b.checkpoint_ns = k.checkpoint_ns COLLATE "C"
 AND b.channel = k.channel COLLATE "C"
 AND b.version = k.version COLLATE "C"
"""
"""The blobs of many (thread_id, checkpoint_ns, channel, version) keys, passed as four arrays,
so a page of history needs one query however many channels it has."""

SELECT_WRITES = """SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel,
    w.type, w.blob
FROM unnest(%s::text[], %s::text[], %s::text[]) AS k(thread_id, checkpoint_ns, checkpoint_id)
JOIN checkpoint_writes AS w
  ON w.thread_id = k.thread_id COLLATE "C"
 AND w.checkpoint_ns = k.checkpoint_ns COLLATE "C"
 AND w.checkpoint_id = k.checkpoint_id COLLATE "C"
ORDER BY w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_path, w.task_id, w.idx"""

_WRITES_INTO = """INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
SELECT %s::text, %s::text, %s::text, w.row ->> 0, (w.row ->> 1)::int,
    w.row ->> 2, w.row ->> 3, w.blob, w.row ->> 4
FROM ROWS FROM (json_array_elements(%s::json), unnest(%s::bytea[])) AS w(row, blob){fenced}"""


FENCE = f"""fence AS (
    SELECT CASE WHEN EXISTS (
        SELECT 1 FROM thread_leases WHERE thread_id = %s AND token = %s FOR SHARE)
    THEN 1 ELSE ('{LEASE_LOST_MARK} at ' || clock_timestamp()::text)::int END AS ok)"""
"""The CTE a fenced step statement starts with: it locks the run's lease row (a run taking the
thread waits until the statement committed, then sees its rows) or, when the row holds another
token, fails the whole statement (the cast of the marked text to int: the only way to raise
from plain SQL, and volatile, so never evaluated when planning). Parameters: thread_id,
token."""

FENCED = "\nWHERE (SELECT ok FROM fence) = 1"
"""The condition every part of a fenced statement adds, so the fence is checked first."""

_STEP_PARTS = {
    "ordinary": f"""{_WRITES_INTO}
ON CONFLICT DO NOTHING""",
    "special": f"""{_WRITES_INTO}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = excluded.channel,
    type = excluded.type,
    blob = excluded.blob,
    task_path = excluded.task_path""",
    "blobs": """INSERT INTO checkpoint_blobs
    (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT %s::text, %s::text, b.row ->> 0, b.row ->> 1, b.row ->> 2, b.blob
FROM ROWS FROM (json_array_elements(%s::json), unnest(%s::bytea[])) AS b(row, blob){fenced}
ON CONFLICT DO NOTHING""",
    "checkpoint": """INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, debug)
{values}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id,
    checkpoint = excluded.checkpoint,
    metadata = excluded.metadata,
    debug = excluded.debug""",
}
"""The parts of a step's statement: the ordinary writes (kept if present), the special writes
(replacing), the new blobs and the checkpoint row. Every row of a step belongs to one thread and
namespace, and every write to one checkpoint (the new checkpoint's parent), so those are single
parameters; the columns that vary come as a JSON array of rows and the blobs as one ``bytea[]``
(see :func:`_rows_params`), which the client encodes several times faster than one array per
column. Parameters: writes — thread_id, checkpoint_ns, checkpoint_id, ``[[task_id, idx,
channel, type, task_path], …]``, their blobs; new blobs — thread_id, checkpoint_ns,
``[[channel, version, type], …]``, their blobs; the checkpoint — its row's seven columns."""


@functools.cache
def store_step_sql(parts: tuple[str, ...], fenced: bool = False) -> str:
    """The statement that writes the non-empty ``parts`` of a step (names of ``_STEP_PARTS``):
    the last is the statement itself, the others data-modifying CTEs before it. One statement is
    atomic on its own, so it needs no BEGIN/COMMIT; leaving out the empty parts saves the server
    planning and the client encoding them (psycopg prepares each shape once per connection).
    ``fenced``: the statement starts with :data:`FENCE` (its two parameters first) and writes
    nothing unless the run's lease still holds the thread."""
    values = (
        "SELECT %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb" + FENCED
        if fenced
        else "VALUES (%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb)"
    )
    sqls = [
        _STEP_PARTS[part].format(fenced=FENCED if fenced else "", values=values) for part in parts
    ]
    *ctes, last = sqls
    heads = [FENCE] if fenced else []
    heads += [f"p{i} AS (\n{sql})" for i, sql in enumerate(ctes)]
    if not heads:
        return last
    return "WITH " + ",\n".join(heads) + "\n" + last


def step_statement(
    ordinary: Sequence[WriteRow],
    special: Sequence[WriteRow],
    blobs: Sequence[BlobRow],
    row: Sequence[Any] | None,
    fence: Fence | None = None,
) -> tuple[str, list[Any]] | None:
    """The one statement (and its parameters) that writes a step's rows (see
    :func:`store_step_sql`), or None when there is nothing to write; fenced by the run's
    lease when ``fence`` is given."""
    parts: list[str] = []
    params: list[Any] = list(fence) if fence is not None else []
    for name, writes in (("ordinary", ordinary), ("special", special)):
        if writes:
            if name == "special":
                # Two special writes of one key in one statement would make ON CONFLICT DO
                # UPDATE touch a row twice: keep the last, as one upsert after another would.
                writes = list({w[:5]: w for w in writes}.values())
            parts.append(name)
            params += writes[0][:3]
            params += _rows_params([(w[3], w[4], w[5], w[6], w[8]) for w in writes], writes, 7)
    if blobs:
        parts.append("blobs")
        params += blobs[0][:2]
        params += _rows_params([b[2:5] for b in blobs], blobs, 5)
    if row is not None:
        parts.append("checkpoint")
        params += row
    if not parts:
        return None
    return store_step_sql(tuple(parts), fence is not None), params


SELECT_ONE = (
    """WITH c AS (
    SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
    FROM checkpoints
    WHERE thread_id = %s AND checkpoint_ns = %s{})
SELECT 0, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint::text, metadata::text, NULL::bytea, NULL::int
FROM c
UNION ALL
SELECT 1, p.channel, p.version, b.type, NULL, NULL, NULL, b.blob, NULL
FROM c
CROSS JOIN """
    + PG_CHANNEL_VERSION_PAIRS
    + """
CROSS JOIN LATERAL (
    SELECT b.type, b.blob FROM checkpoint_blobs AS b
    WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
      AND b.channel = p.channel COLLATE "C" AND b.version = p.version COLLATE "C"
    LIMIT 1) AS b  -- LIMIT: a primary-key lookup per pointer, never a scan of the thread
UNION ALL
SELECT 2, w.task_id, w.channel, w.type, w.task_path, NULL, NULL, w.blob, w.idx
FROM c
JOIN checkpoint_writes AS w
  ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
 AND w.checkpoint_id = c.checkpoint_id"""
)
"""One checkpoint with its blobs and pending writes, in one query: a ``kind`` column says what
each row is (0 the checkpoint: its six columns; 1 a blob: channel, version, type, blob; 2 a
pending write: task_id, channel, type, task_path, blob, idx), in no order (the reader sorts the
writes, so the server runs no sort). Format with the rest of the clause naming the
checkpoint."""

SELECT_LATEST = SELECT_ONE.format(" ORDER BY checkpoint_id DESC LIMIT 1")
"""The newest checkpoint of a namespace: one backward step on the primary key, however long
the thread (``max(checkpoint_id)`` would read every key of the thread)."""
SELECT_BY_ID = SELECT_ONE.format(" AND checkpoint_id = %s")

DELETE_THREAD = (
    "DELETE FROM checkpoint_writes WHERE thread_id = %s",
    "DELETE FROM checkpoint_blobs WHERE thread_id = %s",
    "DELETE FROM checkpoints WHERE thread_id = %s",
)

DELETE_CHECKPOINTS = (
    """DELETE FROM checkpoint_blobs AS b
WHERE b.thread_id = %s AND b.checkpoint_ns = %s AND (b.channel, b.version) IN (
    SELECT ch.value, v.key
    FROM checkpoints AS c, jsonb_each(c.checkpoint -> 'channel_versions') AS v,
        jsonb_array_elements_text(v.value) AS ch(value)
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
      AND c.checkpoint_id IN (SELECT jsonb_array_elements_text(%s::jsonb))
    EXCEPT
    SELECT ch.value, v.key
    FROM checkpoints AS c, jsonb_each(c.checkpoint -> 'channel_versions') AS v,
        jsonb_array_elements_text(v.value) AS ch(value)
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
      AND c.checkpoint_id NOT IN (SELECT jsonb_array_elements_text(%s::jsonb)))""",
    """DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s
    AND checkpoint_id IN (SELECT jsonb_array_elements_text(%s::jsonb))""",
    """DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s
    AND checkpoint_id IN (SELECT jsonb_array_elements_text(%s::jsonb))""",
)
"""Delete some checkpoints of a thread (the ids as a JSON array), as SQLite's
``DELETE_CHECKPOINTS`` does."""

LIST_THREADS = """SELECT thread_id FROM checkpoints
GROUP BY thread_id ORDER BY min(checkpoint_id), thread_id"""

METADATA_EQUALS = "metadata -> %s::text = %s::jsonb"

_INT4 = struct.Struct("!i")
"""An ``int4`` column in PostgreSQL's binary format."""


def _text(value: bytes | None) -> str | None:
    """A ``text`` column in PostgreSQL's binary format (its UTF-8 bytes), or NULL."""
    return None if value is None else value.decode()


_UNREACHABLE_SQLSTATES = ("08", "57P")
"""SQLSTATE classes of a lost server: connection exceptions, operator intervention
(``admin_shutdown`` on a restart, ``crash_shutdown``, ``cannot_connect_now``)."""

_INSTALL_HINT = "pip install 'durable-debug[postgres]'"

_DIRECT: contextvars.ContextVar[psycopg.AsyncConnection[Any] | None] = contextvars.ContextVar(
    "durable_debug_postgres_direct", default=None
)
"""The connection of a call running on the caller's loop (``PostgresSaver._call``), for the
sessions it opens; unset on the I/O loop, whose calls take a pooled connection."""


class PostgresSaver(SqlSaver):
    """A saver that stores checkpoints in a PostgreSQL database.

    ``conn_string`` is a libpq URL or key=value string. The database is reached on first use;
    ``pool_size`` bounds the pooled connections (parallel tasks save their writes concurrently);
    besides them the saver holds one connection for calls from the caller's loop and one for
    thread leases.
    ``compress=False`` stores new blobs uncompressed (see
    :mod:`~durable_debug.checkpoint.compress`).
    """

    _P = "%s"
    _DEBUG_COLUMN = "debug::text"
    _DEBUG_PARAM = "%s::jsonb"
    _SELECT_CHECKPOINTS = SELECT_CHECKPOINTS
    _DELETE_THREAD = DELETE_THREAD
    _DELETE_CHECKPOINTS = DELETE_CHECKPOINTS
    _LIST_THREADS = LIST_THREADS
    _FENCE_LOCK = " FOR SHARE"

    def __init__(
        self,
        conn_string: str,
        *,
        serde: SerializerProtocol | None = None,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        compress: bool = True,
    ) -> None:
        _require_psycopg()
        if not isinstance(conn_string, str):
            raise TypeError(
                f"PostgresSaver expects a connection string, got {type(conn_string).__name__}"
            )
        super().__init__(serde=serde, compress=compress)
        self.conn_string = conn_string
        """The libpq connection string."""
        self.pool_size = pool_size
        self.connect_timeout = connect_timeout
        self._pool: AsyncConnectionPool | None = None
        self._stale = False
        """Set when the server went away: the next call opens a fresh pool (which connects
        at once) instead of waiting out the old pool's reconnection back-off."""
        self._replacing: asyncio.Lock | None = None
        self._lease_conn: psycopg.AsyncConnection[Any] | None = None
        """A connection of its own for the lease statements (each one atomic, autocommit):
        outside the pool, so taking and giving back a lease costs one round trip each."""
        self._lease_lock: asyncio.Lock | None = None
        self._direct: psycopg.AsyncConnection[Any] | None = None
        """The connection of the calls that run on the caller's loop (see ``_call``)."""
        self._direct_lock = threading.Lock()
        """Held by the one call using ``_direct``; taken without waiting, from any thread."""
        self._unread_release: tuple[str, str] | None = None
        """(thread_id, token) of a lease give-back sent on ``_direct`` whose answer is not read
        yet (``_send_release``); read before anything else uses that connection."""
        self._prefetched: _Prefetched | None = None
        """The thread's newest checkpoint, read in the same round trip as the lease a run just
        took (``_lease_fetch``), for that run's first read; dropped by any other call."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact(self.conn_string)!r})"

    # -- connection ----------------------------------------------------------------------------

    async def _open(self) -> None:
        import psycopg
        from psycopg_pool import PoolTimeout

        where = f"the PostgreSQL database {redact(self.conn_string)!r}"
        try:
            conn = await psycopg.AsyncConnection.connect(
                self.conn_string,
                autocommit=True,
                connect_timeout=max(1, round(self.connect_timeout)),
            )
        except psycopg.Error as exc:
            raise DatabaseSetupError(f"cannot connect to {where}: {exc}".strip()) from None
        async with conn:
            await self._prepare(conn, where)
        try:
            self._pool = await self._new_pool()
        except PoolTimeout as exc:
            raise DatabaseSetupError(f"cannot open a connection pool to {where}: {exc}") from None

    async def _new_pool(self) -> AsyncConnectionPool:
        """Open a pool with one connection ready, or raise ``PoolTimeout``."""
        from psycopg_pool import AsyncConnectionPool, PoolTimeout

        pool = AsyncConnectionPool(
            self.conn_string,
            min_size=1,
            max_size=max(1, self.pool_size),
            open=False,
            kwargs={
                "autocommit": True,
                "connect_timeout": max(1, round(self.connect_timeout)),
                "context": _adapters(),
            },
            # A call after a server restart gets a fresh connection instead of failing on one
            # the old server closed, and the check costs no round trip.
            check=_check_idle_connection,
            timeout=self.connect_timeout,
            name="durable-debug",
        )
        try:
            await pool.open(wait=True, timeout=self.connect_timeout)
        except PoolTimeout:
            await pool.close(timeout=0)
            raise
        return pool

    async def _fresh_pool(self) -> AsyncConnectionPool | None:
        """The pool to use: after the server went away, a new one (see ``_stale``)."""
        if not self._stale:
            return self._pool
        if self._replacing is None:
            self._replacing = asyncio.Lock()
        async with self._replacing:
            if self._stale and self._pool is not None:
                old = self._pool
                self._pool = await self._new_pool()  # PoolTimeout: still down, stays stale
                self._stale = False
                await old.close(timeout=0)
        return self._pool

    async def _prepare(self, conn: psycopg.AsyncConnection[Any], where: str) -> None:
        """Check the schema version and run missing migrations, one worker at a time."""
        import psycopg

        s = _PgSession(conn)
        latest = len(MIGRATIONS) - 1
        async with conn.transaction():
            await s.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
            version = await schema_version(s, MIGRATIONS_TABLE_EXISTS)
            if version > latest:
                raise newer_schema_error(where, version, latest)
            try:
                await apply_migrations(s, MIGRATIONS, version, INSERT_MIGRATION)
            except psycopg.errors.DuplicateTable as exc:
                raise DatabaseSetupError(
                    f"{where} already has tables that durable_debug did not create ({exc}); "
                    "LangGraph's PostgresSaver uses the same table names. Use another database "
                    "or schema (options=-csearch_path=...)."
                ) from None

    async def _disconnect(self) -> None:
        await self._close_direct()
        pool, self._pool = self._pool, None
        lease, self._lease_conn = self._lease_conn, None
        if lease is not None:
            await lease.close()
        if pool is not None:
            await pool.close()

    def _discard(self) -> None:
        direct, self._direct = self._direct, None
        if direct is not None:
            run_soon_on_io_loop(direct.close())
        pool, self._pool = self._pool, None
        lease, self._lease_conn = self._lease_conn, None
        if lease is not None:
            run_soon_on_io_loop(lease.close())
        if pool is not None:
            run_soon_on_io_loop(pool.close())

    def _forget(self) -> None:
        self._pool = None
        self._direct, self._direct_lock = None, threading.Lock()
        self._unread_release = None
        self._prefetched = None
        self._lease_conn, self._lease_lock = None, None

    async def _lease_release(self, thread_id: str, token: str) -> None:
        """Give the lease back; on the caller-loop connection, without waiting for the answer
        (see ``_send_release``)."""
        if not await self._send_release(thread_id, token):
            await super()._lease_release(thread_id, token)

    async def _send_release(self, thread_id: str, token: str) -> bool:
        """Send the give-back of ``token`` on the caller-loop connection and return without
        waiting for its answer, which the connection's next user reads first
        (``_read_release``): the run's caller no longer waits a round trip for it, and the
        server has the statement at once, so other processes see the thread free as soon as
        before. False when that connection is busy, not open yet, or the send failed (the
        give-back then goes the usual way)."""
        if self._state != "open" or self._pid != os.getpid() or self._direct is None:
            return False
        if not self._direct_lock.acquire(blocking=False):
            return False
        try:
            conn = await self._direct_connection()
            pgconn = conn.pgconn
            values, types, formats = encode((thread_id, token))
            name = await prepared(conn, LEASE_RELEASE, types)
            pgconn.send_query_prepared(name, values, formats)
            self._unread_release = (thread_id, token)
            release_sent(token)
            await flush(pgconn)
            return True
        except BaseException as exc:
            # The connection's state is unknown: not used again.
            self._unread_release = None
            direct, self._direct = self._direct, None
            if direct is not None:
                with contextlib.suppress(Exception):
                    direct.pgconn.finish()
            if isinstance(exc, Exception):
                return False
            raise
        finally:
            self._direct_lock.release()

    async def _read_release(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Read the answer of the give-back ``_send_release`` left unread on ``conn`` (under
        ``_direct_lock``). A failed give-back is remembered, so this process's next run on
        the thread takes the lease back at once; a connection that fails here is dropped."""
        assert self._unread_release is not None
        thread_id, token = self._unread_release
        self._unread_release = None
        try:
            error, _rows = await answer(conn)
        except BaseException as exc:
            release_unconfirmed(self, thread_id, token, exc)
            if self._direct is conn:
                self._direct = None
            with contextlib.suppress(Exception):
                conn.pgconn.finish()
            if not isinstance(exc, Exception):
                raise
            return
        if error is not None:
            release_unconfirmed(self, thread_id, token, error)
        else:
            release_confirmed(token)

    async def _lease_fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        """On the caller's loop, on the saver's own connection when the call runs there
        (``_call``: a run's take and give-back); else (renewals, a busy connection) on the
        lease connection, unchecked (one round trip): if it died since its last use (a server
        restart), the statement is sent once more on a new connection. Each lease statement
        may be repeated: a repeated take finds its own token."""
        import psycopg

        direct = _DIRECT.get()
        if direct is not None and sql is LEASE_ACQUIRE:
            # A run's take, with the read every run starts with (its thread's newest
            # checkpoint) in the same pipeline: the take costs no round trip of its own. Read
            # after the take, in its own statement, so as fresh as a read right after it.
            thread_id = str(params[0])
            taken, latest = await fetch_together(
                direct, ((sql, params), (SELECT_LATEST, (thread_id, "")))
            )
            rows = python_rows(taken)
            if rows:  # taken (RETURNING): this task's next read of the thread may use it
                self._prefetched = _Prefetched(thread_id, asyncio.current_task(), latest)
            return rows
        if direct is not None:  # a take or give-back on the caller's loop (_call): autocommit,
            # through libpq (see _libpq): a run's two lease statements cost half the time
            return python_rows(await fetch(direct, sql, params))
        if self._lease_lock is None:
            self._lease_lock = asyncio.Lock()
        async with self._lease_lock:
            for attempt in (1, 2):
                if self._state != "open":
                    raise StoreClosedError(f"{self!r} is closed")
                conn, reused = self._lease_conn, True
                if conn is None or conn.closed:
                    reused = False
                    conn = self._lease_conn = await psycopg.AsyncConnection.connect(
                        self.conn_string,
                        autocommit=True,
                        connect_timeout=max(1, round(self.connect_timeout)),
                    )
                try:
                    return await _PgSession(conn).fetch(sql, params)
                except (psycopg.OperationalError, psycopg.InterfaceError):
                    self._lease_conn = None
                    with contextlib.suppress(Exception):
                        await conn.close()
                    if not reused or attempt == 2:
                        raise
            raise AssertionError("unreachable")

    @staticmethod
    def _lost(exc: Exception) -> bool:
        import psycopg
        from psycopg_pool import PoolTimeout

        return isinstance(exc, (psycopg.InterfaceError, PoolTimeout)) or (
            isinstance(exc, psycopg.OperationalError)
            and (exc.sqlstate is None or exc.sqlstate.startswith(_UNREACHABLE_SQLSTATES))
        )

    def _store_error(self, exc: Exception, where: Mapping[str, str | None]) -> Exception | None:
        """A lost connection or a server that went away (``AdminShutdown`` on a restart,
        ``OperationalError``, a pool that cannot get a connection) is a
        :class:`StoreUnavailableError` naming the thread and checkpoint; a fenced write whose
        lease another run took, :class:`LeaseLostError`."""
        if LEASE_LOST_MARK in str(exc):
            return LeaseLostError(str(where.get("thread")))
        if self._lost(exc):
            self._stale = True
            what = f"the PostgreSQL database {redact(self.conn_string)!r}"
            return StoreUnavailableError.at(what, exc, **where)
        return None

    # -- the caller's loop ----------------------------------------------------------------------

    _DIRECT_CALLS: ClassVar[frozenset[str]] = frozenset(
        {"_in_session", "_read_one", "_read_page", "_store"}
    )
    """The methods that reach the database only through ``_in_session``: once the saver is
    open, they may run on the caller's loop (``_call``)."""

    async def _call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        prefetched, self._prefetched = self._prefetched, None
        if (
            prefetched is not None
            and self._state == "open"
            and self._pid == os.getpid()
            and fn == self._read_one
            and args == (prefetched.thread_id, "", None)
            and prefetched.task is asyncio.current_task()
        ):  # the run's first read, answered with its lease (_lease_fetch)
            return cast(T, self._page(prefetched.result))
        # Once open, a write or read skips the savers' I/O loop: it runs on the caller's loop
        # over a connection of its own (psycopg's async connection keeps no loop-bound state
        # while unused, and only one call at a time uses it), so a step costs no thread
        # hand-off there and back. A call that finds that connection busy — parallel tasks
        # saving at once, another thread — takes a pooled one on the I/O loop, as before.
        if (
            self._state == "open"
            and self._pid == os.getpid()
            and (
                (getattr(fn, "__self__", None) is self and fn.__name__ in self._DIRECT_CALLS)
                or is_statements_only(fn)  # a lease's take and give-back
            )
            and self._direct_lock.acquire(blocking=False)
        ):
            try:
                conn = await self._direct_connection()
                token = _DIRECT.set(conn)
                try:
                    return await fn(*args)
                except BaseException:
                    from psycopg.pq import TransactionStatus

                    if conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
                        self._direct = None
                        await conn.close()
                    raise
                finally:
                    _DIRECT.reset(token)
            finally:
                self._direct_lock.release()
                if self._state != "open":  # closed while this call ran: close its connection
                    await self._close_direct()
        return await super()._call(fn, *args)

    async def _direct_connection(self) -> psycopg.AsyncConnection[Any]:
        """``_direct``, connected afresh if there is none yet or the server closed it (as
        ``_check_idle_connection`` tells, without a round trip); under ``_direct_lock``."""
        import psycopg

        self._prefetched = None  # the connection is about to be used for something else
        conn = self._direct
        if conn is not None and self._unread_release is not None:
            await self._read_release(conn)
            conn = self._direct
        if conn is not None and _server_closed(conn):
            self._direct = None
            await conn.close()
            conn = None
        if conn is None:
            conn = self._direct = await psycopg.AsyncConnection.connect(
                self.conn_string,
                autocommit=True,
                connect_timeout=max(1, round(self.connect_timeout)),
                context=_adapters(),
            )
        return conn

    async def _close_direct(self) -> None:
        """Close ``_direct`` unless a call is using it (that call closes it when it ends)."""
        if self._direct_lock.acquire(blocking=False):
            try:
                direct = self._direct
                if direct is not None and self._unread_release is not None:
                    await self._read_release(direct)
                direct, self._direct = self._direct, None
                if direct is not None:
                    await direct.close()
            finally:
                self._direct_lock.release()

    @asynccontextmanager
    async def _session(self, *, write: bool, snapshot: bool = False) -> AsyncIterator[Session]:
        conn = _DIRECT.get()
        if conn is not None:  # a call on the caller's loop (_call)
            async with _transaction(conn, write, snapshot):
                yield _PgSession(conn)
            return
        pool = await self._fresh_pool()
        if pool is None:
            raise StoreClosedError(f"{self!r} is closed")
        async with pool.connection() as conn, _transaction(conn, write, snapshot):
            yield _PgSession(conn)

    async def _in_session(self, fn: Callable[[Session], Awaitable[T]], write: bool) -> T:
        snapshot = not write and is_snapshot_read(fn)
        async with self._session(write=write, snapshot=snapshot) as s:
            return await fn(s)

    # -- one round trip per write and per read -------------------------------------------------

    async def _store(
        self,
        ordinary: Sequence[WriteRow],
        special: Sequence[WriteRow],
        blobs: Sequence[BlobRow],
        row: Sequence[Any] | None,
        fence: Fence | None = None,
    ) -> None:
        statement = step_statement(ordinary, special, blobs, row, fence)
        if statement is None:
            return
        sql, params = statement

        async def write(s: Session) -> None:
            await s.execute(sql, params)

        await self._in_session(write, False)  # one statement: atomic without BEGIN/COMMIT

    def step_queue(self) -> StepQueue:
        """A queue that sends each step's statement as it is put and reads the server's answer
        when the next step is put (or the queue is drained), so a run's next step runs while
        the server writes the previous one; see :mod:`durable_debug.checkpoint._pg_steps`."""
        return PgStepQueue(self, step_statement)

    async def _read_one(self, thread_id: str, ns: str, checkpoint_id: str | None) -> _Page:
        params: tuple[str, ...]
        if checkpoint_id is None:
            sql, params = SELECT_LATEST, (thread_id, ns)
        else:
            sql, params = SELECT_BY_ID, (thread_id, ns, checkpoint_id)

        async def read(s: Session) -> pq.abc.PGresult:
            assert isinstance(s, _PgSession)
            return await fetch(s.conn, sql, params)  # through libpq: see _libpq

        return self._page(await self._in_session(read, False))

    def _page(self, result: pq.abc.PGresult) -> _Page:
        """The checkpoint of a ``SELECT_LATEST`` or ``SELECT_BY_ID`` result, with its blobs and
        pending writes."""
        get: Callable[[int, int], Any] = result.get_value  # bytes, None for NULL
        kinds = [get(r, 0)[3] for r in range(result.ntuples)]  # int4, big-endian: 0, 1 or 2
        if 0 not in kinds:
            return _Page([], {}, {}, None, True)
        head = kinds.index(0)
        row = [_text(get(head, c)) for c in range(1, 7)]
        parsed = parse_checkpoint_row(row, self.serde)
        thread, namespace = parsed.thread_id, parsed.checkpoint_ns
        blobs: dict[BlobKey, tuple[str, bytes | None]] = {}
        pending: list[tuple[str, str, int, WriteValues]] = []
        for r, kind in enumerate(kinds):
            if kind == 1:  # channel, version, type, blob
                key = (thread, namespace, get(r, 1).decode(), get(r, 2).decode())
                blobs[key] = (get(r, 3).decode(), get(r, 7))
            elif kind == 2:  # task_id, channel, type, task_path, blob, idx
                task_id = get(r, 1).decode()
                value = (task_id, get(r, 2).decode(), get(r, 3).decode(), get(r, 7))
                pending.append((get(r, 4).decode(), task_id, _INT4.unpack(get(r, 8))[0], value))
        pending.sort(key=lambda w: w[:3])  # str order is the "C" collation's (UTF-8 bytes)
        writes = {parsed.key: [w[3] for w in pending]} if pending else {}
        return _Page([parsed], blobs, writes, None, True)

    # -- dialect -------------------------------------------------------------------------------

    def _lease_acquire_sql(
        self, thread_id: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        return LEASE_ACQUIRE, (thread_id, token, holder, seconds, holder_proof())

    def _lease_steal_sql(
        self, thread_id: str, dead: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        return LEASE_STEAL, (token, holder, seconds, holder_proof(), thread_id, dead)

    def _lease_renew_sql(
        self, thread_id: str, token: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        return LEASE_RENEW, (seconds, thread_id, token)

    def _lease_take_abandoned_sql(
        self, thread_id: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        return LEASE_TAKE_ABANDONED, (token, holder, seconds, holder_proof(), thread_id)

    def _abandoned_sql(self) -> tuple[str, Sequence[Any]]:
        return LEASE_ABANDONED, ()

    def _blobs_query(self, keys: Sequence[BlobKey]) -> tuple[str, Sequence[Any]]:
        return SELECT_BLOBS, [list(column) for column in zip(*keys, strict=True)]

    def _writes_query(self, ids: Sequence[tuple[str, str, str]]) -> tuple[str, Sequence[Any]]:
        return SELECT_WRITES, [list(column) for column in zip(*ids, strict=True)]

    def _metadata_condition(self, key: str, value: Any) -> tuple[str, Sequence[Any]] | None:
        # Only strings: jsonb says 1 != true, Python says 1 == True, so numbers are filtered
        # in Python (after the other conditions narrowed the rows).
        if type(value) is str and "\x00" not in value and "\x00" not in key:
            return METADATA_EQUALS, (key, json.dumps(value))
        return None

    # -- the optional reads (checkpoint.base: OutlineSaver) -------------------------------------

    async def aread_outline(
        self, thread_id: str, checkpoint_ns: str, *, since: str | None = None
    ) -> list[OutlineRow]:
        """A thread's tree without its state (:mod:`durable_debug.checkpoint.outline`): one
        ``REPEATABLE READ`` transaction of three queries, no state blob read."""
        return await pg_read_outline(self, thread_id, checkpoint_ns, since=since)

    async def alatest_mark(self, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)`` of a thread, from the index alone."""
        return await pg_latest_mark(self, thread_id, checkpoint_ns)


AsyncPostgresSaver = PostgresSaver
"""LangGraph's name for the async PostgreSQL saver; here one class serves sync and async code."""


class _Prefetched(NamedTuple):
    """A thread's newest checkpoint (root namespace) read together with a run's lease."""

    thread_id: str
    task: asyncio.Task[Any] | None
    """The task that took the lease: only its next read uses the result."""
    result: pq.abc.PGresult


@asynccontextmanager
async def _transaction(
    conn: psycopg.AsyncConnection[Any], write: bool, snapshot: bool
) -> AsyncIterator[None]:
    """A write transaction, a ``REPEATABLE READ`` read-only one (a :func:`snapshot_read`:
    its queries see one snapshot, so a prune committing between them cannot make a
    checkpoint's blobs look missing), or none (one statement, atomic by itself)."""
    if write:
        async with conn.transaction():
            yield
        return
    if not snapshot:
        yield
        return
    await conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        yield
    except BaseException:
        if not conn.broken:
            with contextlib.suppress(Exception):
                await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")


class _PgSession:
    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn = conn

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        cur = await self.conn.execute(sql, params or None)
        return list(await cur.fetchall())

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self.conn.execute(sql, params or None)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany(sql, rows)


def _rows_params(
    fields: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]], blob: int
) -> tuple[str, Blobs]:
    """A part's parameters: its rows' ``fields`` as JSON text (one C call to encode) and the
    ``blob`` column of ``rows``."""
    return json.dumps(fields, ensure_ascii=False), Blobs(row[blob] for row in rows)


@functools.cache
def _adapters() -> psycopg.adapt.AdaptersMap:
    """psycopg's adapters with :class:`Blobs` as ``bytea[]`` in the binary format (see
    :func:`blobs_array`; psycopg's generic list dumper inspects every element in Python), for
    every connection that writes steps."""
    import psycopg
    from psycopg.adapt import AdaptersMap, Dumper
    from psycopg.pq import Format

    class _BlobsDumper(Dumper):
        format = Format.BINARY
        oid = 1001  # bytea[]; its elements are bytea (oid 17)

        def dump(self, obj: Any) -> bytes:
            return blobs_array(obj)

    adapters = AdaptersMap(psycopg.adapters)
    adapters.register_dumper(Blobs, _BlobsDumper)
    return adapters


def redact(conn_string: str) -> str:
    """Return ``conn_string`` with its password replaced by ``***`` (for error messages)."""
    text = re.sub(r"(://[^:/@?#]*:)[^@/?#]*@", r"\1***@", conn_string)
    return re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", text, flags=re.IGNORECASE)


def _require_psycopg() -> None:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"PostgresSaver needs psycopg 3 and psycopg-pool ({exc}); install them with: "
            f"{_INSTALL_HINT}"
        ) from exc


def _server_closed(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle connection is closed or the server closed it. Such a socket is readable
    — the server's shutdown notice or end of file — while a live idle connection has nothing
    to read, so no round trip is needed."""
    import select

    if conn.closed or conn.broken:
        return True
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    return bool(readable)


async def _check_idle_connection(conn: psycopg.AsyncConnection[Any]) -> None:
    """Refuse a pooled connection that the server closed while it sat idle (the pool then
    opens another), see :func:`_server_closed`."""
    import psycopg

    if _server_closed(conn):
        await conn.close()  # so the pool discards it rather than handing it out again
        raise psycopg.OperationalError("the server closed the pooled connection")
