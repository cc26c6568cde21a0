"""Reading a thread: every checkpoint with its snapshot, pointer map and pending writes.

Every other ``inspect`` function starts here. The graph is only used through the public
compiled-graph API (``aget_state_history``, ``aget_state``) and its saver (``alist``,
``aget_tuple``), so a LangGraph compiled graph works as well as a durable_debug one.

    thread = await aread_thread(graph, {"configurable": {"thread_id": "demo-1"}})
    len(thread), thread.latest.step          # (5, 3)
    thread.resolve("1f0a9c").values          # a checkpoint by id (or unique prefix)
    thread.writers(thread.latest)            # ['c']: the nodes whose writes made it
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import (
    ERROR,
    FAILURES,
    INTERRUPT,
    ONCE,
    RESUME,
    CheckpointNotFoundError,
    CheckpointTuple,
    PendingWrite,
    RunnableConfig,
    checkpoint_config,
    config_address_value,
    config_checkpoint_ns,
)
from durable_debug.checkpoint.errors import InvalidConfigError
from durable_debug.checkpoint.names import NO_WRITES, NS_SEP, PREVIOUS, START, TASKS
from durable_debug.checkpoint.outline import asubgraph_heads
from durable_debug.checkpoint.records import AS_NODE, aread_records, record_of
from durable_debug.checkpoint.serde import MsgpackSerializer
from durable_debug.graph.algo import expand_start_writes
from durable_debug.graph.findings import Finding, findings_of
from durable_debug.graph.subgraph import graph_at
from durable_debug.graph.types import END
from durable_debug.inspect.access import (
    GraphLike,
    SaverLike,
    aget_checkpoint,
    alist_checkpoints,
    astate,
    astate_history,
)

__all__ = [
    "SPECIAL_CHANNELS",
    "CheckpointRecord",
    "CheckpointRef",
    "Thread",
    "alist_thread",
    "aread_checkpoint",
    "aread_thread",
    "asubgraph_namespaces",
    "checkpointer_of",
    "loop_links",
    "read_thread",
    "subgraph_namespaces",
    "thread_config",
]

logger = logging.getLogger(__name__)

CheckpointRef = Any
"""What names a checkpoint: its id (or a unique prefix), a config, a snapshot or a record."""

SPECIAL_CHANNELS = frozenset({ERROR, FAILURES, INTERRUPT, RESUME, ONCE, TASKS, NO_WRITES})
"""Write channels that record how a task ended or what it asked for, not state updates."""

START_NODE = START


@dataclass(frozen=True)
class CheckpointRecord:
    """One checkpoint of a thread as the graph and its saver report it."""

    snapshot: Any
    """The graph's ``StateSnapshot`` (values, next, tasks, metadata…)."""
    checkpoint: Mapping[str, Any]
    """The saver's checkpoint dict (``channel_versions`` = the pointer map, raw values)."""
    pending_writes: tuple[PendingWrite, ...]
    """Writes saved by the tasks of the step that follows this checkpoint."""
    parent_id: str | None
    """Id of the parent checkpoint, None for the first one of the thread."""
    debug: Mapping[str, Any] = field(default_factory=dict)
    """The checkpoint's debug record (``checkpoint/records.py``: graph version, ``as_node``,
    findings…), or the keys an older durable_debug stored in its metadata."""

    @property
    def findings(self) -> list[Finding]:
        """What the run let pass here as LangGraph does (``graph/findings.py``)."""
        return findings_of(self.debug)

    @property
    def id(self) -> str:
        """The checkpoint id."""
        return str(self.snapshot.config["configurable"]["checkpoint_id"])

    @property
    def config(self) -> RunnableConfig:
        """The config that addresses this checkpoint."""
        return dict(self.snapshot.config)

    @property
    def metadata(self) -> dict[str, Any]:
        """Source, step, parents and any user metadata."""
        return dict(self.snapshot.metadata or {})

    @property
    def step(self) -> int:
        """``metadata.step``: -1 for the input checkpoint, then 0, 1, 2…"""
        return int(self.metadata.get("step", -1))

    @property
    def source(self) -> str:
        """``metadata.source``: input, loop, update or fork."""
        return str(self.metadata.get("source", ""))

    @property
    def next(self) -> tuple[str, ...]:
        """The nodes still to run from here."""
        return tuple(self.snapshot.next)

    @property
    def values(self) -> dict[str, Any]:
        """The state at this checkpoint, reassembled. An ``@entrypoint`` thread's state is
        its last return value, shown as its channels ``__end__`` and ``__previous__``."""
        values = self.snapshot.values
        if values is None or isinstance(values, Mapping):
            return dict(values or {})
        shown = {END: values}
        if PREVIOUS in self.channel_values:
            shown[PREVIOUS] = self.channel_values[PREVIOUS]
        return shown

    @property
    def created_at(self) -> str:
        """Creation time (ISO 8601) as the saver reports it."""
        return str(self.snapshot.created_at or self.checkpoint.get("ts") or "")

    @property
    def tasks(self) -> tuple[Any, ...]:
        """The tasks of the next step (``PregelTask``: id, name, error, interrupts, result)."""
        return tuple(self.snapshot.tasks or ())

    @property
    def channel_versions(self) -> dict[str, str]:
        """The pointer map: channel → version."""
        return {k: str(v) for k, v in (self.checkpoint.get("channel_versions") or {}).items()}

    @property
    def channel_values(self) -> dict[str, Any]:
        """Every channel's raw value, internal channels included."""
        return dict(self.checkpoint.get("channel_values") or {})

    def task_names(self) -> dict[str, str]:
        """Task id → node name for the tasks of the next step."""
        return {str(task.id): str(task.name) for task in self.tasks}

    def pending_interrupts(self) -> list[tuple[Any, Any]]:
        """``(task, interrupt)`` for each interrupt still waiting for an answer.

        A task that interrupted and later completed keeps its interrupt in the history; it is
        answered once the task has a result.
        """
        return [
            (task, interrupt)
            for task in self.tasks
            if task.result is None
            for interrupt in (task.interrupts or ())
        ]

    def failed_tasks(self) -> list[Any]:
        """The tasks of the next step that raised (even if a later run completed them)."""
        return [task for task in self.tasks if task.error]


