"""The saver protocol: what a checkpoint is, and what every place that stores them must do.

A *saver* stores the checkpoints of many *threads*. A checkpoint holds a *pointer map*
(``channel_versions``: channel → version) and the channel values; savers store each value once
per (thread, namespace, channel, version) as a *blob* and share it between every checkpoint that
points at that version. Each checkpoint may also carry *pending writes*: what each task of the
next step produced, saved the moment the task finished.

    saver = MemorySaver()
    config = await saver.aput(config, checkpoint, metadata, new_versions)
    tup = await saver.aget_tuple(config)          # CheckpointTuple or None
    async for tup in saver.alist(config, limit=5):  # newest first
        ...

Every async method has a sync twin without the ``a`` that runs it through
:func:`durable_debug._sync.run_sync`, so it also works inside a running event loop.
"""

from __future__ import annotations

import builtins
import datetime as _dt
import hashlib
import numbers
import os
import random
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast, runtime_checkable

from typing_extensions import TypedDict

from durable_debug._sync import run_sync
from durable_debug.checkpoint.errors import CheckpointNotFoundError, InvalidConfigError
from durable_debug.checkpoint.lease import LeaseInfo
from durable_debug.checkpoint.names import (
    ERROR,
    ERROR_SOURCE,
    FAILURES,
    INTERRUPT,
    NULL_TASK_ID,
    ONCE,
    RESUME,
)
from durable_debug.checkpoint.start_writes import expand_start_writes

if TYPE_CHECKING:
    from durable_debug.checkpoint.latest import LatestHead
    from durable_debug.checkpoint.outline import OutlineRow

__all__ = [
    "CONFIG_ADDRESS_KEYS",
    "ERROR",
    "ERROR_SOURCE",
    "FAILURES",
    "INTERRUPT",
    "NULL_TASK_ID",
    "ONCE",
    "RESUME",
    "SPECIAL_WRITE_IDX",
    "BaseCheckpointSaver",
    "ChannelVersions",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointNotFoundError",
    "CheckpointTuple",
    "Completed",
    "DeltaChannelHistory",
    "LatestHeadsSaver",
    "OutlineSaver",
    "PendingWrite",
    "RunnableConfig",
    "SerializerProtocol",
    "StepQueue",
    "SubgraphHeadsSaver",
    "TaskWrites",
    "address_config",
    "check_address",
    "checkpoint_config",
    "checkpoint_metadata",
    "config_address",
    "config_address_value",
    "config_checkpoint_id",
    "config_checkpoint_ns",
    "config_checkpoint_ns_filter",
    "config_thread_id",
    "empty_checkpoint",
    "metadata_matches",
    "new_checkpoint_id",
    "next_version",
    "now_iso",
    "replace_checkpoint",
    "run_metadata",
    "version_counter",
]

RunnableConfig = dict[str, Any]
"""A run's configuration: ``{"configurable": {"thread_id": ..., "checkpoint_id": ...}, ...}``."""

ChannelVersions = dict[str, str]
"""The pointer map of a checkpoint: channel name → version string."""

PendingWrite = tuple[str, str, Any]
"""One saved write of a task: ``(task_id, channel, value)``."""

TaskWrites = tuple[str, Sequence[tuple[str, Any]], str]
"""One task's writes as :meth:`BaseCheckpointSaver.aput_step` takes them:
``(task_id, [(channel, value), ...], task_path)``."""


SPECIAL_WRITE_IDX: Mapping[str, int] = {
    ERROR: -1,
    INTERRUPT: -3,
    RESUME: -4,
    FAILURES: -5,
    ONCE: -6,
    ERROR_SOURCE: -7,
}
"""Fixed ``idx`` for special writes: saving one again *replaces* the previous one, while
ordinary writes (idx 0, 1, 2… in the order the task produced them) are written once."""


