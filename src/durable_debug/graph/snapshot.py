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
    records, null_writes = read_pending_writes(saved.pending_writes)
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
        shown.append(
            PregelTask(
                task.id,
                task.name,
                task.path,
                # A task that failed and then succeeded keeps its error (as in LangGraph);
                # the latest snapshot hides the interrupts a finished task already got past.
                error=record.error,
                interrupts=() if apply_pending and record.finished else record.interrupts,
                result={ch: v for ch, v in record.writes if ch in keys}
                if record.finished
                else None,
            )
        )
    # Writes given with a Command are part of this checkpoint's state in every snapshot (as
    # in LangGraph); the writes of finished tasks only in the thread's latest one.
    preview = preview_values(graph, channels, tasks if apply_pending else (), null_writes)
    if apply_pending and preview is not None:
        next_names = tuple(t.name for t in tasks if t.status != "done")
    else:
        # History, or a step whose writes conflict: every task of the step is still next.
        next_names = tuple(t.name for t in tasks)
    values = preview if preview is not None else graph.read_state(channels)
    waiting = tuple(i for t in shown for i in t.interrupts)
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
