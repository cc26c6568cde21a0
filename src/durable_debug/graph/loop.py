"""One run of a compiled graph over one thread: load, start or resume, then super-steps.

A run is ``ainvoke(input, config)``. It loads the thread's checkpoint (the latest, or the one
``config`` pins); then

* with an input, it saves an *input* checkpoint (discarding whatever the thread still had
  scheduled) and starts from START;
* with ``None`` or a ``Command``, it *resumes*: the tasks of the next step that already saved
  their writes are not run again; interrupted tasks re-run with their resume values.

Each super-step saves every task's writes the moment it finishes, then one checkpoint.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as _dt
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from durable_debug.checkpoint.base import (
    ERROR,
    ERROR_SOURCE,
    FAILURES,
    INTERRUPT,
    NULL_TASK_ID,
    RESUME,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    address_config,
    checkpoint_config,
    checkpoint_metadata,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
    empty_checkpoint,
    new_checkpoint_id,
    replace_checkpoint,
)
from durable_debug.checkpoint.lease import check_lease, confirm_lease, thread_lease
from durable_debug.checkpoint.records import (
    GRAPH_VERSION,
    PARENT_WRITE_MS,
    TASK_CALLS,
    aadd_findings,
    aadd_task_calls,
    aread_record,
    attach_record,
    known_version,
    record_from_metadata,
)
from durable_debug.checkpoint.serde import SerdeError, UnsupportedValueError
from durable_debug.graph.algo import (
    INTERRUPT_SEEN,
    PUSH,
    Task,
    TaskRecord,
    apply_writes,
    compact_start_writes,
    interrupt_id,
    make_checkpoint,
    prepare_tasks,
    preview_values,
    read_pending_writes,
    restore_channels,
    task_id,
    task_path_str,
)
from durable_debug.graph.calls import Runtime
from durable_debug.graph.failures import failure_entry, failure_history
from durable_debug.graph.findings import Finding, RunFindings
from durable_debug.graph.interrupts import (
    SUBGRAPH_ANSWER,
    Answers,
    match_resume,
    own_answers,
    subgraph_answer,
)
from durable_debug.graph.nodes import targets_to_writes
from durable_debug.graph.push import CallRunner
from durable_debug.graph.recording import RunRecording
from durable_debug.graph.runner import run_task
from durable_debug.graph.saving import ExitSaves, RunSaves
from durable_debug.graph.streams import OutputKeys, Producers
from durable_debug.graph.subgraph import (
    NS_END,
    NS_SEP,
    Nesting,
    Replay,
    SubgraphStream,
    checkpoint_parents,
)
from durable_debug.graph.types import (
    START,
    Command,
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    Interrupt,
    NodeError,
    ParentCommand,
    Send,
    from_langgraph,
    interrupt_payload,
    is_invalid_resume,
    saved_interrupt,
)
from durable_debug.graph.version import acheck_graph_version, scheduled_nodes, version_record

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
    from durable_debug.graph.channels import Channel
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["DEFAULT_RECURSION_LIMIT", "DURABILITY", "Durability", "RunLoop", "check_durability"]

DEFAULT_RECURSION_LIMIT = 10_000
"""Steps a run may take before GraphRecursionError (LangGraph 1.2's default is about this)."""

Event = tuple[str, Any]

Durability = Literal["sync", "async", "exit"]
DURABILITY: tuple[str, ...] = ("sync", "async", "exit")
"""LangGraph's ``durability=`` values. A run returns, raises or pauses only once all its saves
have finished. ``"sync"`` saves each step before the next one starts; ``"async"`` (the
default, ``None``, as in LangGraph) lets a step's save run while the next step's lone task
runs, where the saver can (``PostgresSaver``: see ``graph/saving.py``); ``"exit"`` saves only
the checkpoint the run ends on, with its writes, as LangGraph does (``saving.ExitSaves``).
See docs/engine.md."""


def check_durability(durability: str | None) -> None:
    """Raise ValueError naming a ``durability`` that is not one of :data:`DURABILITY`."""
    if durability is not None and durability not in DURABILITY:
        raise ValueError(
            f"Unknown durability {durability!r}; use one of {', '.join(map(repr, DURABILITY))}"
        )


class RunLoop:
    """Executes one run; iterate :meth:`events` to drive it."""

    def __init__(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        input: Any,
        config: RunnableConfig | None,
        *,
        modes: frozenset[str] = frozenset(),
        interrupt_before: tuple[str, ...] | None = None,
        interrupt_after: tuple[str, ...] | None = None,
        context: Any = None,
        wait: float | None = None,
        nesting: Nesting | None = None,
        subgraphs: bool = False,
        saver: BaseCheckpointSaver | None = None,
        output_keys: OutputKeys = None,
        durability: Durability | None = None,
    ) -> None:
        self.graph = graph
        self.wait = graph.lease_wait if wait is None else wait
        """Seconds to wait for the thread's lease when another run holds it."""
        self.nesting = nesting
        """Set when this run is a subgraph of a running task (see ``subgraph.py``)."""
        self.input = from_langgraph(input)
        self.config: RunnableConfig = address_config(config)
        self.sink: SubgraphStream | None = nesting.stream if nesting else None
        """Where this run's chunks go when it is a subgraph of a run streaming subgraphs."""
        if self.sink is not None:
            modes = self.sink.modes
        elif subgraphs:
            self.sink = SubgraphStream(modes, self._forward)
        self.producers = Producers(modes, output_keys)
        self.updated: frozenset[str] = frozenset()
        """The state keys the last saved step wrote (a ``values`` chunk needs an output key)."""
        self.forwards = subgraphs or self.sink is not None
        """Subgraphs' chunks arrive while its tasks run (``stream(..., subgraphs=True)``)."""
        self.outbox: list[Event] = []
        """``(mode, chunk)`` pairs produced and not yet yielded."""
        self.held: list[Event] = []
        """Chunks reporting a lone task's result, released once its checkpoint is saved."""
        self.live: collections.deque[Event] = collections.deque()
        """Chunks written by running nodes (custom, messages), from any thread."""
        self._wake: asyncio.Event | None = None
        self.runtime: Runtime[Any] = Runtime(context=context, store=graph.store)
        if self.producers.wants("custom"):
            self.runtime = self.runtime.override(stream_writer=self._write_custom)
        self.message_tap: Any = None
        """Reports chat model output to the ``messages`` stream (see ``chat_stream.py``)."""
        if self.producers.wants("message") or self.producers.wants("callback"):
            from durable_debug.graph.chat_stream import make_message_tap

            sent = self.sink.sent_messages if self.sink is not None else None
            report = self._write_callback if self.producers.wants("callback") else None
            self.message_tap = make_message_tap(self._write_message, sent, report)
            from durable_debug.graph.callbacks import with_handler

            self.config["callbacks"] = with_handler(self.config.get("callbacks"), self.message_tap)
        self.graph_run: Any = None
        """The run's LangChain callback run (``callbacks.GraphRun``) when its config has
        callback handlers: its nodes and conditional edges report under it."""
        self.saver = graph.checkpointer if nesting is None else nesting.saver
        if saver is not None:  # a subgraph's namespace run on its own (see pregel._run_loop)
            self.saver = saver
        if durability is None and nesting is not None:
            durability = nesting.durability  # a nested run saves as its enclosing run does
        self.durability: Durability | None = durability
        self.saves: RunSaves | None = None
        if self.saver is not None:
            # "exit" saves once, when the run ends (a nested run saves as "async": its
            # checkpoints name their parents, which must exist)
            exiting = durability == "exit" and nesting is None
            self.saves = ExitSaves(self.saver) if exiting else RunSaves(self.saver, durability)
        """How this run saves its steps (see ``saving.py``); None without a saver."""
        self.answers = nesting.answers if nesting else Answers()
        """Answers to subgraphs' interrupts, shared with the enclosing and nested runs."""
        self.parents = checkpoint_parents(self.config) if nesting else {}
        self.replay: Replay | None = nesting.replay if nesting else None
        """Set while a top-level run replays (time travel): see ``_load``."""
        self.resuming = False
        """True while the first step of a resumed run runs (its tasks run again)."""
        self.interrupt_before = (
            graph.interrupt_before if interrupt_before is None else interrupt_before
        )
        self.interrupt_after = graph.interrupt_after if interrupt_after is None else interrupt_after
        limit = self.config.get("recursion_limit")
        self.recursion_limit = DEFAULT_RECURSION_LIMIT if limit is None else int(limit)
        self.thread_id: str | None = None
        self.checkpoint_ns = config_checkpoint_ns(self.config)
        self.paused = False
        self.interrupts: tuple[Interrupt[Any], ...] = ()
        """Interrupts the run stopped on (empty if it finished or stopped otherwise)."""
        self.values: dict[str, Any] = {}
        """The state when the run stopped."""
        self.write_ms: float | None = None
        """How long saving the last checkpoint took (ms), recorded on the next one."""
        # The thread where the run stands: as ``_load`` finds it (these defaults are an empty
        # thread's), then as each saved checkpoint moves it on (``_save_checkpoint``, ``_put``).
        self.checkpoint: Checkpoint = empty_checkpoint()
        """The current checkpoint: the loaded one, then each one the run saves."""
        self.checkpoint_config: RunnableConfig = checkpoint_config("", self.checkpoint_ns)
        """The config addressing ``checkpoint`` (no id while nothing is saved)."""
        self.step = -2
        """Step of ``checkpoint``: -2 for an empty thread, whose input checkpoint is step -1."""
        self.source = ""
        """The ``source`` of the loaded checkpoint's metadata (``input``, ``loop``, ``fork``…)."""
        self.metadata: CheckpointMetadata = {}
        self.record: dict[str, Any] = {}
        """The debug record of ``checkpoint`` (``checkpoint/records.py``)."""
        self.findings = RunFindings(graph)
        """What the run let pass as LangGraph does, for the next checkpoint it saves."""
        self.parent_config: RunnableConfig | None = None
        self.has_saved = False
        """Whether the thread has a checkpoint (loaded or saved by this run)."""
        self.superseded = False
        """Whether the addressed checkpoint is no longer the thread's latest (time travel)."""
        self.saved_versions: dict[str, str] = {}
        """Channel versions of the last saved checkpoint: only newer blobs are written."""
        self.pending: dict[str, TaskRecord] = {}
        self.handled: set[str] = set()
        """Ids of the tasks whose failure an error handler took (the run goes on)."""
        """Saved writes of the current checkpoint's tasks, by task id."""
        self.null_writes: list[tuple[str, Any]] = []
        """Saved writes of no task (a ``Command``'s resume values, ``update_state``)."""
        self.channels: dict[str, Channel] = {}
        self.candidates: set[str] | None = None
        """Nodes the last step's writes may trigger (None: look at every node)."""
        self.reuse_writes = True
        """Whether tasks that already saved writes are skipped (False when replaying)."""
        self.deferred: list[tuple[Task, list[tuple[str, Any]]]] = []
        """Writes of a step's lone task, saved with the step's checkpoint (see _task_done)."""
        self.stop = 0
        """The last step the recursion limit allows (set by ``_begin``)."""
        self._aio_loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        """The event loop running concurrent tasks, and its thread (for ``_wake_up``)."""
        self.calls = CallRunner(self)
        """Runs the ``@task`` calls the run's tasks make (see ``push.py``)."""
        self.recording = RunRecording(self.config) if self.saver is not None else None
        """The model and tool calls of the run's tasks, for the next checkpoint's record
        (``recording.py``; None without a saver)."""

    # -- driving -----------------------------------------------------------------------------

    async def events(self) -> AsyncGenerator[Event, None]:
        """Run to the end, yielding ``(mode, chunk)`` for every requested stream mode; a
        subgraph's chunks come as ``("subgraph", (namespace, mode, chunk))``.

        A subgraph run of a run streaming subgraphs sends its chunks to that run instead.

        With a checkpointer the run holds its thread's lease throughout (one writer per
        thread): a thread another run holds raises :class:`ThreadBusyError` before anything
        is read, run or written. A subgraph run inside a task of the run holding the thread
        shares that lease (the lease is re-entrant within a run's context).
        """
        if self.saver is None:
            async with contextlib.aclosing(self._routed()) as events:
                async for event in events:
                    yield event
            return
        lease = thread_lease(self.saver, config_thread_id(self.config), wait=self.wait)
        # Taken before the run reads anything; the run ends (if left early) before it goes.
        async with lease, contextlib.aclosing(self._routed()) as events:
            async for event in events:
                yield event

    async def _routed(self) -> AsyncGenerator[Event, None]:
        """The run's events, or, for a subgraph whose parent streams subgraphs, nothing: its
        chunks go to the parent's stream."""
        async with contextlib.aclosing(self._events()) as events:
            if self.nesting is None or self.sink is None:
                async for event in events:
                    yield event
                return
            namespace = tuple(self.checkpoint_ns.split(NS_SEP))
            async for mode, chunk in events:
                self.sink.send(namespace, mode, chunk)

    def _forward(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        """A chunk of a subgraph, from the loop or a worker thread."""
        self.live.append(("subgraph", (namespace, mode, chunk)))
        self._wake_up()

    async def _events(self) -> AsyncGenerator[Event, None]:
        """The one place events leave the run. Everything else reports into ``outbox`` (or
        ``live``, from running nodes) and yields to say "pass on what is there now"."""
        if self.config.get("callbacks"):
            await self._start_graph_run()
        try:
            try:
                async with contextlib.aclosing(self._run()) as run:  # closed at once if we are
                    async for _ in run:
                        events = self._drain()
                        if events and self.saves is not None:
                            await self.saves.settle()  # a chunk reports a saved step
                        for event in events:
                            yield event
            finally:
                if self.saves is not None:  # the run ends once all it put is saved
                    await self.saves.finish()
                    await self._report_leftover_findings()
        except Exception as exc:
            if self.graph_run is not None:
                await self.graph_run.error(exc)
            raise
        if self.graph_run is not None:
            await self.graph_run.end(self.graph.output_values(self.values))

    async def _report_leftover_findings(self) -> None:
        """Findings no checkpoint of the run took (it saved none after them: a resume with
        nothing pending) go on the checkpoint the run stands on."""
        found = self.findings.take()
        if found and self.saver is not None and self.has_saved and self.thread_id is not None:
            await aadd_findings(
                self.saver, self.thread_id, self.checkpoint_ns, self.checkpoint["id"], found
            )
        calls = self.recording.take() if self.recording is not None else None
        if calls and self.saver is not None and self.has_saved and self.thread_id is not None:
            # tasks that failed or paused: their calls go on the checkpoint they ran from
            await aadd_task_calls(
                self.saver,
                self.thread_id,
                self.checkpoint_ns,
                self.checkpoint["id"],
                calls[TASK_CALLS],
            )

    async def _start_graph_run(self) -> None:
        """Open the graph's callback run (see ``callbacks.py``) when handlers are given."""
        from durable_debug.graph.callbacks import GraphRun, has_callbacks
        from durable_debug.graph.runner import run_metadata

        if has_callbacks(self.config):
            self.graph_run = await GraphRun.start(
                self.config, self.graph.name, self.input, run_metadata(self.config)
            )

    async def _run(self) -> AsyncGenerator[None, None]:
        """The run itself; yields whenever reported events should go out."""
        self.calls.bind()
        await self._load()
        await self._begin()
        yield
        while True:
            tasks = prepare_tasks(
                self.graph,
                self.checkpoint,
                self.channels,
                self.step,
                checkpoint_ns=self.checkpoint_ns,
                for_execution=True,
                candidates=self.candidates,
            )
            if self.step + 1 > self.stop:
                # Checked before looking at the tasks, as LangGraph does: a run that used its
                # whole budget fails even if its last step happened to finish the graph.
                raise GraphRecursionError(
                    f"Recursion limit of {self.recursion_limit} reached without hitting a stop "
                    f"condition (thread {self.thread_id!r}, step {self.step + 1}, next "
                    f"{tuple(t.name for t in tasks)}). Raise it with config "
                    '{"recursion_limit": N}, or check the graph for a loop with no exit.'
                )
            if not tasks:
                break
            if self._should_interrupt(self.interrupt_before, tasks):
                if self.nesting is not None:  # the enclosing task pauses (no interrupt)
                    raise GraphInterrupt(())  # and reports it, as LangGraph (not this level)
                self._emit("static_interrupt", _nothing)
                yield
                break
            to_run = self._tasks_to_run(tasks)
            if to_run and self.saves is not None:  # a run that lost its lease starts no node
                await confirm_lease(self.saves.saver, config_thread_id(self.config))
            if self._reported():
                yield
            if len(to_run) == 1 and not (
                self.producers.live or self.forwards or self.graph.streams_while_running
            ):
                # No chunk can come while it runs (so a sync node may run inline): just await it.
                await self._run_one(to_run[0], self.step + 1, alone=True)
                await self._task_done(to_run[0], defer=True)
                if to_run[0].status == "error" and self._reported():
                    yield  # its outcome goes out before its error is raised, as LangGraph
            elif to_run:
                if self.saves is not None:  # tasks side by side save their writes as they finish
                    await self.saves.settle()
                running = self._run_concurrently(to_run, self.step + 1, defer=len(to_run) == 1)
                async with contextlib.aclosing(running):  # running nodes cancelled when left
                    async for _ in running:
                        yield
            for handler in await self._run_error_handlers(tasks):
                tasks.append(handler)
                to_run.append(handler)
            self._tasks_ran(tasks, to_run)
            if self._reported():
                yield
            self.reuse_writes = True  # only the first step of a replay re-executes
            self.resuming = False
            if self.paused:
                preview = preview_values(self.graph, self.channels, tasks)
                self.values = self.graph.read_state(self.channels) if preview is None else preview
                if self.interrupts:
                    self._emit(
                        "interrupt", lambda: {"values": self.values, "interrupts": self.interrupts}
                    )
                elif self.nesting is None:
                    # Paused by a subgraph's interrupt_before/after only: the state with the
                    # step's writes, then the static interrupt, as LangGraph reports it.
                    written = {ch for t in tasks if t.status == "done" for ch, _ in t.writes}
                    self._emit("values", lambda written=written: (self.values, written))  # type: ignore[misc]  # mypy infers no type for a lambda with a default argument
                    self._emit("static_interrupt", _nothing)
                yield
                if self.nesting is not None:  # the enclosing task pauses on them
                    raise GraphInterrupt(self.interrupts)
                return
            await self._finish_step(tasks)
            if self._reported():
                yield
            if self._should_interrupt(self.interrupt_after, tasks):
                if self.nesting is not None:  # the enclosing task pauses (no interrupt)
                    raise GraphInterrupt(())
                self._emit("static_interrupt", _nothing)
                yield
                break
        self.values = self.graph.read_state(self.channels)

    def _emit(self, kind: str, build: Callable[[], Any]) -> None:
        """Report one event; the requested modes turn it into chunks (see ``streams.py``).
        A run without a saver saves no checkpoint, so it reports none (as LangGraph)."""
        if kind == "checkpoint" and self.saver is None:
            return
        if self.producers.wants(kind):
            self.outbox.extend(self.producers.chunks(kind, build))

    def _reported(self) -> bool:
        """Whether events wait to go out: a step yields only then (``_events`` passes them
        on; yielding with none costs a resumption of every generator up the chain, for
        nothing)."""
        return bool(self.outbox or self.live)

    def _drain(self) -> list[Event]:
        events: list[Event] = []
        while self.live:  # written by a node after the last wake-up
            events.append(self.live.popleft())
        events += self.outbox
        self.outbox = []
        return events

    def _write_custom(self, chunk: Any) -> None:
        """The ``writer`` of a node: a ``"custom"`` chunk, from the loop or a worker thread."""
        self._write_live("custom", chunk)

    def _write_message(self, pair: tuple[Any, dict[str, Any]]) -> None:
        """A ``(message, metadata)`` pair from a running node (see ``chat_stream.py``)."""
        self._write_live("message", pair)

    def _write_callback(self, event: dict[str, Any]) -> None:
        """A callback of a runnable nested in a running node (for ``astream_events``)."""
        self._write_live("callback", event)

    def report_live(self, kind: str, build: Callable[[], Any]) -> None:
        """Report an event while tasks run (a ``@task`` call's start or result), from the
        loop or a worker thread; ``build()`` makes its payload if a requested mode reads it."""
        self.live.extend(self.producers.chunks(kind, build))
        self._wake_up()

    def _write_live(self, kind: str, payload: Any) -> None:
        """Report an event of a running node, from the loop or a worker thread."""
        self.live.extend(self.producers.chunks(kind, lambda: payload))
        self._wake_up()

    def _wake_up(self) -> None:
        wake, loop = self._wake, self._aio_loop
        if wake is not None and loop is not None:
            if threading.get_ident() == self._loop_thread:
                wake.set()
            else:
                loop.call_soon_threadsafe(wake.set)

    # -- start -------------------------------------------------------------------------------

    async def _load(self) -> None:
        saved = None
        if self.nesting is not None and self.nesting.settle is not None:
            await self.nesting.settle()  # the enclosing run's checkpoint is saved first
        if self.saver is not None:
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
        checkpoint (made under the same parent checkpoints) instead of starting over."""
        return (
            self.nesting is not None
            and self.nesting.resuming
            and self.has_saved
            and dict(self.metadata.get("parents") or {}) == self.parents
        )

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
            if asked in self.answers.values and interrupt_id(tid, own) == asked:
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
        await self._save_checkpoint(discarded, "input", extra_writes=[(START, input)])
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
            pending = pending_interrupts(self.pending)
            answers = match_resume(
                command.resume, pending, thread_id=self.thread_id, report=self.findings.report
            )
            for tid, value in answers.items():
                record = self.pending[tid]
                asked = pending[tid].id
                own = own_answers(record.resume)
                if own and record.error is not None and interrupt_id(tid, len(own) - 1) == asked:
                    # The task failed on its answer (one its response_schema refused): this
                    # answer replaces it, as LangGraph saves an answer only once accepted.
                    resume = list(record.resume or ())
                    del resume[max(i for i, v in enumerate(resume) if own_answers([v]))]
                    record.resume = resume
                elif interrupt_id(tid, len(own)) != asked:
                    value = subgraph_answer(asked, value)  # for a subgraph the task runs
                record.resume = [*(record.resume or []), value]
                await self.saves.put_writes(self.checkpoint_config, [(RESUME, record.resume)], tid)
        writes: list[tuple[str, Any]] = []
        if command.update is not None:
            updates = self.graph.schema.updates_from(
                command.update,
                where="Command(update=...)",
                on_unknown=self.findings.on_unknown_key(None),
            )
            writes += list(updates.items())
        if command.goto:
            goto = command.goto
            targets: list[str | Send] = [goto] if isinstance(goto, (str, Send)) else list(goto)
            writes += targets_to_writes("Command(goto=...)", targets, self.graph.nodes)
        if writes:
            if save:  # when forking, the fork checkpoint carries them instead
                await self.saves.put_writes(self.checkpoint_config, writes, NULL_TASK_ID)
            self.null_writes.extend(writes)

    # -- steps -------------------------------------------------------------------------------

    def _tasks_to_run(self, tasks: list[Task]) -> list[Task]:
        """The tasks of a step that have no saved writes (the others take theirs), each
        reported as it starts; ``_run`` runs them and saves each one's outcome as it
        finishes, then ``_tasks_ran`` looks at what they did."""
        for task in tasks:
            record = self.pending.get(task.id)
            if record is None:
                continue
            if record.finished and self.reuse_writes:
                task.writes, task.status = record.writes, "done"
            elif record.handled and self.reuse_writes and _goes_to_handler(task, self.graph.nodes):
                # Failed in an earlier run, its error handler taken: the handler runs instead.
                task.status, task.error = "error", Exception(record.error or "")
            elif record.resume:
                task.resume = own_answers(record.resume)
                last = record.resume[-1]
                asked = record.interrupts[-1].id if record.interrupts else None
                if isinstance(last, dict) and last.get(SUBGRAPH_ANSWER) == asked:
                    # The answer is for a subgraph the task runs: handed down to it.
                    self.answers.values[str(asked)] = last["value"]
            if record.once and self.reuse_writes and not record.finished:
                task.once = record.once  # a replay (time travel) makes its effects anew
        to_run = [t for t in tasks if t.status is None]
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
        already finished), as LangGraph does."""
        handlers = []
        for failed in list(tasks):
            if failed.status != "error" or not _goes_to_handler(failed, self.graph.nodes):
                continue
            name = failed.node.error_handler
            assert name is not None and failed.error is not None
            error = failed.error
            self.handled.add(failed.id)
            path = (*failed.path[:2], "node_error_handler")
            handler = Task(
                task_id(self.checkpoint["id"], self.checkpoint_ns, self.step + 1, name, path),
                name,
                path,
                self.graph.nodes[name],
                input=failed.input,
                node_error=NodeError(failed.name, error),
            )
            saved = self.pending.get(handler.id)
            if saved is not None and saved.finished and self.reuse_writes:
                handler.writes, handler.status = saved.writes, "done"
            else:
                # Its start is not streamed (LangGraph streams only its result).
                await self._run_one(handler, self.step + 1, alone=False)
                await self._task_done(handler)
            handlers.append(handler)
        return handlers

    def _tasks_ran(self, tasks: list[Task], ran: list[Task]) -> None:
        """After a step's tasks ran: raise the first failure no error handler took, or note
        the interrupts."""
        failed = [t for t in ran if t.status == "error" and t.id not in self.handled]
        if failed:
            assert failed[0].error is not None
            raise failed[0].error
        self.interrupts = tuple(i for t in tasks if t.status == "interrupt" for i in t.interrupts)
        self.paused = any(t.status == "interrupt" for t in tasks)
        """A task paused: on interrupts, or on a subgraph's static interrupt (none)."""

    def _nesting(self) -> Nesting:
        """What the tasks of this step hand to the graphs they run."""
        return Nesting(
            self.saver,
            resuming=self.resuming,
            answers=self.answers,
            stream=self.sink,
            spare=self.nesting is not None,
            settle=self.saves.settle if self.saves is not None else None,
            durability=self.durability,
            calls=self.calls,
            stop=self.stop,
            replay=self.replay,
            resumable=self.nesting is not None
            and (self.nesting.resumable or self.nesting.saver is not None),
        )

    async def _run_one(self, task: Task, step: int, *, alone: bool) -> None:
        """Execute one task's node on the current checkpoint (see ``runner.run_task``)."""
        await run_task(
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
        running: dict[asyncio.Future[None], Task] = {
            asyncio.ensure_future(self._run_one(task, step, alone=False)): task for task in to_run
        }
        try:
            pending: set[asyncio.Future[Any]] = set(running)
            while pending:
                waker = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait({*pending, waker}, return_when=asyncio.FIRST_COMPLETED)
                waker.cancel()
                self._wake.clear()
                yield  # what running nodes wrote (custom, messages, subgraphs) goes out now
                done.discard(waker)
                pending -= done
                for future in sorted(done, key=lambda f: running[f].sort_key):
                    future.result()
                    await self._task_done(running[future], defer=defer)
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
        held = False
        if self.saves is not None:
            if task.status == "done":
                writes = self._writes_to_save(task)
                if defer:
                    self.deferred.append((task, writes))
                    held = True
                else:
                    await self._save_task_writes(task, writes)
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
        if task.status == "interrupt" and not task.interrupts:
            return  # paused by a subgraph's static interrupt: no outcome, as LangGraph
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

    def _writes_to_save(self, task: Task) -> list[tuple[str, Any]]:
        """A finished task's writes as saved: START's state writes are left out when the
        checkpoint they are saved on holds the very input they come from; so are writes to
        an ``UntrackedValue`` channel."""
        if task.name == START and self.checkpoint["channel_values"].get(START) is task.input:
            return compact_start_writes(task.input, task.writes)
        if self.graph.untracked_channels:
            untracked = self.graph.untracked_channels
            return [(ch, v) for ch, v in task.writes if ch not in untracked]
        return task.writes

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
        self._emit("values", lambda: (self.graph.read_state(self.channels), self.updated))
        self._emit("checkpoint", self._debug_checkpoint)

    async def _save_checkpoint(
        self, tasks: list[Task], source: str, extra_writes: list[tuple[str, Any]] | None = None
    ) -> None:
        """Apply the step's writes, snapshot the channels and save the checkpoint."""
        checkpoint_id = new_checkpoint_id()
        try:
            versions, seen, updated = apply_writes(
                self.graph,
                self.checkpoint,
                self.channels,
                tasks,
                checkpoint_id,
                extra_writes=extra_writes or (),
            )
        except BaseException:
            # The step cannot complete (a reducer raised, two writes to a plain key): what its
            # tasks produced is still saved, as pending writes, before the error propagates.
            deferred, self.deferred = self.deferred, []
            for task, writes in deferred:
                await self._save_task_writes(task, writes)
            raise
        self.checkpoint = make_checkpoint(checkpoint_id, self.channels, versions, seen, updated)
        self.updated = self.graph.schema.key_set & updated
        self.candidates = self.graph.nodes_triggered_by(updated)
        await self._put(source, versions)

    async def _put(self, source: str, versions: dict[str, str]) -> None:
        """Save ``self.checkpoint`` as the next step, a child of the current checkpoint."""
        self.step += 1  # an empty thread starts at -2, so its input checkpoint is step -1
        self.has_saved = True
        record = version_record(self.graph, self.record)
        if self.write_ms is not None:
            record[PARENT_WRITE_MS] = self.write_ms
        found = self.findings.take()
        if found:
            record["findings"] = found
        if self.recording is not None:
            record.update(self.recording.take())
        self.record = record
        self.metadata = checkpoint_metadata(self.config, source, self.step, parents=self.parents)
        self.pending = {}
        if self.saves is not None:
            new_versions = {ch: v for ch, v in versions.items() if self.saved_versions.get(ch) != v}
            # An engine-made config (checked when the run began): read, not validated again.
            parent = (
                self.checkpoint_config
                if self.checkpoint_config["configurable"].get("checkpoint_id")
                else None
            )
            deferred, self.deferred = self.deferred, []
            task_writes = [(task.id, writes, task_path_str(task.path)) for task, writes in deferred]
            check_lease(self.saves.saver, config_thread_id(self.config))  # another run took it
            started = time.perf_counter()
            try:
                key = (config_thread_id(self.config), self.checkpoint_ns, self.checkpoint["id"])
                self.checkpoint_config = await self.saves.put_step(
                    self.checkpoint_config,
                    task_writes,
                    self.checkpoint,
                    attach_record(self.saves.saver, key, self.metadata, record),  # type: ignore[arg-type]  # the metadata with the debug record in it, still CheckpointMetadata
                    new_versions,
                )
            except SerdeError as exc:
                if not deferred:
                    raise
                # Nothing was written: the task whose output could not be saved failed.
                task = deferred[0][0]
                task.status, task.error = "error", exc.located(node=task.name)
                await self._save_error(task)
                raise task.error from None
            self.write_ms = round((time.perf_counter() - started) * 1000, 3)
            self.saved_versions = dict(versions)
            if not isinstance(self.saves, ExitSaves):
                # Under "exit" nothing is saved on the way: LangGraph's checkpoints report
                # the parent the loaded checkpoint had.
                self.parent_config = parent
        # The step is saved: what its lone task produced may now be reported.
        self.outbox.extend(self.held)
        self.held.clear()

    def _should_interrupt(self, nodes: tuple[str, ...], tasks: list[Task]) -> bool:
        if not nodes or self.saver is None:
            return False
        seen = self.checkpoint["versions_seen"].get(INTERRUPT_SEEN, {})
        if not any(v > seen.get(ch, "") for ch, v in self.checkpoint["channel_versions"].items()):
            return False
        return any(t.name in nodes or ("*" in nodes and t.name != START) for t in tasks)

    # -- output ------------------------------------------------------------------------------

    def _task_result(self, task: Task) -> dict[str, Any] | None:
        return self.graph.result_of(task.writes)

    def _state_writes(self, task: Task) -> list[tuple[str, Any]]:
        """A finished task's writes of state keys, in order (its ``updates`` chunk)."""
        if task.status != "done":
            return []
        keys = self.graph.schema.key_set
        return [(ch, v) for ch, v in task.writes if ch in keys]

    def _debug_checkpoint(self) -> dict[str, Any]:
        tasks = prepare_tasks(
            self.graph, self.checkpoint, self.channels, self.step, checkpoint_ns=self.checkpoint_ns
        )
        return {
            "step": self.step,
            "timestamp": self.checkpoint["ts"],
            "type": "checkpoint",
            "payload": {
                "config": self._mapped(self.checkpoint_config),
                "parent_config": self._mapped(self.parent_config),
                "values": self.graph.schema.shown(self.graph.read_state(self.channels)),
                "metadata": self.metadata,
                "next": [t.name for t in tasks],
                "tasks": [
                    {
                        "id": t.id,
                        "name": t.name,
                        "interrupts": self._pending_interrupts(t.id),
                        "state": self._task_state(t),
                    }
                    for t in tasks
                ],
            },
        }

    def _mapped(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """A subgraph's checkpoint config with ``checkpoint_map`` (each level's checkpoint),
        as LangGraph reports it."""
        if config is None or not self.parents:
            return config
        configurable = dict(config["configurable"])
        own = configurable.get("checkpoint_id")
        configurable["checkpoint_map"] = {**self.parents, self.checkpoint_ns: own}
        return {**config, "configurable": configurable}

    def _task_state(self, task: Task) -> RunnableConfig | None:
        """The namespace config of a task whose node runs a subgraph (else None)."""
        if self.graph.subgraph_of(task.name) is None:
            return None
        own = f"{task.name}{NS_END}{task.id}"
        namespace = f"{self.checkpoint_ns}{NS_SEP}{own}" if self.checkpoint_ns else own
        return checkpoint_config(self.thread_id or "", namespace, None)

    def _pending_interrupts(self, task_id: str) -> tuple[dict[str, Any], ...]:
        record = self.pending.get(task_id)
        if record is None or record.finished:
            return ()
        return tuple(interrupt_payload(i) for i in record.interrupts)

    def _debug_event(self, kind: str, task: Task) -> dict[str, Any]:
        payload: dict[str, Any] = {"id": task.id, "name": task.name}
        if kind == "task":
            payload.update(input=task.input, triggers=task.triggers or (PUSH,))
        else:
            payload.update(
                error=task.error,
                result=(self._task_result(task) or {}) if task.status == "done" else {},
                interrupts=[interrupt_payload(i) for i in task.interrupts],
            )
        return {
            "step": self.step + 1,
            "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "type": kind,
            "payload": payload,
        }


def _nothing() -> None:
    return None


def _fails_fast(task: Task) -> bool:
    """True when ``task`` failed in a way that cancels its running siblings (not when an
    error handler takes the failure)."""
    return (
        task.status == "error"
        and not (task.error is not None and is_invalid_resume(task.error))
        and not (task.node.error_handler and not task.node.is_error_handler)
    )


def _goes_to_handler(task: Task, nodes: Mapping[str, Any]) -> bool:
    """True when ``task``'s failure goes to its node's error handler."""
    handler = task.node.error_handler
    return (
        handler is not None
        and handler in nodes
        and not task.node.is_error_handler
        and not isinstance(task.error, ParentCommand)
    )


def pending_interrupts(records: dict[str, TaskRecord]) -> dict[str, Interrupt[Any]]:
    """Task id → the interrupt it is paused on, for tasks that have not finished."""
    return {
        tid: record.interrupts[-1]
        for tid, record in records.items()
        if record.interrupts and not record.finished
    }
