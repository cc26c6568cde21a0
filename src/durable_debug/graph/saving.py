"""How a run saves: every step before the next one starts, or overlapped with the run.

``durability="sync"`` awaits each step's ``aput_step`` before the next step runs. With
``"async"`` (the default, as in LangGraph) and ``"exit"`` the run puts its steps on the saver's
:class:`~durable_debug.checkpoint.base.StepQueue`, which may return before a step is saved
(``PostgresSaver``'s sends the statement and reads the answer when the next step is put); the
memory and SQLite savers' queue saves each step as it is put, so nothing changes for them.
Either way every step is saved, in order, and the run *settles* (waits until everything it
put is saved, raising a save's error) before anything that depends on a saved step:

* before a chunk of any stream mode goes out (the chunk reports a saved step);
* before any other write: a task's writes, an error or interrupt, resume answers, a
  ``once()`` result, a nested graph's run (they refer to checkpoints that must exist first);
* before the tasks of a step run side by side (their writes are saved as each finishes);
* when the run ends, pauses or fails: ``invoke``, ``stream`` and their async twins return or
  raise only after every save of the run has finished, and a save error is raised, never
  dropped (a step after one that failed is never saved).

So the overlap is between one step's save and the next step's lone task, which is the whole
run for a chain of nodes driven by ``invoke``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    TaskWrites,
)

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver, StepQueue

__all__ = ["RunSaves"]


class RunSaves:
    """One run's saves through ``saver``: each step before the next (``durability="sync"``)
    or through the saver's step queue (``"async"``, ``"exit"``, ``None``)."""

    def __init__(self, saver: BaseCheckpointSaver, durability: str | None) -> None:
        self.saver = saver
        self.queue: StepQueue | None = None if durability == "sync" else saver.step_queue()
        """The saver's queue of this run's steps; None when each step is awaited."""

    async def put_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a step (see ``BaseCheckpointSaver.aput_step``), or start saving it."""
        if self.queue is None:
            return await self.saver.aput_step(
                config, task_writes, checkpoint, metadata, new_versions
            )
        return await self.queue.put(config, task_writes, checkpoint, metadata, new_versions)

    async def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes on a checkpoint, once every step put before is saved."""
        await self.settle()
        await self.saver.aput_writes(config, writes, task_id, task_path)

    async def settle(self) -> None:
        """Return when every step put so far is saved; raise the error of one that was not."""
        if self.queue is not None:
            await self.queue.drain()