@dataclass
class Thread:
    """The checkpoints of one thread (one namespace), oldest first, with lookups."""

    graph: GraphLike
    """The compiled graph the thread was read through."""
    thread_id: str
    """The thread's id."""
    checkpoint_ns: str
    """Its checkpoint namespace ("" for a top-level graph)."""
    records: dict[str, CheckpointRecord] = field(default_factory=dict)
    """Checkpoint id → record, oldest first."""
    complete: bool = True
    """False when only some checkpoints were read (one checkpoint and its parent)."""
    broken_links: dict[str, str] = field(default_factory=dict)
    """Checkpoint id → the parent id it names, for parent links that close a loop (a
    checkpoint that is its own ancestor: a damaged store). :meth:`parent` ignores them, so
    nothing that walks the tree loops; see :func:`loop_links`."""
    abandoned: bool | None = None
    """Read without the graph's code (a :class:`~durable_debug.inspect.stored.SaverView`):
    whether the thread's last run died while it held the thread (its lease expired without
    being given back), from the store's lease rows; None when not known (read through a
    graph, or a store without leases)."""
    _blob_sizes: dict[tuple[str, str], int | None] = field(default_factory=dict, repr=False)
    _children_index: dict[str, list[CheckpointRecord]] = field(default_factory=dict, repr=False)
    _index_key: tuple[int, int, int] | None = field(default=None, repr=False)
    _channels: list[str] = field(default_factory=list, repr=False)
    _channels_key: tuple[int, int] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[CheckpointRecord]:
        return iter(self.records.values())

    @property
    def config(self) -> RunnableConfig:
        """The config that addresses the thread (its latest checkpoint)."""
        return thread_config(self.thread_id, self.checkpoint_ns)

    @property
    def latest(self) -> CheckpointRecord:
        """The thread's newest checkpoint."""
        if not self.records:
            raise LookupError(f"Thread {self.thread_id!r} has no checkpoints yet.")
        return self.records[max(self.records)]

    def parent(self, record: CheckpointRecord) -> CheckpointRecord | None:
        """The parent of ``record``, or None for a root (or a parent that was not read, or a
        parent link that loops: see :attr:`broken_links`)."""
        if not record.parent_id or record.id in self.broken_links:
            return None
        return self.records.get(record.parent_id)

    def children(self, record: CheckpointRecord) -> list[CheckpointRecord]:
        """The children of ``record``, oldest first."""
        key = (id(self.records), len(self.records), len(self.broken_links))
        if self._index_key != key:  # built once per set of records, not once per call
            index: dict[str, list[CheckpointRecord]] = {}
            for r in self.records.values():
                if r.parent_id and r.id not in self.broken_links:
                    index.setdefault(r.parent_id, []).append(r)
            self._children_index, self._index_key = index, key
        return list(self._children_index.get(record.id, ()))

    def resolve(self, ref: CheckpointRef) -> CheckpointRecord:
        """Find a checkpoint by id, unique id prefix, config, snapshot or record.

        Raises :class:`CheckpointNotFoundError` naming the thread when nothing matches, and
        ``ValueError`` when a prefix matches several checkpoints.
        """
        if isinstance(ref, CheckpointRecord):
            ref = ref.id
        elif isinstance(ref, Mapping):
            ref = (ref.get("configurable") or {}).get("checkpoint_id")
            if ref is None:
                return self.latest
        elif hasattr(ref, "config") and hasattr(ref, "values"):
            ref = ref.config["configurable"]["checkpoint_id"]
        key = str(ref)
        if key in self.records:
            return self.records[key]
        matches = [cid for cid in self.records if cid.startswith(key)] if key else []
        if len(matches) == 1:
            return self.records[matches[0]]
        if len(matches) > 1:
            raise ValueError(
                f"Checkpoint prefix {key!r} matches {len(matches)} checkpoints of thread "
                f"{self.thread_id!r} ({', '.join(matches[:3])}…); give more characters."
            )
        raise _not_found(self.thread_id, key, self.latest.id if self.records else None)

    def writers(self, record: CheckpointRecord) -> list[str]:
        """The nodes whose writes made ``record``.

        ``[]`` for an input checkpoint; the ``as_node`` of an update when the engine records it
        (durable_debug does, LangGraph does not); for a loop checkpoint, the tasks of the
        parent's step that completed.
        """
        metadata = record.metadata
        if record.source == "input":
            return []
        if record.debug.get(AS_NODE):
            return [str(record.debug[AS_NODE])]
        if isinstance(metadata.get("writes"), Mapping):
            return [str(node) for node in metadata["writes"]]
        if record.source != "loop":
            return []
        parent = self.parent(record)
        if parent is None:
            return []
        written = {task_id for task_id, channel, _ in parent.pending_writes}
        names: list[str] = []
        for task in parent.tasks:
            done = task.result is not None or (task.id in written and not task.interrupts)
            if done and not task.error and task.name not in names:
                names.append(str(task.name))
        for task in parent.tasks:  # a failed task that a later run completed
            if task.error and task.result is not None and task.name not in names:
                names.append(str(task.name))
        return names

    def blob_size(self, channel: str, version: str, value: Any) -> int | None:
        """Bytes of the serialized blob for (channel, version), measured once.

        The size the store reports when its reader saw the blob (LangGraph's PostgreSQL
        layout); else measured with the graph's saver serializer when it has one, else with
        durable_debug's msgpack serializer; None when the value cannot be serialized.
        """
        key = (channel, version)
        if key not in self._blob_sizes:
            saver = checkpointer_of(self.graph)
            stored = getattr(saver, "blob_size_of", None)  # a reader that saw the blob's bytes
            if stored is not None:
                size: int | None = stored(self.thread_id, self.checkpoint_ns, channel, version)
                if size is not None:
                    self._blob_sizes[key] = size
                    return size
            serde: Any = getattr(saver, "serde", None)
            if serde is None or getattr(saver, "read_only", False):
                serde = _fallback_serde()  # a read-only reader's serializer only loads
            try:
                self._blob_sizes[key] = len(serde.dumps_typed(value)[1])
            except Exception as exc:  # a value the serializer refuses has no known size
                logger.debug("cannot measure %s@%s of %s: %s", channel, version, self, exc)
                self._blob_sizes[key] = None
        return self._blob_sizes[key]

    def state_channels(self) -> list[str]:
        """The state's channels: the schema's keys, then any other key found in values."""
        key = (id(self.records), len(self.records))
        if self._channels_key != key:  # found once per set of records, not once per call
            channels = list(_schema_channels(self.graph))
            known = set(channels)
            for record in self.records.values():
                for name in record.values:
                    if name not in known:
                        known.add(name)
                        channels.append(name)
            self._channels, self._channels_key = channels, key
        return list(self._channels)