class Checkpoint(TypedDict):
    """A snapshot of every channel between two super-steps."""

    v: int
    """Format version of this dict."""
    id: str
    """Checkpoint id; ids sort by creation time."""
    ts: str
    """Creation time, ISO 8601 in UTC."""
    channel_values: dict[str, Any]
    """Value of every channel that currently holds one."""
    channel_versions: ChannelVersions
    """The pointer map: the version each channel is at."""
    versions_seen: dict[str, ChannelVersions]
    """Per node, the version of each trigger channel it last ran on."""
    updated_channels: list[str] | None
    """Channels the step that made this checkpoint wrote."""


class CheckpointMetadata(TypedDict, total=False):
    """What is known about how a checkpoint came to be."""

    source: str
    """``"input"``, ``"loop"``, ``"update"`` or ``"fork"``."""
    step: int
    """-1 for the first input checkpoint, then 0, 1, 2…"""
    parents: dict[str, str]
    """Checkpoint ids of enclosing graphs, by namespace (empty for a top-level graph)."""


class DeltaChannelHistory(TypedDict, total=False):
    """What :meth:`BaseCheckpointSaver.get_delta_channel_history` returns for one channel:
    the writes to it since the nearest ancestor that stores its value, oldest first, and
    that value (``seed``; absent when no ancestor stores one: the channel starts empty)."""

    writes: list[PendingWrite]
    seed: Any


class CheckpointTuple(NamedTuple):
    """A checkpoint as a saver returns it, with everything needed to resume from it."""

    config: RunnableConfig
    """Config that addresses this checkpoint (thread_id, checkpoint_ns, checkpoint_id)."""
    checkpoint: Checkpoint
    """The checkpoint, its channel values reassembled from blobs."""
    metadata: CheckpointMetadata
    """Source, step, parents and any user metadata."""
    parent_config: RunnableConfig | None = None
    """Config of the parent checkpoint, or None for the first one of a thread."""
    pending_writes: list[PendingWrite] | None = None
    """Writes saved by tasks of the step that follows this checkpoint."""


