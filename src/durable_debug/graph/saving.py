"""How a run saves: every step before the next one starts, overlapped with the run, or (with
``durability="exit"``, :class:`ExitSaves`) only when the run ends, as in LangGraph.

``durability="sync"`` awaits each step's ``aput_step`` before the next step runs. With
``"async"`` (the default, as in LangGraph) the run puts its steps on the saver's
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

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    StepQueue,
    TaskWrites,
    checkpoint_config,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
    empty_checkpoint,
    new_checkpoint_id,
)
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.names import DELTA_COUNTERS
from durable_debug.checkpoint.records import (
    FINDINGS,
    GRAPH_STRUCTURE,
    RECORD_KEY,
    registry,
    stores_records,
)
from durable_debug.checkpoint.user_methods import SaverCalls
from durable_debug.graph.delta_counters import DELTA_MAX_STEPS, reset_counters

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver

__all__ = ["ExitSaves", "RunSaves"]


class RunSaves:
    """One run's saves through ``saver``: each step before the next (``durability="sync"``)
    or through the saver's step queue (``"async"``, ``"exit"``, ``None``)."""

    def __init__(self, saver: BaseCheckpointSaver, durability: str | None) -> None:
        self.saver = saver
        self.calls = SaverCalls(saver)
        """How the run calls the saver: through a user's overrides of its methods, if any."""
        self.queue: StepQueue | None = (
            None if durability == "sync" or self.calls.saves_by_method else saver.step_queue()
        )
        """The saver's queue of this run's steps; None when each step is awaited."""
        self._direct = type(self.queue) is StepQueue
        """The default queue, which only awaits ``aput_step``: the step goes there at once."""
        self.put_now: Callable[..., RunnableConfig] | None = None
        """Saves a step at once, with nothing to await (the memory saver's own ``aput_step``,
        as its ``put_run_step``: the run changes no map of a checkpoint it put, so the saver
        need not copy them, and hands over the step's address and debug record as the saver
        keeps them); None: :meth:`put_step` saves it."""
        if (
            self._direct
            and type(self).put_step is RunSaves.put_step  # (a subclass saves its own way)
            and isinstance(saver, MemorySaver)
            and getattr(saver.aput_step, "__func__", None) is MemorySaver.aput_step
            # (nor its own put_step_unshared, which runs called before put_run_step)
            and type(saver).put_step_unshared is MemorySaver.put_step_unshared
            and stores_records(saver)  # (a subclass may keep the records out of it)
        ):
            self.put_now = saver.put_run_step

    async def put_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a step (see ``BaseCheckpointSaver.aput_step``), or start saving it."""
        if self._direct:
            return await self.saver.aput_step(
                config, task_writes, checkpoint, metadata, new_versions
            )
        if self.queue is None:
            return await self.calls.put_step(
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
        await self.calls.put_writes(config, writes, task_id, task_path)

    async def settle(self) -> None:
        """Return when every step put so far is saved; raise the error of one that was not."""
        if self.queue is not None:
            await self.queue.drain()

    async def finish(self, completed: bool = False) -> None:
        """The run ends (returns, pauses or fails; ``completed``: it returned): everything it
        put is saved."""
        await self.settle()


class ExitSaves(RunSaves):
    """``durability="exit"``, as in LangGraph: nothing the run makes is saved while it goes;
    when it ends — finished, paused on an interrupt, or failed — the checkpoint it stands on is
    saved as the child of the last saved one (the checkpoint the run started from), with the
    writes made on it (the interrupts, errors and results of its step). Writes on a checkpoint
    already saved (the answers of a resume) are saved at once; writes on a step passed over
    are dropped with it. The debug record of the checkpoint saved keeps the findings and the
    version boundary of the steps passed over.

    On a thread with nothing saved, a run that wrote a ``DeltaChannel`` key (fewer times than
    its ``snapshot_frequency``) saves an empty checkpoint first (step -2, LangGraph's anchor
    for the key's writes) as the parent of its own: a fork from there starts from the empty
    state, as on LangGraph. ``delta``: the graph's ``DeltaChannel`` keys and their
    ``snapshot_frequency`` (``delta_counters.delta_frequencies``). ``save_completed``: False
    for a subgraph's run (one with its own checkpointer excepted), which, as in LangGraph,
    saves at its end only when it pauses or fails."""

    def __init__(
        self,
        saver: BaseCheckpointSaver,
        delta: Mapping[str, int] | None = None,
        *,
        save_completed: bool = True,
    ) -> None:
        super().__init__(saver, "sync")
        self.save_completed = save_completed
        self.delta = delta or {}
        self.delta_updates: dict[str, int] = {}
        """How many held steps wrote each ``DeltaChannel`` key."""
        self.steps = 0
        """How many steps were held."""
        self.anchor_id = new_checkpoint_id() if self.delta else ""
        """The id of the anchor checkpoint, made before any of the run's (ids sort by time)."""
        self.base: RunnableConfig | None = None
        """The config of the saved checkpoint the held one will be the child of."""
        self.held: tuple[Checkpoint, CheckpointMetadata] | None = None
        """The newest checkpoint the run made, not saved yet."""
        self.changed: set[str] = set()
        """Channels whose version any held step changed (their blobs are saved at exit)."""
        self.writes: list[tuple[str, list[tuple[str, Any]], str]] = []
        """Writes made on the held checkpoint: (task id, writes, task path)."""

    async def put_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Hold the step; return the config its checkpoint will have once saved."""
        if self.held is None:
            self.base = config
        else:
            metadata = _carry_record(self.saver, config, self.held[1], metadata, checkpoint["id"])
        self.held = (checkpoint, metadata)
        self.changed.update(new_versions)
        self.steps += 1
        for ch in self.delta.keys() & new_versions.keys():
            self.delta_updates[ch] = self.delta_updates.get(ch, 0) + 1
        self.writes = []
        return checkpoint_config(
            config_thread_id(config), config_checkpoint_ns(config), checkpoint["id"]
        )

    async def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Hold writes on the held checkpoint; save those on a saved one at once."""
        at = config_checkpoint_id(config)
        if self.held is not None:
            if at == self.held[0]["id"]:
                self.writes.append((task_id, list(writes), task_path))
            return  # a step passed over (or the held one's parent): dropped, as in LangGraph
        await self.calls.put_writes(config, writes, task_id, task_path)

    async def finish(self, completed: bool = False) -> None:
        """Save the held checkpoint with its writes (one step, as ``aput_step`` saves it)."""
        if completed and not self.save_completed:
            self.held = None
        if self.held is None or self.base is None:
            return
        checkpoint, metadata = self.held
        self.held = None
        counters = cast("dict[str, list[int]] | None", dict(metadata).get(DELTA_COUNTERS))
        if counters:  # the whole saves LangGraph makes at exit
            metadata = cast(CheckpointMetadata, dict(metadata))
            kept = reset_counters(self.delta, counters, checkpoint["channel_versions"])
            if kept:
                metadata[DELTA_COUNTERS] = kept  # type: ignore[literal-required]  # LangGraph's metadata key, not in our TypedDict
            else:
                del metadata[DELTA_COUNTERS]  # type: ignore[misc]  # LangGraph's metadata key, not in our TypedDict
        versions = {ch: v for ch, v in checkpoint["channel_versions"].items() if ch in self.changed}
        if self._anchors_delta_writes():
            anchor = empty_checkpoint()
            anchor["id"] = self.anchor_id
            anchor_metadata = cast(CheckpointMetadata, {"step": -2})
            self.base = await self.calls.put_step(self.base, (), anchor, anchor_metadata, {})
        saved = await self.calls.put_step(self.base, (), checkpoint, metadata, versions)
        for task_id, writes, task_path in self.writes:
            await self.calls.put_writes(saved, writes, task_id, task_path)
        self.writes = []

    def _anchors_delta_writes(self) -> bool:
        """Whether LangGraph would save an empty anchor checkpoint before the final one: the
        thread had nothing saved and a ``DeltaChannel`` key was written, but not so often
        that LangGraph saves its whole value instead of its writes."""
        if self.base is None or config_checkpoint_id(self.base) or self.steps >= DELTA_MAX_STEPS:
            return False
        return any(0 < n < self.delta[ch] for ch, n in self.delta_updates.items())


def _carry_record(
    saver: BaseCheckpointSaver,
    config: RunnableConfig,
    before: CheckpointMetadata,
    metadata: CheckpointMetadata,
    checkpoint_id: str,
) -> CheckpointMetadata:
    """``metadata`` whose debug record also holds the findings and the structure (a version
    boundary) of the held checkpoint (``before``, addressed by ``config``) that the checkpoint
    ``checkpoint_id`` replaces (``checkpoint/records.py``)."""
    thread, ns = config_thread_id(config), config_checkpoint_ns(config)
    previous = cast("dict[str, Any] | None", dict(before).get(RECORD_KEY))
    if previous is None:  # a saver whose records stay in this process
        previous = registry(saver).get((thread, ns, str(config_checkpoint_id(config))))
    current = cast("dict[str, Any] | None", dict(metadata).get(RECORD_KEY))
    if current is None:
        current = registry(saver).get((thread, ns, checkpoint_id))
    if not previous or current is None:
        return metadata
    if previous.get(FINDINGS):
        current[FINDINGS] = [*previous[FINDINGS], *current.get(FINDINGS, [])]
    if GRAPH_STRUCTURE in previous and GRAPH_STRUCTURE not in current:
        current[GRAPH_STRUCTURE] = previous[GRAPH_STRUCTURE]
    return metadata