async def aread_thread(
    graph: GraphLike, config: RunnableConfig, *, listed: Sequence[CheckpointTuple] | None = None
) -> Thread:
    """Read every checkpoint of the thread ``config`` names (all branches, forks included).

    A thread with no checkpoints yet gives an empty :class:`Thread`. ``listed``: the
    thread's checkpoint tuples when the caller already read them (one read for several
    namespaces); those of other namespaces are left out.
    """
    thread_id, checkpoint_ns = _thread_of(config, "aread_thread")
    saver = checkpointer_of(graph)
    base = thread_config(thread_id, checkpoint_ns)
    if listed is None:
        listed = await alist_checkpoints(saver, base)
    else:
        listed = [t for t in listed if _namespace(t) == checkpoint_ns]
    tuples = {str(t.config["configurable"]["checkpoint_id"]): t for t in listed}
    snapshots = await _snapshots(graph, base, listed)
    debug = await aread_records(saver, thread_id, checkpoint_ns)
    records: dict[str, CheckpointRecord] = {}
    for snapshot in sorted(snapshots, key=lambda s: str(s.config["configurable"]["checkpoint_id"])):
        checkpoint_id = str(snapshot.config["configurable"]["checkpoint_id"])
        records[checkpoint_id] = _record(snapshot, tuples.get(checkpoint_id), debug)
    broken = loop_links({cid: r.parent_id for cid, r in records.items()})
    for child, parent in broken.items():
        logger.info(
            "thread %r: checkpoint %s names %s as its parent, which closes a loop of parent "
            "links (a damaged store); the link is ignored",
            thread_id,
            child,
            parent,
        )
    abandoned = None
    dead = getattr(graph, "aabandoned_threads", None)  # a store read without the graph
    if dead is not None:
        threads = await dead()
        abandoned = None if threads is None else thread_id in threads
    return Thread(
        graph, thread_id, checkpoint_ns, records, broken_links=broken, abandoned=abandoned
    )