class SerializerProtocol(Protocol):
    """Turns values into ``(type tag, bytes)`` and back."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj``; raise a clear error if it cannot be saved."""
        ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize what ``dumps_typed`` produced; never execute anything else."""
        ...


class Completed:
    """An awaitable that is already done, so ``saver.setup()`` works with or without ``await``."""

    __slots__ = ()

    def __await__(self) -> Iterator[None]:
        return iter(())

    def __repr__(self) -> str:
        return "<completed>"


# --- configs -------------------------------------------------------------------------------


CONFIG_ADDRESS_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id")
"""The ``configurable`` keys that address a checkpoint; :func:`config_address_value` checks
each of them."""


def config_address_value(config: Mapping[str, Any] | None, key: str) -> str | None:
    """Return ``config["configurable"][key]`` as a string, or None when absent.

    The one check every entry point goes through (runs, state reads, history, updates and the
    savers' own methods): as LangGraph does, a string is used as it is, an int (numpy's too)
    becomes its decimal string (``1`` and ``"1"`` name the same thread) and a ``uuid.UUID`` its
    canonical string. Anything else (a list, dict, bytes, bool, float), or a string holding NUL
    or a lone surrogate (no store can keep those exactly), raises :class:`InvalidConfigError`
    naming the key, before anything is written.
    """
    if type(config) is dict:  # the common case, without the ABC checks below (a hot path)
        configurable = config.get("configurable")
        if type(configurable) is dict:
            value = configurable.get(key)
            if value is None:
                return None
            if type(value) is str and value.isascii() and "\x00" not in value:
                return value
    if config is not None and not isinstance(config, Mapping):
        raise InvalidConfigError(f"config must be a dict, got {type(config).__name__}")
    configurable = (config or {}).get("configurable") or {}
    if not isinstance(configurable, Mapping):
        raise InvalidConfigError(
            f"config['configurable'] must be a dict, got {type(configurable).__name__}"
        )
    value = configurable.get(key)
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str):
        raise InvalidConfigError(
            f"config['configurable'][{key!r}] must be a string or an int, got "
            f"{type(value).__name__} {value!r:.80}"
        )
    if "\x00" in value:
        raise InvalidConfigError(
            f"config['configurable'][{key!r}] = {value!r:.80} holds a NUL character, which "
            "the stores cannot keep; use another id"
        )
    try:
        if not value.isascii():
            value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidConfigError(
            f"config['configurable'][{key!r}] = {value!r:.80} holds a lone surrogate, which "
            "is not valid text; use another id"
        ) from None
    return str(value)


def config_thread_id(config: Mapping[str, Any] | None) -> str:
    """Return the thread id of ``config`` or raise an :class:`InvalidConfigError` that says how
    to pass one (see :func:`config_address_value` for what is accepted)."""
    thread_id = config_address_value(config, "thread_id")
    if not thread_id:
        raise InvalidConfigError(
            "This graph has a checkpointer, so each run needs a thread id: pass "
            'config={"configurable": {"thread_id": "some-id"}}.'
        )
    return thread_id


def config_checkpoint_ns(config: Mapping[str, Any] | None) -> str:
    """Return the checkpoint namespace of ``config`` ("" for a top-level graph)."""
    return config_address_value(config, "checkpoint_ns") or ""


def config_checkpoint_ns_filter(config: Mapping[str, Any] | None) -> str | None:
    """Return the namespace a listing of ``config`` keeps to, or None for every namespace
    (the config has no ``checkpoint_ns``)."""
    return config_address_value(config, "checkpoint_ns")


def config_checkpoint_id(config: Mapping[str, Any] | None) -> str | None:
    """Return the checkpoint id that ``config`` pins, or None for "the latest"."""
    return config_address_value(config, "checkpoint_id") or None


def config_address(config: Mapping[str, Any] | None) -> tuple[str, str, str | None]:
    """``(thread id, namespace, checkpoint id)`` of ``config``, as :func:`config_thread_id`,
    :func:`config_checkpoint_ns` and :func:`config_checkpoint_id` return them (and raising
    what they raise, in that order), read at once when all three are plain ASCII strings or
    absent (every step a run saves)."""
    if type(config) is dict:
        configurable = config.get("configurable")
        if type(configurable) is dict:
            thread_id = configurable.get("thread_id")
            ns = configurable.get("checkpoint_ns")
            checkpoint_id = configurable.get("checkpoint_id")
            if (
                type(thread_id) is str
                and thread_id
                and (ns is None or type(ns) is str)
                and (checkpoint_id is None or type(checkpoint_id) is str)
            ):
                text = f"{thread_id}{ns or ''}{checkpoint_id or ''}"
                if text.isascii() and "\x00" not in text:
                    return thread_id, ns or "", checkpoint_id or None
    return config_thread_id(config), config_checkpoint_ns(config), config_checkpoint_id(config)


def check_address(config: Mapping[str, Any] | None) -> None:
    """Raise :class:`InvalidConfigError` if any address key of ``config`` is unusable (see
    :func:`config_address_value`), even one the caller does not use."""
    for key in CONFIG_ADDRESS_KEYS:
        config_address_value(config, key)


def address_config(config: Mapping[str, Any] | None) -> RunnableConfig:
    """A copy of ``config`` whose address keys are checked and stored as strings (ints become
    strings, as LangGraph does), so nodes, hooks and savers all see one form."""
    new: RunnableConfig = dict(config or {})
    configurable = dict(new.get("configurable") or {})
    for key in CONFIG_ADDRESS_KEYS:
        value = config_address_value(config, key)
        if value is not None:
            configurable[key] = value
    if configurable or "configurable" in new:
        new["configurable"] = configurable
    return new


def checkpoint_config(
    thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
) -> RunnableConfig:
    """Build the config that addresses one checkpoint, or a thread (its latest checkpoint)
    when ``checkpoint_id`` is None."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


_CONFIG_KEYS_NOT_IN_METADATA = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id"})


