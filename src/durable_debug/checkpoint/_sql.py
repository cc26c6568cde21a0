"""What the SQLite and PostgreSQL savers share: the saver protocol written once over SQL.

A subclass supplies its dialect's SQL constants, a way to open and close its connection, and a
*session* (run statements, fetch rows) for reading or for one write transaction. This class does
the rest: it serializes values before any write, runs all database I/O on the I/O loop of
:mod:`durable_debug.checkpoint._io` (so one saver works from any event loop and from the sync
twins), opens the database lazily, and lists history in pages with a bounded number of queries.

    saver = SqliteSaver("app.db")      # nothing is opened yet
    saver.setup()                      # or: await saver.setup() — opens and migrates
    async with SqliteSaver.from_conn_string("app.db") as saver:
        tup = await saver.aget_tuple(config)
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import operator
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

from durable_debug._collector import collect_young
from durable_debug._sync import run_sync
from durable_debug.checkpoint._connected import ConnectedSaver, statements_only
from durable_debug.checkpoint._rows import (
    BlobKey,
    BlobRow,
    ParsedCheckpoint,
    WriteRow,
    blob_keys,
    blob_rows,
    checkpoint_record,
    metadata_text,
    not_found,
    parse_checkpoint_rows,
    to_tuple,
    write_rows,
)
from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
    TaskWrites,
    check_address,
    checkpoint_config,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_checkpoint_ns_filter,
    config_thread_id,
    metadata_matches,
)
from durable_debug.checkpoint.compress import CompressingSerializer
from durable_debug.checkpoint.errors import InvalidConfigError
from durable_debug.checkpoint.lease import (
    LeaseInfo,
    LeaseLostError,
    fence_token,
    holder_is_dead,
)
from durable_debug.checkpoint.records import parse_record, record_text, split_record

__all__ = ["Session", "SqlSaver", "StepRows", "is_short_read", "short_read"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

WriteValues = tuple[str, str, str, bytes]
"""A pending write as selected: task_id, channel, type, blob."""


_WRITE_ORDER = operator.itemgetter(0, 1, 2, 7, 3, 8)
"""Sort key of a writes row with task_path and idx at its end: checkpoint, task_path, task_id,
idx."""


class Session(Protocol):
    """Statements on one connection; for a write session, inside one transaction."""

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        """Run a query and return all its rows."""
        ...

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one statement."""
        ...

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        ...


F = TypeVar("F", bound=Callable[..., Any])

_SHORT_READ = "_durable_short_read"


def short_read(fn: F) -> F:
    """Mark a read session function (for :meth:`SqlSaver._in_session`) whose queries are each
    an index range scan of bounded size: one page of history, one checkpoint. A dialect may run
    such a read on the caller's thread (SQLite does when its connection is idle); a read of
    unknown cost (:meth:`SqlSaver.aquery`, a scan of every thread) is left unmarked."""
    setattr(fn, _SHORT_READ, True)
    return fn


_SNAPSHOT = "_durable_snapshot"


def snapshot_read(fn: F) -> F:
    """Mark a read session function whose queries must all see one snapshot of the store (a
    page of history: checkpoints, then their blobs and writes). SQLite reads every session in
    one read transaction anyway; PostgreSQL runs such a read in a ``REPEATABLE READ``
    transaction, and a one-query read without one."""
    setattr(fn, _SNAPSHOT, True)
    return fn


def is_snapshot_read(fn: Callable[..., Any]) -> bool:
    """Whether :func:`snapshot_read` marked ``fn``."""
    return getattr(fn, _SNAPSHOT, False) is True


def is_short_read(fn: Callable[..., Any]) -> bool:
    """Whether :func:`short_read` marked ``fn``."""
    return getattr(fn, _SHORT_READ, False) is True


Fence = tuple[str, str]
"""(thread_id, token) of the lease a write must still hold to be written (see
:func:`~durable_debug.checkpoint.lease.fence_token`)."""