async def alist_thread(graph: GraphLike, thread_id: str) -> list[CheckpointTuple]:
    """Every checkpoint tuple of a thread, subgraph namespaces included, newest first."""
    return await alist_checkpoints(
        checkpointer_of(graph), {"configurable": {"thread_id": thread_id}}
    )


async def asubgraph_namespaces(graph: GraphLike, thread_id: str) -> dict[str, str | None]:
    """The subgraph namespaces of a thread (see :func:`subgraph_namespaces`): on
    durable_debug's SQLite saver from one query over the checkpoint rows (the widget asks on
    every click), else from the thread's listed checkpoints."""
    heads = await asubgraph_heads(checkpointer_of(graph), thread_id)
    if heads is None:
        return subgraph_namespaces(await alist_thread(graph, thread_id))
    return _namespaces_of(heads)


def _namespace(saved: CheckpointTuple) -> str:
    return str(saved.config["configurable"].get("checkpoint_ns") or "")


def subgraph_namespaces(listed: Sequence[CheckpointTuple]) -> dict[str, str | None]:
    """The subgraph namespaces among a thread's checkpoints (``node:task_id``, nested ones
    ``|``-joined), parents before children, each with the checkpoint of the enclosing
    namespace its task ran from (``metadata["parents"]``; None when not recorded)."""
    return _namespaces_of((_namespace(saved), saved.metadata) for saved in listed)


def _namespaces_of(heads: Iterable[tuple[str, Any]]) -> dict[str, str | None]:
    """:func:`subgraph_namespaces` from ``(namespace, metadata)`` pairs, newest first (the
    first pair of a namespace decides)."""
    found: dict[str, str | None] = {}
    for ns, metadata in heads:
        if not ns or ns in found:
            continue
        parents = (metadata if isinstance(metadata, Mapping) else {}).get("parents") or {}
        enclosing = ns.rpartition(NS_SEP)[0]
        found[ns] = parents.get(enclosing) if isinstance(parents, Mapping) else None
    return {ns: found[ns] for ns in sorted(found, key=lambda n: (n.count(NS_SEP), n))}


