"""MemorySaver: checkpoints in the process's memory, gone when the process exits.

It stores what the durable savers store, in dicts instead of tables: one serialized blob per
(thread, namespace, channel, version), checkpoints as pointer maps, and pending writes per task.
Values are serialized on the way in, so a node that mutates a list it returned cannot rewrite
history.

    from durable_debug import MemorySaver, StateGraph
    graph = builder.compile(checkpointer=MemorySaver())
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from durable_debug.checkpoint.base import (
    SPECIAL_WRITE_IDX,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointNotFoundError,
    CheckpointTuple,
    Completed,
    PendingWrite,
    RunnableConfig,
    SerializerProtocol,
    TaskWrites,
    check_address,
    checkpoint_config,
    config_address,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_checkpoint_ns_filter,
    config_thread_id,
    metadata_matches,
    replace_checkpoint,
)
from durable_debug.checkpoint.errors import InvalidConfigError
from durable_debug.checkpoint.records import GRAPH_VERSION, split_stored_record, stored_record
from durable_debug.checkpoint.serde import MsgpackSerializer, SerdeError

if TYPE_CHECKING:
    from durable_debug.checkpoint.outline import OutlineRow

__all__ = ["InMemorySaver", "MemorySaver"]

logger = logging.getLogger(__name__)

Blob = tuple[str, bytes]


class _StoredCheckpoint(NamedTuple):
    checkpoint: Checkpoint
    """The checkpoint with ``channel_values`` left empty: values live in the blob store."""
    metadata: CheckpointMetadata
    parent_id: str | None


class _StoredWrite(NamedTuple):
    task_id: str
    channel: str
    blob: Blob
    task_path: str


_new_tuple = tuple.__new__
"""Makes a stored checkpoint or write (named tuples) without their constructor's Python call."""


