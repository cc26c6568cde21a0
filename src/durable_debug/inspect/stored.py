"""Read a store without the graph's code: a saver seen through the compiled-graph API.

``durable-debug inspect prod.db`` has no graph object, only the database. ``SaverView`` gives
every ``inspect`` function what it needs from a graph — ``aget_state_history``, ``aget_state``
and ``checkpointer`` — working out each checkpoint's ``next`` and tasks from the trigger
channels the engine stores (``branch:to:<node>``, joins, Send packets) and its pending writes.

    view = SaverView(ReadOnlySqliteSaver("prod.db"))   # checkpoint.readonly: never writes
    await view.alist_threads()                      # ['job-1', 'job-2']
    history_frame(view, {"configurable": {"thread_id": "job-1"}})

It reads checkpoints written by durable_debug's engine; values, metadata and pending writes of
any saver-compatible store are shown, but ``next`` needs the engine's channel names. Without
the graph, nodes are listed by name (not in the order they were added), and a reducer key
that nothing wrote yet is absent instead of shown at its empty value.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    CheckpointTuple,
    RunnableConfig,
    checkpoint_config,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
)
from durable_debug.checkpoint.langgraph_serde import TYPE_KEY
from durable_debug.checkpoint.names import BRANCH_PREFIX, TASKS, is_trigger_channel, parse_trigger
from durable_debug.checkpoint.records import aread_records
from durable_debug.graph.algo import PULL, PUSH, read_pending_writes
from durable_debug.graph.ids import stored_task_id
from durable_debug.graph.snapshot import task_view
from durable_debug.graph.types import PregelTask, StateSnapshot
from durable_debug.graph.version import GRAPH_STRUCTURE_KEY, STRUCTURE_TRIGGERS

__all__ = [
    "SaverView",
    "is_internal_channel",
    "scheduled_tasks",
    "snapshot_of",
    "stored_subscribers",
    "subscribers_of",
]


def is_internal_channel(name: str) -> bool:
    """True for the engine's own channels (triggers, joins, Send packets, the run input)."""
    return is_trigger_channel(name)


class SaverView:
    """A read-only stand-in for a compiled graph, built from a saver alone."""

    def __init__(self, saver: BaseCheckpointSaver) -> None:
        self.checkpointer = saver
        self._abandoned: frozenset[str] | None = None

    async def aabandoned_threads(self) -> frozenset[str] | None:
        """Threads whose last run died holding them (an expired lease never given back), read
        from the store's lease rows once per view; None when the store keeps no leases (a
        LangGraph saver)."""
        if self._abandoned is None:
            listing = getattr(self.checkpointer, "alist_abandoned_threads", None)
            if listing is None:
                return None
            self._abandoned = frozenset(await listing())
        return self._abandoned

    async def alist_threads(self) -> list[str]:
        """Ids of every thread in the store."""
        return await self.checkpointer.alist_threads()

    def list_threads(self) -> list[str]:
        """Sync twin of :meth:`alist_threads`."""
        return run_sync(self.alist_threads())

    async def aget_state(self, config: RunnableConfig, **_: Any) -> StateSnapshot:
        """The snapshot of the checkpoint ``config`` names (or the thread's latest)."""
        saved = await self.checkpointer.aget_tuple(config)
        if saved is None:
            empty = checkpoint_config(config_thread_id(config), config_checkpoint_ns(config), None)
            return StateSnapshot({}, (), empty, None, None, None, (), ())
        return snapshot_of(
            saved, latest=config_checkpoint_id(config) is None, task_ids=self._task_ids(saved)
        )

    async def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first."""
        thread = checkpoint_config(config_thread_id(config), config_checkpoint_ns(config), None)
        async for saved in self.checkpointer.alist(
            thread, filter=filter, before=before, limit=limit
        ):
            yield snapshot_of(saved, latest=False, task_ids=self._task_ids(saved))

    def get_state(self, config: RunnableConfig, **_: Any) -> StateSnapshot:
        """Sync twin of :meth:`aget_state`."""
        return run_sync(self.aget_state(config))

    def get_state_history(self, config: RunnableConfig, **kwargs: Any) -> Iterator[StateSnapshot]:
        """Sync twin of :meth:`aget_state_history` (the history read whole, then iterated)."""

        async def read() -> list[StateSnapshot]:
            return [snapshot async for snapshot in self.aget_state_history(config, **kwargs)]

        return iter(run_sync(read()))

    def snapshots_of(self, listed: Iterable[CheckpointTuple]) -> list[StateSnapshot]:
        """The history snapshots of checkpoints already read (as ``aget_state_history``)."""
        return [
            snapshot_of(saved, latest=False, task_ids=self._task_ids(saved)) for saved in listed
        ]

    async def asnapshots_of(self, listed: Sequence[CheckpointTuple]) -> list[StateSnapshot]:
        """:meth:`snapshots_of` of one namespace's checkpoints, with the subscriptions of a
        ``Pregel``'s thread (which node each of its channels runs), read from the graph
        structure the oldest one's debug record holds (one record read)."""
        subscribers = await self._asubscribers(listed)
        return [
            snapshot_of(
                saved, latest=False, task_ids=self._task_ids(saved), subscribers=subscribers
            )
            for saved in listed
        ]

    async def _asubscribers(
        self, listed: Sequence[CheckpointTuple]
    ) -> dict[str, tuple[str, ...]] | None:
        if not listed:
            return None
        if any(  # a StateGraph's thread: its edges trigger its nodes, no record to read
            name.startswith(BRANCH_PREFIX)
            for saved in listed
            for name in saved.checkpoint["channel_versions"]
        ):
            return None
        oldest = min(listed, key=lambda saved: str(config_checkpoint_id(saved.config))).config
        records = await aread_records(
            self.checkpointer,
            config_thread_id(oldest),
            config_checkpoint_ns(oldest),
            [str(config_checkpoint_id(oldest))],
        )
        return stored_subscribers(records.values()) or None

    def _task_ids(self, saved: CheckpointTuple) -> Mapping[tuple[str, Any], str] | None:
        lookup = getattr(self.checkpointer, "task_ids_of", None)
        return None if lookup is None else lookup(saved.config)

    def get_graph(self) -> None:
        """The graph's shape is not in the store."""
        return None

    def __repr__(self) -> str:
        return f"<SaverView of {type(self.checkpointer).__name__}>"


