"""The super-step algorithm: which tasks a checkpoint schedules, and how their writes become
the next checkpoint.

1. :func:`prepare_tasks` — a node runs when one of its trigger channels holds a version it has
   not seen; each Send packet is a task of its own. Task ids are derived as LangGraph derives
   them (``ids.py``), so re-preparing the same checkpoint gives the same ids.
2. The tasks run (``runner``), each saving its writes as pending writes when it finishes.
3. :func:`apply_writes` — writes are applied in task-path order (never completion order),
   every changed channel gets the step's new version, and :func:`make_checkpoint` snapshots it.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import (
    ERROR,
    ERROR_SOURCE,
    FAILURES,
    INTERRUPT,
    NULL_TASK_ID,
    ONCE,
    RESUME,
    Checkpoint,
    CheckpointTuple,
    next_version,
    now_iso,
)
from durable_debug.checkpoint.names import PULL, PUSH, TASK_PATH_SEP
from durable_debug.checkpoint.start_writes import (
    NO_INPUT_VALUE,
    expand_start_writes,
    input_value,
)
from durable_debug.graph.channels import MISSING, Channel, EphemeralValue, LastValue
from durable_debug.graph.ids import (
    checkpoint_key,
    interrupt_id,
    legacy_task_ids,
    node_namespace,
    pull_id,
    pull_id_tail,
    send_task_id,
    task_id,
)
from durable_debug.graph.nodes import INPUT_KEYS, NO_WRITES, TASKS, NodeSpec
from durable_debug.graph.types import (
    START,
    Interrupt,
    InvalidUpdateError,
    TimeoutPolicy,
    packet_timeout,
)

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "PULL",
    "PUSH",
    "Task",
    "TaskRecord",
    "adopt_legacy_writes",
    "apply_writes",
    "compact_start_writes",
    "expand_start_writes",
    "group_pending_writes",
    "interrupt_id",
    "make_checkpoint",
    "prepare_tasks",
    "preview_values",
    "read_pending_writes",
    "restore_channels",
    "task_id",
    "task_path_str",
    "triggered_nodes",
]

INTERRUPT_SEEN = INTERRUPT
"""Pseudo-node in ``versions_seen``: channel versions seen when the run last (re)started, so
``interrupt_before``/``interrupt_after`` fire once per pause, not again on resume."""
_NOTHING_SEEN: Mapping[str, str] = {}
"""The ``versions_seen`` of a node that has not run yet."""


@dataclass(eq=False, slots=True)
class Task:
    """One node execution scheduled for the next step."""

    id: str
    name: str
    path: tuple[Any, ...]
    node: NodeSpec
    triggers: tuple[str, ...] = ()
    """Channels that triggered it (empty for a Send task)."""
    input: Any = None
    """What the node receives (set when preparing for execution)."""
    writes: list[tuple[str, Any]] = field(default_factory=list)
    """Its writes once it finished (or as restored from pending writes)."""
    resume: list[Any] = field(default_factory=list)
    once: list[Any] = field(default_factory=list)
    """Results of ``once()`` effects the task completed in an earlier try (saved writes)."""
    """Resume values for its ``interrupt()`` calls, in order."""
    status: str | None = None
    """None (not run), "done", "error", "interrupt" or "cancelled"."""
    error: BaseException | None = None
    interrupts: tuple[Interrupt[Any], ...] = ()
    cached: bool = False
    """True when its writes came from the node's cache (the node did not run)."""
    node_error: Any = None
    """For an error handler's task: the :class:`NodeError` of the failure it handles."""
    timeout: TimeoutPolicy | None = None
    """A Send's own timeout, which replaces its node's (None: the node's)."""

    @property
    def sort_key(self) -> tuple[Any, ...]:
        """Order in which writes are applied: edge tasks by node name, then Sends by index."""
        return (self.path[0] != PULL, self.path[1])

    @property
    def listed_triggers(self) -> tuple[str, ...]:
        """The triggers LangGraph lists for the task (``tasks`` / ``debug`` payloads, the
        ``langgraph_triggers`` metadata): every trigger of its node, sorted, for a task an
        edge scheduled (a join's node lists its ``branch:to:`` channel too); ``(PUSH,)``
        for a Send's or a call's."""
        if not self.triggers:
            return (PUSH,)
        own = self.node.triggers
        return self.triggers if len(own) < 2 else tuple(sorted(own))


def task_path_str(path: tuple[Any, ...]) -> str:
    """A task's path as savers store it with its writes (``task_path``)."""
    return TASK_PATH_SEP.join(map(str, path))


