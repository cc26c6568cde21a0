"""RedisSaver: checkpoints in Redis, for fast and short-lived threads (redis-py's asyncio client).

The storage model of the SQL savers — a pointer map and metadata per checkpoint, one blob per
(thread, namespace, channel, version) written once and shared, pending writes per task — kept in
a fixed set of keys per (thread, namespace), so that a whole thread can expire as one unit
(``ttl=``) and be deleted in one step. Needs the ``redis`` extra:
``pip install 'durable-debug[redis]'``.

    with RedisSaver.from_conn_string("redis://localhost:6379/0", ttl=86400) as saver:
        graph = builder.compile(checkpointer=saver)
        graph.invoke(inputs, config)       # or: async with …: await graph.ainvoke(…)

Each (thread, namespace) is a fixed set of keys under ``prefix`` (``durable_debug`` by
default), inspectable with ``redis-cli``; see :mod:`durable_debug.checkpoint._redis_layout` and
docs/storage.md:

    durable_debug:thread:job-1::checkpoints    zset  the checkpoint ids, ordered by id (time)
    durable_debug:thread:job-1::checkpoint     hash  id → the checkpoint (pointer map), JSON
    durable_debug:thread:job-1::blobs          hash  "{channel}:{version}" → blob, written once

Every write is one Lua script, so it is atomic: readers never see a checkpoint without its blobs.
With ``ttl`` (seconds), each write sets *every* key of the thread to expire ``ttl`` seconds later,
so a thread disappears as a whole ``ttl`` seconds after its last write. Needs Redis 5 or later,
standalone or replicated (not Redis Cluster: scripts name a thread's keys themselves).
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from durable_debug._collector import collect_young, collector_paused
from durable_debug.checkpoint._connected import ConnectedSaver
from durable_debug.checkpoint._io import run_soon_on_io_loop
from durable_debug.checkpoint._redis_layout import (
    DEFAULT_PREFIX,
    NAMESPACE_KEYS,
    SCHEMA_VERSION,
    SCRIPTS,
    Keys,
    Source,
    blob_field,
    key_part,
    layout_error,
    pack_value,
    parse_write_field,
    unpack_value,
    write_field,
)
from durable_debug.checkpoint._rows import (
    BlobKey,
    ParsedCheckpoint,
    blob_rows,
    checkpoint_record,
    metadata_text,
    not_found,
    parse_checkpoint_row,
    to_tuple,
    write_rows,
)
from durable_debug.checkpoint._schema import DatabaseSetupError, newer_schema_error
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
from durable_debug.checkpoint.errors import (
    InvalidConfigError,
    StoreClosedError,
    StoreUnavailableError,
)
from durable_debug.checkpoint.lease import (
    LEASE_LOST_MARK,
    LeaseInfo,
    LeaseLostError,
    fence_token,
    holder_is_dead,
    holder_proof,
)
from durable_debug.checkpoint.names import BRANCH_PREFIX, JOIN_PREFIX, TRIGGER_CHANNELS
from durable_debug.checkpoint.outline import VALUED_WRITE_CHANNELS, OutlineRow, outline_rows
from durable_debug.checkpoint.postgres import redact
from durable_debug.checkpoint.records import parse_record, record_text, split_record
from durable_debug.checkpoint.serde import CorruptPayloadError, SerdeError

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["DEFAULT_PREFIX", "AsyncRedisSaver", "DatabaseSetupError", "RedisSaver"]

logger = logging.getLogger(__name__)

SCHEMES = ("redis", "rediss", "unix")
"""URL schemes redis-py connects to (``rediss`` is Redis over TLS)."""

ScriptCall = tuple[str, Sequence[str], Sequence[Any]]
"""One run of a script of :data:`~durable_debug.checkpoint._redis_layout.SCRIPTS`: its name, keys
and arguments."""

_OUTLINE_ARGS: tuple[str, ...] = tuple(
    part
    for group in (VALUED_WRITE_CHANNELS, TRIGGER_CHANNELS, (BRANCH_PREFIX, JOIN_PREFIX))
    for part in (str(len(group)), *group)
)
"""The outline script's arguments after ``since``: the write channels whose value it reads, the
trigger channels' names and name prefixes (each group counted first)."""

_OUTLINE_KEYS: tuple[str, ...] = ("checkpoints", "checkpoint", "metadata", "parent", "debug")
_OUTLINE_KEYS += ("blobs", "writes", "write")
"""The keys of the outline script, by their last part."""

_INSTALL_HINT = "pip install 'durable-debug[redis]'"
_PIPELINE_CHUNK = 1000
_PUT_KEYS = (
    "checkpoints",
    "checkpoint",
    "metadata",
    "parent",
    "blobs",
    "writes",
    "write",
    "debug",
)


