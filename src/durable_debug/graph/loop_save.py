"""What a run saves: each task's writes as it finishes, its failures, and one checkpoint a step.

:class:`LoopSave` owns the writes side of a run. ``_task_done`` (``loop_tasks``) hands it a
finished task: ``_writes_to_save`` picks the writes kept, ``_save_task_writes`` saves them (a
value that cannot be serialized fails the task), ``_save_error`` saves a failure with its
history. ``_finish_step`` ends a step: ``_save_checkpoint`` applies the tasks' writes to the
channels, and ``_put`` saves the checkpoint, with the deferred writes of a lone task and the
debug record, then releases the chunks held until it was saved. It relies on the shared state
of :class:`~durable_debug.graph.loop_state.LoopState`, on :class:`LoopStream` to report the
step, and on ``saving.RunSaves`` (how and when the saver is called, by durability).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any

from durable_debug.checkpoint.base import (
    ERROR,
    ERROR_SOURCE,
    FAILURES,
    new_checkpoint_id,
    replace_checkpoint,
    run_metadata,
)
from durable_debug.checkpoint.lease import LOST_LEASES, check_lease
from durable_debug.checkpoint.names import DELTA_COUNTERS
from durable_debug.checkpoint.records import (
    GRAPH_VERSION,
    PARENT_WRITE_MS,
    attach_record,
    stored_record,
)
from durable_debug.checkpoint.serde import SerdeError
from durable_debug.graph.algo import (
    Task,
    apply_writes,
    compact_start_writes,
    make_checkpoint,
    task_path_str,
    triggered_nodes,
)
from durable_debug.graph.channels import Channel
from durable_debug.graph.delta_counters import count_step, delta_frequencies, overwritten
from durable_debug.graph.failures import failure_entry, failure_history
from durable_debug.graph.loop_state import per_run
from durable_debug.graph.loop_stream import LoopStream
from durable_debug.graph.nodes import TASKS
from durable_debug.graph.saving import ExitSaves
from durable_debug.graph.types import START, ParentCommand
from durable_debug.graph.version import graph_version, version_record

__all__ = ["LoopSave"]


class LoopSave(LoopStream):
    """Saves a run's task outcomes and one checkpoint a step."""

    _snapshot: Any = None
    """The last checkpoint :meth:`_save_checkpoint` made from the run's channels (the next
    one copies its values and reads only the channels the step updated)."""

    @per_run
    def _snapshots_built_in(self) -> bool:
        """Whether every channel of the run is one of the engine's own kinds, whose value
        changes only when ``apply_writes`` reports it updated (another kind's snapshot is
        taken whole each step). The graph's channels are of the same kinds in every run:
        worked out once per compiled graph."""
        found: bool | None = self.graph.__dict__.get("_snapshots_built_in")
        if found is None:
            kinds = {type(ch).__module__ for ch in self.channels.values()}
            found = kinds == {Channel.__module__}
            if kinds:  # (the channels are there once the run loaded its checkpoint)
                self.graph.__dict__["_snapshots_built_in"] = found
        return found

    @per_run
    def _delta_frequencies(self) -> dict[str, int]:
        """``delta_counters.delta_frequencies`` of the run's graph, looked up once a run."""
        return delta_frequencies(self.graph)

    @per_run
    def _graph_version(self) -> str:
        """The graph's version (``version.graph_version``), saved in each step's record."""
        return graph_version(self.graph)

    @per_run
    def _run_metadata(self) -> dict[str, Any]:
        """What the run's config adds to each checkpoint's metadata (``base.run_metadata``):
        the config does not change during a run, so it is worked out once, not per step."""
        return run_metadata(self.config)

    def _writes_to_save(self, task: Task) -> list[tuple[str, Any]]:
        """A finished task's writes as saved: START's state writes are left out when the
        checkpoint they are saved on holds the very input they come from; so are writes to
        an ``UntrackedValue`` channel."""
        if task.name == START and self.checkpoint["channel_values"].get(START) is task.input:
            return compact_start_writes(task.input, task.writes)
        if self.graph.untracked_channels:
            untracked = self.graph.untracked_channels
            return [
                (ch, _send_without(v, untracked) if ch == TASKS else v)
                for ch, v in task.writes
                if ch not in untracked
            ]
        return task.writes

    def _checkpoint_to_save(self) -> Any:
        """The current checkpoint as saved: its pending Sends without the values of
        ``UntrackedValue`` keys (as LangGraph saves them; the run keeps them)."""
        untracked = self.graph.untracked_channels
        if not untracked:
            return self.checkpoint
        sends = self.checkpoint["channel_values"].get(TASKS)
        if not sends:
            return self.checkpoint
        values = {
            **self.checkpoint["channel_values"],
            TASKS: [_send_without(send, untracked) for send in sends],
        }
        return replace_checkpoint(self.checkpoint, channel_values=values)

    async def _save_task_writes(self, task: Task, writes: list[tuple[str, Any]]) -> None:
        """Save a finished task's writes; if they cannot be serialized, the task failed."""
        assert self.saves is not None
        try:
            await self.saves.put_writes(
                self.checkpoint_config, writes, task.id, task_path_str(task.path)
            )
        except SerdeError as exc:
            task.status, task.error = "error", exc.located(node=task.name)
            await self._save_error(task)

    async def _save_error(self, task: Task) -> None:
        assert self.saves is not None
        assert task.error is not None
        if isinstance(task.error, ParentCommand):
            return  # not a failure: the command goes to the enclosing graph's task
        record = self.pending.get(task.id)
        entry = failure_entry(task.error, task.node.retry)
        failures = (
            failure_history(record.error, record.failures, entry) if record is not None else None
        )
        writes: list[tuple[str, Any]] = [(ERROR, repr(task.error))]
        if failures is not None:
            writes.append((FAILURES, failures))
        if _goes_to_handler(task, self.graph.nodes):
            writes.append((ERROR_SOURCE, task.name))
        await self.saves.put_writes(self.checkpoint_config, writes, task.id)
        if record is not None:
            record.error, record.failures = repr(task.error), failures or []

    async def _finish_step(self, tasks: list[Task]) -> None:
        await self._save_checkpoint(tasks, "loop")
        if not self.producers.modes:  # (ainvoke: nothing streamed)
            return
        wants = self.producers.wants
        if wants("values"):
            self._emit("values", lambda: (self.graph.read_state(self.channels), self.updated))
        if wants("checkpoint"):
            self._emit("checkpoint", self._debug_checkpoint)

    async def _save_checkpoint(
        self, tasks: list[Task], source: str, extra_writes: list[tuple[str, Any]] | None = None
    ) -> None:
        """Apply the step's writes, snapshot the channels and save the checkpoint."""
        checkpoint_id = new_checkpoint_id()
        previous = self.checkpoint
        # A checkpoint this run made from its channels: they hold its values, and only the
        # channels it updated may hold an ephemeral value (the others were cleared then).
        made_here = previous is self._snapshot
        try:
            versions, seen, updated = apply_writes(
                self.graph,
                previous,
                self.channels,
                tasks,
                checkpoint_id,
                extra_writes=extra_writes or (),
                holding=previous.get("updated_channels") if made_here else None,
            )
        except BaseException:
            # The step cannot complete (a reducer raised, two writes to a plain key): what its
            # tasks produced is still saved, as pending writes, before the error propagates.
            deferred, self.deferred = self.deferred, []
            for task, writes in deferred:
                await self._save_task_writes(task, writes)
            raise
        if updated and self.saves is not None and self.saves.calls.methods:
            self.saves.calls.next_version(
                max(self.checkpoint["channel_versions"].values(), default=None)
            )
        self.checkpoint = make_checkpoint(
            checkpoint_id,
            self.channels,
            versions,
            seen,
            updated,
            # A checkpoint this run made from its channels: only the updated ones changed.
            previous=previous["channel_values"] if made_here else None,
            as_is=self.graph.plain_checkpoint,
        )
        if self._snapshots_built_in:
            self._snapshot = self.checkpoint
        self.updated = self.graph.schema.key_set & updated
        self.candidates = triggered_nodes(self.graph, updated)
        frequencies = self._delta_frequencies
        whole = (
            overwritten(frequencies, [*(extra_writes or ()), *(w for t in tasks for w in t.writes)])
            if frequencies
            else ()
        )
        # The versions saved last are those of the checkpoint the step started from: the
        # new ones are those of the updated channels, which all have the step's one version.
        fresh = None
        if self.saved_versions is previous["channel_versions"]:
            fresh = dict.fromkeys(updated, versions[next(iter(updated))]) if updated else {}
        await self._put(source, versions, whole, fresh)

    async def _put(
        self,
        source: str,
        versions: dict[str, str],
        whole: Collection[str] = (),
        fresh: dict[str, str] | None = None,
    ) -> None:
        """Save ``self.checkpoint`` as the next step, a child of the current checkpoint
        (``whole``: the ``DeltaChannel`` keys the step overwrote, see ``delta_counters``;
        ``fresh``: the versions that differ from the saved ones, when known)."""
        self.step += 1  # an empty thread starts at -2, so its input checkpoint is step -1
        self.has_saved = True
        version = self._graph_version
        # ``common``: the record is the version and the parent's write time alone, which
        # is in stored form as it is (keys sorted, scalars; records.stored_record).
        if self.record.get(GRAPH_VERSION) == version:  # (as version_record makes it)
            record: dict[str, Any] = {GRAPH_VERSION: version}
            common = True
        else:  # a version boundary: the structure too
            record = version_record(self.graph, self.record)
            common = False
        if self.write_ms is not None:
            record[PARENT_WRITE_MS] = self.write_ms
        if self.findings.pending:  # (taken under its lock; most steps find none)
            found = self.findings.take()
            if found:
                record["findings"] = found
                common = False
        if self.recording is not None and self.recording.tapes:
            record.update(self.recording.take())
            common = False
        self.record = record
        # as base.checkpoint_metadata(self.config, source, self.step, parents=self.parents)
        metadata = {
            **self._run_metadata,
            "source": source,
            "step": self.step,
            "parents": self.parents,
        }
        frequencies = self._delta_frequencies
        saves = self.saves
        if frequencies:
            # A run from a checkpoint the thread moved past (a fork): LangGraph saves each key
            # whole at its input (and, under "exit", at exit), so the counters start again.
            exit_saves = isinstance(saves, ExitSaves)
            if not (self.superseded and (source == "input" or exit_saves)):
                counters = count_step(
                    frequencies,
                    self.metadata,
                    self.checkpoint.get("updated_channels") or (),
                    self.checkpoint["channel_versions"],
                    whole=whole,
                    reset=not exit_saves,  # until the run saves at exit
                )
                if counters:
                    metadata[DELTA_COUNTERS] = counters
        self.metadata = metadata  # type: ignore[assignment]  # the keys of CheckpointMetadata (no cast: a call each step)
        self.pending = {}
        if saves is not None:
            if fresh is None:
                saved = self.saved_versions
                new_versions = {ch: v for ch, v in versions.items() if saved.get(ch) != v}
            else:
                new_versions = fresh
            # An engine-made config (checked when the run began): read, not validated again.
            parent_id = self.checkpoint_config["configurable"].get("checkpoint_id")
            parent = self.checkpoint_config if parent_id else None
            deferred, self.deferred = self.deferred, []
            if not deferred:
                task_writes = []
            elif len(deferred) == 1:  # (a step's lone task: no comprehension to call)
                task, writes = deferred[0]
                task_writes = [(task.id, writes, task_path_str(task.path))]
            else:
                task_writes = [(t.id, writes, task_path_str(t.path)) for t, writes in deferred]
            thread_id = self.thread_id  # the config's, checked when the run loaded
            assert thread_id is not None
            if LOST_LEASES:  # (check_lease has nothing to look up while none is lost)
                check_lease(saves.saver, thread_id)  # another run took it
            checkpoint = (
                self._checkpoint_to_save() if self.graph.untracked_channels else self.checkpoint
            )
            put_now = saves.put_now
            started = time.perf_counter()
            try:
                if put_now is not None:
                    # The saver stores the record as it is, in stored form: the common one
                    # is already (neither the run nor the saver changes it).
                    stored = record if common else stored_record(record)
                    self.checkpoint_config = put_now(
                        thread_id,
                        self.checkpoint_ns,
                        parent_id,
                        task_writes,
                        checkpoint,
                        # (a stream chunk shows the run's metadata: the saver keeps its own)
                        dict(metadata) if self.producers.modes else metadata,
                        stored,
                        new_versions,
                    )
                else:
                    key = (thread_id, self.checkpoint_ns, self.checkpoint["id"])
                    args = (
                        self.checkpoint_config,
                        task_writes,
                        checkpoint,
                        attach_record(saves.saver, key, metadata, record),
                        new_versions,
                    )
                    self.checkpoint_config = await saves.put_step(*args)  # type: ignore[arg-type]  # the metadata with the debug record in it, still CheckpointMetadata
            except SerdeError as exc:
                if not deferred:
                    raise
                # Nothing was written: the task whose output could not be saved failed.
                task = deferred[0][0]
                task.status, task.error = "error", exc.located(node=task.name)
                await self._save_error(task)
                raise task.error from None
            self.write_ms = round((time.perf_counter() - started) * 1000, 3)
            self.saved_versions = versions  # nobody changes a checkpoint's versions in place
            if put_now is not None or not isinstance(saves, ExitSaves):
                # Under "exit" nothing is saved on the way: LangGraph's checkpoints report
                # the parent the loaded checkpoint had.
                self.parent_config = parent
        # The step is saved: what its lone task produced may now be reported.
        if self.held:
            self.outbox.extend(self.held)
            self.held.clear()


def _goes_to_handler(task: Task, nodes: Mapping[str, Any]) -> bool:
    """True when ``task``'s failure goes to its node's error handler."""
    handler = task.node.error_handler
    return (
        handler is not None
        and handler in nodes
        and not task.node.is_error_handler
        and not isinstance(task.error, ParentCommand)
    )


def _send_without(send: Any, untracked: frozenset[str]) -> Any:
    """A pending Send (``[node, arg]``, or ``[node, arg, timeout]``) whose state ``arg`` has
    no ``untracked`` keys."""
    if (
        isinstance(send, (list, tuple))
        and len(send) in (2, 3)
        and isinstance(send[1], dict)
        and any(key in untracked for key in send[1])
    ):
        return [send[0], {k: v for k, v in send[1].items() if k not in untracked}, *send[2:]]
    return send
