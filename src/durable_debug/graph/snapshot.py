"""Read a saved checkpoint back as a :class:`StateSnapshot`: values, next, tasks, interrupts.

For the thread's latest checkpoint the writes of tasks that already finished are applied (so
``values`` shows them and ``next`` lists only what is left to run), as LangGraph does; for a
checkpoint read from history, the checkpoint is shown as it was saved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_debug.checkpoint.base import CheckpointTuple
from durable_debug.graph.algo import (
    prepare_tasks,
    preview_values,
    read_pending_writes,
    restore_channels,
)
from durable_debug.graph.types import PregelTask, StateSnapshot

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["snapshot_from_tuple"]


def snapshot_from_tuple(
    graph: CompiledStateGraph, saved: CheckpointTuple, *, apply_pending: bool
) -> StateSnapshot:
    """Build the snapshot of ``saved``; ``apply_pending`` for the thread's latest checkpoint."""
    checkpoint = saved.checkpoint
    channels = restore_channels(graph, checkpoint)
    step = int(saved.metadata.get("step", -1))
    records, _ = read_pending_writes(saved.pending_writes)
    tasks = prepare_tasks(
        graph,
        checkpoint,
        channels,
        step,
        checkpoint_ns=str(saved.config["configurable"].get("checkpoint_ns", "")),
    )
    keys = graph.schema.key_set
    shown: list[PregelTask] = []
    for task in tasks:
        record = records.get(task.id)
        if record is None:
            shown.append(PregelTask(task.id, task.name, task.path))
            continue
        if record.finished:
            task.writes, task.status = record.writes, "done"
            result = {ch: v for ch, v in record.writes if ch in keys}
        else:
            result = None
        shown.append(
            PregelTask(
                task.id,
                task.name,
                task.path,
                error=None if record.finished else record.error,
                interrupts=record.interrupts,
                result=result,
            )
        )
    if apply_pending:
        values = preview_values(graph, channels, tasks)
        next_names = tuple(t.name for t in tasks if t.status != "done")
    else:
        values = graph.read_state(channels)
        next_names = tuple(t.name for t in tasks)
    waiting = tuple(
        i
        for task, shown_task in zip(tasks, shown, strict=True)
        if task.status != "done"
        for i in shown_task.interrupts
    )
    return StateSnapshot(
        values=values,
        next=next_names,
        config=saved.config,
        metadata=saved.metadata,
        created_at=checkpoint["ts"],
        parent_config=saved.parent_config,
        tasks=tuple(shown),
        interrupts=waiting,
    )
