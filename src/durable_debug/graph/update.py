"""``update_state``: write values onto a checkpoint as if a node had returned them.

The update becomes a new checkpoint whose parent is the checkpoint it was applied to, so an
update on an old checkpoint is a *fork*: the original branch stays as it was.

    target = next(s.config for s in graph.get_state_history(cfg) if s.metadata["step"] == 1)
    new_cfg = graph.update_state(target, {"value": "FORKED"})     # source "update", step 2
    graph.invoke(None, new_cfg)                                    # grows the new branch

The update runs the node's edges too (as LangGraph does): updating "as" node ``a`` schedules
whatever follows ``a``; triggers nobody rewrites are cleared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    checkpoint_config,
    checkpoint_metadata,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
    empty_checkpoint,
    new_checkpoint_id,
)
from durable_debug.checkpoint.names import COPY, INPUT, UPDATE_PATH
from durable_debug.checkpoint.records import (
    AS_NODE,
    FINDINGS,
    aread_record,
    attach_record,
    record_from_metadata,
)
from durable_debug.graph.algo import (
    Task,
    apply_writes,
    make_checkpoint,
    prepare_tasks,
    read_pending_writes,
    restore_channels,
    task_id,
)
from durable_debug.graph.delta_counters import add_update_counters, delta_frequencies
from durable_debug.graph.findings import RunFindings
from durable_debug.graph.message_ids import ensure_message_ids
from durable_debug.graph.nodes import command_update_pairs, targets_to_writes
from durable_debug.graph.runner import edge_writes
from durable_debug.graph.snapshot import with_checkpoint_map
from durable_debug.graph.types import END, START, Command, InvalidUpdateError, Send
from durable_debug.graph.version import version_record

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
    from durable_debug.graph.channels import Channel
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "COPY",
    "INPUT",
    "StateUpdate",
    "abulk_update_state",
    "aupdate_state",
    "aupdate_step",
    "infer_as_node",
]


async def aupdate_state(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: RunnableConfig,
    values: Any,
    as_node: str | None = None,
) -> RunnableConfig:
    """Apply ``values`` to the checkpoint ``config`` names (or the thread's latest).

    ``values`` may be a :class:`Command`: its ``update`` is written and its ``goto`` schedules
    nodes, as if node ``as_node`` had returned it.
    """
    return await aupdate_step(graph, config, [(values, as_node)])


async def abulk_update_state(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: RunnableConfig,
    supersteps: Sequence[Sequence[Any]],
) -> RunnableConfig:
    """Apply several updates, one checkpoint per superstep; each superstep is a list of
    ``(values, as_node)`` pairs (or :class:`StateUpdate`) applied together, as if those nodes
    had run in one step. ``StateUpdate(None, END)`` alone in a superstep clears the tasks the
    checkpoint scheduled (see :func:`aupdate_step`). Returns the config of the last
    checkpoint."""
    if len(supersteps) == 0:
        raise ValueError("No supersteps provided: bulk_update_state got an empty list")
    for index, updates in enumerate(supersteps):
        if len(updates) == 0:
            raise ValueError(f"No updates provided: bulk_update_state's superstep {index} is empty")
    for index, updates in enumerate(supersteps):
        for update in updates:
            if not isinstance(update, (tuple, list)) or not 1 <= len(update) <= 3:
                raise TypeError(
                    f"bulk_update_state: superstep {index} holds {update!r:.80}; each update is "
                    "a StateUpdate(values, as_node) or a (values, as_node) pair"
                )
        triples = [
            (u[0], u[1] if len(u) > 1 else None, u[2] if len(u) > 2 else None) for u in updates
        ]
        config = await aupdate_step(graph, config, triples)
    return config


class StateUpdate(NamedTuple):
    """One update of :meth:`~CompiledStateGraph.bulk_update_state`."""

    values: Any
    """The writes (a dict of state keys, a Command, or None)."""
    as_node: str | None = None
    """The node the update is attributed to."""
    task_id: str | None = None
    """The id of the scheduled task the update answers (its writes show as that task's
    result); by default the next scheduled task of ``as_node``."""


Update = tuple[Any, str | None] | tuple[Any, str | None, str | None]
"""``(values, as_node)`` or ``(values, as_node, task_id)``."""


async def aupdate_step(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: RunnableConfig,
    updates: Sequence[Update],
) -> RunnableConfig:
    """Apply ``updates`` to one checkpoint as one step; a new checkpoint.

    ``(None, END)`` as the only update *clears* the checkpoint's scheduled tasks: what its
    finished tasks wrote is applied, the others are dropped, and the new checkpoint has
    nothing next (as LangGraph does).
    """
    as_node = updates[0][1]
    if updates[0][0] is None and as_node == END:
        if len(updates) > 1:
            raise InvalidUpdateError(
                "bulk_update_state: a (None, END) update clears the scheduled tasks and must be "
                f"the only update of its superstep (got {len(updates)})"
            )
        return await _clear_tasks(graph, config)
    if len(updates) > 1:
        for update in updates:
            node = update[1]
            if node is None or node in (COPY, INPUT):
                raise InvalidUpdateError(
                    "update_state with several updates in one step needs as_node on each, "
                    f"naming a node of the graph (got {node!r})"
                )
    checkpoint_ns = config_checkpoint_ns(config)
    saver = graph.checkpointer
    root = graph
    if checkpoint_ns:  # a subgraph's namespace: its own graph, its parent's saver
        from durable_debug.graph.subgraph import graph_at

        graph = graph_at(graph, checkpoint_ns)
        # A checkpointer=True subgraph keeps its history under its namespace without task
        # ids: the task's state config names its checkpoints there.
        config = graph._own_config(config)
        checkpoint_ns = config_checkpoint_ns(config)
    if saver is None:
        raise ValueError(
            "No checkpointer set: update_state needs a checkpointer: "
            "compile(checkpointer=MemorySaver())"
        )
    thread_id = config_thread_id(config)
    saved = await saver.aget_tuple(config)
    if saved is None:
        checkpoint = empty_checkpoint()
        step = -1
        parent_config = checkpoint_config(thread_id, checkpoint_ns, None)
    else:
        checkpoint = saved.checkpoint
        step = int(saved.metadata.get("step", -1))
        parent_config = saved.config
    if as_node == COPY:
        if saved is None:
            raise ValueError(f"Thread {thread_id!r} has no checkpoint to copy")
        copy_id = new_checkpoint_id()
        copied = make_checkpoint(
            copy_id,
            restore_channels(graph, checkpoint),
            dict(checkpoint["channel_versions"]),
            {n: dict(v) for n, v in checkpoint["versions_seen"].items()},
            None,
        )
        fork = checkpoint_metadata(config, "fork", step + 1)
        add_update_counters(graph, fork, saved.metadata, (), copied["channel_versions"], steps=0)  # type: ignore[arg-type]  # CheckpointMetadata is a dict
        record = version_record(graph, await _record(saver, saved))
        parent = saved.parent_config or checkpoint_config(thread_id, checkpoint_ns, None)
        copy_config = await _aput_with_record(saver, parent, copied, fork, record, {})
        following = _updates_after_copy(updates)
        if following:  # copy and update in one go, as LangGraph does
            return await aupdate_step(root, copy_config, following)
        return copy_config
    channels = restore_channels(graph, checkpoint)
    if as_node == INPUT:
        return await _update_as_input(graph, saver, config, saved, channels, updates[0][0])
    source = "update"
    if as_node is None:
        node = infer_as_node(graph, checkpoint["versions_seen"], thread_id)
    else:
        node = as_node
    if node not in graph.nodes:
        raise InvalidUpdateError(
            f"update_state(as_node={node!r}): no such node in this graph "
            f"(nodes: {', '.join(n for n in graph.nodes if n != START)})"
        )
    new_id = new_checkpoint_id()
    prepared = await _prepared_task_ids(saver, graph, saved, channels, step, checkpoint_ns)
    findings = RunFindings(graph)
    tasks = []
    for index, (update, name, *given) in enumerate(updates):
        name = node if index == 0 else str(name)
        given_id = given[0] if given else None
        if name not in graph.nodes:
            raise InvalidUpdateError(
                f"update_state(as_node={name!r}): no such node in this graph "
                f"(nodes: {', '.join(n for n in graph.nodes if n != START)})"
            )
        where = "update_state" if name == START else f"update_state(as_node={name!r})"
        path = (UPDATE_PATH,) if index == 0 else (UPDATE_PATH, index)
        task = Task(
            task_id(new_id, checkpoint_ns, step + 1, name, path),
            name,
            (UPDATE_PATH, name) if index == 0 else (UPDATE_PATH, name, index),
            graph.nodes[name],
        )
        task.writes = await _update_writes(graph, task, update, channels, where, findings)
        task.status = "done"
        tasks.append(task)
        answered = _answered_task(prepared, name, given_id)
        if answered is not None:
            # Saved as the result of the task the checkpoint had scheduled for this node, so
            # its snapshot in the history shows what the update wrote (as LangGraph does).
            assert saved is not None and saver is not None
            await saver.aput_writes(saved.config, task.writes, answered)
    versions, seen, updated = apply_writes(graph, checkpoint, channels, tasks, new_id)
    new_checkpoint = make_checkpoint(new_id, channels, versions, seen, updated)
    extra: dict[str, Any] = {}
    if saved is not None and saved.metadata.get("parents"):  # a subgraph's checkpoint
        extra["parents"] = dict(saved.metadata["parents"])
    metadata = checkpoint_metadata(config, source, step + 1, **extra)
    previous = saved.metadata if saved is not None else None
    forked = await _updates_a_fork(graph, saver, config, saved)
    add_update_counters(graph, metadata, previous, updated, versions, forked=forked)  # type: ignore[arg-type]  # CheckpointMetadata is a dict
    record = version_record(graph, await _record(saver, saved))
    if source == "update":
        record[AS_NODE] = node
    found = findings.take()
    if found:
        record[FINDINGS] = found
    old_versions = checkpoint["channel_versions"]
    new_versions = {ch: v for ch, v in versions.items() if old_versions.get(ch) != v}
    return await _aput_with_record(
        saver, parent_config, new_checkpoint, metadata, record, new_versions
    )


async def _updates_a_fork(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    saver: BaseCheckpointSaver,
    config: RunnableConfig,
    saved: CheckpointTuple | None,
) -> bool:
    """Whether an update of the graph with ``DeltaChannel`` keys is made on a checkpoint its
    thread has moved past (``delta_counters``: LangGraph saves those keys whole there)."""
    if saved is None or not delta_frequencies(graph) or not config_checkpoint_id(config):
        return False
    latest = await saver.aget_tuple(
        checkpoint_config(config_thread_id(config), config_checkpoint_ns(config), None)
    )
    return latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]


def _updates_after_copy(updates: Sequence[Update]) -> list[Update]:
    """The updates ``update_state(cfg, [StateUpdate(...), ...], as_node="__copy__")`` applies
    to the copy as its next step: the list's updates grouped by node (in the order each node
    first appears), each answering the copy's next scheduled task of its node. None for a
    copy alone."""
    if len(updates) > 1:
        raise InvalidUpdateError("Cannot copy checkpoint with multiple updates")
    values = updates[0][0]
    if not isinstance(values, list) or not values:
        return []
    grouped: dict[Any, list[Update]] = {}
    for item in values:
        if not isinstance(item, (tuple, list)) or not 1 <= len(item) <= 3:
            raise InvalidUpdateError(f"Invalid update item: {item} when copying checkpoint")
        node = item[1] if len(item) > 1 else None
        grouped.setdefault(node, []).append((item[0], node))
    return [update for group in grouped.values() for update in group]


async def _record(saver: BaseCheckpointSaver, saved: CheckpointTuple | None) -> dict[str, Any]:
    """The debug record of ``saved`` (``{}`` for none)."""
    if saved is None:
        return {}
    conf = saved.config["configurable"]
    stored = await aread_record(
        saver, str(conf["thread_id"]), str(conf.get("checkpoint_ns") or ""), saved.checkpoint["id"]
    )
    return {**record_from_metadata(saved.metadata), **(stored or {})}


async def _aput_with_record(
    saver: BaseCheckpointSaver,
    parent_config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    record: dict[str, Any],
    new_versions: ChannelVersions,
) -> RunnableConfig:
    """``saver.aput`` of a checkpoint with its debug record beside it (``records.py``)."""
    key = (config_thread_id(parent_config), config_checkpoint_ns(parent_config), checkpoint["id"])
    given = attach_record(saver, key, metadata, record)
    saved = await saver.aput(parent_config, checkpoint, given, new_versions)  # type: ignore[arg-type]  # the metadata with the debug record in it, still CheckpointMetadata
    return with_checkpoint_map(saved, metadata)


async def _update_as_input(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    saver: BaseCheckpointSaver,
    config: RunnableConfig,
    saved: CheckpointTuple | None,
    channels: dict[str, Channel],
    values: Any,
) -> RunnableConfig:
    """``update_state(cfg, values, as_node="__input__")``: an ``input`` checkpoint holding
    ``values`` in the START channel, as a run's input makes it (step -1 on a new thread),
    from which the START task (a run, or an update as START) goes on."""
    graph.input_updates(values)  # checked as a run's input is, before anything is saved
    thread_id = config_thread_id(config)
    checkpoint_ns = config_checkpoint_ns(config)
    checkpoint = saved.checkpoint if saved is not None else empty_checkpoint()
    new_id = new_checkpoint_id()
    # What the checkpoint scheduled stays scheduled beside START (no task ran).
    versions, seen, updated = apply_writes(
        graph,
        checkpoint,
        channels,
        (),
        new_id,
        extra_writes=graph.input_writes(values),
        clear_ephemeral=False,
    )
    new_checkpoint = make_checkpoint(new_id, channels, versions, seen, updated)
    extra: dict[str, Any] = {}
    if saved is not None and saved.metadata.get("parents"):  # a subgraph's checkpoint
        extra["parents"] = dict(saved.metadata["parents"])
    step = int(saved.metadata.get("step", -1)) + 1 if saved is not None else -1
    metadata = checkpoint_metadata(config, "input", step, **extra)
    previous = saved.metadata if saved is not None else None
    forked = await _updates_a_fork(graph, saver, config, saved)
    add_update_counters(graph, metadata, previous, updated, versions, forked=forked)  # type: ignore[arg-type]  # CheckpointMetadata is a dict
    record = version_record(graph, await _record(saver, saved))
    parent = saved.config if saved else checkpoint_config(thread_id, checkpoint_ns, None)
    old_versions = checkpoint["channel_versions"]
    new_versions = {ch: v for ch, v in versions.items() if old_versions.get(ch) != v}
    return await _aput_with_record(saver, parent, new_checkpoint, metadata, record, new_versions)


def _answered_task(prepared: dict[str, list[str]], node: str, given: str | None) -> str | None:
    """The scheduled task an update of ``node`` answers: ``given`` if it is one of the
    checkpoint's unfinished tasks, else the next one of ``node``; taken off ``prepared``."""
    if given is not None:
        for scheduled in prepared.values():
            if given in scheduled:
                scheduled.remove(given)
                return given
        return None
    ids = prepared.get(node)
    return ids.pop(0) if ids else None