def run_metadata(config: RunnableConfig | None) -> dict[str, Any]:
    """The metadata a run's config adds to every checkpoint it saves (as LangGraph does):
    ``config["metadata"]``, plus the plain-valued ``configurable`` keys (e.g. a ``user_id``);
    from either, the thread/checkpoint address is left out."""
    config = config or {}
    extra: dict[str, Any] = {
        k: v
        for k, v in (config.get("metadata") or {}).items()
        if k not in _CONFIG_KEYS_NOT_IN_METADATA
    }
    for key, value in (config.get("configurable") or {}).items():
        if key in _CONFIG_KEYS_NOT_IN_METADATA or key.startswith("__"):
            continue
        if isinstance(value, (str, int, float, bool)):
            extra[key] = value
    return extra


def checkpoint_metadata(
    config: RunnableConfig | None, source: str, step: int, **extra: Any
) -> CheckpointMetadata:
    """Metadata of a checkpoint a run saves: the run's own (:func:`run_metadata`), then
    ``source``, ``step``, ``parents`` and ``extra``."""
    metadata: dict[str, Any] = {**run_metadata(config), "source": source, "step": step}
    metadata["parents"] = {}
    metadata.update(extra)
    return cast(CheckpointMetadata, metadata)


def metadata_matches(metadata: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """True when every key of ``filter`` is in ``metadata`` with an equal value."""
    if not filter:
        return True
    return all(key in metadata and metadata[key] == value for key, value in filter.items())


# --- ids and versions ----------------------------------------------------------------------

_GREGORIAN_OFFSET = 0x01B21DD213814000  # 100 ns ticks from 1582-10-15 to 1970-01-01
_id_lock = threading.Lock()
_last_ticks = 0
_node = 0
_id_tail = ""
"""The last two groups of every id of this process: its clock sequence (random, with the
variant bits) and its node (random), drawn once per process, not per checkpoint. Ids stay
unique: within a process their ticks strictly increase, and another process draws its own."""


def _reseed() -> None:
    global _node, _id_tail
    _node = int.from_bytes(os.urandom(6), "big")
    _id_tail = f"{0x8000 | random.Random(os.urandom(16)).getrandbits(14):04x}-{_node:012x}"


_reseed()
if hasattr(os, "register_at_fork"):  # a forked child's ids draw bits of their own
    os.register_at_fork(after_in_child=_reseed)


def new_checkpoint_id() -> str:
    """Return a new checkpoint id: a version-6 UUID, so ids sort by creation time.

    Within one process ids are strictly increasing even when the clock does not advance.
    """
    global _last_ticks
    with _id_lock:
        ticks = time.time_ns() // 100 + _GREGORIAN_OFFSET
        if ticks <= _last_ticks:
            ticks = _last_ticks + 1
        _last_ticks = ticks
    # Each time field formatted on its own (no 128-bit integer, no slicing of its hex text).
    return (
        f"{(ticks >> 28) & 0xFFFF_FFFF:08x}-{(ticks >> 12) & 0xFFFF:04x}-"
        f"{0x6000 | (ticks & 0x0FFF):04x}-{_id_tail}"
    )


_iso_second: tuple[int, str] = (-1, "")
"""The last whole second :func:`now_iso` formatted, and its text up to the seconds (one
tuple, read and replaced whole, so threads never mix two seconds)."""


def now_iso() -> str:
    """The current UTC time as ``datetime.now(timezone.utc).isoformat()`` writes it (a
    checkpoint's ``ts``), without building a datetime for each checkpoint."""
    global _iso_second
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    cached = _iso_second
    if cached[0] != seconds:
        stamp = _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc)
        cached = _iso_second = (seconds, stamp.isoformat()[:19])  # YYYY-MM-DDTHH:MM:SS
    micros = nanos // 1000
    if micros:
        return f"{cached[1]}.{micros:06d}+00:00"
    return f"{cached[1]}+00:00"  # as isoformat() writes a time with no microseconds


def next_version(current: str | None, checkpoint_id: str) -> str:
    """Return the version that follows ``current`` for a write made by ``checkpoint_id``.

    Versions read ``"{counter:032}.{suffix}"``: the zero-padded counter orders them, and the
    suffix (derived from the id of the checkpoint that made the write) keeps two branches
    forked from one parent from producing the same version of a channel with different values.
    """
    counter = int(current.split(".", 1)[0]) + 1 if current else 1  # (version_counter, inline)
    suffix = hashlib.blake2b(checkpoint_id.encode(), digest_size=8).hexdigest()
    return f"{counter:032}.{suffix}"


