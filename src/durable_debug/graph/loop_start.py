"""How a run begins: load the thread's checkpoint, then start from an input or resume.

:class:`LoopStart` owns everything a run does before its first step. ``_load`` (with
``_load_saved``) reads the checkpoint the config addresses, or the thread's latest, or for a
subgraph in a replay the one before the replayed point; ``_begin`` then either ``_start``s (an
input checkpoint, discarding what the thread had scheduled) or ``_resume``s: answers to
interrupts (``_apply_command``, ``_apply_answers``), a ``Command``'s update and goto, time
travel with its ``fork`` checkpoint (``_save_fork``). It relies on the shared state of
:class:`~durable_debug.graph.loop_state.LoopState` and on :class:`LoopSave` to save the
checkpoints it makes and report them.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import (
    NULL_TASK_ID,
    RESUME,
    checkpoint_config,
    config_checkpoint_id,
    config_thread_id,
    new_checkpoint_id,
    replace_checkpoint,
)
from durable_debug.checkpoint.records import (
    GRAPH_VERSION,
    aread_record,
    known_version,
    record_from_metadata,
)
from durable_debug.graph.algo import (
    INTERRUPT_SEEN,
    Task,
    TaskRecord,
    adopt_legacy_writes,
    apply_writes,
    prepare_tasks,
    read_pending_writes,
    restore_channels,
)
from durable_debug.graph.findings import Finding
from durable_debug.graph.ids import (
    interrupt_id,
    legacy_interrupt_id,
    task_namespace,
)
from durable_debug.graph.interrupts import (
    match_resume,
    own_answers,
    subgraph_answer,
    subgraph_answered,
)
from durable_debug.graph.loop_save import LoopSave
from durable_debug.graph.message_ids import ensure_message_ids
from durable_debug.graph.nodes import command_update_pairs, targets_to_writes
from durable_debug.graph.subgraph import Replay
from durable_debug.graph.types import Command, EmptyInputError, Interrupt, Send
from durable_debug.graph.version import acheck_graph_version, scheduled_nodes

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import CheckpointTuple


__all__ = ["LoopStart"]


class LoopStart(LoopSave):
    """Loads the thread's checkpoint, then starts from an input or resumes."""

    async def _load(self) -> None:
        saved = None
        if self.nesting is not None and self.nesting.settle is not None:
            await self.nesting.settle()  # the enclosing run's checkpoint is saved first
        if self.saver is not None:
            if self.thread_id is None:  # (else _lease read it)
                self.thread_id = config_thread_id(self.config)
            saved = await self._load_saved()
            if saved is not None and config_checkpoint_id(self.config):
                # An addressed checkpoint the thread has moved past may already have children.
                latest = await self.saver.aget_tuple(
                    checkpoint_config(self.thread_id, self.checkpoint_ns, None)
                )
                self.superseded = (
                    latest is not None and latest.checkpoint["id"] != (saved.checkpoint["id"])
                )
        if saved is not None:
            self.checkpoint = saved.checkpoint
            self.step = int(saved.metadata.get("step", -1))
            self.checkpoint_config = saved.config
            self.source = str(saved.metadata.get("source", ""))
            self.saved_versions = dict(saved.checkpoint["channel_versions"])
            self.pending, self.null_writes = read_pending_writes(saved)
            self.has_saved = True
            self.metadata = saved.metadata
            self.record = record_from_metadata(saved.metadata)
            key = (self.thread_id or "", self.checkpoint_ns, saved.checkpoint["id"])
            known = known_version(self.saver, key)  # saved by this process: no read needed
            if known is not None:
                self.record[GRAPH_VERSION] = known
            else:
                self.record.update(await aread_record(self.saver, *key) or {})
            self.parent_config = saved.parent_config
            if self.nesting is None and self.checkpoint_ns:
                self.parents = dict(saved.metadata.get("parents") or {})
        else:
            self.checkpoint_config = checkpoint_config(self.thread_id or "", self.checkpoint_ns)
        self.channels = restore_channels(self.graph, self.checkpoint)
        if self.pending and saved is not None:
            self._match_pending_ids(saved)

    def _match_pending_ids(self, saved: CheckpointTuple) -> None:
        """Note which node each saved task id belongs to, and move writes an older version
        saved under its own task ids to the tasks' ids (:func:`~durable_debug.graph.algo.
        adopt_legacy_writes`). Done once per run that loads pending writes, never per step."""
        tasks = prepare_tasks(
            self.graph, self.checkpoint, self.channels, self.step, checkpoint_ns=self.checkpoint_ns
        )
        self.pending_names = {t.id: t.name for t in tasks}
        self.pending, self.legacy_ids = adopt_legacy_writes(
            saved.checkpoint,
            saved.pending_writes,
            self.pending,
            tasks,
            self.checkpoint_ns,
            self.step + 1,
        )

    def _by_owner(
        self, pending: dict[str, tuple[Interrupt[Any], ...]]
    ) -> dict[str, tuple[Interrupt[Any], ...]]:
        """``pending`` with each interrupt listed once, under the task that raised it: an
        interrupt a ``@task`` call raised is saved by LangGraph under the call and under
        the node task that awaited it; the call answers it."""
        calls = {
            i.id for tid, intrs in pending.items() if tid not in self.pending_names for i in intrs
        }
        if not calls:
            return pending
        kept = {
            tid: intrs
            if tid not in self.pending_names
            else tuple(i for i in intrs if i.id not in calls)
            for tid, intrs in pending.items()
        }
        return {tid: intrs for tid, intrs in kept.items() if intrs}

    def _own_interrupt_id(self, tid: str, answered: int) -> str | None:
        """The id the next ``interrupt()`` of task ``tid`` itself (not of a subgraph it runs)
        has once it has ``answered`` answers; None for a task the checkpoint does not
        schedule by name (a ``@task`` call, whose interrupts are its own)."""
        old = self.legacy_ids.get(tid)
        if old is not None:
            return legacy_interrupt_id(old, answered)
        name = self.pending_names.get(tid)
        if name is None:
            return None
        return interrupt_id(task_namespace(self.checkpoint_ns, name, tid), answered)

    async def _load_saved(self) -> CheckpointTuple | None:
        """The checkpoint the run starts from: the addressed one, else its namespace's
        newest; but a subgraph's first run in a replay (time travel) of the top-level run
        starts from its newest checkpoint made before the replayed point, as LangGraph
        loads it, so it sees the state it had there, not the state of a later branch."""
        assert self.saver is not None
        replay = self.replay
        if (
            replay is not None
            and not config_checkpoint_id(self.config)
            and replay.first_visit(self.checkpoint_ns)
        ):
            before = checkpoint_config(self.thread_id or "", self.checkpoint_ns, replay.bound)
            async for saved in self.saver.alist(self.config, before=before, limit=1):
                return saved
            return None
        if self.saves is not None:  # through a user's get_tuple override, if any
            return await self.saves.calls.get_tuple(self.config)
        return await self.saver.aget_tuple(self.config)

    async def _begin(self) -> None:
        """Apply the run's input: a fresh start, or a resume (None / Command)."""
        resumed = True
        if self.input is None or isinstance(self.input, Command):
            await self._resume(self.input)
        elif self._continues_subgraph():
            await self._resume(None)
        else:
            await self._start(self.input)
            resumed = False
        # As LangGraph: a fresh run may take ``recursion_limit`` steps after its input
        # checkpoint (step -1), a resumed run that many after the step it resumes into.
        self.stop = self.step + self.recursion_limit + (2 if resumed else 1)

    def _continues_subgraph(self) -> bool:
        """A subgraph whose enclosing task runs again continues from its namespace's newest
        checkpoint (made under the same parent checkpoints), or from the checkpoint the run's
        ``checkpoint_map`` names for it, instead of starting over."""
        if self.nesting is None or not self.has_saved:
            return False
        if config_checkpoint_id(self.config) is not None:  # named by the run's checkpoint_map
            return True
        # A run given a subgraph's checkpoint config also lists the subgraph's own checkpoint.
        own = self.checkpoint_ns
        saved = {k: v for k, v in (self.metadata.get("parents") or {}).items() if k != own}
        return self.nesting.resuming and saved == {
            k: v for k, v in self.parents.items() if k != own
        }

    async def _apply_answers(self) -> None:
        """Give the answers handed down by the enclosing run to the tasks of this run
        paused on those interrupts (each answer once: it must answer the task's next
        unanswered ``interrupt()`` call)."""
        for tid, record in self.pending.items():
            if record.finished or not record.interrupts:
                continue
            asked = record.interrupts[-1].id
            answered = record.resume or []
            own = len(own_answers(answered))
            if asked in self.answers.values and self._own_interrupt_id(tid, own) in (asked, None):
                self.answers.claim(asked)
                record.resume = [*answered, self.answers.values[asked]]
                if self.saves is not None:
                    await self.saves.put_writes(
                        self.checkpoint_config, [(RESUME, record.resume)], tid
                    )

    async def _start(self, input: Any) -> None:
        # Checked before saving anything: under strict, a bad key must not leave an input
        # checkpoint behind. A subgraph's input is its parent's state: the keys it lacks are
        # dropped quietly, as LangGraph drops them.
        self.graph.input_updates(
            input, self.findings.on_unknown_key(None, quiet=self.nesting is not None)
        )
        discarded: list[Task] = []
        if self.has_saved:
            # Fresh input discards what the thread still had scheduled (the "classic bug" of
            # notebook 02: passing input again re-runs from the top instead of resuming).
            discarded = prepare_tasks(
                self.graph,
                self.checkpoint,
                self.channels,
                self.step,
                checkpoint_ns=self.checkpoint_ns,
            )
        await self._save_checkpoint(discarded, "input", extra_writes=self.graph.input_writes(input))
        self._emit("checkpoint", self._debug_checkpoint)

    async def _start_with_command(self, command: Command[Any]) -> None:
        """``Command(update=..., goto=...)`` on a thread with no checkpoint starts it, as
        LangGraph runs it: its writes are applied to the empty state as writes of no task, and
        the Command is the run's input, which the START task applies once more (so a reducer
        key gets the update twice, as on LangGraph)."""
        null = command_update_pairs(
            self.graph.schema,
            command.update,
            "Command(update=...)",
            self.findings.on_unknown_key(None),
        )  # and its goto, on LangGraph, but the input clears that trigger before any step
        null = ensure_message_ids(self.channels, null)
        await self._save_checkpoint(
            [], "input", extra_writes=[*null, *self.graph.input_writes(command)]
        )
        self._emit("checkpoint", self._debug_checkpoint)

    async def _resume(self, command: Command[Any] | None) -> None:
        """Continue the thread from the loaded checkpoint.

        As in LangGraph 1.2, a run that *addresses* a checkpoint by id without answering an
        interrupt is time travel: the step's finished tasks run again (their saved writes are
        not reused, answers to interrupts are dropped), and on a checkpoint made by the loop
        a ``source="fork"`` checkpoint is saved first, so the new run grows its own branch.
        Without an id, or with ``Command(resume=...)``, saved writes are reused and only
        unfinished tasks run.
        """
        if not self.has_saved:
            if command is not None and not command.has_resume and command_writes(command):
                await self._start_with_command(command)
                return
            what = "None" if command is None else repr(command)
            error = EmptyInputError(
                f"Thread {self.thread_id!r} has no checkpoint, so there is nothing to resume "
                f"(input was {what}). Start the thread with an input dict first"
                + ("" if self.saver is not None else "; and compile with a checkpointer")
                + "."
            )
            if self.saver is None or command is None or not command.has_resume:
                raise error
            # LangGraph starts the thread from START with no input and ignores the answer.
            self.findings.report(
                Finding(
                    "resume-empty-thread",
                    f"Thread {self.thread_id!r} had no checkpoint, so Command(resume=...) "
                    "answered nothing: the graph ran from START with no input, as LangGraph "
                    "runs it.",
                ),
                error,
            )
            await self._start({})
            return
        assert self.saver is not None and self.thread_id is not None
        await acheck_graph_version(
            self.graph,
            self.saver,
            self.config,
            self.record,
            self.findings,
            thread_id=self.thread_id,
            checkpoint_ns=self.checkpoint_ns,
            checkpoint_id=self.checkpoint["id"],
            pending_nodes=scheduled_nodes(self.checkpoint),
        )
        answering = command is not None and command.has_resume
        time_travel = config_checkpoint_id(self.config) is not None and not answering
        self.reuse_writes = not (time_travel or self.superseded)
        forks = time_travel and (self.source not in ("update", "fork") or self.superseded)
        if time_travel:
            for record in self.pending.values():
                record.resume = None
            if self.nesting is None:
                # Subgraphs load their checkpoints from before the replayed point: before
                # the addressed checkpoint, or before the one an update_state forked from.
                bound = self.checkpoint["id"]
                if self.source in ("update", "fork") and self.parent_config is not None:
                    bound = config_checkpoint_id(self.parent_config) or bound
                self.replay = Replay(bound)
        self.resuming = self.reuse_writes
        if self.answers.values and self.reuse_writes:
            await self._apply_answers()
        if command is not None:
            await self._apply_command(command, save=not forks)
        if self.null_writes:
            # Writes given with the resume (Command(update=..., goto=...)) apply before the
            # step runs, so its tasks see them; ephemeral triggers stay as they are. They
            # reach the database with the step's checkpoint (and stay saved as pending
            # writes of this checkpoint until then).
            versions, _, _ = apply_writes(
                self.graph,
                self.checkpoint,
                self.channels,
                (),
                new_checkpoint_id(),
                extra_writes=self.null_writes,
                clear_ephemeral=False,
            )
            self.checkpoint = replace_checkpoint(self.checkpoint, channel_versions=versions)
            self.null_writes = []
        # Remember what was current at resume time: interrupt_before/after fire again only
        # after something new happens.
        seen = {n: dict(v) for n, v in self.checkpoint["versions_seen"].items()}
        seen[INTERRUPT_SEEN] = dict(self.checkpoint["channel_versions"])
        self.checkpoint = replace_checkpoint(self.checkpoint, versions_seen=seen)
        if forks:
            await self._save_fork()
            self._emit("checkpoint", self._debug_checkpoint)
            self._emit("values", lambda: (self.graph.read_state(self.channels), None))
        else:  # the checkpoint the run resumes from, as LangGraph reports it
            self._emit("values", lambda: (self.graph.read_state(self.channels), None))
            self._emit("checkpoint", self._debug_checkpoint)
        if self.config.get("callbacks"):
            await self._report_lifecycle("pending")

    async def _report_lifecycle(
        self, status: str, interrupts: tuple[Interrupt[Any], ...] | None = None
    ) -> None:
        """Tell the run's graph lifecycle handlers (``lifecycle.py``) it paused on
        ``interrupts``, or resumed (None)."""
        from durable_debug.graph.lifecycle import report_lifecycle

        await report_lifecycle(
            self.config,
            self.graph_run,
            status=status,
            checkpoint_id=self.checkpoint["id"],
            checkpoint_ns=self.checkpoint_ns,
            interrupts=interrupts,
        )

    async def _save_fork(self) -> None:
        """Start a new branch: a copy of the addressed checkpoint (with any Command writes)
        as its child, from which the replayed step runs with fresh task ids."""
        checkpoint_id = new_checkpoint_id()
        self.checkpoint = replace_checkpoint(
            self.checkpoint, id=checkpoint_id, ts=_dt.datetime.now(_dt.timezone.utc).isoformat()
        )
        await self._put("fork", self.checkpoint["channel_versions"])

    async def _apply_command(self, command: Command[Any], *, save: bool) -> None:
        assert self.saves is not None
        if command.has_resume:
            pending = self._by_owner(pending_interrupts(self.pending))
            answers = match_resume(
                command.resume, pending, thread_id=self.thread_id, report=self.findings.report
            )
            for tid, asked, value in answers:
                record = self.pending[tid]
                own = own_answers(record.resume)
                mine = self._own_interrupt_id(tid, len(own) - 1) if own else ""
                if own and record.error is not None and mine in (asked, None):
                    # The task failed on its answer (one its response_schema refused): this
                    # answer replaces it, as LangGraph saves an answer only once accepted.
                    resume = list(record.resume or ())
                    del resume[max(i for i, v in enumerate(resume) if own_answers([v]))]
                    record.resume = resume
                elif self._own_interrupt_id(tid, len(own)) not in (asked, None):
                    value = subgraph_answer(asked, value)  # for a subgraph the task runs
                record.resume = [*(record.resume or []), value]
                self.given_answers[tid] = (asked, value)
            for tid in dict.fromkeys(tid for tid, _, _ in answers):
                answered = self.pending[tid].resume
                await self.saves.put_writes(self.checkpoint_config, [(RESUME, answered)], tid)
        writes: list[tuple[str, Any]] = []
        if command.update is not None:
            writes += command_update_pairs(
                self.graph.schema,
                command.update,
                "Command(update=...)",
                self.findings.on_unknown_key(None),
            )
        writes = ensure_message_ids(self.channels, writes)
        writes += command_goto_writes(command, self.graph.nodes)
        if writes:
            if save:  # when forking, the fork checkpoint carries them instead
                # Writes of no task accumulate (as LangGraph's): savers key a write by its
                # position, so the ones already saved go first and keep theirs.
                accumulated = [*self.null_writes, *writes]
                await self.saves.put_writes(self.checkpoint_config, accumulated, NULL_TASK_ID)
            self.null_writes.extend(writes)


def command_writes(command: Command[Any]) -> bool:
    """Whether ``command`` writes anything besides its answer (an update or a goto)."""
    return command.update is not None or bool(command.goto)


def command_goto_writes(command: Command[Any], nodes: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The writes that schedule what ``Command(goto=...)`` names."""
    goto = command.goto
    if not goto:
        return []
    targets: list[str | Send] = [goto] if isinstance(goto, (str, Send)) else list(goto)
    return targets_to_writes("Command(goto=...)", targets, nodes)


def pending_interrupts(records: dict[str, TaskRecord]) -> dict[str, tuple[Interrupt[Any], ...]]:
    """Task id → the interrupts it is paused on, for tasks that have not finished: its own
    last one, or those of a subgraph it runs that paused on parallel interrupts and are not
    answered yet (each answers one of them, as LangGraph's resume map does)."""
    waiting: dict[str, tuple[Interrupt[Any], ...]] = {}
    for tid, record in records.items():
        if record.interrupts and not record.finished:
            answered = subgraph_answered(record.resume)
            left = tuple(i for i in record.interrupts if i.id not in answered)
            waiting[tid] = left or record.interrupts[-1:]
    return waiting