async def _clear_tasks(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig
) -> RunnableConfig:
    """Save a checkpoint after ``config``'s where its scheduled tasks are done with: the
    writes its finished tasks saved are applied, the unfinished ones dropped."""
    saver = graph.checkpointer
    if saver is None:
        raise ValueError(
            "No checkpointer set: update_state needs a checkpointer: "
            "compile(checkpointer=MemorySaver())"
        )
    thread_id = config_thread_id(config)
    checkpoint_ns = config_checkpoint_ns(config)
    saved = await saver.aget_tuple(config)
    tasks: list[Task] = []
    null_writes: list[tuple[str, Any]] = []
    if saved is None:
        checkpoint, step = empty_checkpoint(), -1
        parent_config = checkpoint_config(thread_id, checkpoint_ns, None)
    else:
        checkpoint, step, parent_config = (
            saved.checkpoint,
            int(saved.metadata.get("step", -1)),
            saved.config,
        )
    channels = restore_channels(graph, checkpoint)
    if saved is not None:
        records, null_writes = read_pending_writes(saved)
        tasks = prepare_tasks(graph, checkpoint, channels, step, checkpoint_ns=checkpoint_ns)
        for task in tasks:
            record = records.get(task.id)
            if record is not None and record.finished and record.error is None:
                task.writes = list(record.writes)
    new_id = new_checkpoint_id()
    versions, seen, updated = apply_writes(
        graph, checkpoint, channels, tasks, new_id, extra_writes=null_writes
    )
    new_checkpoint = make_checkpoint(new_id, channels, versions, seen, updated)
    metadata = checkpoint_metadata(config, "update", step + 1)
    previous = saved.metadata if saved is not None else None
    forked = await _updates_a_fork(graph, saver, config, saved)
    add_update_counters(graph, metadata, previous, updated, versions, forked=forked)  # type: ignore[arg-type]  # CheckpointMetadata is a dict
    debug = {**version_record(graph, await _record(saver, saved)), AS_NODE: END}
    old_versions = checkpoint["channel_versions"]
    new_versions = {ch: v for ch, v in versions.items() if old_versions.get(ch) != v}
    return await _aput_with_record(
        saver, parent_config, new_checkpoint, metadata, debug, new_versions
    )