def version_counter(version: str | None) -> int:
    """Return the counter part of a version string (0 for None)."""
    if not version:
        return 0
    return int(version.split(".", 1)[0])


def replace_checkpoint(checkpoint: Checkpoint, **changes: Any) -> Checkpoint:
    """A shallow copy of ``checkpoint`` with the given fields replaced."""
    new: dict[str, Any] = dict(checkpoint)
    new.update(changes)
    return cast(Checkpoint, new)


def empty_checkpoint() -> Checkpoint:
    """Return the checkpoint a thread starts from: no channels, no versions."""
    checkpoint: Checkpoint = {  # a literal: calling the TypedDict takes keywords, each run
        "v": 1,
        "id": new_checkpoint_id(),
        "ts": now_iso(),
        "channel_values": {},
        "channel_versions": {},
        "versions_seen": {},
        "updated_channels": None,
    }
    return checkpoint


# --- a run's steps, saved in order --------------------------------------------------------


class StepQueue:
    """The steps of one run, saved in order (what :meth:`BaseCheckpointSaver.step_queue`
    returns; the engine uses one per run unless ``durability="sync"``).

    :meth:`put` takes a step as :meth:`BaseCheckpointSaver.aput_step` does and returns the new
    checkpoint's config; :meth:`drain` returns once every step put so far is saved. A saver
    whose writes wait on a server may return from :meth:`put` before the step is saved, so
    that the run's next step runs meanwhile; it must then

    * serialize the step in :meth:`put` (a value that cannot be saved raises there, with
      nothing written, and a value changed afterwards does not change what is saved);
    * save the steps in the order they were put, and none after one that failed: the failure
      is raised by the next :meth:`put` or :meth:`drain`, and every later call raises it too
      until :meth:`drain` has raised it (then the queue is empty and usable again);
    * leave the store as :meth:`BaseCheckpointSaver.aput_step` would once :meth:`drain` returns.

    This default saves each step in :meth:`put` (it awaits ``aput_step``), which is right for
    savers that write on the caller's thread (memory, SQLite): there is no wait to overlap.
    """

    def __init__(self, saver: BaseCheckpointSaver) -> None:
        self.saver = saver

    async def put(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save (or start saving) a step, after every step put before it; return the config
        of ``checkpoint``. Raises the error of an earlier step that failed to save."""
        return await self.saver.aput_step(config, task_writes, checkpoint, metadata, new_versions)

    async def drain(self) -> None:
        """Return when every step put so far is saved; raise the error of one that failed."""


# --- the saver base class ------------------------------------------------------------------


_PROCESS_LEASES_LOCK = threading.Lock()


class BaseCheckpointSaver(ABC):
    """Base of every saver. Subclasses implement the async methods; sync twins come free.

    Contract (pinned by ``tests/checkpoint/`` for every saver):

    * ``aput`` stores a checkpoint as a child of the checkpoint that ``config`` names (none for
      the first one), writes a blob only for the channels in ``new_versions`` and returns the
      config of the new checkpoint.
    * ``aput_writes`` saves a task's writes on the checkpoint that ``config`` names; ordinary
      writes are written once, the special ones of :data:`SPECIAL_WRITE_IDX` are replaced.
    * ``aget_tuple`` returns the checkpoint that ``config`` names, or the thread's latest one,
      with its values reassembled from blobs and its pending writes; None when there is none.
    * ``alist`` yields checkpoints newest first, filtered by metadata, ``before`` a checkpoint id
      and at most ``limit`` of them.
    """

    serde: SerializerProtocol

    # -- async: implemented by each saver --------------------------------------------------

    @abstractmethod
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint ``config`` names (or the latest of its thread), or None."""

    @abstractmethod
    def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Yield checkpoints newest first (all threads when ``config`` is None)."""

    @abstractmethod
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as a child of the checkpoint ``config`` names."""

    @abstractmethod
    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save one task's writes on the checkpoint ``config`` names."""

    @abstractmethod
    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of a thread."""

    async def adelete_checkpoints(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str]
    ) -> None:
        """Delete some checkpoints of a thread, with their pending writes and every blob only
        they pointed at, in one transaction (what ``durable_debug.inspect.prune`` uses).
        Blobs a remaining checkpoint points at stay, so the others still reassemble exactly.
        """
        raise NotImplementedError(
            f"{type(self).__name__} cannot delete single checkpoints yet (thread "
            f"{thread_id!r}); delete_thread deletes a whole thread"
        )

    async def aput_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save the writes of a step's last tasks on the checkpoint ``config`` names, and the
        checkpoint they produce, as :meth:`aput_writes` then :meth:`aput` would.

        Savers that can should do it in one transaction: then a task's writes and the
        checkpoint made from them are saved together or not at all. Either way, if anything
        cannot be serialized nothing is written.
        """
        for task_id, writes, task_path in task_writes:
            await self.aput_writes(config, writes, task_id, task_path)
        return await self.aput(config, checkpoint, metadata, new_versions)

    stores_debug_records: bool = False
    """Whether this saver stores each checkpoint's debug record beside it
    (``durable_debug.checkpoint.records``); our savers do. Such a saver takes the record out
    of the metadata it is given (``records.split_record``) and implements
    :meth:`aget_debug_records` and :meth:`aset_debug_record`."""

    async def aget_debug_records(
        self,
        thread_id: str,
        checkpoint_ns: str | None,
        checkpoint_ids: Sequence[str] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The debug records of a thread's checkpoints (of one namespace unless
        ``checkpoint_ns`` is None; only ``checkpoint_ids`` when given), by
        ``(checkpoint_ns, checkpoint_id)``."""
        raise NotImplementedError(f"{type(self).__name__} does not store debug records")

    async def aset_debug_record(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, record: dict[str, Any]
    ) -> None:
        """Replace the debug record of a saved checkpoint."""
        raise NotImplementedError(f"{type(self).__name__} does not store debug records")

    def step_queue(self) -> StepQueue:
        """A queue that saves one run's steps in order (see :class:`StepQueue`). The default
        saves each step as it is put; a saver whose writes wait on a server may overlap them
        with the run (:class:`~durable_debug.checkpoint.postgres.PostgresSaver` does)."""
        return StepQueue(self)

    # -- one writer per thread (see durable_debug.checkpoint.lease) ---------------------------

    lease_seconds: float | None = None
    """How long a thread's lease lives without renewal, so a dead holder's threads are free
    again after it; None: leases live in this process only and never expire (the memory
    saver, whose threads die with the process). Set it on a saver to change it."""

    async def _lease_acquire(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo:
        """Take ``thread_id``'s lease for ``token`` unless a live lease of another token holds
        it; return the lease as it now is (ours when its token is ``token``). The default keeps
        leases in this process, which is right for a saver whose threads live in it."""
        with _PROCESS_LEASES_LOCK:
            leases = self.__dict__.setdefault("_process_leases", {})
            info = leases.get(thread_id)
            if info is None:
                info = leases[thread_id] = LeaseInfo(
                    token, holder, _dt.datetime.now(_dt.timezone.utc)
                )
            return cast(LeaseInfo, info)

    async def _lease_renew(self, thread_id: str, token: str, seconds: float) -> bool:
        """Extend ``token``'s lease on ``thread_id``; False when it is no longer ours."""
        return True

    async def _lease_take_abandoned(
        self, thread_id: str, token: str, holder: str, seconds: float | None
    ) -> LeaseInfo | None:
        """Take ``thread_id``'s lease for ``token`` only if its holder left it behind (it
        expired without being given back: the holder died); otherwise return the live lease
        that holds it, or None when no lease is left (given back: no dead run to take over).
        The default keeps leases in this process, where none is ever left behind."""
        with _PROCESS_LEASES_LOCK:
            leases = self.__dict__.get("_process_leases", {})
            return cast("LeaseInfo | None", leases.get(thread_id))

    async def _lease_release(self, thread_id: str, token: str) -> None:
        """Give ``token``'s lease on ``thread_id`` back (nothing when it is not ours)."""
        with _PROCESS_LEASES_LOCK:
            leases = self.__dict__.get("_process_leases", {})
            if thread_id in leases and leases[thread_id].token == token:
                del leases[thread_id]

    async def alist_abandoned_threads(self) -> builtins.list[str]:
        """Threads whose last run started and never ended: its process died (or lost the store)
        while holding the thread, and the lease it left behind has expired. A run that ends —
        finished, interrupted or failed with its error saved — gives its lease back, so those
        threads are not listed. Savers whose leases do not outlive their holder (the memory
        saver) list none."""
        return []

    async def alist_threads(self) -> builtins.list[str]:
        """Return the ids of every thread that has at least one checkpoint."""
        seen: dict[str, None] = {}
        async for tup in self.alist(None):
            seen.setdefault(tup.config["configurable"]["thread_id"], None)
        return list(seen)

    async def aget(self, config: RunnableConfig) -> Checkpoint | None:
        """The checkpoint ``config`` names (its thread's newest without an id), or None:
        LangGraph's ``aget``, the checkpoint of :meth:`aget_tuple`."""
        found = await self.aget_tuple(config)
        return found.checkpoint if found is not None else None

    def get_next_version(self, current: Any, channel: Any = None) -> Any:
        """LangGraph's ``get_next_version``: the version after ``current`` (None: the
        first). An int gives the next int; a version of this engine the next counter. The
        engine's versions come from :func:`next_version` (which also keeps forked branches
        apart); it calls this method only when a subclass overrides it, where LangGraph calls
        it (``checkpoint/user_methods.py``), so an override's errors fail the run, but the
        version it returns is not used."""
        if current is None or isinstance(current, int):
            return (current or 0) + 1
        return f"{version_counter(str(current)) + 1:032}"

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> dict[str, DeltaChannelHistory]:
        """For each of ``channels``: the pending writes to it on the ancestors of the
        checkpoint ``config`` names (its parent, then that one's parent…, oldest first), back
        to the nearest ancestor whose ``channel_values`` hold it (that value is the entry's
        ``seed``). LangGraph's saver method, from which it rebuilds a ``DeltaChannel`` key; this
        engine saves such a key's whole value at every checkpoint and never calls it, so here
        it is a view of the history for code that does (the walk follows ``parent_config``, so
        a fork sees only its own branch)."""
        return _delta_history(
            channels, [t async for t in _ancestors(self.aget_tuple, config, channels)]
        )

    # -- sync twins --------------------------------------------------------------------------

    def get(self, config: RunnableConfig) -> Checkpoint | None:
        """Sync twin of :meth:`aget`."""
        return run_sync(self.aget(config))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> dict[str, DeltaChannelHistory]:
        """Sync twin of :meth:`aget_delta_channel_history`; it reads through ``get_tuple``
        (so a subclass's ``get_tuple`` is the one that reads, as in LangGraph)."""

        if not channels:
            return {}
        ancestors: builtins.list[CheckpointTuple] = []
        target = self.get_tuple(config)
        at = target.parent_config if target is not None else None
        remaining = set(channels)
        while at is not None and remaining:
            tup = self.get_tuple(at)
            if tup is None:
                break
            ancestors.append(tup)
            remaining -= tup.checkpoint["channel_values"].keys()
            at = tup.parent_config
        return _delta_history(channels, ancestors)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Sync twin of :meth:`aget_tuple`."""
        return run_sync(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync twin of :meth:`alist` (collects the results, then iterates)."""

        async def collect() -> builtins.list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]

        return iter(run_sync(collect()))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Sync twin of :meth:`aput`."""
        return run_sync(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync twin of :meth:`aput_writes`."""
        run_sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync twin of :meth:`adelete_thread`."""
        run_sync(self.adelete_thread(thread_id))

    def delete_checkpoints(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str]
    ) -> None:
        """Sync twin of :meth:`adelete_checkpoints`."""
        run_sync(self.adelete_checkpoints(thread_id, checkpoint_ns, checkpoint_ids))

    def list_threads(self) -> builtins.list[str]:
        """Sync twin of :meth:`alist_threads`."""
        return run_sync(self.alist_threads())

    def list_abandoned_threads(self) -> builtins.list[str]:
        """Sync twin of :meth:`alist_abandoned_threads`."""
        return run_sync(self.alist_abandoned_threads())


async def _ancestors(
    get_tuple: Callable[[RunnableConfig], Awaitable[CheckpointTuple | None]],
    config: RunnableConfig,
    channels: Sequence[str],
) -> AsyncIterator[CheckpointTuple]:
    """The ancestors of the checkpoint ``config`` names, nearest first, up to the first one
    whose values hold every one of ``channels`` (none when ``channels`` is empty)."""
    if not channels:
        return
    target = await get_tuple(config)
    at = target.parent_config if target is not None else None
    remaining = set(channels)
    while at is not None and remaining:
        tup = await get_tuple(at)
        if tup is None:
            return
        yield tup
        remaining -= tup.checkpoint["channel_values"].keys()
        at = tup.parent_config


def _delta_history(
    channels: Sequence[str], ancestors: Sequence[CheckpointTuple]
) -> dict[str, DeltaChannelHistory]:
    """Each channel's writes (oldest first) and seed, from ``ancestors`` nearest first (a
    START task's saved writes as the writes they stand for, ``checkpoint/start_writes.py``)."""
    history: dict[str, DeltaChannelHistory] = {}
    for ch in channels:
        writes: builtins.list[PendingWrite] = []
        entry: DeltaChannelHistory = {}
        for tup in ancestors:
            saved = expand_start_writes(tup.pending_writes or (), tup.checkpoint)
            writes[:0] = [w for w in saved if w[1] == ch]
            if ch in tup.checkpoint["channel_values"]:
                entry["seed"] = tup.checkpoint["channel_values"][ch]
                break
        entry["writes"] = writes
        history[ch] = entry
    return history