def loop_links(parents: Mapping[str, str | None]) -> dict[str, str]:
    """The parent links to ignore so that ``parents`` (checkpoint id → parent id) is a forest.

    Stored parent links form a tree unless the store was damaged: a checkpoint may name
    itself, or one of its descendants, as its parent. In each such loop the link of the oldest
    checkpoint (the smallest id) is returned, as ``{checkpoint id: parent id}``; every other
    link is kept. Linear in the number of checkpoints.
    """
    kept = {child: parent for child, parent in parents.items() if parent and parent in parents}
    broken: dict[str, str] = {}
    done: set[str] = set()
    for start in sorted(kept):
        path: dict[str, None] = {}
        node: str | None = start
        while node is not None and node not in done and node not in path:
            path[node] = None
            node = kept.get(node)
        if node is not None and node in path:  # the walk came back to itself: a loop
            members = list(path)[list(path).index(node) :]
            oldest = min(members)
            broken[oldest] = kept.pop(oldest)
        done.update(path)
    return broken


async def _snapshots(graph: GraphLike, base: RunnableConfig, listed: Sequence[Any]) -> list[Any]:
    """The snapshots of the checkpoints ``listed``: built from that one read for a
    durable_debug graph or a :class:`SaverView`; a LangGraph graph reads its history itself."""
    from durable_debug.graph.pregel import CompiledStateGraph
    from durable_debug.graph.snapshot import snapshot_from_tuple

    if isinstance(graph, CompiledStateGraph):
        # A subgraph's namespace is read through the graph that wrote it.
        graph = graph_at(graph, config_checkpoint_ns(base))
        return [snapshot_from_tuple(graph, saved, apply_pending=False) for saved in listed]
    read = getattr(graph, "asnapshots_of", None)  # SaverView
    if read is not None:
        return list(await read(listed))
    own = getattr(graph, "snapshots_of", None)
    if own is not None:
        return list(own(listed))
    return await astate_history(graph, base)


def read_thread(graph: GraphLike, config: RunnableConfig) -> Thread:
    """Sync twin of :func:`aread_thread`."""
    return run_sync(aread_thread(graph, config))


async def aread_checkpoint(
    graph: GraphLike, config: RunnableConfig, ref: CheckpointRef = None, *, with_parent: bool = True
) -> tuple[Thread, CheckpointRecord]:
    """Read one checkpoint (and its parent) without reading the whole thread.

    ``ref`` names the checkpoint (id, config, snapshot); None means the one ``config`` names,
    or the thread's latest. A short id prefix reads the thread to find it.
    """
    if ref is None:
        ref = config
    if isinstance(ref, CheckpointRecord):
        ref = ref.config
    elif not isinstance(ref, (str, Mapping)) and hasattr(ref, "config"):
        ref = ref.config  # a StateSnapshot
    if isinstance(ref, Mapping):
        # A config that names its own thread wins over the thread ``config`` names.
        named = ref if (ref.get("configurable") or {}).get("thread_id") else config
        thread_id, checkpoint_ns = _thread_of(named, "aread_checkpoint")
        checkpoint_id = (ref.get("configurable") or {}).get("checkpoint_id")
    else:
        thread_id, checkpoint_ns = _thread_of(config, "aread_checkpoint")
        checkpoint_id = str(ref)
    if checkpoint_id is not None and not _looks_complete(str(checkpoint_id)):
        thread = await aread_thread(graph, thread_config(thread_id, checkpoint_ns))
        return thread, thread.resolve(checkpoint_id)
    saver = checkpointer_of(graph)
    thread = Thread(graph, thread_id, checkpoint_ns, complete=False)
    target = thread_config(thread_id, checkpoint_ns, checkpoint_id)
    record = await _aread_one(graph, saver, target)
    if record is None:
        if checkpoint_id is None:
            raise LookupError(
                f"Thread {thread_id!r} has no checkpoints yet; run the graph with "
                f'config={{"configurable": {{"thread_id": {thread_id!r}}}}} first.'
            )
        raise _not_found(thread_id, str(checkpoint_id), None)
    found: dict[str, CheckpointRecord] = {}
    if with_parent and record.parent_id:
        parent_config = thread_config(thread_id, checkpoint_ns, record.parent_id)
        parent = await _aread_one(graph, saver, parent_config)
        if parent is not None:
            found[parent.id] = parent
    found[record.id] = record
    thread.records = dict(sorted(found.items()))
    return thread, record