class MemorySaver(BaseCheckpointSaver):
    """A saver that keeps everything in memory (for tests, notebooks and teaching)."""

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        self.serde = serde or MsgpackSerializer()
        # thread_id -> checkpoint_ns -> checkpoint_id -> stored checkpoint
        self.storage: dict[str, dict[str, dict[str, _StoredCheckpoint]]] = {}
        # (thread_id, checkpoint_ns, channel, version) -> blob
        self.blobs: dict[tuple[str, str, str, str], Blob] = {}
        # (thread_id, checkpoint_ns, checkpoint_id) -> (task_id, idx) -> write
        self.writes: dict[tuple[str, str, str], dict[tuple[str, int], _StoredWrite]] = {}
        # (thread_id, checkpoint_ns, checkpoint_id) -> debug record (checkpoint/records.py)
        self.records: dict[tuple[str, str, str], dict[str, Any]] = {}

    def setup(self) -> Completed:
        """Nothing to create; present so every saver can be set up the same way."""
        return Completed()

    def __enter__(self) -> MemorySaver:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    async def __aenter__(self) -> MemorySaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    # -- reading -----------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint ``config`` names (or the latest of its thread), or None."""
        thread_id = config_thread_id(config)
        checkpoint_ns = config_checkpoint_ns(config)
        checkpoint_id = config_checkpoint_id(config)
        checkpoints = self.storage.get(thread_id, {}).get(checkpoint_ns, {})
        if checkpoint_id is None:
            if not checkpoints:
                return None
            checkpoint_id = max(checkpoints)
        elif checkpoint_id not in checkpoints:
            raise CheckpointNotFoundError(
                f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
                + (f" in namespace {checkpoint_ns!r}" if checkpoint_ns else "")
                + "; list the thread's checkpoints with graph.get_state_history(config)."
            )
        return self._tuple(thread_id, checkpoint_ns, checkpoint_id)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Yield checkpoints newest first (every thread when ``config`` is None)."""
        check_address(config)
        check_address(before)
        if config is None:
            thread_ids = list(self.storage)
            checkpoint_ns: str | None = None
        else:
            thread_ids = [config_thread_id(config)]
            checkpoint_ns = config_checkpoint_ns_filter(config)
        before_id = config_checkpoint_id(before)
        # Newest first across every thread and namespace listed (ties: thread, then namespace,
        # also descending), the order the SQL savers' ORDER BY gives.
        candidates = sorted(
            (
                (checkpoint_id, thread_id, ns)
                for thread_id in thread_ids
                for ns, checkpoints in self.storage.get(thread_id, {}).items()
                if checkpoint_ns is None or ns == checkpoint_ns
                for checkpoint_id in checkpoints
            ),
            reverse=True,
        )
        remaining = limit
        for checkpoint_id, thread_id, ns in candidates:
            if before_id is not None and checkpoint_id >= before_id:
                continue
            stored = self.storage.get(thread_id, {}).get(ns, {}).get(checkpoint_id)
            if stored is None or not metadata_matches(stored.metadata, filter):
                continue
            if remaining is not None:
                if remaining <= 0:
                    return
                remaining -= 1
            yield self._tuple(thread_id, ns, checkpoint_id)

    def _tuple(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> CheckpointTuple:
        stored = self.storage[thread_id][checkpoint_ns][checkpoint_id]
        values: dict[str, Any] = {}
        channel = ""
        loads = self.serde.loads_typed
        try:
            for channel, version in stored.checkpoint["channel_versions"].items():
                blob = self.blobs.get((thread_id, checkpoint_ns, channel, version))
                if blob is not None and blob[0] != "empty":
                    values[channel] = loads(blob)
            pending: list[PendingWrite] = []
            writes = self.writes.get((thread_id, checkpoint_ns, checkpoint_id), {})
            for write in writes.values():
                channel = write.channel
                pending.append((write.task_id, channel, loads(write.blob)))
        except SerdeError as exc:
            raise exc.located(thread=thread_id, checkpoint=checkpoint_id, channel=channel) from None
        saved = stored.checkpoint
        updated = saved.get("updated_channels")
        # Fresh maps: a caller changing what it read must not change what is stored.
        checkpoint = replace_checkpoint(
            saved,
            channel_values=values,
            channel_versions=dict(saved["channel_versions"]),
            versions_seen={n: dict(v) for n, v in saved["versions_seen"].items()},
            updated_channels=list(updated) if updated is not None else None,
        )
        parent = (
            checkpoint_config(thread_id, checkpoint_ns, stored.parent_id)
            if stored.parent_id
            else None
        )
        return CheckpointTuple(
            config=checkpoint_config(thread_id, checkpoint_ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=cast(CheckpointMetadata, dict(stored.metadata)),
            parent_config=parent,
            pending_writes=pending,
        )

    # -- writing -----------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as a child of the one ``config`` names; blobs for new versions."""
        return await self.aput_step(config, (), checkpoint, metadata, new_versions)

    async def aput_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save the writes of a step's last tasks on the checkpoint ``config`` names, and
        ``checkpoint`` as its child: everything is serialized first, so a value that cannot
        be saved leaves the store untouched."""
        return self._put_step(config, task_writes, checkpoint, metadata, new_versions, True)

    def put_step_unshared(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """:meth:`aput_step`, done at once (nothing to await), for a caller that changes none
        of ``checkpoint``'s maps once it is put and hands over ``metadata`` (the engine's
        runs: each step's maps are new, see ``algo.apply_writes``): they are stored as they
        are, not copied."""
        return self._put_step(config, task_writes, checkpoint, metadata, new_versions, False)

    def _put_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        copy: bool,
    ) -> RunnableConfig:
        """:meth:`aput_step`; ``copy``: the caller may change ``checkpoint``'s maps or
        ``metadata`` after (copy them)."""
        thread_id, checkpoint_ns, parent_id = config_address(config)
        # the record as the SQL savers store it (through JSON)
        plain_metadata, record = split_stored_record(metadata, copy=copy)
        if copy:  # the nested maps too: the caller may keep mutating its own
            seen = checkpoint["versions_seen"]
            checkpoint = replace_checkpoint(
                checkpoint,
                channel_versions=dict(checkpoint["channel_versions"]),
                versions_seen=dict(zip(seen.keys(), map(dict, seen.values()), strict=True)),
            )
        return self._store_step(
            thread_id,
            checkpoint_ns,
            parent_id,
            task_writes,
            checkpoint,
            cast(CheckpointMetadata, plain_metadata),
            record,
            new_versions,
        )

    def _store_step(
        self,
        thread_id: str,
        checkpoint_ns: str,
        parent_id: str | None,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        record: dict[str, Any] | None,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a step, addressed by its thread, namespace and parent checkpoint id (checked
        already), whose ``checkpoint`` maps and ``metadata`` (without a record) are stored as
        they are, and whose debug ``record`` is already as
        :func:`~durable_debug.checkpoint.records.stored_record` gives it (None: none). Every
        value is serialized before anything is stored.

        A lone task's writes are serialized in the same pass as the new blobs: with the
        built-in serializer, a channel that now holds the very object a write gave it (a
        ``LastValue``, a trigger's None) takes the write's blob, the same bytes."""
        values = checkpoint["channel_values"]
        blobs = self.blobs
        dumps = self.serde.dumps_typed
        reused: dict[str, Blob] = {}
        lone: dict[tuple[str, int], _StoredWrite] | None = None
        if task_writes:
            if len(task_writes) == 1 and parent_id is not None:
                lone = {}
                task_id, writes, task_path = task_writes[0]
                special = SPECIAL_WRITE_IDX
                same = type(self.serde) is MsgpackSerializer  # (its bytes: the object's alone)
                channel = ""
                try:
                    for idx, (channel, value) in enumerate(writes):
                        blob = dumps(value)
                        # (a key repeats only for a special channel: the last one is kept)
                        lone[(task_id, special.get(channel, idx))] = _new_tuple(
                            _StoredWrite, (task_id, channel, blob, task_path)
                        )
                        if same and values.get(channel) is value:
                            reused[channel] = blob
                except SerdeError as exc:
                    raise exc.located(
                        thread=thread_id, checkpoint=parent_id, channel=channel
                    ) from None
            else:
                serialized = self._serialized_writes(thread_id, parent_id, task_writes)
        new_blobs: dict[tuple[str, str, str, str], Blob] = {}
        channel = ""
        try:
            for channel, version in new_versions.items():
                if channel in values:
                    blob_key = (thread_id, checkpoint_ns, channel, version)
                    if blob_key not in blobs:
                        new_blobs[blob_key] = reused.get(channel) or dumps(values[channel])
        except SerdeError as exc:
            raise exc.located(
                thread=thread_id, checkpoint=checkpoint["id"], channel=channel
            ) from None
        if task_writes:  # (parent_id was checked: writes need one)
            write_key = (thread_id, checkpoint_ns, str(parent_id))
            if lone is None:
                self._store_writes(write_key, serialized, len(task_writes) == 1)
            elif write_key in self.writes:
                self._store_writes(write_key, list(lone.items()), False)
            else:
                self.writes[write_key] = lone
        if new_blobs:
            blobs.update(new_blobs)
        checkpoint_id = checkpoint["id"]
        namespaces = self.storage.get(thread_id)
        if namespaces is None:
            namespaces = self.storage[thread_id] = {}
        checkpoints = namespaces.get(checkpoint_ns)
        if checkpoints is None:
            checkpoints = namespaces[checkpoint_ns] = {}
        stored = {**checkpoint, "channel_values": {}}  # (no cast: a call each step)
        checkpoints[checkpoint_id] = _new_tuple(_StoredCheckpoint, (stored, metadata, parent_id))
        key = (thread_id, checkpoint_ns, checkpoint_id)
        if record is not None:
            self.records[key] = record
        elif self.records:
            self.records.pop(key, None)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("put checkpoint %s of thread %s", checkpoint_id, thread_id)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint_id,
            }
        }

    put_run_step = _store_step
    """The engine's step save on this saver's own ``aput_step`` (``graph/saving.py``): the
    run's address is checked when it begins, each step's maps and metadata are new and never
    changed once put, and it makes its debug record in stored form."""

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes; ordinary writes once, special ones replacing the previous."""
        thread_id, checkpoint_ns, checkpoint_id = config_address(config)
        serialized = self._serialized_writes(
            thread_id, checkpoint_id, ((task_id, writes, task_path),)
        )
        self._store_writes((thread_id, checkpoint_ns, str(checkpoint_id)), serialized, True)

    def _serialized_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint: Checkpoint,
        new_versions: ChannelVersions,
    ) -> dict[tuple[str, str, str, str], Blob]:
        """The blobs of the channels in ``new_versions`` that hold a value and are not stored
        yet (a channel without a value gets none, as in the durable savers)."""
        values = checkpoint["channel_values"]
        new_blobs: dict[tuple[str, str, str, str], Blob] = {}
        dumps = self.serde.dumps_typed
        channel = ""
        try:
            for channel, version in new_versions.items():
                key = (thread_id, checkpoint_ns, channel, version)
                if channel in values and key not in self.blobs:
                    new_blobs[key] = dumps(values[channel])
        except SerdeError as exc:
            raise exc.located(
                thread=thread_id, checkpoint=checkpoint["id"], channel=channel
            ) from None
        return new_blobs

    def _serialized_writes(
        self, thread_id: str, checkpoint_id: str | None, task_writes: Sequence[TaskWrites]
    ) -> list[tuple[tuple[str, int], _StoredWrite]]:
        """Tasks' writes serialized, for the checkpoint ``checkpoint_id`` (which they need):
        each as stored, with its key in the checkpoint's writes (``(task_id, idx)``, the idx
        of a special channel its own)."""
        if checkpoint_id is None:
            raise InvalidConfigError("put_writes needs a config that names a checkpoint_id")
        serialized = []
        dumps = self.serde.dumps_typed
        special = SPECIAL_WRITE_IDX
        channel = ""
        try:
            for task_id, writes, task_path in task_writes:
                for idx, (channel, value) in enumerate(writes):
                    stored = _new_tuple(_StoredWrite, (task_id, channel, dumps(value), task_path))
                    serialized.append(((task_id, special.get(channel, idx)), stored))
        except SerdeError as exc:
            raise exc.located(thread=thread_id, checkpoint=checkpoint_id, channel=channel) from None
        return serialized

    def _store_writes(
        self,
        key: tuple[str, str, str],
        serialized: list[tuple[tuple[str, int], _StoredWrite]],
        one_task: bool,
    ) -> None:
        """Store writes of :meth:`_serialized_writes` on the checkpoint ``key``: an ordinary
        write once (the first kept), a special one replacing the one before. ``one_task``:
        they are one task's, whose ordinary writes have keys of their own."""
        bucket = self.writes.get(key)
        if bucket is None:
            if one_task:  # only a special write's key can repeat: the last one kept
                self.writes[key] = dict(serialized)
                return
            bucket = self.writes[key] = {}
        for write_key, write in serialized:
            if write_key in bucket and write.channel not in SPECIAL_WRITE_IDX:
                continue
            bucket[write_key] = write

    async def adelete_thread(self, thread_id: str) -> None:
        """Forget every checkpoint, blob and write of ``thread_id``."""
        self.storage.pop(thread_id, None)
        for blob_key in [k for k in self.blobs if k[0] == thread_id]:
            del self.blobs[blob_key]
        for write_key in [k for k in self.writes if k[0] == thread_id]:
            del self.writes[write_key]
        for record_key in [k for k in self.records if k[0] == thread_id]:
            del self.records[record_key]

    async def adelete_checkpoints(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str]
    ) -> None:
        """Delete some checkpoints, their writes, and the blobs only they pointed at."""
        stored = self.storage.get(thread_id, {}).get(checkpoint_ns, {})
        doomed = {cid for cid in checkpoint_ids if cid in stored}

        def pointers(ids: Iterable[str]) -> set[tuple[str, str]]:
            return {
                (channel, str(version))
                for cid in ids
                for channel, version in stored[cid].checkpoint["channel_versions"].items()
            }

        unused = pointers(doomed) - pointers(set(stored) - doomed)
        for cid in doomed:
            del stored[cid]
            self.writes.pop((thread_id, checkpoint_ns, cid), None)
            self.records.pop((thread_id, checkpoint_ns, cid), None)
        for channel, version in unused:
            self.blobs.pop((thread_id, checkpoint_ns, channel, version), None)

    # -- debug records (checkpoint/records.py) ------------------------------------------------

    stores_debug_records = True

    async def aget_debug_records(
        self,
        thread_id: str,
        checkpoint_ns: str | None,
        checkpoint_ids: Sequence[str] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The debug records of a thread's checkpoints, by ``(checkpoint_ns, checkpoint_id)``."""
        wanted = None if checkpoint_ids is None else set(checkpoint_ids)
        if wanted is not None and checkpoint_ns is not None:  # looked up, not searched for
            keys = ((thread_id, checkpoint_ns, cid) for cid in wanted)
            return {
                key[1:]: json.loads(json.dumps(self.records[key]))
                for key in keys
                if key in self.records
            }
        return {
            (ns, cid): json.loads(json.dumps(record))
            for (tid, ns, cid), record in self.records.items()
            if tid == thread_id
            and (checkpoint_ns is None or ns == checkpoint_ns)
            and (wanted is None or cid in wanted)
        }

    async def aset_debug_record(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, record: dict[str, Any]
    ) -> None:
        """Replace the debug record of a saved checkpoint."""
        if checkpoint_id in self.storage.get(thread_id, {}).get(checkpoint_ns, {}):
            self.records[(thread_id, checkpoint_ns, checkpoint_id)] = stored_record(record)

    def known_graph_version(self, key: tuple[str, str, str]) -> str | None:
        """The graph version in the debug record of the checkpoint ``key`` (thread,
        namespace, id) names, read without a copy (None: no record, or no version in it);
        see :func:`~durable_debug.checkpoint.records.known_version`."""
        record = self.records.get(key)
        version = record.get(GRAPH_VERSION) if record is not None else None
        return version if isinstance(version, str) else None

    async def alist_threads(self) -> list[str]:
        """Return the ids of every thread that has a checkpoint."""
        return [t for t, namespaces in self.storage.items() if any(namespaces.values())]

    async def asubgraph_heads(self, thread_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Each subgraph namespace of a thread with its newest checkpoint's metadata (see
        :class:`~durable_debug.checkpoint.base.SubgraphHeadsSaver`), from the stored rows."""
        namespaces = list(self.storage.get(thread_id, {}).items())
        return [
            (ns, dict(stored[max(stored)].metadata)) for ns, stored in namespaces if ns and stored
        ]

    async def aread_outline(
        self, thread_id: str, checkpoint_ns: str, *, since: str | None = None
    ) -> list[OutlineRow]:
        """A thread's tree without its state (:mod:`~durable_debug.checkpoint.memory_outline`)."""
        from durable_debug.checkpoint.outline import memory_read_outline

        return await memory_read_outline(self, thread_id, checkpoint_ns, since=since)

    async def alatest_mark(self, thread_id: str, checkpoint_ns: str) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)`` of a thread (``("", 0)``: none)."""
        from durable_debug.checkpoint.memory_outline import memory_latest_mark

        return memory_latest_mark(self, thread_id, checkpoint_ns)


InMemorySaver = MemorySaver
"""LangGraph's newer name for :class:`MemorySaver`."""