async def _prepared_task_ids(
    saver: BaseCheckpointSaver,
    graph: CompiledStateGraph[Any, Any, Any, Any],
    saved: CheckpointTuple | None,
    channels: dict[str, Channel],
    step: int,
    checkpoint_ns: str,
) -> dict[str, list[str]]:
    """Node → ids of the tasks ``saved`` scheduled and that have not finished; empty when
    there is no checkpoint or the thread has moved past it (its writes would then show on a
    branch they do not belong to)."""
    if saved is None:
        return {}
    thread = checkpoint_config(config_thread_id(saved.config), checkpoint_ns, None)
    latest = await saver.aget_tuple(thread)
    if latest is None or latest.checkpoint["id"] != saved.checkpoint["id"]:
        return {}
    # A task that only paused (or failed) has not finished: an update of its node answers it.
    records, _ = read_pending_writes(saved)
    finished = {tid for tid, record in records.items() if record.finished}
    ids: dict[str, list[str]] = {}
    for task in prepare_tasks(graph, saved.checkpoint, channels, step, checkpoint_ns=checkpoint_ns):
        if task.id not in finished:
            ids.setdefault(task.name, []).append(task.id)
    return ids


async def _update_writes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    values: Any,
    channels: Any,
    where: str,
    findings: RunFindings,
) -> list[tuple[str, Any]]:
    """The writes of one update: its state keys (a key the schema lacks is dropped, as
    LangGraph drops it, with a finding), a Command's goto, then the node's edges."""
    if task.node.writer is not None:  # a low-level Pregel node: its writes of ``values``
        return task.node.writer(values)
    goto: list[Any] = []
    on_unknown = findings.on_unknown_key(task.name)
    if isinstance(values, Command):
        goto = [values.goto] if isinstance(values.goto, (str, Send)) else list(values.goto or ())
        updates = command_update_pairs(graph.schema, values.update, where, on_unknown)
        output = None
    else:
        updates = list(
            graph.schema.updates_from(values, where=where, on_unknown=on_unknown).items()
        )
        output = values
    updates = ensure_message_ids(channels, updates)
    writes = updates + targets_to_writes(where, goto, graph.nodes)
    return writes + await edge_writes(graph, task, updates, channels, output=output)


def infer_as_node(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    versions_seen: dict[str, dict[str, str]],
    thread_id: str,
) -> str:
    """The node an update is attributed to when ``as_node`` is not given: the node that ran
    last, or START on a thread where no node has run (then the update acts as input and
    schedules START's edges). Raises when two nodes ran last together (LangGraph's
    "Ambiguous update")."""
    latest: list[tuple[str, str]] = sorted(
        (version, node)
        for node, seen in versions_seen.items()
        if node in graph.nodes
        for version in seen.values()
    )
    if not latest:
        return START
    top = latest[-1][0]
    candidates = sorted({node for version, node in latest if version == top})
    if len(candidates) > 1:
        raise InvalidUpdateError(
            f"Ambiguous update on thread {thread_id!r}: nodes {', '.join(candidates)} ran last "
            "together; pass as_node= to say which node the update comes from"
        )
    return candidates[0]