class _Details(NamedTuple):
    """Blobs and pending writes of some checkpoints, as stored."""

    gone: set[tuple[str, str, str]]
    """(thread, namespace, checkpoint id) of the checkpoints deleted (or expired) since their
    records were read: to be treated as absent."""
    blobs: dict[BlobKey, bytes]
    writes: dict[tuple[str, str, str], list[tuple[bytes, bytes | None]]]
    decoded: dict[BlobKey, tuple[str, bytes]]
    """Blob values already split into (type, bytes), filled while building tuples."""


class _Newest:
    """Heap key that pops the newest checkpoint first (ties: thread, then namespace, desc.)."""

    __slots__ = ("key",)

    def __init__(self, c: ParsedCheckpoint) -> None:
        self.key = (c.checkpoint_id, c.thread_id, c.checkpoint_ns)

    def __lt__(self, other: _Newest) -> bool:
        return self.key > other.key


# --- the saver ---------------------------------------------------------------------------------


class RedisSaver(ConnectedSaver):
    """A saver that stores checkpoints in Redis.

    ``url`` is a redis-py URL (``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` for
    TLS, ``unix:///path.sock``); it may carry ``prefix`` and ``ttl`` as query parameters.
    ``prefix`` starts every key name. ``ttl`` (seconds) makes each write set every key of the
    thread to expire that long after it; without it, keys never expire. The server is reached
    on first use.
    """

    page_size: ClassVar[int] = 200
    """Checkpoints read per round trip when listing history."""

    def __init__(
        self,
        url: str = "redis://localhost:6379/0",
        *,
        prefix: str | None = None,
        ttl: float | None = None,
        serde: SerializerProtocol | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        _require_redis()
        if not isinstance(url, str):
            raise TypeError(f"RedisSaver expects a redis:// URL, got {type(url).__name__}")
        clean, options = _split_options(url)
        prefix = options.get("prefix", DEFAULT_PREFIX) if prefix is None else prefix
        if not prefix:
            raise ValueError("RedisSaver needs a non-empty key prefix")
        if ttl is None and "ttl" in options:
            try:
                ttl = float(options["ttl"])
            except ValueError:
                raise ValueError(
                    f"{redact(url)!r}: ttl must be a number of seconds, got {options['ttl']!r}"
                ) from None
        if ttl is not None and not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        super().__init__(serde=serde)
        self.url = clean
        """The server's URL, without the ``prefix`` and ``ttl`` options."""
        self.prefix = prefix
        """First part of every key name."""
        self.ttl = ttl
        """Seconds after its last write that a thread expires, or None for never."""
        self.connect_timeout = connect_timeout
        self._keys = Keys(prefix)
        self._ttl_ms = 0 if ttl is None else max(1, round(ttl * 1000))
        self._client: Redis | None = None
        self._shas: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact(self.url)!r}, prefix={self.prefix!r})"

    # -- connection ----------------------------------------------------------------------------

    async def _open(self) -> None:
        from redis.asyncio import Redis
        from redis.exceptions import RedisError

        client = Redis.from_url(self.url, socket_connect_timeout=self.connect_timeout)
        try:
            await client.ping()
            await self._check_schema(client)
            self._shas = await _load_scripts(client)
        except RedisError as exc:
            await client.aclose()
            raise DatabaseSetupError(
                f"cannot use the Redis server {redact(self.url)!r}: {exc}".strip()
            ) from None
        except BaseException:
            await client.aclose()
            raise
        self._client = client

    async def _check_schema(self, client: Redis) -> None:
        from redis.exceptions import ResponseError

        key = self._keys.schema
        where = f"the Redis server {redact(self.url)!r} (prefix {self.prefix!r})"
        try:
            await client.set(key, SCHEMA_VERSION, nx=True)
            found = await client.get(key)
            version = int(found or b"")
        except (ResponseError, ValueError):
            raise DatabaseSetupError(
                f"{where}: the key {key!r} was not written by durable_debug; another program "
                "uses this prefix. Give the saver another prefix=. Nothing was changed."
            ) from None
        if version > SCHEMA_VERSION:
            raise newer_schema_error(where, version, SCHEMA_VERSION)
        if version < SCHEMA_VERSION:  # an older layout, read as it is: mark it as this one's
            await client.set(key, SCHEMA_VERSION)

    async def _disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def _discard(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            run_soon_on_io_loop(client.aclose())

    def _forget(self) -> None:
        self._client = None

    def _redis(self) -> Redis:
        if self._client is None:
            raise StoreClosedError(f"{self!r} is closed")
        return self._client

    def _store_error(self, exc: Exception, where: Mapping[str, str | None]) -> Exception | None:
        """A Redis that cannot be reached or dropped the connection (a restart, a network
        failure, a timeout) is a :class:`StoreUnavailableError` naming the thread and
        checkpoint; the client reconnects on the next call."""
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        if LEASE_LOST_MARK in str(exc):
            return LeaseLostError(str(where.get("thread")))
        if isinstance(exc, (RedisConnectionError, RedisTimeoutError)):
            return StoreUnavailableError.at(f"the Redis server {redact(self.url)!r}", exc, **where)
        return None

    async def _eval(self, calls: Sequence[ScriptCall]) -> list[Any]:
        """Run scripts, each given as (name, keys, args), in one round trip; return their
        results."""
        from redis.exceptions import NoScriptError, ResponseError

        client = self._redis()
        try:
            try:
                return await _evalsha(client, self._shas, calls)
            except NoScriptError:  # the server restarted, or its script cache was flushed
                self._shas = await _load_scripts(client)
                return await _evalsha(client, self._shas, calls)
        except ResponseError as exc:
            raise layout_error(str(exc), self.prefix) or exc from None

    # -- writing -------------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as a child of the checkpoint ``config`` names, atomically;
        blobs only for ``new_versions``, each written once."""
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
        child in one script: one round trip, atomic (see
        :meth:`BaseCheckpointSaver.aput_step`)."""
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = checkpoint["id"]
        plain_metadata, record = split_record(metadata)
        # Serialize everything first: a value that cannot be saved leaves Redis untouched.
        writes = self._write_args(config, task_writes)
        blobs = blob_rows(thread_id, checkpoint_ns, checkpoint, new_versions, self.serde)
        args: list[Any] = [
            thread_id,
            self._keys.thread(thread_id),
            key_part(checkpoint_ns),
            checkpoint_id,
            checkpoint_record(thread_id, checkpoint, self.serde),
            metadata_text(thread_id, checkpoint_id, plain_metadata, self.serde),
            config_checkpoint_id(config) or "",
            self._ttl_ms,
            len(blobs),
            record_text(record) or "",
        ]
        for _thread, _ns, channel, version, type_, blob in blobs:
            args += [blob_field(channel, version), pack_value([type_], blob or b"")]
        args += writes
        source = Source(thread_id, checkpoint_ns)
        keys = [
            self._keys.threads,
            self._keys.namespaces(thread_id),
            *self._keys.of(source, *_PUT_KEYS),
        ]
        where = {"thread": thread_id, "checkpoint": checkpoint_id}
        await self._run(self._eval, [self._fenced("put", keys, args, thread_id)], where=where)
        logger.debug("put checkpoint %s of thread %s", checkpoint_id, thread_id)
        return checkpoint_config(thread_id, checkpoint_ns, checkpoint_id)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes atomically; ordinary writes once, special ones replacing the
        previous."""
        args = self._write_args(config, [(task_id, writes, task_path)])
        if not args:
            return
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = config_checkpoint_id(config)
        args = [
            thread_id,
            self._keys.thread(thread_id),
            key_part(checkpoint_ns),
            self._ttl_ms,
            *args,
        ]
        source = Source(thread_id, checkpoint_ns)
        keys = [
            self._keys.threads,
            self._keys.namespaces(thread_id),
            *self._keys.of(source, "writes", "write"),
        ]
        where = {"thread": thread_id, "checkpoint": checkpoint_id, "task": task_id}
        call = self._fenced("put_writes", keys, args, thread_id)
        await self._run(self._eval, [call], where=where)

    def _write_args(self, config: RunnableConfig, task_writes: Sequence[TaskWrites]) -> list[Any]:
        """Script arguments (field, value, replace) for the writes of ``task_writes`` on the
        checkpoint ``config`` names: ordinary writes kept once, special ones replacing."""
        if not task_writes:
            return []
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = config_checkpoint_id(config)
        if checkpoint_id is None:
            raise InvalidConfigError("put_writes needs a config that names a checkpoint_id")
        args: list[Any] = []
        for task_id, writes, task_path in task_writes:
            ordinary, special = write_rows(
                thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, writes, self.serde
            )
            for rows, replace in ((ordinary, "0"), (special, "1")):
                for _t, _n, cid, task, idx, channel, type_, blob, path in rows:
                    args += [write_field(cid, task, idx), pack_value([type_, channel, path], blob)]
                    args.append(replace)
        return args

    def _fenced(
        self, name: str, keys: Sequence[str], args: Sequence[Any], thread_id: str
    ) -> ScriptCall:
        """The call of the writing script ``name``, fenced by the lease the calling run holds
        on ``thread_id`` (the script then writes nothing unless that lease is still the
        run's); as it is outside a run."""
        token = fence_token(self, thread_id)
        if token is None:
            return (name, list(keys), list(args))
        return (f"{name}_fenced", [*keys, self._keys.lease(thread_id)], [*args, token])

    # -- leases (durable_debug.checkpoint.lease) -----------------------------------------------

    async def _lease_acquire(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo:
        key = self._keys.lease(thread_id)
        ms = max(1, round((seconds or 30.0) * 1000))

        async def take() -> LeaseInfo:
            client = self._redis()
            while True:
                since = _dt.datetime.now(_dt.timezone.utc)
                value = f"{token}\n{holder}\n{since.isoformat()}\n{holder_proof()}"
                if await client.set(key, value, nx=True, px=ms):
                    await client.sadd(self._keys.leased, thread_id)
                    return LeaseInfo(token, holder, since)
                raw = await client.get(key)
                if raw is None:  # it expired just now: try again
                    continue
                found, proof = _lease_value(raw)
                if not holder_is_dead(proof):
                    return found
                keys = (key, self._keys.leased)
                if await client.eval(_LEASE_STEAL, 2, *keys, raw, value, ms, thread_id):
                    return LeaseInfo(token, holder, since)

        return await self._run(take, where={"thread": thread_id})

    async def _lease_take_abandoned(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo | None:
        key = self._keys.lease(thread_id)
        ms = max(1, round((seconds or 30.0) * 1000))

        async def take() -> LeaseInfo | None:
            client = self._redis()
            since = _dt.datetime.now(_dt.timezone.utc)
            value = f"{token}\n{holder}\n{since.isoformat()}\n{holder_proof()}"
            keys = (key, self._keys.leased)
            if await client.eval(_LEASE_TAKE_ABANDONED, 2, *keys, value, ms, thread_id):
                return LeaseInfo(token, holder, since)
            raw = await client.get(key)
            if raw is None:  # given back (no mark left), or it expired just now
                return None
            found, proof = _lease_value(raw)
            if holder_is_dead(proof) and await client.eval(
                _LEASE_STEAL, 2, *keys, raw, value, ms, thread_id
            ):
                return LeaseInfo(token, holder, since)
            return found

        return await self._run(take, where={"thread": thread_id})

    async def _lease_renew(self, thread_id: str, token: str, seconds: float) -> bool:
        key = self._keys.lease(thread_id)
        ms = max(1, round(seconds * 1000))

        async def renew() -> bool:
            done = await self._redis().eval(_LEASE_RENEW, 1, key, token, ms)
            return bool(done)

        return await self._run(renew, where={"thread": thread_id})

    async def _lease_release(self, thread_id: str, token: str) -> None:
        key = self._keys.lease(thread_id)

        async def release() -> None:
            await self._redis().eval(_LEASE_RELEASE, 2, key, self._keys.leased, token, thread_id)

        await self._run(release, where={"thread": thread_id})

    async def alist_abandoned_threads(self) -> list[str]:
        """Threads marked leased whose lease key has expired: the run holding them died."""

        async def read() -> list[str]:
            client = self._redis()
            threads = sorted(_text(t) for t in await client.smembers(self._keys.leased))
            if not threads:
                return []
            pipe = client.pipeline(transaction=False)
            for thread_id in threads:
                pipe.get(self._keys.lease(thread_id))
            values = await pipe.execute()
            return [
                t
                for t, raw in zip(threads, values, strict=True)
                if raw is None or holder_is_dead(_lease_value(raw)[1])
            ]

        return await self._run(read)

    # -- debug records (checkpoint/records.py) ------------------------------------------------

    stores_debug_records = True

    async def aget_debug_records(
        self,
        thread_id: str,
        checkpoint_ns: str | None,
        checkpoint_ids: Sequence[str] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The debug records of a thread's checkpoints, by ``(checkpoint_ns, checkpoint_id)``."""

        async def read() -> dict[tuple[str, str], dict[str, Any]]:
            client = self._redis()
            if checkpoint_ns is None:
                members = await client.smembers(self._keys.namespaces(thread_id))
                namespaces = sorted(unquote(_text(m)) for m in members)
            else:
                namespaces = [checkpoint_ns]
            found: dict[tuple[str, str], dict[str, Any]] = {}
            for ns in namespaces:
                (key,) = self._keys.of(Source(thread_id, ns), "debug")
                if checkpoint_ids is None:
                    pairs = list((await client.hgetall(key)).items())
                elif checkpoint_ids:
                    values: list[Any] = await client.hmget(key, list(checkpoint_ids))
                    pairs = list(zip(checkpoint_ids, values, strict=True))
                else:
                    pairs = []
                for cid, text in pairs:
                    record = parse_record(text)
                    if record is not None:
                        found[(ns, _text(cid))] = record
            return found

        return await self._run(read, where={"thread": thread_id})

    async def aset_debug_record(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, record: dict[str, Any]
    ) -> None:
        """Replace the debug record of a saved checkpoint."""
        source = Source(thread_id, checkpoint_ns)
        (checkpoints, key) = self._keys.of(source, "checkpoints", "debug")

        async def write() -> None:
            client = self._redis()
            if await client.zscore(checkpoints, checkpoint_id) is not None:
                await client.hset(key, checkpoint_id, record_text(record) or "{}")
                if self.ttl is not None:
                    await client.pexpire(key, self._ttl_ms)

        await self._run(write, where={"thread": thread_id})

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of ``thread_id``, atomically."""
        keys = [self._keys.threads, self._keys.namespaces(thread_id)]
        args = [thread_id, self._keys.thread(thread_id)]
        call = self._fenced("delete_thread", keys, args, thread_id)
        await self._run(self._eval, [call], where={"thread": thread_id})

    async def adelete_checkpoints(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str]
    ) -> None:
        """Delete some checkpoints, their writes and the blobs only they pointed at,
        atomically."""
        if not checkpoint_ids:
            return
        keys = self._keys.of(Source(thread_id, checkpoint_ns), *NAMESPACE_KEYS)
        call = self._fenced("delete_checkpoints", keys, list(checkpoint_ids), thread_id)
        await self._run(self._eval, [call], where={"thread": thread_id})

    # -- reading -------------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint ``config`` names (or the latest of its thread), or None."""
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = config_checkpoint_id(config)
        source = Source(thread_id, checkpoint_ns)
        request = ("id", checkpoint_id) if checkpoint_id else ("latest",)
        where = {"thread": thread_id, "checkpoint": checkpoint_id}
        found, details = await self._run(self._read_one, source, request, where=where)
        if not found:
            if checkpoint_id is not None:
                raise not_found(thread_id, checkpoint_ns, checkpoint_id)
            return None
        return self._tuple(found[0], details, None)

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
        ``filter`` keeps checkpoints whose metadata has each key with an equal value.
        """
        check_address(config)
        check_address(before)
        if limit is not None and limit <= 0:
            return
        before_id = config_checkpoint_id(before)
        where = {"thread": None if config is None else config_thread_id(config)}
        sources = await self._run(self._sources, config, where=where)
        size = self.page_size if filter or limit is None else min(self.page_size, limit)
        remaining = limit
        async for page in self._merged(sources, before_id, size):
            kept = [c for c in page if metadata_matches(c.metadata, filter)]
            if remaining is not None:
                kept = kept[:remaining]
            if not kept:
                continue
            details = await self._run(self._read_details, kept, where=where)
            shared: dict[BlobKey, Any] = {}
            for parsed in kept:
                if parsed.key in details.gone:
                    continue
                yield self._tuple(parsed, details, shared)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return
            del page, kept, parsed, details, shared  # consumed: _merged collects next

    async def alist_threads(self) -> list[str]:
        """Return the ids of every thread that has a checkpoint, oldest thread first."""

        async def read() -> list[str]:
            sources = await self._all_sources()
            firsts: dict[str, str] = {}
            for chunk in _chunks(sources):
                pipe = self._redis().pipeline(transaction=False)
                for source in chunk:
                    pipe.zrange(self._keys.of(source, "checkpoints")[0], 0, 0)
                for source, ids in zip(chunk, await pipe.execute(), strict=True):
                    if ids:
                        first = ids[0].decode()
                        known = firsts.get(source.thread_id)
                        firsts[source.thread_id] = first if known is None else min(known, first)
            return sorted(firsts, key=lambda thread: (firsts[thread], thread))

        return await self._run(read)

    async def _merged(
        self, sources: list[Source], before_id: str | None, size: int
    ) -> AsyncIterator[list[ParsedCheckpoint]]:
        """Yield the checkpoints of ``sources`` newest first, in pages: each page is what can
        be ordered before another read. Each source is read in batches that double up to
        ``size``, so listing many threads does not read ``size`` checkpoints of each."""
        n = len(sources)
        batch = [max(1, size // n) if n > 1 else size] * n
        bound = ["+" if before_id is None else "(" + before_id] * n
        buffers: list[deque[ParsedCheckpoint]] = [deque() for _ in sources]
        exhausted = [False] * n
        heap: list[tuple[_Newest, int]] = []
        todo = list(range(n))
        while todo:
            requests = [(sources[i], ("page", bound[i], batch[i])) for i in todo]
            for i, records in zip(todo, await self._run(self._read_records, requests), strict=True):
                if len(records) < batch[i]:
                    exhausted[i] = True
                elif records:
                    bound[i] = "(" + records[-1].checkpoint_id
                    batch[i] = min(size, batch[i] * 2)
                buffers[i].extend(records)
                if buffers[i]:
                    heappush(heap, (_Newest(buffers[i][0]), i))
            page: list[ParsedCheckpoint] = []
            todo = []
            while heap:
                _, i = heappop(heap)
                page.append(buffers[i].popleft())
                if buffers[i]:
                    heappush(heap, (_Newest(buffers[i][0]), i))
                elif not exhausted[i]:
                    todo = [i]  # its next checkpoint may be the newest: read on first
                    break
            if page:
                yield page
            # The page is consumed (alist holds none of it any more): let it go and collect the
            # young generations before the next is read (see durable_debug._collector).
            del page, records
            collect_young()

    # -- the optional reads (checkpoint.base: OutlineSaver) -------------------------------------

    async def aread_outline(
        self, thread_id: str, checkpoint_ns: str, *, since: str | None = None
    ) -> list[OutlineRow]:
        """A thread's tree without its state (:mod:`durable_debug.checkpoint.outline`): one
        script, no state blob sent."""
        rows, writes, blobs = await self._outline_parts(thread_id, checkpoint_ns, since)
        with collector_paused():  # many small containers, no cycles
            return outline_rows(rows, writes, blobs, self, thread_id)

    async def alatest_mark(self, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)`` of a thread, from the sorted sets
        alone."""
        keys = self._keys.of(Source(thread_id, checkpoint_ns), "checkpoints", "writes")
        where = {"thread": thread_id}
        (found,) = await self._run(self._eval, [("latest_mark", keys, [])], where=where)
        return (found[0].decode(), int(found[1])) if found else ("", 0)

    async def _outline_parts(
        self,
        thread_id: str,
        checkpoint_ns: str,
        since: str | None,
        subscribed: tuple[str, ...] = (),
    ) -> tuple[list[Any], list[Any], list[Any]]:
        """``(rows, writes, blobs)`` of a thread as
        :func:`~durable_debug.checkpoint.outline.outline_rows` takes them (one script:
        :data:`~durable_debug.checkpoint._redis_layout.OUTLINE_SCRIPT`); ``subscribed``:
        channels read as trigger channels too, their kind only."""
        keys = self._keys.of(Source(thread_id, checkpoint_ns), *_OUTLINE_KEYS)
        args = [since or "", *_OUTLINE_ARGS, *subscribed]
        where = {"thread": thread_id}
        (found,) = await self._run(self._eval, [("outline", keys, args)], where=where)
        flat_rows, flat_writes, flat_blobs = found
        rows = sorted(
            (
                flat_rows[i].decode(),
                flat_rows[i + 3].decode() if flat_rows[i + 3] else None,
                (flat_rows[i + 1] or b"").decode(errors="replace"),
                (flat_rows[i + 2] or b"").decode(errors="replace"),
                flat_rows[i + 4] or None,
            )
            for i in range(0, len(flat_rows), 5)
        )
        writes: list[tuple[str, str, int, str, str, bytes | None]] = []
        checkpoint_id = ""
        try:
            for i in range(0, len(flat_writes), 3):
                checkpoint_id = flat_writes[i].decode()
                task_id, idx = parse_write_field(flat_writes[i + 1])
                (kind, channel, _path), payload = unpack_value(flat_writes[i + 2], 3)
                writes.append((checkpoint_id, task_id, idx, channel, kind, payload or None))
        except SerdeError as exc:
            raise exc.located(thread=thread_id, checkpoint=checkpoint_id, field="writes") from None
        writes.sort(key=lambda w: w[:3])
        blobs: list[tuple[str, str, str, bytes | None]] = []
        channel = ""
        try:
            for i in range(0, len(flat_blobs), 3):
                channel = flat_blobs[i].decode()
                (kind,), payload = unpack_value(flat_blobs[i + 2], 1)
                blobs.append((channel, flat_blobs[i + 1].decode(), kind, payload))
        except SerdeError as exc:
            raise exc.located(thread=thread_id, channel=channel) from None
        return rows, [(w[0], w[1], w[3], w[4], w[5]) for w in writes], blobs

    # -- reads on the I/O loop -----------------------------------------------------------------

    async def _sources(self, config: RunnableConfig | None) -> list[Source]:
        if config is None:
            return await self._all_sources()
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns_filter(config)
        if checkpoint_ns is not None:
            return [Source(thread_id, checkpoint_ns)]
        members = await self._redis().smembers(self._keys.namespaces(thread_id))
        return [Source(thread_id, unquote(_text(m))) for m in sorted(members)]

    async def _all_sources(self) -> list[Source]:
        """Every (thread, namespace) of the threads in ``P:threads`` whose keys still exist."""
        threads = [_text(t) for t in await self._redis().zrange(self._keys.threads, 0, -1)]
        sources: list[Source] = []
        for chunk in _chunks(threads):
            pipe = self._redis().pipeline(transaction=False)
            for thread_id in chunk:
                pipe.smembers(self._keys.namespaces(thread_id))
            for thread_id, members in zip(chunk, await pipe.execute(), strict=True):
                sources += [Source(thread_id, unquote(_text(m))) for m in sorted(members)]
        return sources

    async def _read_one(
        self, source: Source, request: tuple[Any, ...]
    ) -> tuple[list[ParsedCheckpoint], _Details]:
        """One checkpoint with its blobs and pending writes: one script, one round trip."""
        names = ("checkpoints", "checkpoint", "metadata", "parent", "blobs", "writes", "write")
        (found,) = await self._eval([("get", self._keys.of(source, *names), list(request))])
        details = _Details(set(), {}, {}, {})
        if not found:
            return [], details
        checkpoint_id, record, metadata, parent, blob_pairs, write_pairs = found
        row = (
            source.thread_id,
            source.checkpoint_ns,
            checkpoint_id.decode(),
            parent.decode() if parent else None,
            record if record is not None else b"",
            metadata if metadata is not None else b"",
        )
        parsed = parse_checkpoint_row(row, self.serde)
        values = {blob_pairs[i]: blob_pairs[i + 1] for i in range(0, len(blob_pairs), 2)}
        for version, channels in parsed.pointers.items():
            for channel in channels:
                value = values.get(blob_field(channel, version).encode())
                if value is not None:
                    key = (source.thread_id, source.checkpoint_ns, channel, version)
                    details.blobs[key] = value
        details.writes[parsed.key] = [
            (write_pairs[i], write_pairs[i + 1]) for i in range(0, len(write_pairs), 2)
        ]
        return [parsed], details

    async def _read_records(
        self, requests: Sequence[tuple[Source, tuple[Any, ...]]]
    ) -> list[list[ParsedCheckpoint]]:
        """Run the records script for each (source, arguments); parse what it returns."""
        names = ("checkpoints", "checkpoint", "metadata", "parent")
        results = await self._eval(
            [("records", self._keys.of(source, *names), args) for source, args in requests]
        )
        out: list[list[ParsedCheckpoint]] = []
        for (source, _args), flat in zip(requests, results, strict=True):
            parsed: list[ParsedCheckpoint] = []
            for i in range(0, len(flat), 4):
                checkpoint_id, record, metadata, parent = flat[i : i + 4]
                row = (
                    source.thread_id,
                    source.checkpoint_ns,
                    checkpoint_id.decode(),
                    parent.decode() if parent else None,
                    record if record is not None else b"",
                    metadata if metadata is not None else b"",
                )
                parsed.append(parse_checkpoint_row(row, self.serde))
            out.append(parsed)
        return out

    async def _read_details(self, checkpoints: Sequence[ParsedCheckpoint]) -> _Details:
        """Fetch the pending writes of ``checkpoints``, the blobs they point at, and which of
        them were deleted (or expired) since their records were read: one round trip, one
        script per (thread, namespace)."""
        by_source: dict[Source, list[ParsedCheckpoint]] = {}
        for c in checkpoints:
            by_source.setdefault(Source(c.thread_id, c.checkpoint_ns), []).append(c)
        calls: list[ScriptCall] = []
        wanted: list[list[BlobKey]] = []
        for source, group in by_source.items():
            keys: dict[BlobKey, str] = {}
            for c in group:
                for version, channels in c.pointers.items():
                    for channel in channels:
                        keys[(c.thread_id, c.checkpoint_ns, channel, version)] = blob_field(
                            channel, version
                        )
            wanted.append(list(keys))
            args: list[Any] = [len(group), *(c.checkpoint_id for c in group)]
            args += [key_part(c.checkpoint_id) for c in group]
            args += keys.values()
            names = ("checkpoints", "blobs", "writes", "write")
            calls.append(("details", self._keys.of(source, *names), args))
        details = _Details(set(), {}, {}, {})
        results = await self._eval(calls) if calls else []
        for group, blob_keys, (present, writes, blobs) in zip(
            by_source.values(), wanted, results, strict=True
        ):
            for c, exists, flat in zip(group, present, writes, strict=True):
                if not exists:
                    details.gone.add(c.key)
                pairs = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
                details.writes[c.key] = pairs
            for key, value in zip(blob_keys, blobs, strict=True):
                if value is not None:
                    details.blobs[key] = value
        return details

    # -- reassembly (on the caller's loop) -----------------------------------------------------

    def _tuple(
        self, parsed: ParsedCheckpoint, details: _Details, shared: dict[BlobKey, Any] | None
    ) -> CheckpointTuple:
        """Split the stored values of one checkpoint, then reassemble it like the SQL savers."""
        thread_id, ns, checkpoint_id = parsed.thread_id, parsed.checkpoint_ns, parsed.checkpoint_id
        blobs: dict[BlobKey, tuple[str, bytes | None]] = {}
        writes: list[tuple[str, str, int, str, str, bytes]] = []
        where: dict[str, str] = {}
        try:  # one handler for both loops; `where` says which value failed
            for version, channels in parsed.pointers.items():
                for channel in channels:
                    key = (thread_id, ns, channel, version)
                    decoded = details.decoded.get(key)
                    if decoded is None and key in details.blobs:
                        where = {"channel": channel}
                        (type_,), payload = unpack_value(details.blobs[key], 1)
                        decoded = details.decoded[key] = (type_, payload)
                    if decoded is not None:
                        blobs[key] = decoded
            for field, raw in details.writes.get(parsed.key, []):
                where = {"write": field.decode(errors="replace")}
                task_id, idx = parse_write_field(field)
                if raw is None:
                    raise CorruptPayloadError("the write has no value")
                (type_, channel, task_path), payload = unpack_value(raw, 3)
                writes.append((task_path, task_id, idx, channel, type_, payload))
        except SerdeError as exc:
            raise exc.located(thread=thread_id, checkpoint=checkpoint_id, **where) from None
        writes.sort(key=lambda w: (w[0], w[1], w[2]))
        rows = [(task_id, ch, type_, payload) for _p, task_id, _i, ch, type_, payload in writes]
        return to_tuple(parsed, blobs, rows, self.serde, shared)


AsyncRedisSaver = RedisSaver
"""LangGraph's name for the async Redis saver; here one class serves sync and async code."""


# --- helpers -----------------------------------------------------------------------------------


def _split_options(url: str) -> tuple[str, dict[str, str]]:
    """Take this saver's options (``prefix``, ``ttl``) out of the query string of ``url``."""
    if urlsplit(url).scheme.lower() not in SCHEMES:
        raise ValueError(
            f"{redact(url)!r} is not a Redis URL; use redis://host:port/db, rediss://… (TLS) or "
            "unix:///path/to/redis.sock"
        )
    base, _, query = url.partition("?")
    options: dict[str, str] = {}
    rest: list[tuple[str, str]] = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name in ("prefix", "ttl"):
            options[name] = value
        else:
            rest.append((name, value))
    if not options:
        return url, options
    return base + ("?" + urlencode(rest) if rest else ""), options


_LEASE_RENEW = """local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '\\n' then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0"""
"""Extend a lease only if the caller's token still holds it."""

_LEASE_TAKE_ABANDONED = """if redis.call('SISMEMBER', KEYS[2], ARGV[3]) == 1 and
   redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0"""
"""Take a lease only if its thread is marked leased and the key expired (its holder died)."""

_LEASE_STEAL = """if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  redis.call('SADD', KEYS[2], ARGV[4])
  return 1
end
return 0"""
"""Take a lease from a holder found dead on this host, only if its value is still the one
read (the dead holder's)."""


def _lease_value(raw: Any) -> tuple[LeaseInfo, str]:
    """A lease key's value (``token\\nholder\\nsince[\\nproof]``): the lease and its
    holder's proof of life (empty for a lease written before proofs were recorded)."""
    parts = _text(raw).split("\n", 3)
    held, who, when = parts[:3]
    return LeaseInfo(held, who, _dt.datetime.fromisoformat(when)), (
        parts[3] if len(parts) > 3 else ""
    )


_LEASE_RELEASE = """local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '\\n' then
  redis.call('SREM', KEYS[2], ARGV[2])
  return redis.call('DEL', KEYS[1])
end
return 0"""
"""Delete a lease (and its thread's mark in the leased set) only if the caller's token still
holds it."""


async def _load_scripts(client: Redis) -> dict[str, str]:
    """Load every script into the server's script cache; return their SHA1s by name."""
    return {name: await client.script_load(source) for name, source in SCRIPTS.items()}


async def _evalsha(
    client: Redis, shas: Mapping[str, str], calls: Sequence[ScriptCall]
) -> list[Any]:
    """EVALSHA each call, pipelined when there are several (scripts loaded beforehand: redis-py's
    own script objects would ask the server whether they exist before every pipeline)."""
    if len(calls) == 1:
        name, keys, args = calls[0]
        return [await client.evalsha(shas[name], len(keys), *keys, *args)]
    pipe = client.pipeline(transaction=False)
    for name, keys, args in calls:
        pipe.evalsha(shas[name], len(keys), *keys, *args)
    return list(await pipe.execute())


def _text(value: Any) -> str:
    """A name as redis-py returns it (bytes: the client does not decode responses), as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _chunks(items: Sequence[Any], size: int = _PIPELINE_CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _require_redis() -> None:
    try:
        import redis.asyncio  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"RedisSaver needs the redis package ({exc}); install it with: {_INSTALL_HINT}"
        ) from exc