@dataclass(slots=True)
class TaskRecord:
    """What the pending writes of a checkpoint say about one task."""

    writes: list[tuple[str, Any]] = field(default_factory=list)
    finished: bool = False
    error: str | None = None
    interrupts: tuple[Interrupt[Any], ...] = ()
    resume: list[Any] | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    """Every failure of the task on this checkpoint (see ``graph/failures.py``)."""
    once: list[Any] | None = None
    handled: bool = False
    """Its failure went to its node's error handler (see ``loop.RunLoop``)."""


def read_pending_writes(
    saved: CheckpointTuple,
) -> tuple[dict[str, TaskRecord], list[tuple[str, Any]]]:
    """Group the pending writes of ``saved`` by task; also return the writes of no task
    (``Command(update=..., goto=...)`` given as run input)."""
    return group_pending_writes(saved.pending_writes or (), saved.checkpoint)


def group_pending_writes(
    pending_writes: Sequence[tuple[str, str, Any]], checkpoint: Checkpoint
) -> tuple[dict[str, TaskRecord], list[tuple[str, Any]]]:
    """:func:`read_pending_writes` of the writes ``pending_writes`` saved on ``checkpoint``."""
    records: dict[str, TaskRecord] = {}
    null_writes: list[tuple[str, Any]] = []
    for tid, channel, value in expand_start_writes(pending_writes, checkpoint):
        if tid == NULL_TASK_ID:
            if channel != RESUME:
                null_writes.append((channel, value))
            continue
        record = records.get(tid)
        if record is None:
            record = records[tid] = TaskRecord()
        if channel == ERROR:
            record.error = value
        elif channel == INTERRUPT:
            record.interrupts = tuple(
                Interrupt(value=i["value"], id=i["id"], response_schema=i.get("response_schema"))
                for i in value or ()
            )
        elif channel == RESUME:
            record.resume = list(value)
        elif channel == FAILURES:
            record.failures = list(value or ())
        elif channel == ERROR_SOURCE:
            record.handled = True
        elif channel == ONCE:
            record.once = list(value)
        elif channel == NO_WRITES:
            record.finished = True
        else:
            record.writes.append((channel, value))
            record.finished = True
    return records, null_writes


def adopt_legacy_writes(
    checkpoint: Checkpoint,
    pending_writes: Sequence[tuple[str, str, Any]] | None,
    records: dict[str, TaskRecord],
    tasks: Sequence[Task],
    checkpoint_ns: str,
    step: int,
) -> tuple[dict[str, TaskRecord], dict[str, str]]:
    """``records`` (the grouped ``pending_writes`` of ``checkpoint``) keyed by the ids of
    ``tasks`` (what ``checkpoint`` schedules for ``step``) also when an older version saved them
    under its own task ids, and task id → older id (empty when the writes use these ids: the
    usual case, one set lookup per saved task)."""
    legacy = legacy_task_ids(
        records.keys(),
        [(t.id, t.name, t.path) for t in tasks],
        checkpoint["id"],
        checkpoint_ns,
        step,
    )
    if not legacy:
        return records, legacy
    new = {old: tid for tid, old in legacy.items()}
    writes = [(new.get(tid, tid), ch, v) for tid, ch, v in pending_writes or ()]
    return group_pending_writes(writes, checkpoint)[0], legacy


def compact_start_writes(
    run_input: Any, writes: Sequence[tuple[str, Any]]
) -> list[tuple[str, Any]]:
    """The writes to save for a START task that ran on ``run_input``.

    Its state writes — the values of the input's keys, listed first — are replaced by one
    :data:`INPUT_KEYS` write naming those keys, because the checkpoint the writes are saved on
    already holds the input. Only writes that *are* the input's values are replaced; the edge
    writes (where the run goes next, which a conditional edge may decide differently on
    another try) are kept as they are. :func:`expand_start_writes` reverses this.
    """
    keys: list[str] = []
    plain = type(run_input) is dict  # (input_value of a dict, without its calls)
    for channel, value in writes:
        given = run_input.get(channel, NO_INPUT_VALUE) if plain else input_value(run_input, channel)
        if given is not value:
            break
        keys.append(channel)
    if not keys:
        return list(writes)
    return [(INPUT_KEYS, keys), *writes[len(keys) :]]


