"""Running the engine on a saver of LangGraph's own (``InMemorySaver``, ``SqliteSaver``,
``AsyncSqliteSaver``, ``PostgresSaver``…), so a LangGraph app that only changes its
``StateGraph`` import keeps its store, and LangGraph's code reads what the engine saves.

:func:`adapt_saver` wraps such a saver in a :class:`LangGraphSaver`, a saver of ours that
delegates ``aget_tuple`` / ``alist`` / ``aput`` / ``aput_writes`` / ``adelete_thread`` to it
(its sync methods when its async ones raise NotImplementedError, as those of
LangGraph's ``SqliteSaver`` and ``PostgresSaver`` do). What differs
from our own savers:

* no lease: LangGraph has none, so two processes running one thread are not kept apart
  (runs in one process still are, by the in-process lease of the base class);
* the debug record of each checkpoint (findings, graph fingerprint, ``as_node``…:
  ``checkpoint/records.py``) has no column of its own: it is stored as JSON text in the
  checkpoint's metadata, under the reserved key
  :data:`~durable_debug.checkpoint.names.DEBUG_METADATA_KEY`, which every LangGraph saver
  stores with the checkpoint. So another process (the ``durable-debug`` command, a new
  kernel) shows the findings of earlier runs. The engine's ``get_state`` /
  ``get_state_history`` and ``alist`` leave the key out of the metadata they return (it is
  not the user's); LangGraph's engine never reads it (each of its checkpoints gets metadata
  built anew, so the key is not carried on) and resumes such a thread unchanged, but shows
  it among a checkpoint's metadata, as it shows whatever metadata is stored. A record
  changed after its checkpoint was saved (findings of a resume that saved nothing) is
  written by saving the same checkpoint again with the new metadata (LangGraph's savers
  replace a checkpoint saved under the same id; its writes and blobs are left as they are).

LangGraph is not imported here: a saver is recognized by its class's bases.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast, overload

from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    checkpoint_config,
)
from durable_debug.checkpoint.names import (
    DEBUG_METADATA_KEY,
    INTERRUPT,
    STORED_TIMEOUT_POLICY,
    STORED_TYPE_NAMES,
    TASKS,
)
from durable_debug.checkpoint.records import (
    RECORD_KEY,
    record_in_metadata,
    record_text,
    without_record,
)
from durable_debug.checkpoint.serde import default_registry

__all__ = [
    "LangGraphSaver",
    "adapt_saver",
    "is_langgraph_saver",
]

LANGGRAPH_CHECKPOINT_V = 4
"""The checkpoint format version LangGraph's own runs write (from which on its savers read
pending sends as the writes of the parent checkpoint, as the engine saves them)."""

_LANGGRAPH_BASE = ("langgraph.checkpoint.base", "BaseCheckpointSaver")


def is_langgraph_saver(saver: Any) -> bool:
    """Whether ``saver`` is an instance of LangGraph's ``BaseCheckpointSaver`` (and not one
    of ours)."""
    if isinstance(saver, BaseCheckpointSaver):
        return False
    return any(
        (getattr(cls, "__module__", ""), cls.__name__) == _LANGGRAPH_BASE
        for cls in type(saver).__mro__
    )


@overload
def adapt_saver(saver: BaseCheckpointSaver) -> BaseCheckpointSaver: ...
@overload
def adapt_saver(saver: None) -> None: ...
@overload
def adapt_saver(saver: Any) -> Any: ...
def adapt_saver(saver: Any) -> Any:
    """``saver`` itself, or a :class:`LangGraphSaver` over it when it is one of LangGraph's
    (the same wrapper each time for one saver object)."""
    if not is_langgraph_saver(saver):
        return saver
    found = _ADAPTERS.get(id(saver))
    if found is None or found.inner is not saver:
        found = _ADAPTERS[id(saver)] = LangGraphSaver(saver)
    return found


_ADAPTERS: dict[int, LangGraphSaver] = {}
"""One wrapper per LangGraph saver, so every graph compiled on it shares in-process leases
and debug records (kept for the process's life, as the savers themselves usually are)."""


class _Converter:
    """Turns the engine's ``Send`` / ``Command`` / ``Interrupt`` / ``Overwrite`` into
    LangGraph's on the way into its saver, and back on the way out, so LangGraph's serializer
    stores its own types (which its code reads) and nothing is unpickled. Lists, tuples,
    dicts and a ``Command``'s fields are walked; other values pass as they are."""

    def __init__(self) -> None:
        import langgraph.types as lg  # the saver being wrapped is LangGraph's: it is installed

        ours = {name: default_registry.lookup(stored) for name, stored in STORED_TYPE_NAMES.items()}
        ours["Overwrite"] = default_registry.lookup("durable_debug.Overwrite")
        self.ours = {cls: name for name, cls in ours.items() if cls is not None}
        self.our_cls = {name: cls for cls, name in self.ours.items()}
        self.theirs = {
            getattr(lg, name): name for name in ("Send", "Command", "Interrupt", "Overwrite")
        }
        self.their_cls = {name: cls for cls, name in self.theirs.items()}
        self.their_timeout: Any = lg.TimeoutPolicy
        self.our_timeout: Any = default_registry.lookup(STORED_TIMEOUT_POLICY)

    def to_langgraph(self, value: Any) -> Any:
        """``value`` with the engine's objects replaced by LangGraph's."""
        return self._walk(value, self.ours, self._lg)

    def from_langgraph(self, value: Any) -> Any:
        """``value`` with LangGraph's objects replaced by the engine's."""
        return self._walk(value, self.theirs, self._dd)

    def _walk(self, value: Any, kinds: dict[type, str], make: Any) -> Any:
        kind = kinds.get(type(value))
        if kind is not None:
            return make(kind, value)
        if type(value) is list:
            return [self._walk(v, kinds, make) for v in value]
        if type(value) is tuple:
            return tuple(self._walk(v, kinds, make) for v in value)
        if type(value) is dict:
            return {k: self._walk(v, kinds, make) for k, v in value.items()}
        return value

    def _lg(self, kind: str, value: Any) -> Any:
        cls = self.their_cls[kind]
        walk = self.to_langgraph
        if kind == "Send":
            return cls(value.node, walk(value.arg), timeout=self._timeout_lg(value.timeout))
        if kind == "Interrupt":
            return cls(value=walk(value.value), id=value.id)
        if kind == "Overwrite":
            return cls(walk(value.value))
        resume = value.resume
        resume = None if type(resume).__name__ == "_Unset" else walk(resume)
        return cls(
            graph=value.graph, update=walk(value.update), resume=resume, goto=walk(value.goto)
        )

    def _dd(self, kind: str, value: Any) -> Any:
        cls = self.our_cls[kind]
        walk = self.from_langgraph
        if kind == "Send":
            return cls(value.node, walk(value.arg), timeout=self._timeout_dd(value))
        if kind == "Interrupt":
            return cls(value=walk(value.value), id=value.id)
        if kind == "Overwrite":
            return cls(walk(value.value))
        extra = {} if value.resume is None else {"resume": walk(value.resume)}
        return cls(graph=value.graph, update=walk(value.update), goto=walk(value.goto), **extra)

    def write_in(self, channel: str, value: Any) -> Any:
        """A write's value as LangGraph stores it: an ``__interrupt__`` write (the engine's
        ``[{"id", "value"}, ...]``) as a list of LangGraph ``Interrupt`` objects."""
        if channel == INTERRUPT and isinstance(value, (list, tuple)):
            cls = self.their_cls["Interrupt"]
            return [
                cls(value=self.to_langgraph(i["value"]), id=i["id"])
                if isinstance(i, dict) and "id" in i and "value" in i
                else self.to_langgraph(i)
                for i in value
            ]
        if channel == TASKS:
            return self._send_in(value)
        return self.to_langgraph(value)

    def _timeout_lg(self, ours: Any) -> Any:
        """The engine's ``TimeoutPolicy`` (or None) as LangGraph's."""
        if ours is None:
            return None
        return self.their_timeout(
            run_timeout=ours.run_timeout, idle_timeout=ours.idle_timeout, refresh_on=ours.refresh_on
        )

    def _timeout_dd(self, send: Any) -> Any:
        """The timeout of LangGraph's ``Send`` (or None) as the engine's ``TimeoutPolicy``."""
        theirs = getattr(send, "timeout", None)
        if theirs is None:
            return None
        return self.our_timeout(
            run_timeout=theirs.run_timeout,
            idle_timeout=theirs.idle_timeout,
            refresh_on=theirs.refresh_on,
        )

    def _send_in(self, value: Any) -> Any:
        """A pending send as the engine saves it (``[node, arg]``, ``[node, arg, timeout]``)
        as LangGraph's ``Send``."""
        if isinstance(value, (list, tuple)) and len(value) in (2, 3) and isinstance(value[0], str):
            timeout = self._timeout_lg(value[2] if len(value) == 3 else None)
            return self.their_cls["Send"](value[0], self.to_langgraph(value[1]), timeout=timeout)
        return self.to_langgraph(value)

    def _send_out(self, value: Any) -> Any:
        """LangGraph's ``Send`` as the engine saves a pending send: ``[node, arg]`` (with its
        timeout third, when it has one)."""
        if isinstance(value, self.their_cls["Send"]):
            timeout = self._timeout_dd(value)
            packet = [value.node, self.from_langgraph(value.arg)]
            return packet if timeout is None else [*packet, timeout]
        return self.from_langgraph(value)

    def values_in(self, values: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's ``channel_values`` with LangGraph's objects (its pending sends
        as ``Send`` objects)."""
        out = self.to_langgraph(values)
        if isinstance(values.get(TASKS), (list, tuple)):
            out[TASKS] = [self._send_in(v) for v in values[TASKS]]
        return cast("dict[str, Any]", out)

    def values_out(self, values: dict[str, Any]) -> dict[str, Any]:
        """The reverse of :meth:`values_in`."""
        out = self.from_langgraph(values)
        if isinstance(values.get(TASKS), (list, tuple)):
            out[TASKS] = [self._send_out(v) for v in values[TASKS]]
        return cast("dict[str, Any]", out)

    def write_out(self, channel: str, value: Any) -> Any:
        """A stored write's value as the engine saves it (the reverse of :meth:`write_in`)."""
        if channel == INTERRUPT and isinstance(value, (list, tuple)):
            kind = self.their_cls["Interrupt"]
            return [
                {"id": i.id, "value": self.from_langgraph(i.value)}
                if isinstance(i, kind)
                else self.from_langgraph(i)
                for i in value
            ]
        if channel == TASKS:
            return self._send_out(value)
        return self.from_langgraph(value)

    def checkpoint_in(self, checkpoint: Checkpoint) -> Checkpoint:
        """``checkpoint`` as LangGraph's runs write it: LangGraph's objects in its values,
        and format version :data:`LANGGRAPH_CHECKPOINT_V` (older versions make LangGraph's
        savers move a parent's pending sends into the values, which the engine does not
        expect)."""
        return cast(
            Checkpoint,
            {
                **checkpoint,
                "v": max(checkpoint["v"], LANGGRAPH_CHECKPOINT_V),
                "channel_values": self.values_in(checkpoint["channel_values"]),
            },
        )

    def tuple_out(self, found: Any) -> CheckpointTuple | None:
        """Our :class:`CheckpointTuple` of LangGraph's, with the engine's objects in it."""
        if found is None:
            return None
        checkpoint = dict(found.checkpoint)
        checkpoint["channel_values"] = self.values_out(checkpoint["channel_values"])
        return CheckpointTuple(
            config=found.config,
            checkpoint=cast(Checkpoint, checkpoint),
            metadata=cast(CheckpointMetadata, without_record(found.metadata)),
            parent_config=found.parent_config,
            pending_writes=[(t, c, self.write_out(c, v)) for t, c, v in found.pending_writes]
            if found.pending_writes is not None
            else None,
        )


class LangGraphSaver(BaseCheckpointSaver):
    """A saver of ours over a saver of LangGraph's (:attr:`inner`); see the module doc."""

    stores_debug_records = True
    """Debug records are kept in the checkpoints' metadata (see the module doc)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.serde = inner.serde
        self.sync_only = False
        """Whether the inner saver's async methods raise NotImplementedError (LangGraph's
        ``SqliteSaver`` and ``PostgresSaver``): then its sync methods are called. Found on the
        first call."""
        self.convert = _Converter()

    def __repr__(self) -> str:
        return f"<LangGraphSaver over {type(self.inner).__name__}>"

    async def _call(self, name: str, *args: Any) -> Any:
        """The inner saver's ``a<name>(*args)``, or ``<name>(*args)`` when it is sync-only."""
        if not self.sync_only:
            try:
                return await getattr(self.inner, "a" + name)(*args)
            except NotImplementedError:
                self.sync_only = True
        return getattr(self.inner, name)(*args)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The inner saver's ``aget_tuple`` (``get_tuple`` for a sync-only saver)."""
        return self.convert.tuple_out(await self._call("get_tuple", config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """The inner saver's ``alist`` (``list`` for a sync-only saver)."""
        kwargs = {"filter": dict(filter) if filter else None, "before": before, "limit": limit}
        async for found in self._alist_inner(config, kwargs):
            yield cast(CheckpointTuple, self.convert.tuple_out(found))

    async def _alist_inner(self, config: RunnableConfig | None, kwargs: Any) -> AsyncIterator[Any]:
        """The inner saver's own tuples, as its ``alist`` (``list``) gives them."""
        if not self.sync_only:
            found_any = False
            try:
                async for found in self.inner.alist(config, **kwargs):
                    found_any = True
                    yield found
                return
            except NotImplementedError:
                if found_any:
                    raise
                self.sync_only = True
        for found in builtins.list(self.inner.list(config, **kwargs)):
            yield found

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The inner saver's ``aput``; the debug record the engine hands over in ``metadata``
        is stored there as JSON text under the reserved key (see the module doc)."""
        if RECORD_KEY in metadata or DEBUG_METADATA_KEY in metadata:
            kept: dict[str, Any] = {
                k: v for k, v in metadata.items() if k not in (RECORD_KEY, DEBUG_METADATA_KEY)
            }
            text = record_text(cast("dict[str, Any] | None", metadata.get(RECORD_KEY)))
            if text is not None:
                kept[DEBUG_METADATA_KEY] = text
            metadata = cast(CheckpointMetadata, kept)
        checkpoint = self.convert.checkpoint_in(checkpoint)
        return cast(
            RunnableConfig, await self._call("put", config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """The inner saver's ``aput_writes``."""
        writes = [(channel, self.convert.write_in(channel, value)) for channel, value in writes]
        await self._call("put_writes", config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """The inner saver's ``adelete_thread``."""
        await self._call("delete_thread", thread_id)

    async def aget_debug_records(
        self,
        thread_id: str,
        checkpoint_ns: str | None,
        checkpoint_ids: Sequence[str] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The debug records of a thread's checkpoints (every namespace when
        ``checkpoint_ns`` is None; only ``checkpoint_ids`` when given), by ``(checkpoint_ns,
        checkpoint_id)``, read from their metadata."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        if checkpoint_ids is not None and checkpoint_ns is not None:  # looked up one by one
            for checkpoint_id in dict.fromkeys(checkpoint_ids):
                config = checkpoint_config(thread_id, checkpoint_ns, checkpoint_id)
                item = await self._call("get_tuple", config)
                record = None if item is None else record_in_metadata(item.metadata)
                if record is not None:
                    found[(checkpoint_ns, checkpoint_id)] = record
            return found
        wanted = None if checkpoint_ids is None else set(checkpoint_ids)
        rows = await self._stored_metadata(thread_id, checkpoint_ns)
        if rows is not None:
            marker = DEBUG_METADATA_KEY.encode()
            for ns, checkpoint_id, text in rows:
                raw = text.encode() if isinstance(text, str) else bytes(text or b"")
                if marker not in raw or (wanted is not None and str(checkpoint_id) not in wanted):
                    continue
                record = record_in_metadata(json.loads(raw))
                if record is not None:
                    found[(str(ns or ""), str(checkpoint_id))] = record
            return found
        configurable: dict[str, Any] = {"thread_id": thread_id}
        if checkpoint_ns is not None:
            configurable["checkpoint_ns"] = checkpoint_ns
        kwargs = {"filter": None, "before": None, "limit": None}
        async for item in self._alist_inner({"configurable": configurable}, kwargs):
            conf = item.config["configurable"]
            key = (str(conf.get("checkpoint_ns") or ""), str(conf["checkpoint_id"]))
            record = record_in_metadata(item.metadata)
            if record is not None and (wanted is None or key[1] in wanted):
                found[key] = record
        return found

    async def _stored_metadata(
        self, thread_id: str, checkpoint_ns: str | None
    ) -> list[tuple[Any, Any, Any]] | None:
        """``(checkpoint_ns, checkpoint_id, metadata JSON)`` of a thread's checkpoints, read
        without the checkpoints from LangGraph's ``SqliteSaver`` / ``AsyncSqliteSaver`` (the
        table layout ``checkpoint/langgraph_sqlite.py`` reads); None for any other saver,
        whose checkpoints are listed instead."""
        from durable_debug.checkpoint.langgraph_sqlite import langgraph_metadata_query

        inner = self.inner
        kind = (type(inner).__module__, type(inner).__name__)
        sql, params = langgraph_metadata_query(thread_id, checkpoint_ns)
        if kind == ("langgraph.checkpoint.sqlite", "SqliteSaver"):
            with inner.lock:
                inner.setup()
                return list(inner.conn.execute(sql, params).fetchall())
        if kind == ("langgraph.checkpoint.sqlite.aio", "AsyncSqliteSaver"):
            await inner.setup()
            async with inner.lock, inner.conn.execute(sql, params) as cursor:
                return list(await cursor.fetchall())
        return None

    async def aset_debug_record(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, record: dict[str, Any]
    ) -> None:
        """Replace the debug record of a saved checkpoint: the checkpoint is saved again under
        its id, with its metadata holding the new record (its writes and blobs stay)."""
        item = await self._call(
            "get_tuple", checkpoint_config(thread_id, checkpoint_ns, checkpoint_id)
        )
        if item is None:
            return
        metadata = {k: v for k, v in item.metadata.items() if k != DEBUG_METADATA_KEY}
        text = record_text(record)
        if text is not None:
            metadata[DEBUG_METADATA_KEY] = text
        parent = item.parent_config or checkpoint_config(thread_id, checkpoint_ns)
        await self._call("put", parent, item.checkpoint, metadata, {})