class StepRows(NamedTuple):
    """A step as :meth:`SqlSaver._store` writes it: its tasks' writes (ordinary, then special),
    its new blobs, its checkpoint row (thread_id, checkpoint_ns, checkpoint_id,
    parent_checkpoint_id, checkpoint, metadata) and the lease it is fenced by, if any."""

    ordinary: list[WriteRow]
    special: list[WriteRow]
    blobs: list[BlobRow]
    row: tuple[Any, ...]
    fence: Fence | None = None


class _Page(NamedTuple):
    checkpoints: list[ParsedCheckpoint]
    """The checkpoints to yield, newest first."""
    blobs: dict[BlobKey, tuple[str, bytes | None]]
    writes: dict[tuple[str, str, str], list[WriteValues]]
    last: tuple[str, str, str] | None
    """(checkpoint_id, thread_id, checkpoint_ns) of the last row read: the next page's start."""
    exhausted: bool
    """True when no row follows this page."""


def _page_tuples(page: _Page, serde: SerializerProtocol) -> Iterator[CheckpointTuple]:
    """The checkpoints of ``page`` rebuilt one by one; values of immutable types are loaded
    once per page (bounded memory), and nothing of the page is held once it is exhausted."""
    shared: dict[BlobKey, Any] = {}
    blobs, writes_of = page.blobs, page.writes
    for parsed in page.checkpoints:
        yield to_tuple(parsed, blobs, writes_of.get(parsed.key, ()), serde, shared)


