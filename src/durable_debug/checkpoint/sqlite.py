"""SqliteSaver: checkpoints in a SQLite file (the embedded default), on aiosqlite.

The four tables of the storage layout (docs/storage.md): ``checkpoints`` (pointer map and
metadata as JSON), ``checkpoint_blobs`` (one row per channel version, shared by every checkpoint
pointing at it), ``checkpoint_writes`` and ``checkpoint_migrations``. The file runs in WAL mode,
so several processes can resume threads from one file; each write is one short
``BEGIN IMMEDIATE`` transaction, waiting up to ``busy_timeout`` seconds for another
process's write to finish.

    saver = SqliteSaver("checkpoints.db")          # opened on first use
    graph = builder.compile(checkpointer=saver)
    with SqliteSaver.from_conn_string("checkpoints.db") as saver:   # or `async with`
        graph.invoke(inputs, config)

``synchronous=NORMAL`` is used: a committed checkpoint survives the process being killed at any
moment; a power cut may lose the last few commits but never corrupts the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import functools
import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar, cast

import aiosqlite

from durable_debug.checkpoint._files import access_problem
from durable_debug.checkpoint._io import run_soon_on_io_loop
from durable_debug.checkpoint._rows import BlobKey, ParsedCheckpoint
from durable_debug.checkpoint._schema import (
    DatabaseSetupError,
    apply_migrations,
    newer_schema_error,
    schema_version,
)
from durable_debug.checkpoint._sql import Session, SqlSaver, is_short_read
from durable_debug.checkpoint.base import SerializerProtocol
from durable_debug.checkpoint.errors import StoreClosedError, StoreUnavailableError
from durable_debug.checkpoint.latest import LatestHead, sqlite_latest_heads
from durable_debug.checkpoint.lease import (
    LeaseInfo,
    boot_clock,
    boot_expired,
    holder_is_dead,
    holder_proof,
)
from durable_debug.checkpoint.outline import (
    OutlineRow,
    sqlite_latest_mark,
    sqlite_read_outline,
    sqlite_subgraph_heads,
)
from durable_debug.checkpoint.serde import CorruptPayloadError

__all__ = [
    "MIGRATIONS",
    "OLDEST_READABLE",
    "AsyncSqliteSaver",
    "DatabaseSetupError",
    "SqliteSaver",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

MIGRATIONS: list[str] = [
    """CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)""",
    """CREATE TABLE checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        checkpoint TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    )""",
    """CREATE TABLE checkpoint_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    )""",
    """CREATE TABLE checkpoint_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BLOB NOT NULL,
        task_path TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    )""",
    # 4: version maps stored grouped by version (channel → version becomes version → channels)
    """UPDATE checkpoints SET checkpoint = json_set(checkpoint,
        '$.channel_versions', (
            SELECT json_group_object(version, json(channels)) FROM (
                SELECT pointer.value AS version, json_group_array(pointer.key) AS channels
                FROM json_each(checkpoints.checkpoint, '$.channel_versions') AS pointer
                GROUP BY pointer.value)),
        '$.versions_seen', (
            SELECT json_group_object(seen.key, json((
                SELECT json_group_object(version, json(channels)) FROM (
                    SELECT pointer.value AS version, json_group_array(pointer.key) AS channels
                    FROM json_each(seen.value) AS pointer
                    GROUP BY pointer.value))))
            FROM json_each(checkpoints.checkpoint, '$.versions_seen') AS seen))""",
    # 5, 6: every page of history is an index range scan, never a sort (SqlSaver._page_query):
    # all namespaces of one thread, newest first; every thread, newest first.
    """CREATE INDEX checkpoints_thread_order ON checkpoints
        (thread_id, checkpoint_id, checkpoint_ns)""",
    """CREATE INDEX checkpoints_order ON checkpoints (checkpoint_id, thread_id, checkpoint_ns)""",
    # 7 (one writer per thread): who holds each thread, until when (Unix seconds)
    """CREATE TABLE thread_leases (
        thread_id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        holder TEXT NOT NULL,
        since TEXT NOT NULL,
        expires REAL NOT NULL
    )""",
    # 8: a channel without a value is kept in the checkpoint's empty_versions, with no blob row
    # (checkpoint/_rows.py). Nothing to convert: older rows are read as they are. The version
    # is recorded so an older durable_debug, which would miss those channels, refuses the file.
    "SELECT 8",
    # 9: each checkpoint's debug record (checkpoint/records.py) in a column of its own, never
    # in metadata; older rows have none (their record keys are read from their metadata).
    "ALTER TABLE checkpoints ADD COLUMN debug TEXT",
    # 10: a lease records its holder's proof of life and its expiry on the host's boot clock
    # (lease.holder_proof), so a dead holder frees the thread at once and a worker whose wall
    # clock is off cannot take a live lease
    "ALTER TABLE thread_leases ADD COLUMN proof TEXT NOT NULL DEFAULT ''",
]
"""Schema migrations; the index of each statement is the schema version it creates."""

OLDEST_READABLE = 7
"""The oldest schema version this code reads as it is, without migrating it (the read-only
saver's floor): version 8 changed only what new checkpoints hold."""

MIGRATIONS_TABLE_EXISTS = (
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoint_migrations'"
)
INSERT_MIGRATION = "INSERT INTO checkpoint_migrations (v) VALUES (?)"

SELECT_CHECKPOINTS = """SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint, metadata FROM checkpoints"""

SELECT_BLOBS = """SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
FROM json_each(?) AS thread
CROSS JOIN json_each(thread.value) AS ns
CROSS JOIN json_each(ns.value) AS version
CROSS JOIN json_each(version.value) AS channel
CROSS JOIN checkpoint_blobs AS b
WHERE b.thread_id = thread.key AND b.checkpoint_ns = ns.key
  AND b.channel = channel.value AND b.version = version.key"""
"""The blobs of many (thread_id, checkpoint_ns, channel, version) keys, passed as one JSON
object ``{thread_id: {checkpoint_ns: {version: [channel, ...]}}}`` (the shape of the stored
pointer maps), so a page of history needs one query however many channels it has. CROSS JOIN
fixes the join order: keys first, then one primary-key lookup per key."""

SELECT_WRITES = """SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel,
    w.type, w.blob, w.task_path, w.idx
FROM json_each(?) AS k
JOIN checkpoint_writes AS w
  ON w.thread_id = json_extract(k.value, '$[0]')
 AND w.checkpoint_ns = json_extract(k.value, '$[1]')
 AND w.checkpoint_id = json_extract(k.value, '$[2]')"""
"""The pending writes of many checkpoints (their keys as one JSON array): a primary-key range
per checkpoint. No ORDER BY: ``task_path`` is not in the key, so SQL would sort every page's
writes in a temporary B-tree; the rows carry ``task_path`` and ``idx`` and the saver puts them
in order (SqlSaver._complete)."""

SELECT_WRITES_BETWEEN = """SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id,
    w.channel, w.type, w.blob, w.task_path, w.idx
FROM json_each(?) AS k
JOIN checkpoint_writes AS w
  ON w.thread_id = json_extract(k.value, '$[0]')
 AND w.checkpoint_ns = json_extract(k.value, '$[1]')
 AND w.checkpoint_id BETWEEN json_extract(k.value, '$[2]') AND json_extract(k.value, '$[3]')"""
"""The pending writes of the checkpoints of a page of history that lie between two ids of one
(thread_id, checkpoint_ns), for each ``[thread_id, checkpoint_ns, first, last]`` of a JSON
array: a primary-key range each, fewer keys than :data:`SELECT_WRITES` when a page holds runs
of one thread's checkpoints (ordered like SELECT_WRITES' rows by the saver)."""

INSERT_BLOB = """INSERT INTO checkpoint_blobs
    (thread_id, checkpoint_ns, channel, version, type, blob)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING"""

UPSERT_CHECKPOINT = """INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, debug)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id,
    checkpoint = excluded.checkpoint,
    metadata = excluded.metadata,
    debug = excluded.debug"""

INSERT_WRITE = """INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING"""

UPSERT_WRITE = """INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = excluded.channel,
    type = excluded.type,
    blob = excluded.blob,
    task_path = excluded.task_path"""

DELETE_THREAD = (
    "DELETE FROM checkpoint_writes WHERE thread_id = ?",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ?",
    "DELETE FROM checkpoints WHERE thread_id = ?",
)

DELETE_CHECKPOINTS = (
    """DELETE FROM checkpoint_blobs
WHERE thread_id = ? AND checkpoint_ns = ? AND (channel, version) IN (
    SELECT ch.value, v.key
    FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v,
        json_each(v.value) AS ch
    WHERE c.thread_id = checkpoint_blobs.thread_id
      AND c.checkpoint_ns = checkpoint_blobs.checkpoint_ns
      AND c.checkpoint_id IN (SELECT value FROM json_each(?))
    EXCEPT
    SELECT ch.value, v.key
    FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v,
        json_each(v.value) AS ch
    WHERE c.thread_id = checkpoint_blobs.thread_id
      AND c.checkpoint_ns = checkpoint_blobs.checkpoint_ns
      AND c.checkpoint_id NOT IN (SELECT value FROM json_each(?)))""",
    """DELETE FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns = ?
    AND checkpoint_id IN (SELECT value FROM json_each(?))""",
    """DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?
    AND checkpoint_id IN (SELECT value FROM json_each(?))""",
)
"""Delete some checkpoints of a thread (the ids as a JSON array): first the blobs only they
point at (the stored pointer map is ``{version: [channel, ...]}``), then their writes, then
them. Parameters: thread_id, checkpoint_ns, ids (and ids again for the blobs)."""

LIST_THREADS = """SELECT thread_id FROM checkpoints
GROUP BY thread_id ORDER BY min(checkpoint_id), thread_id"""

LEASE_SELECT = """SELECT token, holder, since, expires, proof FROM thread_leases
WHERE thread_id = ?"""

LEASE_INSERT = """INSERT INTO thread_leases (thread_id, token, holder, since, expires, proof)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_id) DO NOTHING
RETURNING token"""
"""Take a thread's lease when no row holds it (a row there is judged by
:meth:`SqliteSaver._lease_free`, in the same immediate transaction)."""

LEASE_PUT = """INSERT INTO thread_leases (thread_id, token, holder, since, expires, proof)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_id) DO UPDATE SET
    token = excluded.token, holder = excluded.holder, since = excluded.since,
    expires = excluded.expires, proof = excluded.proof"""
"""Write a thread's lease, in the immediate transaction (BEGIN IMMEDIATE) that found it free
(:meth:`SqliteSaver._lease_free`): no other writer can come in between."""

LEASE_RENEW = """UPDATE thread_leases SET expires = ?, proof = ?
WHERE thread_id = ? AND token = ? RETURNING thread_id"""

LEASE_ABANDONED = """SELECT thread_id, proof, expires FROM thread_leases
ORDER BY expires, thread_id"""

_INT64 = 2**63
_GIVEN_ASYNC = "<aiosqlite.Connection>"


class SqliteSaver(SqlSaver):
    """A saver that stores checkpoints in a SQLite database file (or ``":memory:"``).

    ``path`` is opened on first use; the directory must exist. ``busy_timeout`` is how long a
    write waits for another process's write to finish before failing with "database is locked".
    ``compress=False`` stores new blobs uncompressed (see
    :mod:`~durable_debug.checkpoint.compress`).
    """

    _P = "?"
    _SELECT_CHECKPOINTS = SELECT_CHECKPOINTS
    _INSERT_BLOB = INSERT_BLOB
    _UPSERT_CHECKPOINT = UPSERT_CHECKPOINT
    _INSERT_WRITE = INSERT_WRITE
    _UPSERT_WRITE = UPSERT_WRITE
    _DELETE_THREAD = DELETE_THREAD
    _DELETE_CHECKPOINTS = DELETE_CHECKPOINTS
    _LIST_THREADS = LIST_THREADS
    _WRITES_ORDERED = False

    def __init__(
        self,
        path: str | os.PathLike[str] | sqlite3.Connection = ":memory:",
        *,
        serde: SerializerProtocol | None = None,
        busy_timeout: float = 30.0,
        compress: bool = True,
    ) -> None:
        given: sqlite3.Connection | None = None
        given_async: aiosqlite.Connection | None = None
        if isinstance(path, sqlite3.Connection):
            given, path = path, _database_file(path)
        elif isinstance(path, aiosqlite.Connection):
            given_async, path = path, _GIVEN_ASYNC  # its file is asked on first use
        elif not isinstance(path, (str, os.PathLike)):
            raise TypeError(
                "SqliteSaver expects a file path, ':memory:', a sqlite3.Connection or an "
                f"aiosqlite.Connection, got {type(path).__name__}"
            )
        super().__init__(serde=serde, compress=compress)
        self.path = os.fspath(path)
        """The database file, or ``":memory:"``."""
        self.busy_timeout = busy_timeout
        self._given = given
        self._given_async = given_async
        self._conn: aiosqlite.Connection | None = None
        self._raw: sqlite3.Connection | None = None
        self._inline = False
        """Whether writes and short reads may run on the caller's thread (only on a connection
        of our own)."""
        self._busy = threading.Lock()
        """Held while a session runs on ``_raw``, on whichever thread runs it."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    # -- connection ----------------------------------------------------------------------------

    async def _open(self) -> None:
        if self._given_async is not None:
            await self._open_given_async(self._given_async)
            return
        given = self._given
        if given is not None and not await _usable_off_thread(given):
            if self.path == ":memory:":
                raise DatabaseSetupError(
                    "the sqlite3.Connection given to SqliteSaver was opened with "
                    "check_same_thread=True, so the saver cannot use it from its own thread; "
                    "open it with sqlite3.connect(':memory:', check_same_thread=False)"
                )
            # Only usable on the thread that opened it: open the same file ourselves.
            logger.debug("%r: the given connection is bound to its thread; reopening", self)
            given = None
        opened: list[sqlite3.Connection] = []
        path, timeout = self.path, self.busy_timeout  # the connector must not hold the saver

        def connect() -> sqlite3.Connection:
            if given is not None:
                opened.append(given)
                return _Borrowed(given)  # type: ignore[return-value]  # _Borrowed wraps the caller's connection and answers as one
            # isolation_level=None: transactions begin and end where the saver says so.
            raw = sqlite3.connect(
                path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            opened.append(raw)
            return raw

        try:
            # Made on the I/O loop's daemon thread, aiosqlite's worker thread is a daemon too,
            # so a script that never closes its saver still exits (committed data is safe).
            conn = aiosqlite.Connection(connect, 64)
            await conn
            _OPEN.add(conn)
        except sqlite3.Error as exc:
            problem = access_problem(path, write=True) if path != ":memory:" else None
            if problem is not None:
                raise DatabaseSetupError(problem) from exc
            raise DatabaseSetupError(
                f"cannot open the SQLite database {self.path!r} ({exc}); check that its "
                "directory exists and is writable"
            ) from exc
        try:
            await self._prepare(_SqliteSession(conn))
        except BaseException:
            await _closed(conn)
            raise
        if given is None:  # see _transact_locked: 0 except while aiosqlite's thread waits
            await conn.execute("PRAGMA busy_timeout = 0")
        self._conn, self._raw = conn, opened[0]
        self._inline = given is None

    async def _open_given_async(self, conn: aiosqlite.Connection) -> None:
        """Use an aiosqlite connection the caller opened (LangGraph's ``AsyncSqliteSaver(conn)``)
        and leave it open when the saver closes."""
        if getattr(conn, "_connection", None) is None:
            await conn  # made with aiosqlite.connect() but not awaited yet
        try:
            rows = await conn.execute_fetchall("PRAGMA database_list")
        except (sqlite3.Error, ValueError) as exc:
            raise DatabaseSetupError(
                f"SqliteSaver cannot use the given aiosqlite.Connection: {exc}"
            ) from None
        self.path = next((str(f) or ":memory:" for _, name, f in rows if name == "main"), "")
        await self._prepare(_SqliteSession(conn))
        self._conn, self._raw = conn, conn._conn

    async def _prepare(self, s: _SqliteSession) -> None:
        """Check the file and its schema version, switch to WAL, run missing migrations."""
        latest = len(MIGRATIONS) - 1
        try:
            version = await schema_version(s, MIGRATIONS_TABLE_EXISTS)
        except sqlite3.DatabaseError as exc:
            self._raise_access_problem(exc)
            raise DatabaseSetupError(
                f"{self.path!r} is not a SQLite database ({exc}); give the saver a new file "
                "name or an existing durable_debug database"
            ) from None
        if version > latest:
            raise newer_schema_error(f"the SQLite database {self.path!r}", version, latest)
        if self.path != ":memory:":
            try:
                await self._use_wal(s)
            except sqlite3.DatabaseError as exc:
                self._raise_access_problem(exc)
                raise
        await s.execute("PRAGMA synchronous = NORMAL")
        if version == latest:
            return
        await s.execute("BEGIN IMMEDIATE")  # another process may be migrating the same file
        try:
            version = await schema_version(s, MIGRATIONS_TABLE_EXISTS)
            if version > latest:
                raise newer_schema_error(f"the SQLite database {self.path!r}", version, latest)
            await apply_migrations(s, MIGRATIONS, version, INSERT_MIGRATION)
            await s.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            await _rollback(s.conn)
            if "already exists" not in str(exc):
                raise
            raise DatabaseSetupError(
                f"the SQLite database {self.path!r} already has tables that durable_debug did "
                f"not create ({exc}); LangGraph's SqliteSaver uses the same table names. Use a "
                "separate database file for durable_debug."
            ) from None
        except BaseException:
            await _rollback(s.conn)
            raise

    def _raise_access_problem(self, exc: sqlite3.Error) -> None:
        """Raise a plain "permission denied" naming the path and the user when ``exc`` came
        from the file's permissions (not from its content)."""
        if self.path in (":memory:", _GIVEN_ASYNC, ""):
            return
        problem = access_problem(self.path, write=not getattr(self, "read_only", False))
        if problem is not None:
            raise DatabaseSetupError(problem) from exc

    async def _use_wal(self, s: _SqliteSession) -> None:
        """Switch the file to WAL mode unless it is in it already.

        Two processes opening a new file at once may both try to switch. SQLite then refuses
        one of them at once, without waiting ``busy_timeout`` (both waiting would deadlock), so
        that one waits a moment and looks again.
        """
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                mode = (await s.fetch("PRAGMA journal_mode"))[0][0]
                if str(mode).lower() != "wal":
                    await s.fetch("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.01)

    async def _disconnect(self) -> None:
        conn, self._conn, self._raw, self._inline = self._conn, None, None, False
        # A write another thread is running on the connection right now finishes first; later
        # ones see the saver closed (a lock held across the await below could deadlock with
        # sessions queued on aiosqlite's thread, which take it too).
        with self._busy:
            pass
        if conn is not None and conn is not self._given_async:
            await _closed(conn)

    def _discard(self) -> None:
        conn, self._conn, self._raw, self._inline = self._conn, None, None, False
        if conn is not None and conn is not self._given_async:
            run_soon_on_io_loop(_closed(conn))

    def _forget(self) -> None:
        self._conn, self._raw, self._inline = None, None, False
        self._busy = threading.Lock()  # a fork's copy may have been held by another thread

    def _store_error(self, exc: Exception, where: Mapping[str, str | None]) -> Exception | None:
        """A file that cannot be used right now (locked past ``busy_timeout``, unreadable, a
        full disk) is a :class:`StoreUnavailableError`; a damaged file ("database disk image
        is malformed") a :class:`CorruptPayloadError`; both name the thread and checkpoint."""
        if isinstance(exc, sqlite3.OperationalError):
            if "readonly" in str(exc) or "unable to open" in str(exc):
                problem = None
                if self.path not in (":memory:", _GIVEN_ASYNC, ""):
                    problem = access_problem(self.path, write=True)
                if problem is not None:
                    return DatabaseSetupError(problem)
            return StoreUnavailableError.at(f"the SQLite database {self.path!r}", exc, **where)
        if type(exc) is sqlite3.DatabaseError:  # not one of its subclasses (IntegrityError…)
            location = {key: value for key, value in where.items() if value is not None}
            return CorruptPayloadError(
                f"the SQLite database {self.path!r} is damaged ({exc})", location
            )
        return None

    async def _call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        # Once open, skip the I/O loop: aiosqlite resolves each call's future on the loop that
        # made the call, and the saver keeps no other loop-bound state, so a read or write is a
        # single hand-off to the connection's thread and back from any loop.
        if self._state == "open" and self._pid == os.getpid() and self._conn is not None:
            return await fn(*args)
        return await super()._call(fn, *args)

    async def _in_session(self, fn: Callable[[Session], Awaitable[T]], write: bool) -> T:
        # The whole session (a write's BEGIN, statements and COMMIT; a read's queries and the
        # parsing of their rows) is one call on aiosqlite's connection thread: one thread
        # hand-off per transaction instead of one per statement.
        #
        # A write, or a short read (one page of history, one checkpoint: _sql.short_read), goes
        # further when the connection is idle: it runs right here, on the caller's thread,
        # without waiting for any lock of the file (another process holding one makes it run
        # on aiosqlite's thread instead, which waits up to busy_timeout, so the caller's event
        # loop never waits on a lock). A step's transaction takes about 40 µs of SQL; the two
        # hand-offs cost as much on an idle machine and far more on a loaded one, where each
        # waits for the other thread to be scheduled, and a page's parsing holds the GIL either
        # way. ``_busy`` keeps sessions from interleaving on the one connection.
        conn, raw = self._conn, self._raw
        if conn is None or raw is None:
            raise StoreClosedError(f"{self!r} is closed")
        busy = self._busy
        here = write or is_short_read(fn)
        if here and self._inline and busy.acquire(blocking=False):
            try:  # still open, on the same connection, now that no one else is using it
                if not (self._inline and self._raw is raw):
                    done, result = False, None
                elif write:
                    done, result = _transact_now(raw, fn)
                else:
                    done, result = _read_now(raw, fn)
            finally:
                busy.release()
            if done:
                return cast("T", result)
        wait_ms = round(self.busy_timeout * 1000) if self._inline else None
        return await _on_connection_thread(conn, _transact_locked, busy, raw, fn, write, wait_ms)

    def _reads_ahead(self) -> bool:
        # A page read on the caller's thread cannot overlap with anything: read it when asked.
        return not self._inline

    # -- dialect -------------------------------------------------------------------------------

    # -- leases: decided in one immediate transaction, on the host's boot clock ----------------
    #
    # Every process using a SQLite file in WAL mode runs on the file's host, so a lease expires
    # on that host's boot clock (lease.boot_clock), which no one sets and every process reads
    # alike, instead of on the workers' wall clocks; ``expires`` (Unix seconds) is still
    # written, for the queries of docs/production.md and for a lease from another boot.

    @staticmethod
    def _lease_free(expires: float, proof: str | None) -> bool:
        """Whether a lease row another token holds may be taken: its holder is provably dead
        on this host, or it has expired (on the boot clock when it was set in this boot)."""
        if holder_is_dead(proof):
            return True
        expired = boot_expired(proof)
        if expired is not None:
            return expired
        return float(expires) < time.time()

    async def _lease_decide(
        self,
        thread_id: str,
        token: str,
        holder: str,
        seconds: float | None,
        *,
        only_abandoned: bool,
    ) -> LeaseInfo | None:
        length = seconds or 30.0
        lease_free = self._lease_free

        async def take(s: Session) -> tuple[Any, ...] | None:
            now = time.time()
            since = _dt.datetime.fromtimestamp(now, _dt.timezone.utc).isoformat()
            proof = holder_proof(boot_clock() + length)
            lease = (thread_id, token, holder, since, now + length, proof)
            if not only_abandoned and await s.fetch(LEASE_INSERT, lease):
                return (token, holder, since)  # no lease there: one statement, the usual case
            rows = await s.fetch(LEASE_SELECT, (thread_id,))
            if rows:
                found = tuple(rows[0])
                if str(found[0]) != token and not lease_free(found[3], found[4]):
                    return found  # a live holder
            elif only_abandoned:
                return None  # given back: no dead run to take over
            await s.execute(LEASE_PUT, lease)
            return (token, holder, since)

        row = await self._run(self._in_session, take, True, where={"thread": thread_id})
        if row is None:
            return None
        since = row[2]
        return LeaseInfo(str(row[0]), str(row[1]), _dt.datetime.fromisoformat(str(since)))

    async def _lease_acquire(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo:
        info = await self._lease_decide(thread_id, token, holder, seconds, only_abandoned=False)
        assert info is not None
        return info

    async def _lease_take_abandoned(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo | None:
        return await self._lease_decide(thread_id, token, holder, seconds, only_abandoned=True)

    async def alist_abandoned_threads(self) -> list[str]:
        """Threads whose lease row was left behind by a dead run: expired, or held by a
        process provably dead on this host."""
        lease_free = self._lease_free

        async def read(s: Session) -> list[str]:
            try:
                rows = await s.fetch(LEASE_ABANDONED)
            except sqlite3.OperationalError as exc:  # a file older than migration 10, read-only
                if "proof" not in str(exc):
                    raise
                rows = await s.fetch(LEASE_ABANDONED.replace("proof", "''"))
            return [str(row[0]) for row in rows if lease_free(row[2], row[1])]

        return await self._run(self._in_session, read, False)

    def _lease_acquire_sql(
        self, thread_id: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        raise NotImplementedError("SqliteSaver takes leases in _lease_decide")

    def _lease_steal_sql(
        self, thread_id: str, dead: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        raise NotImplementedError("SqliteSaver takes leases in _lease_decide")

    def _lease_renew_sql(
        self, thread_id: str, token: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        proof = holder_proof(boot_clock() + seconds)
        return LEASE_RENEW, (time.time() + seconds, proof, thread_id, token)

    def _lease_take_abandoned_sql(
        self, thread_id: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        raise NotImplementedError("SqliteSaver takes leases in _lease_decide")

    def _abandoned_sql(self) -> tuple[str, Sequence[Any]]:
        return LEASE_ABANDONED, ()

    def _blobs_query(self, keys: Sequence[BlobKey]) -> tuple[str, Sequence[Any]]:
        nested: dict[str, dict[str, dict[str, list[str]]]] = {}
        for thread_id, checkpoint_ns, channel, version in keys:
            nested.setdefault(thread_id, {}).setdefault(checkpoint_ns, {}).setdefault(
                version, []
            ).append(channel)
        return SELECT_BLOBS, (json.dumps(nested),)

    def _blobs_query_of(
        self, checkpoints: Sequence[ParsedCheckpoint]
    ) -> tuple[str, Sequence[Any]] | None:
        # Straight from the stored pointer maps (already {version: (channel, ...)}), merged per
        # thread and namespace: a page's checkpoints share most of their entries, so a group
        # already listed is compared, not merged, and the maps are dumped as they are.
        merged: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
        thread_id = ns = None
        by_version: dict[str, tuple[str, ...]] = {}
        for c in checkpoints:
            if c.thread_id != thread_id or c.checkpoint_ns != ns:
                thread_id, ns = c.thread_id, c.checkpoint_ns
                by_version = merged.setdefault(thread_id, {}).setdefault(ns, {})
            for version, channels in c.pointers.items():
                have = by_version.get(version)
                if have is None:
                    by_version[version] = channels
                elif have != channels:
                    by_version[version] = tuple(dict.fromkeys((*have, *channels)))
        selects = False
        for by_ns in merged.values():
            for key, grouped in by_ns.items():
                if not all(grouped.values()):  # a version of no channel selects nothing
                    by_ns[key] = grouped = {v: chs for v, chs in grouped.items() if chs}
                selects = selects or bool(grouped)
        if not selects:
            return None
        return SELECT_BLOBS, (json.dumps(merged),)

    def _writes_query(self, ids: Sequence[tuple[str, str, str]]) -> tuple[str, Sequence[Any]]:
        return SELECT_WRITES, (json.dumps(ids),)

    def _writes_query_of(
        self, checkpoints: Sequence[ParsedCheckpoint], contiguous: bool
    ) -> tuple[str, Sequence[Any]]:
        if not contiguous:
            return super()._writes_query_of(checkpoints, contiguous)
        ranges: dict[tuple[str, str], list[str]] = {}
        for c in checkpoints:
            found = ranges.get((c.thread_id, c.checkpoint_ns))
            if found is None:
                ranges[(c.thread_id, c.checkpoint_ns)] = [c.checkpoint_id, c.checkpoint_id]
            elif c.checkpoint_id < found[0]:
                found[0] = c.checkpoint_id
            elif c.checkpoint_id > found[1]:
                found[1] = c.checkpoint_id
        return SELECT_WRITES_BETWEEN, (json.dumps([(*k, *r) for k, r in ranges.items()]),)

    def _metadata_condition(self, key: str, value: Any) -> tuple[str, Sequence[Any]] | None:
        if '"' in key or "\\" in key:
            return None
        path = f'$."{key}"'
        cls = type(value)
        if cls is str and "\x00" not in value:
            return "(json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?)", (
                path,
                path,
                value,
            )
        if cls is bool or (cls is int and -_INT64 <= value < _INT64):
            return "json_extract(metadata, ?) = ?", (path, value)
        if cls is float and math.isfinite(value):
            return "json_extract(metadata, ?) = ?", (path, value)
        return None

    # -- the optional reads (checkpoint.base: OutlineSaver, SubgraphHeadsSaver, LatestHeadsSaver)

    async def aread_outline(
        self, thread_id: str, checkpoint_ns: str, *, since: str | None = None
    ) -> list[OutlineRow]:
        """A thread's tree without its state (:mod:`durable_debug.checkpoint.outline`)."""
        return await sqlite_read_outline(self, thread_id, checkpoint_ns, since=since)

    async def alatest_mark(self, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)`` of a thread, from the index alone."""
        return await sqlite_latest_mark(self, thread_id, checkpoint_ns)

    async def asubgraph_heads(self, thread_id: str) -> list[tuple[str, Any]]:
        """Each subgraph namespace of a thread with its newest checkpoint's metadata."""
        return await sqlite_subgraph_heads(self, thread_id)

    async def alatest_heads(self) -> list[LatestHead]:
        """Each thread's newest top-level checkpoint, no state (one query)."""
        return await sqlite_latest_heads(self)


AsyncSqliteSaver = SqliteSaver
"""LangGraph's name for the async SQLite saver; here one class serves sync and async code."""


_OPEN: set[aiosqlite.Connection] = set()
"""The connections the savers opened and have not closed yet. Held here so that a forgotten
saver's connection is closed by the saver, on the I/O loop, and never by aiosqlite's own
finalizer: collected with the saver, that one stops its thread with an answer to whatever
event loop the collecting thread had set (often one that closes soon after, as a test's does),
and the thread then dies of ``Event loop is closed``."""


async def _closed(conn: aiosqlite.Connection) -> None:
    """Close a connection the saver opened (its thread stops once the queued calls ran)."""
    try:
        await conn.close()
    finally:
        _OPEN.discard(conn)


async def _on_connection_thread(conn: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` run on ``conn``'s thread, its answer awaited on the running loop.

    aiosqlite's own ``_execute`` hands the answer to the caller's loop with
    ``call_soon_threadsafe``; when that loop has closed meanwhile (a call cancelled while it
    waited for a lock, then its ``asyncio.run`` ended), the call raises on aiosqlite's thread,
    which then stops for good: every later call on the connection, and closing it, waited
    forever. The answer goes through an :class:`_Answer` instead, dropped when nobody can
    receive it. (aiosqlite ≥ 0.20 queues ``(future, function)`` pairs and answers through
    ``future.get_loop()``; a connection without that queue is called the plain way.)"""
    queue = getattr(conn, "_tx", None)
    if queue is None or not getattr(conn, "_running", False) or conn._connection is None:
        # closed: it says so
        return cast("T", await conn._execute(fn, *args))  # type: ignore[no-untyped-call]  # aiosqlite's private _execute carries no annotations
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    queue.put_nowait((_Answer(future), functools.partial(fn, *args)))
    return await future


class _Answer:
    """What aiosqlite's thread answers a call through: the caller's future, reached through
    its loop while that loop runs; once it has closed, nobody waits, and the answer is
    dropped instead of stopping the thread."""

    __slots__ = ("future", "loop")

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future
        self.loop = future.get_loop()

    def get_loop(self) -> _Answer:
        return self

    def call_soon_threadsafe(self, callback: Callable[..., Any], _: Any, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # "Event loop is closed"
            self.loop.call_soon_threadsafe(callback, self.future, value)


class _SqliteSession:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        return list(await self.conn.execute_fetchall(sql, params))

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self.conn.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self.conn.executemany(sql, rows)


class _ThreadSession:
    """A session on the raw connection, for functions running on aiosqlite's thread: its
    methods are coroutines that never suspend, so :func:`_transact` runs them to the end in one
    step."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        return self.raw.execute(sql, params).fetchall()

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.raw.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.raw.executemany(sql, rows)


def _snapshot(raw: sqlite3.Connection, fn: Callable[[Session], Awaitable[T]]) -> T:
    """Run the read session ``fn`` in one read transaction, so all its queries see one
    snapshot of the file: a prune or a deletion committing between them cannot make a
    checkpoint's blobs or writes look missing."""
    if raw.in_transaction:  # the caller's own connection, inside its transaction
        return _drive(fn(_ThreadSession(raw)))
    raw.execute("BEGIN")
    try:
        return _drive(fn(_ThreadSession(raw)))
    finally:
        if raw.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                raw.execute("COMMIT")


def _transact(raw: sqlite3.Connection, fn: Callable[[Session], Awaitable[T]], write: bool) -> T:
    """Run ``fn`` on ``raw`` (on aiosqlite's thread), inside ``BEGIN IMMEDIATE``…``COMMIT``
    when ``write``, else in one read transaction."""
    if not write:
        return _snapshot(raw, fn)
    raw.execute("BEGIN IMMEDIATE")
    return _finish(raw, fn)


def _finish(raw: sqlite3.Connection, fn: Callable[[Session], Awaitable[T]]) -> T:
    """Run the write session ``fn`` in the transaction just begun on ``raw``, then commit it;
    roll it back if ``fn`` raises."""
    try:
        result = _drive(fn(_ThreadSession(raw)))
        raw.execute("COMMIT")
    except BaseException:
        if raw.in_transaction:
            raw.rollback()
        raise
    return result


def _transact_locked(
    busy: threading.Lock,
    raw: sqlite3.Connection,
    fn: Callable[[Session], Awaitable[T]],
    write: bool,
    wait_ms: int | None,
) -> T:
    """:func:`_transact` holding ``busy`` (on aiosqlite's thread). ``wait_ms``: for a
    connection the saver opened, how long to wait for the file's locks; its ``busy_timeout``
    is 0 outside such a session, so the sessions on the caller's thread (:func:`_transact_now`,
    :func:`_read_now`, the usual case) fail at once on a lock, with no ``PRAGMA`` of their
    own. None for a connection the caller passed in, whose settings are left as they are."""
    with busy:
        if wait_ms is None:
            return _transact(raw, fn, write)
        raw.execute(f"PRAGMA busy_timeout = {wait_ms}")
        try:
            return _transact(raw, fn, write)
        finally:
            with contextlib.suppress(sqlite3.Error):  # a closed connection: nothing to restore
                raw.execute("PRAGMA busy_timeout = 0")


_LOCKED = ("database is locked", "database table is locked")


def _transact_now(
    raw: sqlite3.Connection, fn: Callable[[Session], Awaitable[T]]
) -> tuple[bool, T | None]:
    """Run the write session ``fn`` on the calling thread if the database's write lock can be
    taken without waiting: ``(True, result)``, or ``(False, None)`` when another connection
    holds it (nothing was done; the caller hands the session to aiosqlite's thread, which
    waits up to ``busy_timeout``). The caller holds the saver's ``_busy`` lock."""
    if raw.in_transaction:  # left open by something outside the saver: let _transact say so
        return False, None
    try:
        raw.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if str(exc) in _LOCKED:
            return False, None
        raise
    return True, _finish(raw, fn)


def _read_now(
    raw: sqlite3.Connection, fn: Callable[[Session], Awaitable[T]]
) -> tuple[bool, T | None]:
    """Run the read session ``fn`` on the calling thread without waiting for a lock:
    ``(True, result)``, or ``(False, None)`` when a query found the file locked (in WAL mode a
    reader waits only while another connection recovers the WAL or changes the journal mode).
    A read changes nothing, so the caller then runs ``fn`` again on aiosqlite's thread, which
    waits up to ``busy_timeout``. The caller holds the saver's ``_busy`` lock."""
    try:
        return True, _snapshot(raw, fn)
    except sqlite3.OperationalError as exc:
        if str(exc) in _LOCKED:
            return False, None
        raise


def _drive(awaitable: Awaitable[T]) -> T:
    """Run a coroutine that never suspends to its end and return its result."""
    coro = cast("Coroutine[Any, Any, T]", awaitable)
    try:
        coro.send(None)
    except StopIteration as done:
        return cast("T", done.value)
    coro.close()
    raise RuntimeError("a SQLite session function awaited something other than its session")


async def _usable_off_thread(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` may be used from a thread other than the one that opened it."""

    def probe() -> bool:
        try:
            conn.execute("SELECT 1").fetchall()
        except sqlite3.ProgrammingError as exc:
            if "thread" in str(exc):
                return False
            raise
        return True

    return await asyncio.to_thread(probe)


def _database_file(conn: sqlite3.Connection) -> str:
    """The file of ``conn``'s main database, or ``":memory:"`` (asked on the caller's thread,
    which may be the only one allowed to use it)."""
    try:
        rows = conn.execute("PRAGMA database_list").fetchall()
    except sqlite3.ProgrammingError as exc:
        raise ValueError(f"SqliteSaver cannot use the given sqlite3.Connection: {exc}") from None
    for _seq, name, file in rows:
        if name == "main":
            return str(file) or ":memory:"
    return ":memory:"


class _Borrowed:
    """A connection the saver was given: used like its own, but left open when the saver
    closes (whoever opened it closes it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        object.__setattr__(self, "_conn", conn)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._conn, name, value)

    def close(self) -> None:
        """Leave the connection open."""


async def _rollback(conn: aiosqlite.Connection) -> None:
    with contextlib.suppress(sqlite3.OperationalError):  # no transaction was open
        await conn.execute("ROLLBACK")
