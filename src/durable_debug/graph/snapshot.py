"""Read a saved checkpoint back as a :class:`StateSnapshot`: values, next, tasks, interrupts.

For the thread's latest checkpoint the writes of tasks that already finished are applied (so
``values`` shows them and ``next`` lists only what is left to run), as LangGraph does; for a
checkpoint read from history, the checkpoint is shown as it was saved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import CheckpointTuple, RunnableConfig
from durable_debug.graph.algo import (
    TaskRecord,
    adopt_legacy_writes,
    prepare_tasks,
    preview_values,
    read_pending_writes,
)
from durable_debug.graph.types import PregelTask, StateSnapshot

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["snapshot_from_tuple", "task_result", "task_view"]


def snapshot_from_tuple(
    graph: CompiledStateGraph[Any, Any, Any, Any], saved: CheckpointTuple, *, apply_pending: bool
) -> StateSnapshot:
    """Build the snapshot of ``saved``; ``apply_pending`` for the thread's latest checkpoint."""
    checkpoint = saved.checkpoint
    channels = graph.read_channels(checkpoint["channel_values"])  # only read, never updated
    step = int(saved.metadata.get("step", -1))
    records, null_writes = read_pending_writes(saved)
    tasks = prepare_tasks(
        graph,
        checkpoint,
        channels,
        step,
        checkpoint_ns=str(saved.config["configurable"].get("checkpoint_ns", "")),
    )
    ns = str(saved.config["configurable"].get("checkpoint_ns", ""))
    records, _ = adopt_legacy_writes(checkpoint, saved.pending_writes, records, tasks, ns, step + 1)
    keys = graph.schema.key_set
    shown: list[PregelTask] = []
    for task in tasks:
        record = records.get(task.id)
        if record is not None and record.finished:
            task.writes, task.status = record.writes, "done"
        shown.append(
            task_view(
                task.id, task.name, task.path, record, keys.__contains__, latest=apply_pending
            )
        )
    # Writes given with a Command are part of this checkpoint's state in every snapshot (as
    # in LangGraph); the writes of finished tasks only in the thread's latest one.
    preview = preview_values(graph, channels, tasks if apply_pending else (), null_writes)
    if apply_pending and preview is not None:
        next_names = tuple([t.name for t in tasks if t.status != "done"])
    else:
        # History, or a step whose writes conflict: every task of the step is still next.
        next_names = tuple([t.name for t in tasks])
    values = graph.schema.shown(preview if preview is not None else graph.read_state(channels))
    if graph.schema.is_root:  # a one-value state: each task's result is the value it wrote
        shown = [t._replace(result=graph.schema.shown(t.result)) if t.result else t for t in shown]
    waiting = tuple([i for t in shown for i in t.interrupts]) if shown else ()
    parent = saved.parent_config
    # positional (values, next, config, metadata, created_at, parent_config, tasks,
    # interrupts): a history builds one per checkpoint
    return StateSnapshot(
        values,
        next_names,
        with_checkpoint_map(saved.config, saved.metadata),
        saved.metadata,
        checkpoint["ts"],
        parent and with_checkpoint_map(parent, saved.metadata),
        tuple(shown),
        waiting,
    )


def with_checkpoint_map(config: RunnableConfig, metadata: Mapping[str, Any]) -> RunnableConfig:
    """A subgraph checkpoint's config with ``checkpoint_map``: the checkpoint of each enclosing
    level (its metadata's ``parents``) and its own, as LangGraph's snapshots give it. A run
    given that config runs the whole graph from those checkpoints (``pregel._run_loop``)."""
    parents = metadata.get("parents")
    if not parents:
        return config
    configurable = config.get("configurable") or {}
    own = {configurable.get("checkpoint_ns", ""): configurable.get("checkpoint_id")}
    return {**config, "configurable": {**configurable, "checkpoint_map": {**parents, **own}}}


def task_view(
    task_id: str,
    name: str,
    path: tuple[Any, ...],
    record: TaskRecord | None,
    is_state_key: Callable[[str], bool],
    *,
    latest: bool,
) -> PregelTask:
    """How a snapshot shows a task of the next step, from what its saved writes say.

    A task that failed and then succeeded keeps its error (as in LangGraph); its ``result`` is
    its writes to state keys once it finished; the thread's latest snapshot hides the
    interrupts a finished task already got past.
    """
    if record is None:
        return PregelTask(task_id, name, path)
    return PregelTask(
        task_id,
        name,
        path,
        error=record.error,
        interrupts=() if latest and record.finished else record.interrupts,
        result=task_result(record.writes, is_state_key) if record.finished else None,
    )


def task_result(
    writes: Sequence[tuple[str, Any]], is_state_key: Callable[[str], bool]
) -> dict[str, Any]:
    """A task's writes to state keys as its ``result``: ``{key: value}``, and for a key it
    wrote more than once ``{key: {"$writes": [value, ...]}}``, as LangGraph folds them."""
    result: dict[str, Any] = {}
    for channel, value in writes:
        if not is_state_key(channel):
            continue
        existing = result.get(channel)
        if existing is not None:  # (LangGraph's test: a first write of None is replaced)
            folded = existing["$writes"] if _folded(existing) else [existing]
            result[channel] = {"$writes": [*folded, value]}
        else:
            result[channel] = value
    return result


def _folded(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("$writes"), list)