def snapshot_of(
    saved: CheckpointTuple,
    *,
    latest: bool,
    task_ids: Mapping[tuple[str, Any], str] | None = None,
    subscribers: Mapping[str, Sequence[str]] | None = None,
) -> StateSnapshot:
    """Rebuild a snapshot from a stored checkpoint, as the engine would show it.

    ``task_ids`` maps a task's path to its id when the store says it (LangGraph's layout);
    otherwise the id is derived the way durable_debug's engine derives it. ``subscribers``:
    the channels besides the engine's that run nodes (a ``Pregel``'s, see
    :func:`subscribers_of`).
    """
    checkpoint = saved.checkpoint
    values_all = checkpoint["channel_values"]
    versions = checkpoint["channel_versions"]
    seen_by = checkpoint["versions_seen"]
    step = int(saved.metadata.get("step", -1))
    ns = config_checkpoint_ns(saved.config)
    records, _ = read_pending_writes(saved)
    tasks: list[PregelTask] = []
    finished: set[str] = set()
    for name, path in scheduled_tasks(values_all, versions, seen_by, subscribers):
        known = (task_ids or {}).get(path)
        if known:
            tid = saved_as = known
        else:  # its writes may be under the id an older version gave it
            tid, saved_as = stored_task_id(
                checkpoint["id"], ns, step + 1, name, path, versions, seen_by, records, subscribers
            )
        record = records.get(saved_as)
        if record is not None and record.finished:
            finished.add(tid)
        shown = (*path, False) if path[0] == PUSH else path  # a Send's, as the engine's
        tasks.append(task_view(tid, name, shown, record, _is_state_key, latest=latest))
    # Without the graph's reducers, pending writes cannot be merged into the values: they are
    # shown as the checkpoint stored them (the writes themselves are in the pending writes).
    values = {k: v for k, v in values_all.items() if not is_internal_channel(k)}
    next_names = tuple(t.name for t in tasks if not (latest and t.id in finished))
    waiting = tuple(i for t in tasks for i in t.interrupts)
    return StateSnapshot(
        values=values,
        next=next_names,
        config=saved.config,
        metadata=saved.metadata,
        created_at=checkpoint["ts"],
        parent_config=saved.parent_config,
        tasks=tuple(tasks),
        interrupts=waiting,
    )