def checkpointer_of(graph: GraphLike) -> Any:
    """The saver of a compiled graph, or a ``TypeError`` saying how to give it one."""
    saver = getattr(graph, "checkpointer", None)
    if saver is None or not hasattr(saver, "alist"):
        raise TypeError(
            f"{type(graph).__name__} has no checkpointer, so it keeps no threads to inspect: "
            "compile it with a saver, e.g. builder.compile(checkpointer=MemorySaver())."
        )
    return saver


thread_config = checkpoint_config
"""The config addressing a thread (its latest checkpoint) or one of its checkpoints:
``thread_config("job-1")``, ``thread_config("job-1", "", checkpoint_id)``."""


# --- helpers --------------------------------------------------------------------------------


def _thread_of(config: Mapping[str, Any] | None, what: str) -> tuple[str, str]:
    if not isinstance(config, Mapping):
        raise TypeError(
            f"{what} needs a config naming the thread, like "
            f'{{"configurable": {{"thread_id": "demo-1"}}}}; got {type(config).__name__}.'
        )
    thread_id = config_address_value(config, "thread_id")
    if not thread_id:
        raise InvalidConfigError(
            f"{what}: the config has no thread_id, so there is no thread to read; pass "
            f'{{"configurable": {{"thread_id": "demo-1"}}}} (the id you ran the graph with).'
        )
    return thread_id, config_checkpoint_ns(config)


def _not_found(thread_id: str, checkpoint_id: str, latest: str | None) -> CheckpointNotFoundError:
    hint = f" (its latest is {latest!r})" if latest else ""
    return CheckpointNotFoundError(
        f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}{hint}; list its checkpoints "
        "with durable_debug.inspect.history_frame(graph, config)."
    )


def _looks_complete(checkpoint_id: str) -> bool:
    """A full checkpoint id (uuid-shaped), as opposed to a prefix the user typed."""
    return len(checkpoint_id) >= 32


async def _aread_one(
    graph: GraphLike, saver: SaverLike, config: RunnableConfig
) -> CheckpointRecord | None:
    tup = await aget_checkpoint(saver, config)
    if tup is None:
        return None
    snapshot = await astate(graph, tup.config)
    conf = tup.config["configurable"]
    ns, cid = str(conf.get("checkpoint_ns") or ""), str(conf["checkpoint_id"])
    debug = await aread_records(saver, str(conf["thread_id"]), ns, [cid])
    return _record(snapshot, tup, debug)


def _record(
    snapshot: Any, tup: Any, debug: Mapping[tuple[str, str], Mapping[str, Any]] | None = None
) -> CheckpointRecord:
    """A checkpoint's record from its snapshot, its saved tuple (None for a graph whose
    history has more than its saver lists) and the thread's debug records."""
    checkpoint: Mapping[str, Any] = tup.checkpoint if tup is not None else {}
    writes: Sequence[PendingWrite] = []
    if tup is not None:
        # durable_debug saves the START task's state writes as a reference to the run input
        # its checkpoint holds: show them as the writes they stand for.
        writes = expand_start_writes(tup.pending_writes or [], tup.checkpoint)
    parent_config = snapshot.parent_config or (tup.parent_config if tup is not None else None)
    parent_id = (parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return CheckpointRecord(
        snapshot=snapshot,
        checkpoint=checkpoint,
        pending_writes=tuple((str(t), str(c), v) for t, c, v in writes),
        parent_id=str(parent_id) if parent_id else None,
        debug=record_of(debug or {}, tup) if tup is not None else {},
    )


def _schema_channels(graph: GraphLike) -> list[str]:
    """The state schema's keys, found the way durable_debug and LangGraph expose them."""
    keys = getattr(getattr(graph, "schema", None), "keys", None)  # durable_debug
    if isinstance(keys, tuple) and all(isinstance(k, str) for k in keys):
        return list(keys)
    builder = getattr(graph, "builder", None)  # LangGraph: the StateGraph's channels
    channels = getattr(builder, "channels", None)
    if isinstance(channels, Mapping):
        return [str(c) for c in channels if not str(c).startswith("__")]
    output = getattr(graph, "output_channels", None)
    if output == END:  # LangGraph's @entrypoint: its return value and its saved value
        return [END, PREVIOUS]
    if isinstance(output, (list, tuple)):
        return [str(c) for c in output if not str(c).startswith("__")]
    return []


_SERDE: MsgpackSerializer | None = None


def _fallback_serde() -> MsgpackSerializer:
    global _SERDE
    if _SERDE is None:
        _SERDE = MsgpackSerializer()
    return _SERDE