def prepare_tasks(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    checkpoint: Checkpoint,
    channels: Mapping[str, Channel],
    step: int,
    *,
    checkpoint_ns: str = "",
    for_execution: bool = False,
    candidates: Collection[str] | None = None,
) -> list[Task]:
    """Tasks of the step that follows ``checkpoint`` (whose step is ``step``).

    Listed as LangGraph lists them (Send tasks first, then nodes in the order they were
    added); :attr:`Task.sort_key` gives the order their writes are applied in.
    ``candidates`` limits the edge-triggered nodes considered (the nodes triggered by the
    channels the last step updated); None considers every node.
    """
    checkpoint_id = checkpoint["id"]
    versions = checkpoint["channel_versions"]
    seen_by = checkpoint["versions_seen"]
    next_step = step + 1
    tasks: list[Task] = []
    plain = graph.plain_available
    sends = channels[TASKS]
    if sends.value is not MISSING if TASKS in plain else sends.is_available():
        for index, packet in enumerate(sends.get()):
            name = packet[0]
            # As LangGraph: the path ends with False (the task is a Send, not a call), which
            # its id leaves out.
            task = Task(
                send_task_id(checkpoint_id, checkpoint_ns, next_step, name, index),
                name,
                (PUSH, index, False),
                graph.nodes[name],
                timeout=packet_timeout(packet),
            )
            if for_execution:
                task.input = packet[1]
            tasks.append(task)
    if candidates is None:
        names: Iterable[str] = graph.node_order
    elif type(candidates) is tuple:  # (triggered_nodes: already in node order)
        names = candidates
    elif len(candidates) < 2:  # (a chain's step: one node, no order to keep)
        names = [n for n in candidates if n in graph.nodes]
    else:
        names = [n for n in graph.node_order if n in candidates]
    state_input: Any = MISSING
    key: bytes | None = None
    tails = graph.pull_id_tails
    for name in names:
        spec = graph.nodes[name]
        # A trigger counts when its channel holds a value the node has not seen; the node's
        # versions_seen is looked up only then (a history step checks few of its nodes).
        seen: Mapping[str, str] | None = None
        triggered: tuple[str, ...] = ()
        for ch in spec.triggers:
            channel = channels[ch]
            if channel.value is not MISSING if ch in plain else channel.is_available():
                if seen is None:
                    seen = seen_by.get(name, _NOTHING_SEEN)
                if versions.get(ch, "") > seen.get(ch, ""):
                    triggered += (ch,)
        if not triggered:
            continue
        # The id as pull_task_id gives it, from the parts that do not change between steps
        if key is None:
            key = checkpoint_key(checkpoint_id)
        tail = tails.get(name)
        if tail is None:
            tail = tails[name] = pull_id_tail(name, spec.triggers)
        tid = pull_id(key, node_namespace(checkpoint_ns, name), next_step, tail)
        pull_path: tuple[Any, ...] = (PULL, name)
        task = Task(tid, name, pull_path, spec, triggered)
        if for_execution:
            if name == START:
                task.input = channels[START].get()
            elif spec.input_channel is not None:  # an entrypoint reads the run input
                task.input = channels[spec.input_channel].get()
            elif state_input is MISSING:
                state_input = graph.read_state(channels)
                schema = spec.input_schema or graph.schema
                # The first such task takes that new dict (the others get copies of it, made
                # before any node runs).
                if graph.state_is_new:
                    task.input = schema.take_input(state_input)
                else:
                    task.input = schema.to_input(state_input)
            else:
                task.input = (spec.input_schema or graph.schema).to_input(state_input)
        tasks.append(task)
    return tasks