class SqlSaver(ConnectedSaver):
    """Base of the SQL savers: the saver protocol over the four tables of docs/storage.md.

    The connection's life (lazy open on the savers' I/O loop, ``with``/``async with``,
    ``setup()``/``close()``, forks, leaks) is :class:`ConnectedSaver`'s; ``_open`` also
    creates or migrates the tables.
    """

    page_size: ClassVar[int] = 200
    """Checkpoints read per query when listing history."""

    # Dialect, supplied by each subclass as module-level SQL constants.
    _P: ClassVar[str]
    """Parameter placeholder."""
    _SELECT_CHECKPOINTS: ClassVar[str]
    """SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint,
    metadata FROM checkpoints (JSON columns as text), without WHERE."""
    _INSERT_BLOB: ClassVar[str]
    _UPSERT_CHECKPOINT: ClassVar[str]
    _INSERT_WRITE: ClassVar[str]
    _UPSERT_WRITE: ClassVar[str]
    _DELETE_THREAD: ClassVar[tuple[str, ...]]
    _DELETE_CHECKPOINTS: ClassVar[tuple[str, ...]]
    """Blobs, writes, checkpoints; parameters thread_id, checkpoint_ns, ids JSON (twice for
    the blobs)."""
    _LIST_THREADS: ClassVar[str]
    _DEBUG_COLUMN: ClassVar[str] = "debug"
    """The ``debug`` column (the debug record) selected as JSON text."""
    _DEBUG_PARAM: ClassVar[str] = "?"
    """A parameter stored in the ``debug`` column (JSON text)."""
    _WRITES_ORDERED: ClassVar[bool] = True
    """Whether :meth:`_writes_query` returns rows in (task_path, task_id, idx) order; when
    False its rows end with task_path and idx and are put in order here."""

    def __init__(self, *, serde: SerializerProtocol | None = None, compress: bool = True) -> None:
        super().__init__(serde=serde)
        self.compress = compress
        """Whether new blobs and pending writes are stored compressed when that pays (see
        :mod:`durable_debug.checkpoint.compress`); compressed ones are read either way."""

    @property
    def _blob_serde(self) -> CompressingSerializer:
        """The serializer of blobs and pending writes: ``serde``, compressed as configured."""
        return CompressingSerializer(self.serde, enabled=self.compress)

    # -- dialect hooks (besides ConnectedSaver's _open, _disconnect, _discard, _forget) --------

    @abstractmethod
    async def _in_session(self, fn: Callable[[Session], Awaitable[T]], write: bool) -> T:
        """Run ``fn`` with a session for reading, or inside one write transaction (committed
        when ``fn`` returns, rolled back when it raises), and return its result.

        ``fn`` awaits nothing but its session's methods, so a dialect may run it whole on the
        connection's own thread (SQLite does: one hand-off per transaction, not per statement),
        or, for a write or a :func:`short_read`, on the caller's thread when nothing waits.
        """

    @abstractmethod
    def _blobs_query(self, keys: Sequence[BlobKey]) -> tuple[str, Sequence[Any]]:
        """SELECT thread_id, checkpoint_ns, channel, version, type, blob of these blob keys."""

    def _blobs_query_of(
        self, checkpoints: Sequence[ParsedCheckpoint]
    ) -> tuple[str, Sequence[Any]] | None:
        """The query of the blobs ``checkpoints`` point at, or None when they point at none.
        A dialect may build it from the pointer maps without listing the keys one by one."""
        keys = blob_keys(checkpoints)
        return self._blobs_query(keys) if keys else None

    @abstractmethod
    def _writes_query(self, ids: Sequence[tuple[str, str, str]]) -> tuple[str, Sequence[Any]]:
        """SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, channel, type, blob of the
        writes of these checkpoints, in (task_path, task_id, idx) order (or, when
        ``_WRITES_ORDERED`` is False, in any order followed by task_path and idx)."""

    def _writes_query_of(
        self, checkpoints: Sequence[ParsedCheckpoint], contiguous: bool
    ) -> tuple[str, Sequence[Any]]:
        """The query of the pending writes of ``checkpoints`` (as :meth:`_writes_query`).
        ``contiguous`` says that no checkpoint of one of their (thread, namespace) lies between
        two of them without being one of them (an unfiltered page of history), so a dialect
        may select the writes of each (thread, namespace) by a range of checkpoint ids."""
        return self._writes_query([c.key for c in checkpoints])

    @abstractmethod
    def _metadata_condition(self, key: str, value: Any) -> tuple[str, Sequence[Any]] | None:
        """A WHERE condition selecting rows whose metadata[key] equals value, or None when the
        dialect cannot say so exactly (the filter is then applied in Python only)."""

    def _reads_ahead(self) -> bool:
        """Whether a listing reads its next page while the caller consumes the current one
        (worth it when a page is read on another thread). Default: no."""
        return False

    # -- reading -------------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint ``config`` names (or the latest of its thread), or None."""
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = config_checkpoint_id(config)
        where = {"thread": thread_id, "checkpoint": checkpoint_id}
        page = await self._run(self._read_one, thread_id, checkpoint_ns, checkpoint_id, where=where)
        if not page.checkpoints:
            if checkpoint_id is not None:
                raise not_found(thread_id, checkpoint_ns, checkpoint_id)
            return None
        parsed = page.checkpoints[0]
        writes = page.writes.get(parsed.key, [])
        return to_tuple(parsed, page.blobs, writes, self._blob_serde)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Yield checkpoints newest first (every thread when ``config`` is None).

        Without ``checkpoint_ns`` in the config, every namespace of the thread is listed.
        ``filter`` keeps checkpoints whose metadata has each key with an equal value; the
        values are compared as stored, i.e. as JSON.
        """
        check_address(config)
        check_address(before)
        if limit is not None and limit <= 0:
            return
        thread_id = None if config is None else config_thread_id(config)
        ns = None if config is None else config_checkpoint_ns_filter(config)
        before_id = config_checkpoint_id(before)
        conditions = [self._metadata_condition(k, v) for k, v in (filter or {}).items()]
        pushed = [c for c in conditions if c is not None]
        exact = len(pushed) == len(conditions)
        remaining = limit
        serde = self._blob_serde

        def read(after: tuple[str, str, str] | None, want: int | None) -> Awaitable[_Page]:
            size = want if want is not None and exact else self.page_size
            return self._run(
                self._read_page,
                thread_id,
                ns,
                before_id,
                after,
                filter,
                pushed,
                size,
                want,
                where={"thread": thread_id},
            )

        # When _reads_ahead(), the next page is read (on the connection's thread) while this
        # one's checkpoints are rebuilt and consumed, so the two overlap instead of taking turns.
        pending: asyncio.Future[_Page] | None = None
        page = await read(None, remaining)
        try:
            while True:
                left = None if remaining is None else remaining - len(page.checkpoints)
                more = not page.exhausted and (left is None or left > 0)
                if more and self._reads_ahead():
                    pending = asyncio.ensure_future(read(page.last, left))
                for tup in _page_tuples(page, serde):
                    yield tup
                    if remaining is not None:
                        remaining -= 1
                        if remaining <= 0:
                            return
                if not more:
                    return
                if pending is None:
                    # The page is consumed: let go of it and collect the young generations
                    # before the next is read, so the collector never finds a page alive in
                    # a collection that would promote it (see durable_debug._collector).
                    last = page.last
                    del page
                    collect_young()
                    page = await read(last, remaining)
                else:
                    page, pending = await pending, None
        finally:
            if pending is not None:  # the caller stopped early: drop the page read ahead
                if pending.done():
                    if not pending.cancelled():
                        pending.exception()  # retrieved, so it is not reported as lost
                else:
                    pending.cancel()

    async def alist_threads(self) -> list[str]:
        """Return the ids of every thread that has a checkpoint, oldest thread first."""

        async def read(s: Session) -> list[str]:
            return [str(row[0]) for row in await s.fetch(self._LIST_THREADS)]

        return await self._run(self._in_session, read, False)

    async def aquery(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one SQL statement on the saver's database and return its rows.

        For inspecting the tables (see docs/storage.md); the statement runs as given, so keep
        it to SELECTs.
        """

        async def read(s: Session) -> list[tuple[Any, ...]]:
            return [tuple(row) for row in await s.fetch(sql, params)]

        return await self._run(self._in_session, read, False)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Sync twin of :meth:`aquery`."""
        return run_sync(self.aquery(sql, params))

    async def _read_one(self, thread_id: str, ns: str, checkpoint_id: str | None) -> _Page:
        where = f"thread_id = {self._P} AND checkpoint_ns = {self._P}"
        params: list[Any] = [thread_id, ns]
        if checkpoint_id is None:
            sql = f"{self._SELECT_CHECKPOINTS} WHERE {where} ORDER BY checkpoint_id DESC LIMIT 1"
        else:
            sql = f"{self._SELECT_CHECKPOINTS} WHERE {where} AND checkpoint_id = {self._P}"
            params.append(checkpoint_id)

        @short_read
        async def read(s: Session) -> _Page:
            rows = await s.fetch(sql, params)
            parsed = parse_checkpoint_rows(rows, self.serde)
            return await self._complete(s, parsed, None, exhausted=True)

        return await self._in_session(read, write=False)

    async def _read_page(
        self,
        thread_id: str | None,
        ns: str | None,
        before_id: str | None,
        after: tuple[str, str, str] | None,
        filter: Mapping[str, Any] | None,
        pushed: Sequence[tuple[str, Sequence[Any]]],
        size: int,
        want: int | None,
    ) -> _Page:
        sql, params = self._page_query(thread_id, ns, before_id, after, pushed, size)

        @snapshot_read
        @short_read
        async def read(s: Session) -> _Page:
            rows = await s.fetch(sql, params)
            parsed = parse_checkpoint_rows(rows, self.serde)
            kept = [c for c in parsed if metadata_matches(c.metadata, filter)]
            if want is not None:
                kept = kept[:want]
            last = (str(rows[-1][2]), str(rows[-1][0]), str(rows[-1][1])) if rows else None
            # Unfiltered, a page holds every checkpoint of each of its (thread, namespace)
            # between that one's first and last: its writes may be selected by those ranges.
            return await self._complete(
                s, kept, last, exhausted=len(rows) < size, contiguous=not filter
            )

        return await self._in_session(read, write=False)

    def _page_query(
        self,
        thread_id: str | None,
        ns: str | None,
        before_id: str | None,
        after: tuple[str, str, str] | None,
        pushed: Sequence[tuple[str, Sequence[Any]]],
        size: int,
    ) -> tuple[str, list[Any]]:
        """The SELECT of one page of history, newest first, starting after ``after``
        ((checkpoint_id, thread_id, checkpoint_ns) of the previous page's last row).

        Each shape is one range scan of an index in its ORDER BY's order, never a sort: the
        primary key for one namespace of a thread, ``checkpoints_thread_order`` for every
        namespace of a thread, ``checkpoints_order`` for every thread. The cursor compares
        only the columns that vary within the scan, so it is the index's own range bound.
        """
        p = self._P
        where: list[str] = []
        params: list[Any] = []
        if thread_id is not None:
            where.append(f"thread_id = {p}")
            params.append(thread_id)
        if ns is not None:
            where.append(f"checkpoint_ns = {p}")
            params.append(ns)
        if before_id is not None:
            where.append(f"checkpoint_id < {p}")
            params.append(before_id)
        if after is not None:
            after_id, _, after_ns = after
            if thread_id is not None and ns is not None:
                where.append(f"checkpoint_id < {p}")
                params.append(after_id)
            elif thread_id is not None:
                where.append(f"(checkpoint_id, checkpoint_ns) < ({p}, {p})")
                params.extend((after_id, after_ns))
            else:
                where.append(f"(checkpoint_id, thread_id, checkpoint_ns) < ({p}, {p}, {p})")
                params.extend(after)
        for condition, values in pushed:
            where.append(condition)
            params.extend(values)
        sql = self._SELECT_CHECKPOINTS
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT {p}"
        params.append(size)
        return sql, params

    async def _complete(
        self,
        s: Session,
        checkpoints: list[ParsedCheckpoint],
        last: tuple[str, str, str] | None,
        *,
        exhausted: bool,
        contiguous: bool = False,
    ) -> _Page:
        """Fetch the blobs and pending writes of ``checkpoints``: two queries at most.
        ``contiguous``: see :meth:`_writes_query_of`."""
        blobs: dict[BlobKey, tuple[str, bytes | None]] = {}
        writes: dict[tuple[str, str, str], list[WriteValues]] = {}
        query = self._blobs_query_of(checkpoints)
        if query is not None:
            sql, params = query
            for t, n, channel, version, type_, blob in await s.fetch(sql, params):
                blobs[(t, n, channel, version)] = (type_, blob)
        if checkpoints:
            sql, params = self._writes_query_of(checkpoints, contiguous)
            rows = await s.fetch(sql, params)
            if not self._WRITES_ORDERED:  # in a checkpoint: by task_path, task_id, idx
                rows = sorted(rows, key=_WRITE_ORDER)
            for t, n, c, task_id, channel, type_, blob, *_ in rows:
                writes.setdefault((t, n, c), []).append((task_id, channel, type_, blob))
        return _Page(checkpoints, blobs, writes, last, exhausted)

    # -- writing -------------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as a child of the checkpoint ``config`` names, in one
        transaction; blobs only for ``new_versions``, each written once."""
        return await self.aput_step(config, (), checkpoint, metadata, new_versions)

    async def aput_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save tasks' writes on the checkpoint ``config`` names and ``checkpoint`` as its
        child, all in one transaction (see :meth:`BaseCheckpointSaver.aput_step`)."""
        # Serialize everything first: a value that cannot be saved leaves the database untouched.
        rows = self._step_rows(config, task_writes, checkpoint, metadata, new_versions)
        thread_id, checkpoint_ns, checkpoint_id = rows.row[:3]
        where = {"thread": thread_id, "checkpoint": checkpoint_id}
        await self._run(self._store, *rows, where=where)
        logger.debug("put checkpoint %s of thread %s", checkpoint_id, thread_id)
        return checkpoint_config(thread_id, checkpoint_ns, checkpoint_id)

    def _step_rows(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> StepRows:
        """A step serialized: the rows :meth:`_store` writes for :meth:`aput_step`."""
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = checkpoint["id"]
        plain_metadata, record = split_record(metadata)
        ordinary, special = self._write_rows(config, task_writes)
        blobs = blob_rows(thread_id, checkpoint_ns, checkpoint, new_versions, self._blob_serde)
        row = (
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            config_checkpoint_id(config),
            checkpoint_record(thread_id, checkpoint, self.serde),
            metadata_text(thread_id, checkpoint_id, plain_metadata, self.serde),
            record_text(record),
        )
        return StepRows(ordinary, special, blobs, row, self._fence(thread_id))

    def _fence(self, thread_id: str) -> Fence | None:
        """The lease the calling run holds on ``thread_id``, which its writes must still hold
        (checked inside their transaction); None outside a run."""
        token = fence_token(self, thread_id)
        return None if token is None else (thread_id, token)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes in one transaction; ordinary writes once, special ones
        replacing the previous."""
        ordinary, special = self._write_rows(config, [(task_id, writes, task_path)])
        if not ordinary and not special:
            return

        thread_id = config_thread_id(config)
        where = {"thread": thread_id, "checkpoint": config_checkpoint_id(config)}
        fence = self._fence(thread_id)
        await self._run(
            self._store, ordinary, special, [], None, fence, where={**where, "task": task_id}
        )

    def _write_rows(
        self, config: RunnableConfig, task_writes: Sequence[TaskWrites]
    ) -> tuple[list[WriteRow], list[WriteRow]]:
        """Rows for the writes of ``task_writes`` on the checkpoint ``config`` names."""
        if not task_writes:
            return [], []
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = config_checkpoint_id(config)
        if checkpoint_id is None:
            raise InvalidConfigError("put_writes needs a config that names a checkpoint_id")
        ordinary: list[WriteRow] = []
        special: list[WriteRow] = []
        for task_id, writes, task_path in task_writes:
            more, replaced = write_rows(
                thread_id,
                checkpoint_ns,
                checkpoint_id,
                task_id,
                task_path,
                writes,
                self._blob_serde,
            )
            ordinary += more
            special += replaced
        return ordinary, special

    async def _store(
        self,
        ordinary: Sequence[WriteRow],
        special: Sequence[WriteRow],
        blobs: Sequence[BlobRow],
        row: Sequence[Any] | None,
        fence: Fence | None = None,
    ) -> None:
        """Write pending writes, new blobs and (unless ``row`` is None) a checkpoint row, all
        in one transaction, after checking there that ``fence``'s lease still holds the
        thread (:class:`LeaseLostError` with nothing written if not). A dialect may override
        this to do it in fewer statements."""

        async def write(s: Session) -> None:
            if fence is not None:
                await self._check_fence(s, fence)
            if ordinary:
                await s.executemany(self._INSERT_WRITE, ordinary)
            if special:
                await s.executemany(self._UPSERT_WRITE, special)
            if blobs:
                await s.executemany(self._INSERT_BLOB, blobs)
            if row is not None:
                await s.execute(self._UPSERT_CHECKPOINT, row)

        await self._in_session(write, True)

    async def _check_fence(self, s: Session, fence: Fence) -> None:
        """Inside a write transaction: raise :class:`LeaseLostError` unless the run's lease
        token still holds the thread (the transaction then writes nothing)."""
        thread_id = fence[0]
        sql = (
            f"SELECT 1 FROM thread_leases WHERE thread_id = {self._P} AND token = {self._P}"
            f"{self._FENCE_LOCK}"
        )
        if not await s.fetch(sql, fence):
            raise LeaseLostError(thread_id)

    _FENCE_LOCK: ClassVar[str] = ""
    """What the fence's SELECT adds to hold the lease row until the transaction commits (a
    SQLite write transaction already excludes every other writer)."""

    # -- leases (durable_debug.checkpoint.lease) -----------------------------------------------

    @abstractmethod
    def _lease_acquire_sql(
        self, thread_id: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        """The upsert that takes ``thread_id``'s lease unless a live lease holds it."""

    @abstractmethod
    def _lease_renew_sql(
        self, thread_id: str, token: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        """The UPDATE … RETURNING that extends ``token``'s lease."""

    async def _lease_fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        """Run one lease statement (atomic on its own) and return its rows, from
        :meth:`_run`. Default: in one write transaction of :meth:`_in_session` (on SQLite, one
        call on the connection's thread)."""

        async def fetch(s: Session) -> list[Sequence[Any]]:
            return await s.fetch(sql, params)

        return await self._in_session(fetch, True)

    @abstractmethod
    def _lease_steal_sql(
        self, thread_id: str, dead: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        """The UPDATE … RETURNING token, holder, since that takes ``thread_id``'s lease from
        the token ``dead`` (a holder found dead on this host), only if ``dead`` still holds
        it."""

    async def _lease_take_from(
        self,
        thread_id: str,
        rows: list[Sequence[Any]],
        token: str,
        holder: str,
        seconds: float,
    ) -> list[Sequence[Any]]:
        """Given the lease row another token holds (token, holder, since, proof): take it when
        its holder is provably dead on this host, and return the row now there."""
        if rows and len(rows[0]) > 3 and holder_is_dead(rows[0][3]):
            sql, params = self._lease_steal_sql(thread_id, str(rows[0][0]), token, holder, seconds)
            taken = await self._lease_fetch(sql, params)
            if taken:
                logger.info(
                    "thread %r: took the lease of %s, which is no longer running",
                    thread_id,
                    rows[0][1],
                )
                return taken
            rows = await self._lease_fetch(self._LEASE_SELECT.format(p=self._P), (thread_id,))
        return rows

    _LEASE_SELECT: ClassVar[str] = (
        "SELECT token, holder, since, proof FROM thread_leases WHERE thread_id = {p}"
    )

    async def _lease_acquire(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo:
        length = seconds or 30.0
        sql, params = self._lease_acquire_sql(thread_id, token, holder, length)
        select = self._LEASE_SELECT.format(p=self._P)

        @statements_only
        async def write() -> LeaseInfo:
            while True:
                rows = await self._lease_fetch(sql, params)  # RETURNING: a row when taken
                if not rows:  # held: say by whom (a second query only when busy)
                    rows = await self._lease_fetch(select, (thread_id,))
                    rows = await self._lease_take_from(thread_id, rows, token, holder, length)
                if rows:  # else released in between: try again
                    break
            return _lease_info(rows[0])

        return await self._run(write, where={"thread": thread_id})

    @abstractmethod
    def _lease_take_abandoned_sql(
        self, thread_id: str, token: str, holder: str, seconds: float
    ) -> tuple[str, Sequence[Any]]:
        """The UPDATE … RETURNING that takes ``thread_id``'s lease only if it has expired."""

    async def _lease_take_abandoned(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo | None:
        length = seconds or 30.0
        sql, params = self._lease_take_abandoned_sql(thread_id, token, holder, length)
        select = self._LEASE_SELECT.format(p=self._P)

        @statements_only
        async def write() -> LeaseInfo | None:
            rows = await self._lease_fetch(sql, params)  # RETURNING: a row when taken
            if not rows:  # a live holder (say who), a dead one (take it), or no lease left
                rows = await self._lease_fetch(select, (thread_id,))
                rows = await self._lease_take_from(thread_id, rows, token, holder, length)
            if not rows:
                return None
            return _lease_info(rows[0])

        return await self._run(write, where={"thread": thread_id})

    async def _lease_renew(self, thread_id: str, token: str, seconds: float) -> bool:
        sql, params = self._lease_renew_sql(thread_id, token, seconds)

        async def write() -> bool:
            return bool(await self._lease_fetch(sql, params))

        return await self._run(write, where={"thread": thread_id})

    async def _lease_release(self, thread_id: str, token: str) -> None:
        sql = (
            f"DELETE FROM thread_leases WHERE thread_id = {self._P} AND token = {self._P} "
            "RETURNING thread_id"
        )

        @statements_only
        async def write() -> None:
            await self._lease_fetch(sql, (thread_id, token))

        await self._run(write, where={"thread": thread_id})

    @abstractmethod
    def _abandoned_sql(self) -> tuple[str, Sequence[Any]]:
        """SELECT thread_id, proof, expired FROM thread_leases, oldest expiry first: every
        lease row, whether it has expired, and its holder's proof of life."""

    async def alist_abandoned_threads(self) -> list[str]:
        """Threads whose lease row was left behind by a dead run: expired, or held by a
        process provably dead on this host (see
        :meth:`BaseCheckpointSaver.alist_abandoned_threads`)."""
        sql, params = self._abandoned_sql()

        async def read(s: Session) -> list[str]:
            rows = await s.fetch(sql, params)
            return [str(row[0]) for row in rows if row[2] or holder_is_dead(row[1])]

        return await self._run(self._in_session, read, False)

    # -- debug records (checkpoint/records.py) ------------------------------------------------

    stores_debug_records = True

    async def aget_debug_records(
        self,
        thread_id: str,
        checkpoint_ns: str | None,
        checkpoint_ids: Sequence[str] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The debug records of a thread's checkpoints, by ``(checkpoint_ns, checkpoint_id)``
        (none from a database older than schema version 9, which has no ``debug`` column)."""
        p = self._P
        sql = (
            f"SELECT checkpoint_ns, checkpoint_id, {self._DEBUG_COLUMN} FROM checkpoints "
            f"WHERE thread_id = {p} AND debug IS NOT NULL"
        )
        params: list[Any] = [thread_id]
        if checkpoint_ns is not None:
            sql += f" AND checkpoint_ns = {p}"
            params.append(checkpoint_ns)
        if checkpoint_ids is not None:
            if not checkpoint_ids:
                return {}
            sql += f" AND checkpoint_id IN ({', '.join([p] * len(checkpoint_ids))})"
            params += list(checkpoint_ids)

        async def read(s: Session) -> list[Sequence[Any]]:
            return await s.fetch(sql, params)

        try:
            rows = await self._run(self._in_session, read, False)
        except Exception as exc:
            if "debug" in str(exc) and "column" in str(exc):  # an older schema, read as it is
                return {}
            raise
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for ns, cid, text in rows:
            record = parse_record(text)
            if record is not None:
                found[(str(ns), str(cid))] = record
        return found

    async def aset_debug_record(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, record: dict[str, Any]
    ) -> None:
        """Replace the debug record of a saved checkpoint."""
        p = self._P
        sql = (
            f"UPDATE checkpoints SET debug = {self._DEBUG_PARAM} "
            f"WHERE thread_id = {p} AND checkpoint_ns = {p} AND checkpoint_id = {p}"
        )
        params = (record_text(record), thread_id, checkpoint_ns, checkpoint_id)

        async def write(s: Session) -> None:
            await s.execute(sql, params)

        await self._run(self._in_session, write, True, where={"thread": thread_id})

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of ``thread_id``, in one transaction."""

        fence = self._fence(thread_id)

        async def write(s: Session) -> None:
            if fence is not None:
                await self._check_fence(s, fence)
            for sql in self._DELETE_THREAD:
                await s.execute(sql, (thread_id,))

        await self._run(self._in_session, write, True, where={"thread": thread_id})

    async def adelete_checkpoints(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str]
    ) -> None:
        """Delete some checkpoints, their writes and the blobs only they pointed at, in one
        transaction."""
        ids = json.dumps(list(checkpoint_ids))
        blobs_sql, *rest = self._DELETE_CHECKPOINTS

        fence = self._fence(thread_id)

        async def write(s: Session) -> None:
            if fence is not None:
                await self._check_fence(s, fence)
            await s.execute(blobs_sql, (thread_id, checkpoint_ns, ids, ids))
            for sql in rest:
                await s.execute(sql, (thread_id, checkpoint_ns, ids))

        await self._run(self._in_session, write, True, where={"thread": thread_id})


def _lease_info(row: Sequence[Any]) -> LeaseInfo:
    """A lease row's (token, holder, since, …) as a :class:`LeaseInfo`."""
    token, holder, since = row[:3]
    if isinstance(since, str):
        since = _dt.datetime.fromisoformat(since)
    return LeaseInfo(str(token), str(holder), since)