def subscribers_of(graph: Any) -> dict[str, tuple[str, ...]]:
    """The channels that run ``graph``'s nodes besides the engine's trigger channels, each
    with the nodes it triggers (its subscribers): a ``Pregel``'s nodes subscribe to channels
    of any name; a ``StateGraph``'s are all run by the engine's channels (``{}``). Read from
    each node's ``triggers`` (durable_debug's and LangGraph's nodes have them); ``{}`` for
    anything without nodes (a saver seen as a graph)."""
    nodes = getattr(graph, "nodes", None)
    found: dict[str, tuple[str, ...]] = {}
    if not isinstance(nodes, Mapping):
        return found
    for name, node in nodes.items():
        for channel in getattr(node, "triggers", None) or ():
            if isinstance(channel, str) and not is_trigger_channel(channel):
                found[channel] = (*found.get(channel, ()), str(name))
    return found


def stored_subscribers(records: Iterable[Mapping[str, Any] | None]) -> dict[str, tuple[str, ...]]:
    """:func:`subscribers_of` for a reader without the graph: the subscriptions the graph
    structures in these debug records list (``graph/version.py``: a ``Pregel``'s structure
    lists them; every version's, merged); ``{}`` when none does (a ``StateGraph``'s)."""
    found: dict[str, tuple[str, ...]] = {}
    for record in records:
        structure = record.get(GRAPH_STRUCTURE_KEY) if record else None
        listed = structure.get(STRUCTURE_TRIGGERS) if isinstance(structure, Mapping) else None
        for line in listed if isinstance(listed, list) else ():
            channel, arrow, node = str(line).rpartition(" -> ")
            if arrow and node not in found.get(channel, ()):
                found[channel] = (*found.get(channel, ()), node)
    return found


def scheduled_tasks(
    values: Mapping[str, Any],
    versions: Mapping[str, str],
    seen_by: Mapping[str, Mapping[str, str]],
    subscribers: Mapping[str, Sequence[str]] | None = None,
) -> list[tuple[str, tuple[Any, ...]]]:
    """The tasks a checkpoint schedules for the next step, as ``(node, path)``: the nodes its
    trigger channels run (by name, and by ``subscribers``: other channels that run nodes, see
    :func:`subscribers_of`), then one task per Send packet.

    ``values`` may hold only the trigger channels, and of those only the values of joins and
    of the Send packets are read (a thread list loads no more).
    """
    triggered = _triggered_nodes(values, versions, seen_by)
    if subscribers:
        triggered |= _subscribed_nodes(values, versions, seen_by, subscribers)
    scheduled: list[tuple[str, tuple[Any, ...]]] = [
        (node, (PULL, node)) for node in sorted(triggered)
    ]
    for index, packet in enumerate(values.get(TASKS) or ()):
        scheduled.append((_packet_node(packet), (PUSH, index)))
    return scheduled


def _packet_node(packet: Any) -> str:
    """The node a Send packet goes to: durable_debug stores ``(node, arg)``; LangGraph's
    ``Send`` read without LangGraph is a tagged dict (positional ``args`` or ``node``)."""
    if isinstance(packet, Mapping):
        if "node" in packet:
            return str(packet["node"])
        args = packet.get("args")
        if isinstance(args, (list, tuple)) and args:
            return str(args[0])
        return str(packet.get(TYPE_KEY, "?"))
    return str(packet[0])


def _is_state_key(channel: str) -> bool:
    return not is_internal_channel(channel)


def _triggered_nodes(
    values: Mapping[str, Any],
    versions: Mapping[str, str],
    seen_by: Mapping[str, Mapping[str, str]],
) -> set[str]:
    """Nodes whose trigger channel holds a version they have not seen."""
    nodes: set[str] = set()
    for channel in values:
        trigger = parse_trigger(channel)
        if trigger is None:
            continue
        node = trigger.node
        if trigger.sources and set(values[channel] or ()) < set(trigger.sources):
            continue  # the join is still waiting for some of its sources
        if versions.get(channel, "") > seen_by.get(node, {}).get(channel, ""):
            nodes.add(node)
    return nodes


def _subscribed_nodes(
    values: Mapping[str, Any],
    versions: Mapping[str, str],
    seen_by: Mapping[str, Mapping[str, str]],
    subscribers: Mapping[str, Sequence[str]],
) -> set[str]:
    """Nodes a subscribed channel that holds a value runs: those that have not seen its
    version (as the engine prepares a ``Pregel``'s tasks)."""
    nodes: set[str] = set()
    for channel in values:
        version = versions.get(channel, "")
        for node in subscribers.get(channel, ()):
            if version > seen_by.get(node, {}).get(channel, ""):
                nodes.add(node)
    return nodes