def apply_writes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    checkpoint: Checkpoint,
    channels: Mapping[str, Channel],
    tasks: Sequence[Task],
    new_checkpoint_id: str,
    extra_writes: Sequence[tuple[str, Any]] = (),
    *,
    clear_ephemeral: bool = True,
    holding: Collection[str] | None = None,
) -> tuple[dict[str, str], dict[str, dict[str, str]], set[str]]:
    """Apply the writes of ``tasks`` (after ``extra_writes``) to ``channels``.

    Returns the next checkpoint's channel versions, its versions_seen, and the set of updated
    channels. ``checkpoint`` itself is not modified (it may be the saved one); the returned
    versions_seen shares the maps of the nodes that did not run with it (never change one in
    place). Trigger
    channels that nobody wrote are cleared unless ``clear_ephemeral`` is False.
    ``holding``: the channels that may hold a value (the ``updated_channels`` of a checkpoint
    the caller made from ``channels`` with this function; None: any channel may): only the
    ephemeral ones among them are looked at to be cleared.
    """
    versions = dict(checkpoint["channel_versions"])
    # The maps of the nodes that do not run now are shared with ``checkpoint`` (read-only
    # for everyone: whoever changes a checkpoint's versions_seen copies it first); a node
    # that runs gets a copy of its own.
    seen_by = dict(checkpoint["versions_seen"])
    ordered = tasks if len(tasks) < 2 else sorted(tasks, key=lambda t: t.sort_key)
    updated: set[str] = set()
    consuming = graph.consuming
    for task in ordered:
        if task.triggers:
            seen = seen_by[task.name] = dict(seen_by.get(task.name, _NOTHING_SEEN))
            for ch in task.triggers:
                seen[ch] = versions[ch]
                if ch in consuming and channels[ch].consume():
                    updated.add(ch)
    written: Collection[str] | None = None
    if len(ordered) == 1 and not extra_writes and len(ordered[0].writes) <= _FEW_WRITES:
        writes = ordered[0].writes
        once = set(map(_CHANNEL_OF, writes))
        if len(once) == len(writes):
            # A lone task (a chain's step) that writes each channel once: one value a channel.
            written = once
            for ch, value in writes:
                channel = channels.get(ch)
                if channel is None:  # (not a channel of the graph: left out)
                    continue
                if type(channel) in _SET_BY_ONE_WRITE:
                    channel.value = value  # (what their update() does with one value)
                    updated.add(ch)
                elif channel.update([value]):
                    updated.add(ch)
    if written is None:
        grouped = _grouped(channels, extra_writes, ordered)
        for ch, values in grouped.items():
            if channels[ch].update(values):
                updated.add(ch)
        written = grouped
    if clear_ephemeral:
        clear: Iterable[str]
        if holding is None:
            clear = graph.ephemeral_channels
        else:
            clear = graph.ephemeral_set.intersection(holding)
        for ch in clear:
            channel = channels[ch]
            # An empty ephemeral channel stays empty (EphemeralValue.update): only those that
            # hold a value and were not written again are cleared.
            if channel.value is MISSING or ch in written:
                continue
            if type(channel) is EphemeralValue:
                channel.value = MISSING  # (what its update(()) does)
                updated.add(ch)
            elif channel.update(()):
                updated.add(ch)
        if graph.deferred_channels and not _triggers_any(graph, channels, updated):
            # Nothing else would run: release the deferred nodes (LangGraph's "finish").
            updated.update(ch for ch in graph.deferred_channels if channels[ch].finish())
    if updated:
        version = next_version(max(versions.values(), default=None), new_checkpoint_id)
        versions.update(dict.fromkeys(updated, version))
    return versions, seen_by, updated


_SET_BY_ONE_WRITE = frozenset({LastValue, EphemeralValue})
"""Channel classes whose ``update()`` of one value just holds it (and reports a change)."""

_CHANNEL_OF = itemgetter(0)
"""The channel of a ``(channel, value)`` write."""

_FEW_WRITES = 8
"""A lone task with at most this many writes has them grouped on the assumption that each
channel is written once (checked after); one with more (a fan-out's Sends, all to one channel)
is grouped as several tasks' writes are."""


def _grouped(
    channels: Mapping[str, Channel],
    extra_writes: Sequence[tuple[str, Any]],
    ordered: Sequence[Task],
) -> dict[str, list[Any]]:
    """The values written to each channel: ``extra_writes`` first, then the writes of the
    ``ordered`` tasks (writes to a channel the graph does not have are left out)."""
    grouped: dict[str, list[Any]] = {}
    for ch, value in extra_writes:
        if ch in channels:
            grouped.setdefault(ch, []).append(value)
    for task in ordered:
        for ch, value in task.writes:
            if ch in channels:
                grouped.setdefault(ch, []).append(value)
    return grouped


_TRIGGERED_SETS = 256
"""How many distinct sets of updated channels :func:`triggered_nodes` remembers per graph (a
graph's steps update few distinct sets; past this many they are worked out each time)."""


def triggered_nodes(
    graph: CompiledStateGraph[Any, Any, Any, Any], updated: Collection[str]
) -> tuple[str, ...]:
    """The nodes one of the ``updated`` channels can trigger, in ``graph.node_order`` (the
    ``candidates`` of :func:`prepare_tasks`); remembered per compiled graph and set of
    channels, so a step looks them up instead of collecting and ordering them."""
    cache: dict[frozenset[str], tuple[str, ...]] | None = graph.__dict__.get("_triggered_nodes")
    if cache is None:
        cache = graph.__dict__["_triggered_nodes"] = {}
    key = frozenset(updated)
    found = cache.get(key)
    if found is None:
        nodes = graph.nodes_triggered_by(set(key))
        found = tuple(n for n in graph.node_order if n in nodes)
        if len(cache) < _TRIGGERED_SETS:
            cache[key] = found
    return found


