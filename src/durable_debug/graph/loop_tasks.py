"""How a step's tasks run: which run, side by side or alone, and what each one's outcome does.

:class:`LoopTasks` owns one super-step's tasks once ``prepare_tasks`` found them:
``_tasks_to_run`` leaves out those with saved writes (reported as cached), ``_run_one`` runs a
node (``runner.run_task``, with the ``Nesting`` a subgraph gets from ``_nesting``),
``_run_concurrently`` runs several as futures and yields whenever chunks wait (cancelling the
rest when one fails), ``_task_done`` saves and reports each outcome, ``_run_error_handlers``
runs the error handlers of failed tasks and ``_tasks_ran`` raises a failure or notes the
interrupts. It relies on the shared state of
:class:`~durable_debug.graph.loop_state.LoopState` and on :class:`LoopSave` to save each
outcome.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Coroutine
from typing import Any

from durable_debug.checkpoint.base import INTERRUPT, RESUME
from durable_debug.checkpoint.serde import UnsupportedValueError
from durable_debug.graph.algo import Task
from durable_debug.graph.ids import ERROR_HANDLER, handler_task_id, legacy_task_id
from durable_debug.graph.interrupts import SUBGRAPH_ANSWER, own_answers
from durable_debug.graph.loop_save import LoopSave, _goes_to_handler
from durable_debug.graph.runner import run_task
from durable_debug.graph.subgraph import Nesting
from durable_debug.graph.types import START, NodeError, is_invalid_resume, saved_interrupt

__all__ = ["LoopTasks"]


class LoopTasks(LoopSave):
    """Runs a step's tasks and takes each one's outcome."""

    _made_nesting: tuple[tuple[Any, ...], Nesting] | None = None
    """The last :meth:`_nesting` made, with what it was made from."""

    def _tasks_to_run(self, tasks: list[Task]) -> list[Task]:
        """The tasks of a step that have no saved writes (the others take theirs), each
        reported as it starts; ``_run`` runs them and saves each one's outcome as it
        finishes, then ``_tasks_ran`` looks at what they did."""
        to_run: list[Task] = []  # made in this loop, not a comprehension: it runs every step
        for task in tasks:
            record = self.pending.get(task.id)
            if record is None:
                if task.status is None:
                    to_run.append(task)
                continue
            if record.finished and self.reuse_writes:
                task.writes, task.status = record.writes, "done"
            elif record.handled and self.reuse_writes and _goes_to_handler(task, self.graph.nodes):
                # Failed in an earlier run, its error handler taken: the handler runs instead.
                task.status, task.error = "error", Exception(record.error or "")
            elif record.resume:
                task.resume = own_answers(record.resume)
                # Answers to the interrupts of a subgraph the task runs: handed down to it.
                asked = {i.id for i in record.interrupts}
                for answer in record.resume:
                    if isinstance(answer, dict) and answer.get(SUBGRAPH_ANSWER) in asked:
                        root = self.nesting.root if self.nesting is not None else task.id
                        self.answers.hand_down(str(answer[SUBGRAPH_ANSWER]), answer["value"], root)
            if record.once and self.reuse_writes and not record.finished:
                task.once = record.once  # a replay (time travel) makes its effects anew
            if task.status is None:
                to_run.append(task)
        if self.given_answers:
            ids = {t.id for t in tasks}
            for tid, (interrupt_id, value) in self.given_answers.items():
                if tid not in ids:  # its task is gone: the answer goes to the first that asks
                    self.answers.hand_down(interrupt_id, value, None)
                    self.spare_answers = True
            self.given_answers = {}
        if len(to_run) == len(tasks) and not self.producers.wants("task"):
            return to_run  # nothing reused, and nobody listens for task starts
        # As LangGraph: every task of the step is reported as it starts, also one that took
        # its saved writes, whose result then comes as a cached ``updates`` chunk.
        reused = [t for t in tasks if t.status == "done" and t.name != START]
        for task in tasks:
            if task.name != START and (task.status is None or task.status == "done"):
                self._emit("task", lambda task=task: self._debug_event("task", task))  # type: ignore[misc]  # mypy infers no type for a lambda with a default argument
        for task in reused:
            self._emit(
                "task_result",
                lambda task=task: (  # type: ignore[misc]  # mypy infers no type for a lambda with a default argument
                    self._debug_event("task_result", task),
                    True,
                    self.graph.update_of(task.writes),
                    self._state_writes(task),
                ),
            )
        return to_run

    async def _run_error_handlers(self, tasks: list[Task]) -> list[Task]:
        """For each task of the step that failed (now, or in an earlier run of this step)
        and whose node has an error handler: the handler's task, run in this step with the
        failed task's input and its :class:`NodeError` (its saved writes reused when it
        already finished), as LangGraph does. Handlers already started while the step's
        tasks ran side by side (:meth:`_start_handler`) are among those returned."""
        handlers, self.started_handlers = self.started_handlers, []
        for failed in list(tasks):
            handler = self._handler_task(failed)
            if handler is None:
                continue
            if handler.status is None:
                # Its start is not streamed (LangGraph streams only its result).
                await self._run_one(handler, self.step + 1, alone=False)
                await self._task_done(handler)
            handlers.append(handler)
        return handlers

    def _handler_task(self, failed: Task) -> Task | None:
        """The task of the error handler that takes ``failed``'s failure (its saved writes
        reused when it already finished in an earlier run), or None: ``failed`` did not fail,
        its node has no handler, or its handler was already taken."""
        if (
            failed.status != "error"
            or failed.id in self.handled
            or not _goes_to_handler(failed, self.graph.nodes)
        ):
            return None
        name = failed.node.error_handler
        assert name is not None and failed.error is not None
        self.handled.add(failed.id)
        path = (*failed.path[:2], ERROR_HANDLER)
        checkpoint_id = self.checkpoint["id"]
        handler = Task(
            handler_task_id(checkpoint_id, self.checkpoint_ns, self.step + 1, name, failed.id),
            name,
            path,
            self.graph.nodes[name],
            input=failed.input,
            node_error=NodeError(failed.name, failed.error),
        )
        saved = self.pending.get(handler.id)
        if saved is None and self.legacy_ids:  # saved by an older version, under its id
            old = legacy_task_id(checkpoint_id, self.checkpoint_ns, self.step + 1, name, path)
            saved = self.pending.get(old)
        if saved is not None and saved.finished and self.reuse_writes:
            handler.writes, handler.status = saved.writes, "done"
        return handler

    def _tasks_ran(self, tasks: list[Task], ran: list[Task]) -> None:
        """After a step's tasks ran: raise the first failure no error handler took, or note
        the interrupts."""
        for task in ran:
            if task.status == "error" and task.id not in self.handled:
                assert task.error is not None
                raise task.error
        interrupts: tuple[Any, ...] = ()
        paused = False
        for task in tasks:  # a loop, not comprehensions: it runs after every step
            if task.status == "interrupt":
                interrupts += tuple(task.interrupts)
                paused = True
        self.interrupts = interrupts
        self.paused = paused  # a task paused: on interrupts, or a subgraph's static interrupt

    def _nesting(self) -> Nesting:
        """What the tasks of this step hand to the graphs they run (made once for as long as
        what it holds stays the same: nobody changes a Nesting once made)."""
        key = (self.resuming, self.spare_answers, self.stop, id(self.replay))
        made = self._made_nesting
        if made is not None and made[0] == key:
            return made[1]
        nesting = Nesting(
            self.saver,
            resuming=self.resuming,
            answers=self.answers,
            stream=self.sink,
            spare=self.nesting is not None or self.spare_answers,
            settle=self.saves.settle if self.saves is not None else None,
            durability=self.durability,
            calls=self.calls,
            stop=self.stop,
            replay=self.replay,
            root=self.nesting.root if self.nesting is not None else None,
            resumable=self.nesting is not None
            and (self.nesting.resumable or self.nesting.saver is not None),
        )
        self._made_nesting = (key, nesting)
        return nesting

    def _run_one(self, task: Task, step: int, *, alone: bool) -> Coroutine[Any, Any, None]:
        """Execute one task's node on the current checkpoint (see ``runner.run_task``): the
        coroutine to await (``run_task``'s own, one coroutine less per task)."""
        return run_task(
            self.graph,
            task,
            self.channels,
            step=step,
            config=self.config,
            checkpoint_id=self.checkpoint["id"],
            alone=alone,
            runtime=self.runtime,
            message_tap=self.message_tap,
            nesting=self._nesting(),
            graph_run=self.graph_run,
            findings=self.findings,
            recording=self.recording,
        )

    async def _run_concurrently(
        self, to_run: list[Task], step: int, *, defer: bool
    ) -> AsyncGenerator[None, None]:
        """Run tasks as concurrent futures, yielding when each one is saved (its chunks go
        out) and when running nodes wrote to the ``custom``, ``messages`` or subgraph streams."""
        self._aio_loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._wake = asyncio.Event()
        limit = self.config.get("max_concurrency")
        gate = asyncio.Semaphore(int(limit)) if limit else None

        async def run(task: Task) -> None:
            if gate is None:
                await self._run_one(task, step, alone=False)
                return
            async with gate:  # config max_concurrency: at most that many nodes at once
                await self._run_one(task, step, alone=False)

        step_timeout = getattr(self.graph, "step_timeout", None)
        # LangGraph's step_timeout: seconds from the step's start, the time the consumer
        # spends between chunks included; past it the step's running nodes are cancelled.
        deadline = self._aio_loop.time() + step_timeout if step_timeout else None
        running: dict[asyncio.Future[None], Task] = {
            asyncio.ensure_future(run(task)): task for task in to_run
        }
        try:
            pending: set[asyncio.Future[Any]] = set(running)
            while pending:
                left = None if deadline is None else max(0.0, deadline - self._aio_loop.time())
                waker = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait(
                    {*pending, waker}, timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
                if not done:
                    waker.cancel()
                    raise asyncio.TimeoutError(
                        f"step {step} ran past the graph's step_timeout of {step_timeout}s "
                        f"(still running: {sorted(running[f].name for f in pending)})"
                    )
                waker.cancel()
                self._wake.clear()
                yield  # what running nodes wrote (custom, messages, subgraphs) goes out now
                done.discard(waker)
                pending -= done
                for future in sorted(done, key=lambda f: running[f].sort_key):
                    future.result()
                    await self._task_done(running[future], defer=defer)
                    handler = self._handler_task(running[future])
                    if handler is not None:
                        # As LangGraph: the handler runs at once, beside the step's tasks
                        # still running (its start is not streamed, only its result).
                        self.started_handlers.append(handler)
                        if handler.status is None:
                            started = asyncio.ensure_future(run(handler))
                            running[started] = handler
                            pending.add(started)
                yield
                if any(_fails_fast(running[f]) for f in done) and pending:
                    # Fail fast like LangGraph: the siblings still running are cancelled,
                    # recorded as such, and run again on resume (not for an answer refused
                    # by its response_schema: the other answered tasks finish).
                    for future in pending:
                        future.cancel()
                    await asyncio.gather(*pending, return_exceptions=True)
                    for future in sorted(pending, key=lambda f: running[f].sort_key):
                        cancelled = running[future]
                        cancelled.status = "cancelled"
                        cancelled.error = asyncio.CancelledError()
                        if self.saves is not None:
                            await self._save_error(cancelled)
                    pending = set()
        finally:
            self._wake = None
            left = [future for future in running if not future.done()]
            for future in left:
                future.cancel()
            if left:  # the nodes have stopped before the run (and its thread's lease) ends
                await asyncio.gather(*left, return_exceptions=True)

    async def _task_done(self, task: Task, *, defer: bool = False) -> None:
        """Persist one finished task's outcome and report it.

        With ``defer``, a successful task's writes are kept for :meth:`_put`, which saves them
        in the same transaction as the checkpoint they produce (a lone task of a step: there
        is no sibling whose failure its saved writes would have to survive), and its chunks
        are held until then.
        """
        if defer and self._defer_done(task):
            return
        held = False
        if self.saves is not None:
            if task.status == "done":
                await self._save_task_writes(task, self._writes_to_save(task))
            elif task.status == "interrupt":
                payload = [saved_interrupt(i) for i in task.interrupts]
                paused: list[tuple[str, Any]] = [(INTERRUPT, payload)]
                if task.resume:  # it may have taken an answer meant for its graph's caller
                    paused.append((RESUME, task.resume))
                try:
                    await self.saves.put_writes(self.checkpoint_config, paused, task.id)
                except UnsupportedValueError as exc:
                    task.status, task.error = "error", exc.located(node=task.name)
                    await self._save_error(task)
            elif task.status == "error":
                await self._save_error(task)
        if task.status == "interrupt":
            if not task.interrupts:
                return  # paused by a subgraph's static interrupt: no outcome, as LangGraph
            self._report_pause(task)
        self._report_result(task, held)

    def _defer_done(self, task: Task) -> bool:
        """:meth:`_task_done` with ``defer`` for a task that finished, done at once (nothing
        to await): its writes kept for :meth:`_put`, its chunks held. False (nothing done)
        for any other task, or a run that saves nothing."""
        if self.saves is None or task.status != "done":
            return False
        self.deferred.append((task, self._writes_to_save(task)))
        if task.name != START and self.producers.wants("task_result"):  # (_report_result's)
            self._report_result(task, True)
        return True

    def _report_result(self, task: Task, held: bool) -> None:
        """Report a finished task's ``task_result`` (held until its step is saved)."""
        if task.name != START and self.producers.wants("task_result"):
            chunks = self.producers.chunks(
                "task_result",
                lambda: (
                    self._debug_event("task_result", task),
                    task.cached,
                    self.graph.update_of(task.writes),
                    self._state_writes(task),
                ),
            )
            (self.held if held else self.outbox).extend(chunks)


def _fails_fast(task: Task) -> bool:
    """True when ``task`` failed in a way that cancels its running siblings (not when an
    error handler takes the failure)."""
    return (
        task.status == "error"
        and not (task.error is not None and is_invalid_resume(task.error))
        and not (task.node.error_handler and not task.node.is_error_handler)
    )