# -- optional read capabilities ------------------------------------------------------------------
#
# A saver may read less than whole checkpoints where a view needs less: the tree of a thread,
# each thread's newest checkpoint, the namespaces of a thread. The inspect layer asks for them
# with ``isinstance(saver, OutlineSaver)`` (and so on) and reads through the saver protocol
# above when a saver has none.


@runtime_checkable
class OutlineSaver(Protocol):
    """A saver that reads a thread's tree without decoding its state (durable_debug's
    :class:`~durable_debug.checkpoint.sqlite.SqliteSaver`,
    :class:`~durable_debug.checkpoint.postgres.PostgresSaver` and
    :class:`~durable_debug.checkpoint.memory.MemorySaver`)."""

    async def aread_outline(
        self, thread_id: str, checkpoint_ns: str, *, since: str | None = None
    ) -> Sequence[OutlineRow]:
        """The checkpoints of a thread as a tree needs them, oldest first, each with its debug
        record (see :mod:`durable_debug.checkpoint.outline`); ``since``: only the checkpoints
        from that id on, plus the parents of newer ones."""
        ...

    async def alatest_mark(self, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)`` from the index alone, ``("", 0)``
        for a thread without checkpoints: a cheap mark of a thread's progress to watch."""
        ...


@runtime_checkable
class SubgraphHeadsSaver(Protocol):
    """A saver that names a thread's subgraph namespaces without listing its checkpoints."""

    async def asubgraph_heads(self, thread_id: str) -> Sequence[tuple[str, dict[str, Any]]]:
        """``(namespace, metadata of its newest checkpoint)`` for every subgraph namespace of
        the thread (not the top-level ``""``); no state is decoded."""
        ...


@runtime_checkable
class LatestHeadsSaver(Protocol):
    """A saver that reads each thread's newest top-level checkpoint without its state (what
    a thread list needs; :class:`~durable_debug.checkpoint.latest.LatestHead`)."""

    async def alatest_heads(self) -> Sequence[LatestHead]:
        """Each thread's head, sorted by thread id."""
        ...