def _triggers_any(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    channels: Mapping[str, Channel],
    updated: set[str],
) -> bool:
    """True if one of the ``updated`` channels now holds a value that schedules a task."""
    live = {ch for ch in updated if channels[ch].is_available()}
    return TASKS in live or bool(graph.nodes_triggered_by(live))


def make_checkpoint(
    checkpoint_id: str,
    channels: Mapping[str, Channel],
    versions: dict[str, str],
    versions_seen: dict[str, dict[str, str]],
    updated: Iterable[str] | None,
    *,
    previous: Mapping[str, Any] | None = None,
    as_is: Container[str] = (),
) -> Checkpoint:
    """Snapshot ``channels`` as a new checkpoint.

    ``previous``: the channel values of the checkpoint the step started from, when the
    channels hold exactly those values apart from the ``updated`` ones (the caller made that
    checkpoint from these channels); only the updated channels are then read again.
    ``as_is``: channels known to checkpoint their value as it is (``Channel.checkpoint``:
    the graph's :attr:`~durable_debug.graph.pregel.CompiledStateGraph.plain_checkpoint`).
    """
    plain = _PLAIN_CHECKPOINT
    if previous is not None and updated is not None:
        values = dict(previous)
        for name in updated:
            channel = channels[name]
            if name in as_is or plain.get(type(channel)):
                value = channel.value
            else:
                value = channel.value if _plain(plain, channel) else channel.checkpoint()
            if value is MISSING:
                values.pop(name, None)
            else:
                values[name] = value
    else:
        values = {}
        for name, channel in channels.items():
            kind = type(channel)
            own = plain.get(kind)
            if own is None:
                own = plain[kind] = kind.checkpoint is Channel.checkpoint
            value = channel.value if own else channel.checkpoint()
            if value is not MISSING:
                values[name] = value
    checkpoint: Checkpoint = {  # a literal: calling the TypedDict takes keywords, each step
        "v": 1,
        "id": checkpoint_id,
        "ts": now_iso(),
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": versions_seen,
        "updated_channels": sorted(updated) if updated is not None else None,
    }
    return checkpoint


_PLAIN_CHECKPOINT: dict[type[Channel], bool] = {}
"""Per channel class: whether it checkpoints its value as it is (``Channel.checkpoint``), so
:func:`make_checkpoint` reads the value without a call per channel."""


def _plain(plain: dict[type[Channel], bool], channel: Channel) -> bool:
    """Whether ``channel`` checkpoints its value as it is (cached per class in ``plain``)."""
    kind = type(channel)
    own = plain.get(kind)
    if own is None:
        own = plain[kind] = kind.checkpoint is Channel.checkpoint
    return own


def preview_values(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    channels: Mapping[str, Channel],
    tasks: Iterable[Task],
    null_writes: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any] | None:
    """The state with ``null_writes`` and the writes of the finished ``tasks`` applied,
    without changing ``channels``; None if those writes conflict (two values for a plain key
    — the step cannot complete, and a snapshot must stay readable anyway: LangGraph's
    ``get_state`` raises the InvalidUpdateError again instead)."""
    keys = graph.schema.key_set
    groups: list[dict[str, list[Any]]] = [{}, {}]
    for ch, value in null_writes:
        if ch in keys:
            groups[0].setdefault(ch, []).append(value)
    for task in sorted(tasks, key=lambda t: t.sort_key):
        if task.status == "done":
            for ch, value in task.writes:
                if ch in keys:
                    groups[1].setdefault(ch, []).append(value)
    if not (groups[0] or groups[1]):
        return graph.read_state(channels)
    preview = dict(channels)
    try:
        for grouped in groups:
            for ch, values in grouped.items():
                copy = preview[ch].copy()
                copy.update(values)
                preview[ch] = copy
    except InvalidUpdateError:
        return None
    return graph.read_state(preview)


def restore_channels(
    graph: CompiledStateGraph[Any, Any, Any, Any], checkpoint: Checkpoint
) -> dict[str, Channel]:
    """Fresh channels holding the values of ``checkpoint``."""
    channels = graph.new_channels()
    for name, value in checkpoint["channel_values"].items():
        channel = channels.get(name)
        if channel is not None:
            channel.restore(value)
    return channels
