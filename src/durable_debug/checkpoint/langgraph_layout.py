"""What LangGraph's SQLite and PostgreSQL layouts share, for the read-only readers of both.

The readers (:mod:`~durable_debug.checkpoint.langgraph_sqlite`,
:mod:`~durable_debug.checkpoint.langgraph_postgres`) implement the read half of the saver
protocol — ``aget_tuple``, ``alist``, ``alist_threads`` and their sync twins — over tables
LangGraph's savers wrote, so everything that reads a durable_debug saver (``SaverView``,
``durable-debug inspect``, ``export_html``) reads them too. Values are decoded by
:class:`~durable_debug.checkpoint.langgraph_serde.LangGraphLoader`: nothing is imported or
called. Writing is refused: the store belongs to the LangGraph app.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    RunnableConfig,
    checkpoint_config,
    metadata_matches,
)
from durable_debug.checkpoint.langgraph_serde import LangGraphLoader
from durable_debug.checkpoint.latest import LatestHead, LatestRow, heads_of_rows
from durable_debug.checkpoint.names import (
    PULL,
    PUSH,
    SPECIAL_WRITES,
    is_trigger_channel,
    is_valued_trigger,
    parse_trigger,
)
from durable_debug.checkpoint.records import record_in_metadata, without_record
from durable_debug.checkpoint.serde import CorruptPayloadError, SerdeError, with_location

__all__ = ["LangGraphReader", "LatestRow", "ReadOnlyStoreError"]


WriteRow = tuple[str, str, str, str, Any, str]
"""``(checkpoint_id, task_id, channel, type, payload, task_path)``."""


class ReadOnlyStoreError(RuntimeError):
    """A write was asked of a reader over a store another program owns."""


class LangGraphReader(BaseCheckpointSaver):
    """Read-only saver over a LangGraph layout; subclasses fetch the rows.

    Subclasses implement :meth:`_checkpoint_rows`, :meth:`_write_rows`, :meth:`_thread_ids`
    and :meth:`_latest_rows` (sync, called in a worker thread by the async methods).
    """

    layout = "LangGraph"
    """Name of the layout, for messages."""
    read_only = True
    """Nothing is ever written through this saver (its serializer only loads)."""
    stores_debug_records = True
    """The debug records durable_debug's engine kept in the checkpoints' metadata (when it ran
    on a LangGraph saver: ``checkpoint/foreign.py``) are read from there."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.loader = LangGraphLoader()
        """Decodes LangGraph's values (also ``serde``, for the saver protocol)."""
        self.serde = self.loader
        self._task_ids: dict[tuple[str, str, str], dict[tuple[str, Any], str]] = {}

    def task_ids_of(self, config: RunnableConfig) -> dict[tuple[str, Any], str]:
        """For the checkpoint ``config`` names (once read): task path → LangGraph's task id.

        A path is ``("__pregel_pull", node)`` or ``("__pregel_push", index)``. LangGraph
        derives task ids with a hash of its own; the ids of tasks that saved writes are
        read from the writes table (its ``task_path`` column) instead of recomputed.
        """
        configurable = config.get("configurable") or {}
        key = (
            str(configurable.get("thread_id") or ""),
            str(configurable.get("checkpoint_ns") or ""),
            str(configurable.get("checkpoint_id") or ""),
        )
        return self._task_ids.get(key, {})

    # -- what subclasses provide ------------------------------------------------------------

    def _checkpoint_rows(
        self, thread_id: str | None, checkpoint_ns: str | None, checkpoint_id: str | None
    ) -> list[tuple[Any, ...]]:
        """Rows ``(thread_id, ns, id, parent_id, checkpoint dict, metadata dict)`` newest
        first, the checkpoint with its channel values already loaded."""
        raise NotImplementedError

    def _write_rows(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str] | None
    ) -> list[WriteRow]:
        """Rows ``(checkpoint_id, task_id, channel, type, payload, task_path)`` in write order."""
        raise NotImplementedError

    def _thread_ids(self) -> list[str]:
        raise NotImplementedError

    def _metadata_rows(
        self, thread_id: str, checkpoint_ns: str | None
    ) -> builtins.list[tuple[str, str, Any]]:
        """Rows ``(checkpoint_ns, checkpoint_id, metadata dict)`` of a thread (one namespace,
        or all when None); subclasses read them without the checkpoints."""
        return [
            (row[1], row[2], row[5])
            for row in self._checkpoint_rows(thread_id, checkpoint_ns, None)
        ]

    def _latest_rows(self) -> list[LatestRow]:
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection."""

    # -- the read protocol --------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), or None."""
        configurable = config.get("configurable") or {}
        thread_id = str(configurable.get("thread_id") or "")
        ns = str(configurable.get("checkpoint_ns") or "")
        checkpoint_id = configurable.get("checkpoint_id")
        rows = self._checkpoint_rows(
            thread_id, ns, None if checkpoint_id is None else str(checkpoint_id)
        )
        if not rows:
            return None
        row = rows[0]
        writes = self._write_rows(row[0], row[1], [row[2]])
        return self._tuple(row, writes)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first; one query for the checkpoints, one for their writes."""
        configurable = (config or {}).get("configurable") or {}
        thread_id = configurable.get("thread_id")
        ns = configurable.get("checkpoint_ns")
        rows = self._checkpoint_rows(
            None if thread_id is None else str(thread_id),
            None if ns is None else str(ns),
            configurable.get("checkpoint_id"),
        )
        before_id = ((before or {}).get("configurable") or {}).get("checkpoint_id")
        if before_id is not None:
            rows = [row for row in rows if row[2] < str(before_id)]
        if filter:
            rows = [row for row in rows if metadata_matches(row[5], filter)]
        if limit is not None:
            rows = rows[:limit]
        by_thread: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for row in rows:
            by_thread.setdefault((row[0], row[1]), []).append(row)
        writes: dict[tuple[str, str, str], list[WriteRow]] = {}
        for (thread, namespace), thread_rows in by_thread.items():
            ids = None if len(thread_rows) > 50 else [row[2] for row in thread_rows]
            for write in self._write_rows(thread, namespace, ids):
                writes.setdefault((thread, namespace, write[0]), []).append(write)
        return iter([self._tuple(row, writes.get((row[0], row[1], row[2]), [])) for row in rows])

    def list_threads(self) -> builtins.list[str]:
        """Ids of every thread in the store, sorted."""
        return self._thread_ids()

    def latest_rows(self) -> builtins.list[LatestRow]:
        """Each thread's newest top-level checkpoint with its writes, in one query."""
        return self._latest_rows()

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple` (runs in a worker thread)."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list`."""
        found = await asyncio.to_thread(
            lambda: builtins.list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for tup in found:
            yield tup

    async def alist_threads(self) -> builtins.list[str]:
        """Async twin of :meth:`list_threads`."""
        return await asyncio.to_thread(self._thread_ids)

    async def alatest_rows(self) -> builtins.list[LatestRow]:
        """Async twin of :meth:`latest_rows`."""
        return await asyncio.to_thread(self._latest_rows)

    async def alatest_heads(self) -> builtins.list[LatestHead]:
        """Each thread's newest top-level checkpoint cut down to a head (see
        :class:`~durable_debug.checkpoint.base.LatestHeadsSaver`): whole newest checkpoints
        read, their state dropped here."""
        return heads_of_rows(await self.alatest_rows(), self.task_ids_of)

    # -- writing is refused ---------------------------------------------------------------------

    def _refuse(self) -> ReadOnlyStoreError:
        return ReadOnlyStoreError(
            f"{self.where} is read here without the app ({self.layout} layout): nothing is "
            "written to it. Fork or rerun with the app's own graph and saver."
        )

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Refused: the store is read-only here."""
        raise self._refuse()

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Refused: the store is read-only here."""
        raise self._refuse()

    async def adelete_thread(self, thread_id: str) -> None:
        """Refused: the store is read-only here."""
        raise self._refuse()

    async def aget_debug_records(
        self,
        thread_id: str,
        checkpoint_ns: str | None,
        checkpoint_ids: Sequence[str] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The debug records kept in a thread's checkpoint metadata, by ``(checkpoint_ns,
        checkpoint_id)`` (every namespace when ``checkpoint_ns`` is None; only
        ``checkpoint_ids`` when given)."""
        rows = await asyncio.to_thread(self._metadata_rows, thread_id, checkpoint_ns)
        wanted = None if checkpoint_ids is None else set(checkpoint_ids)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for ns, checkpoint_id, metadata in rows:
            if wanted is not None and checkpoint_id not in wanted:
                continue
            record = record_in_metadata(metadata)
            if record is not None:
                found[(ns, checkpoint_id)] = record
        return found

    async def aset_debug_record(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, record: dict[str, Any]
    ) -> None:
        """Refused: the store belongs to the LangGraph app."""
        raise self._refuse()

    # -- building tuples ------------------------------------------------------------------------

    def _tuple(self, row: tuple[Any, ...], writes: Sequence[WriteRow]) -> CheckpointTuple:
        thread_id, ns, checkpoint_id, parent_id, checkpoint, metadata = row[:6]
        pending: list[PendingWrite] = []
        paths: dict[tuple[str, Any], str] = {}
        loads = self.serde.loads_typed
        channel = ""
        try:  # one handler for the loop: a `with with_location(...)` per write costs too much
            for _, task_id, channel, kind, payload, task_path in writes:
                value = None if payload is None else loads((kind, payload))
                pending.append((task_id, channel, value))
                path = _parse_task_path(task_path)
                if path is not None:
                    paths.setdefault(path, task_id)
        except SerdeError as exc:
            raise exc.located(thread=thread_id, checkpoint=checkpoint_id, channel=channel) from None
        if paths:
            self._task_ids[(thread_id, ns, checkpoint_id)] = paths
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=without_record(metadata),
            parent_config=checkpoint_config(thread_id, ns, parent_id) if parent_id else None,
            pending_writes=pending,
        )

    def _head(
        self,
        thread_id: str,
        count: int,
        checkpoint_id: str,
        step: Any,
        stored: tuple[str, bytes],
        writes: Sequence[Sequence[Any]],
    ) -> LatestHead:
        """A thread's newest checkpoint as a thread list reads it: from a msgpack checkpoint
        only the trigger channels (the values of joins and Send packets), the version maps
        and the special writes are decoded; the state is skipped over. ``writes`` are the
        listing query's ``[task, channel, type, hex or null, task_path]`` arrays."""
        kind, blob = stored
        try:
            if (kind or "msgpack") == "msgpack":
                values, versions, seen = self.loader.checkpoint_parts(
                    bytes(blob), is_trigger_channel, is_valued_trigger
                )
            else:
                loaded = self._checkpoint(thread_id, checkpoint_id, self.loader.loads_typed(stored))
                values = {
                    k: v for k, v in loaded["channel_values"].items() if is_trigger_channel(k)
                }
                versions, seen = loaded["channel_versions"], loaded["versions_seen"]
            if not values:  # no trigger channel holds a value: it schedules nothing
                return LatestHead(thread_id, count, checkpoint_id, step)
            if versions is None:
                versions = {}
            elif type(versions) is not dict:
                raise CorruptPayloadError("the checkpoint's channel_versions is not a map")
            if seen is None:
                seen = {}
            elif type(seen) is not dict:
                raise CorruptPayloadError("the checkpoint's versions_seen is not a map")
            nodes = {trigger.node for channel in values if (trigger := parse_trigger(channel))}
            seen = {node: _version_map(seen[node], "versions_seen") for node in nodes & seen.keys()}
            pending: list[PendingWrite] = []
            paths: dict[tuple[str, Any], str] = {}
            if writes:
                loads, append, parse = self.loader.loads_typed, pending.append, _parse_task_path
                for task, channel, write_kind, data, task_path in writes:
                    value = None
                    if data is not None and channel in SPECIAL_WRITES:
                        value = loads((write_kind or "null", bytes.fromhex(data)))
                    append((task, channel, value))
                    path = parse(task_path or "")
                    if path is not None and path not in paths:
                        paths[path] = task
        except SerdeError as exc:
            where = exc.located(thread=thread_id, checkpoint=checkpoint_id)
            return LatestHead(thread_id, count, error=str(where))
        return LatestHead(
            thread_id,
            count,
            checkpoint_id,
            step,
            values,
            {k: str(versions.get(k, "")) for k in values},
            seen,
            pending,
            paths,
        )

    def _checkpoint(self, thread_id: str, checkpoint_id: str, loaded: Any) -> Checkpoint:
        """Check the loaded checkpoint's shape; fill what older formats lack."""
        if not isinstance(loaded, dict) or not isinstance(loaded.get("channel_values"), dict):
            with with_location(thread=thread_id, checkpoint=checkpoint_id):
                raise CorruptPayloadError(
                    f"not a LangGraph checkpoint (a {type(loaded).__name__} without channel_values)"
                )
        loaded.setdefault("id", checkpoint_id)
        loaded.setdefault("ts", "")
        loaded.setdefault("channel_versions", {})
        loaded.setdefault("versions_seen", {})
        loaded.setdefault("updated_channels", None)
        # InMemorySaver-era files may hold int versions; SQL savers store strings already.
        versions = loaded["channel_versions"]
        if any(type(v) is not str for v in versions.values()):
            loaded["channel_versions"] = {k: str(v) for k, v in versions.items()}
        seen_by = loaded["versions_seen"]
        for node, seen in seen_by.items():
            if seen is None or any(type(v) is not str for v in seen.values()):
                seen_by[node] = {k: str(v) for k, v in (seen or {}).items()}
        return loaded  # type: ignore[return-value]  # the JSON dict, its Checkpoint keys filled in above

    def _metadata(self, thread_id: str, checkpoint_id: str, raw: Any) -> dict[str, Any]:
        if raw is None:
            return {}
        if isinstance(raw, dict):
            return raw
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError, TypeError) as exc:
            with with_location(thread=thread_id, checkpoint=checkpoint_id):
                raise CorruptPayloadError(f"its metadata is not JSON ({exc})") from None
        if not isinstance(value, dict):
            with with_location(thread=thread_id, checkpoint=checkpoint_id):
                raise CorruptPayloadError(f"its metadata is a {type(value).__name__}, not a map")
        return value


def _version_map(stored: Any, what: str) -> dict[str, str]:
    """A stored version map (channel → version) with string versions, as
    :meth:`LangGraphReader._checkpoint` makes it; None is an empty map."""
    if stored is None:
        return {}
    if type(stored) is not dict:
        raise CorruptPayloadError(f"the checkpoint's {what} is not a map")
    if any(type(v) is not str for v in stored.values()):
        return {str(k): str(v) for k, v in stored.items()}
    return stored


@functools.lru_cache(maxsize=4096)
def _parse_task_path(text: str) -> tuple[str, Any] | None:
    """``"~__pregel_pull, chat"`` → ``("__pregel_pull", "chat")``; ``"~__pregel_push,
    0000000002, …"`` → ``("__pregel_push", 2)``; None for anything else. Cached: the answer
    depends on the text alone (an immutable tuple), and a graph's tasks have few paths, met
    once per thread by a thread list."""
    parts = text.lstrip("~").split(", ")
    if len(parts) < 2:
        return None
    if parts[0] == PULL:
        return (parts[0], parts[1])
    if parts[0] == PUSH and parts[1].isdigit():
        return (parts[0], int(parts[1]))
    return None
