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
from collections.abc import AsyncGenerator, Collection
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import (
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    address_config,
    checkpoint_config,
    config_thread_id,
    empty_checkpoint,
)
from durable_debug.checkpoint.lease import (
    confirm_lease,
    lease_held,
    lease_to_confirm,
    thread_lease,
)
from durable_debug.checkpoint.names import MESSAGES_PROTOCOL, NS_END
from durable_debug.checkpoint.records import TASK_CALLS, aadd_findings, aadd_task_calls
from durable_debug.graph.algo import INTERRUPT_SEEN, Task, TaskRecord, prepare_tasks, preview_values
from durable_debug.graph.calls import Runtime
from durable_debug.graph.delta_counters import delta_frequencies
from durable_debug.graph.findings import RunFindings
from durable_debug.graph.interrupts import Answers
from durable_debug.graph.loop_start import LoopStart
from durable_debug.graph.loop_state import Durability, Event, per_run
from durable_debug.graph.loop_tasks import LoopTasks
from durable_debug.graph.push import CallRunner
from durable_debug.graph.recording import RunRecording
from durable_debug.graph.saving import ExitSaves, RunSaves
from durable_debug.graph.streams import OutputKeys, Producers
from durable_debug.graph.subgraph import Nesting, Replay, SubgraphStream, checkpoint_parents
from durable_debug.graph.trace_policy import langsmith_tracing
from durable_debug.graph.types import (
    START,
    GraphInterrupt,
    GraphRecursionError,
    Interrupt,
    from_langgraph,
)

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver
    from durable_debug.graph.channels import Channel
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["DEFAULT_RECURSION_LIMIT", "DURABILITY", "Durability", "RunLoop", "check_durability"]

DEFAULT_RECURSION_LIMIT = 10_000
"""Steps a run may take before GraphRecursionError (LangGraph 1.2's default is about this)."""

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


class RunLoop(LoopStart, LoopTasks):
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
        # Only the run a v3 event stream starts reads the key; its subgraphs learn it from
        # the sink, and a graph a node streams itself is not asked for content-block events.
        configurable = self.config.get("configurable", {})
        protocol = bool(configurable.get(MESSAGES_PROTOCOL))
        if protocol:
            self.config["configurable"] = {
                k: v for k, v in configurable.items() if k != MESSAGES_PROTOCOL
            }
        if self.sink is not None:
            modes, protocol = self._share_with_sink(self.sink, frozenset(modes))
        elif subgraphs:
            self.sink = SubgraphStream(modes, self._forward, protocol=protocol)
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
        self.drained = False
        """Whether the run stopped before a step because its ``RunControl`` asked it to."""
        self.message_tap: Any = None
        """Reports chat model output to the ``messages`` stream (see ``chat_stream.py``)."""
        if self.producers.modes:  # the taps of streamed modes (a plain invoke streams none)
            self._tap_modes(protocol)
        self._tap_caller_stream()
        self.graph_run: Any = None
        """The run's LangChain callback run (``callbacks.GraphRun``) when its config has
        callback handlers: its nodes and conditional edges report under it."""
        # (config_checkpoint_ns of the config address_config checked: its string, or none)
        self.checkpoint_ns: str = configurable.get("checkpoint_ns") or ""
        self.saver = graph.checkpointer if nesting is None else nesting.saver
        if saver is not None:  # a subgraph's namespace run on its own (see pregel._run_loop)
            self.saver = saver
        if durability is None and nesting is not None:
            durability = nesting.durability  # a nested run saves as its enclosing run does
        self.durability: Durability | None = durability
        self.saves: RunSaves | None = None
        if self.saver is not None:
            # "exit" saves once, when the run ends; a nested run only when it pauses or fails
            # (or has a checkpointer of its own: its namespace has no task ids), as LangGraph
            nested_ns = self.checkpoint_ns if nesting is not None else ""
            self.saves = (
                ExitSaves(
                    self.saver,
                    delta_frequencies(graph) if nesting is None else None,
                    save_completed=NS_END not in nested_ns,
                )
                if durability == "exit"
                else RunSaves(self.saver, durability)
            )
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
        self.paused = False
        self.stopped_on: str | None = None
        """Why the run stopped before its end: ``"pending"`` (interrupts), or the static
        breakpoint (``"interrupt_before"`` / ``"interrupt_after"``); its lifecycle status."""
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
        self.pending_names: dict[str, str] = {}
        self.legacy_ids: dict[str, str] = {}
        self.handled: set[str] = set()
        self.started_handlers: list[Task] = []
        """Ids of the tasks whose failure an error handler took (the run goes on)."""
        """Saved writes of the current checkpoint's tasks, by task id."""
        self.null_writes: list[tuple[str, Any]] = []
        """Saved writes of no task (a ``Command``'s resume values, ``update_state``)."""
        self.given_answers: dict[str, tuple[str, Any]] = {}
        """The answers this run's ``Command(resume=...)`` gave: task id → (interrupt id,
        answer)."""
        self.spare_answers = False
        """An answer was given to a task the step no longer has (a ``Command(goto=Send)``
        replaced the step's Send tasks): the first ``interrupt()`` with no answer takes it,
        as LangGraph's resume value not addressed to an interrupt id is taken."""
        self.channels: dict[str, Channel] = {}
        self.candidates: Collection[str] | None = None
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

    def _tap_modes(self, protocol: bool) -> None:
        """The taps the requested stream modes need: the runtime's stream writer
        (``custom``), the chat model and tool callback taps (``messages``, ``tools``)."""
        if self.producers.wants("custom"):
            self.runtime = self.runtime.override(stream_writer=self._write_custom)
        if self.producers.wants("message") or self.producers.wants("callback"):
            from durable_debug.graph.chat_stream import make_message_tap

            sent = self.sink.sent_messages if self.sink is not None else None
            report = self._write_callback if self.producers.wants("callback") else None
            self.message_tap = make_message_tap(
                self._write_message, sent, report, protocol=protocol
            )
            from durable_debug.graph.callbacks import with_handler

            self.config["callbacks"] = with_handler(self.config.get("callbacks"), self.message_tap)
        if self.producers.wants("tool"):
            from durable_debug.graph.callbacks import with_handler
            from durable_debug.graph.tool_stream import make_tool_tap

            tap = make_tool_tap(lambda payload: self._write_live("tool", payload))
            self.config["callbacks"] = with_handler(self.config.get("callbacks"), tap)

    # -- driving -----------------------------------------------------------------------------

    def events(self) -> AsyncGenerator[Event, None]:
        """Run to the end, yielding ``(mode, chunk)`` for every requested stream mode; a
        subgraph's chunks come as ``("subgraph", (namespace, mode, chunk))``.

        A subgraph run of a run streaming subgraphs sends its chunks to that run instead.

        With a checkpointer the run holds its thread's lease throughout (one writer per
        thread): a thread another run holds raises :class:`ThreadBusyError` before anything
        is read, run or written. A subgraph run inside a task of the run holding the thread
        shares that lease (the lease is re-entrant within a run's context).
        """
        # A run with no enclosing stream yields its own events (no routing layer, and no
        # layer for the lease: ``_events`` holds it).
        outer = self.nesting.stream if self.nesting is not None else None
        return self._events() if outer is None else self._routed()

    def _lease(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The thread's lease, for ``_events`` to hold; nothing to take without a saver, or
        for a nested run, whose lease is its enclosing run's (re-entrant)."""
        if self.saver is None:
            return _NO_LEASE
        thread_id = self.thread_id = config_thread_id(self.config)  # (_load reads it)
        if lease_held(self.saver, thread_id, wait=self.wait):
            return _NO_LEASE
        return thread_lease(self.saver, thread_id, wait=self.wait)

    async def _routed(self) -> AsyncGenerator[Event, None]:
        """The run's events, or, for a subgraph whose parent streams subgraphs, nothing: its
        chunks go to the parent's stream."""
        async with contextlib.aclosing(self._events()) as events:
            outer = self.nesting.stream if self.nesting is not None else None
            if outer is None:
                async for event in events:
                    yield event
                return
            namespace, own, shared = self.namespace, self.own_modes, self.shared_modes
            async for mode, chunk in events:
                if mode in shared:
                    outer.send(namespace, mode, chunk)
                if mode in own:  # the caller streams this graph itself
                    yield mode, chunk

    def _forward(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        """A chunk of a subgraph, from the loop or a worker thread."""
        self.live.append(("subgraph", (namespace, mode, chunk)))
        self._wake_up()

    async def _events(self) -> AsyncGenerator[Event, None]:
        """The one place events leave the run. Everything else reports into ``outbox`` (or
        ``live``, from running nodes) and yields to say "pass on what is there now".

        The thread's lease is taken before the run reads anything, and given back once it
        has ended (left early: once what it put is saved)."""
        async with self._lease():
            if self.config.get("callbacks") or langsmith_tracing():
                await self._start_graph_run()
            completed = False
            try:
                try:
                    run = self._run()
                    try:
                        async for _ in run:
                            events = self._drain()
                            if events and self.saves is not None:
                                await self.saves.settle()  # a chunk reports a saved step
                            for event in events:
                                yield event
                    finally:
                        await run.aclose()  # closed at once if we are (contextlib.aclosing)
                    completed = True
                finally:
                    if self.saves is not None:  # the run ends once all it put is saved
                        await self.saves.finish(completed)
                        recording = self.recording
                        if self.findings.pending or (recording is not None and recording.tapes):
                            await self._report_leftover_findings()
            except Exception as exc:
                if self.graph_run is not None:
                    await self.graph_run.error(exc)
                raise
            if (
                self.stopped_on is not None
                and self.nesting is None
                and self.config.get("callbacks")
            ):
                await self._report_lifecycle(self.stopped_on, self.interrupts)
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

        if has_callbacks(self.config) or langsmith_tracing():  # LangChain adds its tracer
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
            if self.interrupt_before and self._should_interrupt(self.interrupt_before, tasks):
                if self.nesting is not None:  # the enclosing task pauses (no interrupt)
                    raise GraphInterrupt(())  # and reports it, as LangGraph (not this level)
                self._emit("static_interrupt", _nothing)
                self.stopped_on = "interrupt_before"
                yield
                break
            if self.runtime.drain_requested:  # after the breakpoints, as LangGraph checks it
                self.drained = True
                break
            to_run = self._tasks_to_run(tasks)
            if to_run and self.saves is not None and lease_to_confirm():
                # a run that lost its lease starts no node
                await confirm_lease(self.saves.saver, self.thread_id or "")
            if self.outbox or self.live:  # (_reported, checked inline: three times a step)
                yield
            if len(to_run) == 1 and self._lone_awaited:
                # No chunk can come while it runs (so a sync node may run inline): just await it.
                await self._run_one(to_run[0], self.step + 1, alone=True)
                if not self._defer_done(to_run[0]):
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
            failed = tasks[0].status == "error" if len(tasks) == 1 else _failed(tasks)
            if failed or self.started_handlers:
                for handler in await self._run_error_handlers(tasks):
                    tasks.append(handler)
                    to_run.append(handler)
            self._tasks_ran(tasks, to_run)
            if self.outbox or self.live:
                yield
            self.reuse_writes = True  # only the first step of a replay re-executes
            self.resuming = False
            if self.paused:
                self.stopped_on = "pending"
                preview = preview_values(self.graph, self.channels, tasks)
                self.values = self.graph.read_state(self.channels) if preview is None else preview
                if self.interrupts:
                    self._report_paused_step(tasks)
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
            if self.outbox or self.live:
                yield
            if self.interrupt_after and self._should_interrupt(self.interrupt_after, tasks):
                if self.nesting is not None:  # the enclosing task pauses (no interrupt)
                    raise GraphInterrupt(())
                self._emit("static_interrupt", _nothing)
                self.stopped_on = "interrupt_after"
                yield
                break
        self.values = self.graph.read_state(self.channels)

    @per_run
    def _lone_awaited(self) -> bool:
        """Whether a step's lone task is simply awaited: no chunk can come while it runs (no
        live stream mode, no subgraph chunks to forward, no node streaming as it runs, no
        step timeout, which ``_run_concurrently`` times). Worked out at the run's first
        step: none of it changes during a run."""
        return not (
            self.producers.live
            or self.forwards
            or self.graph.streams_while_running
            or getattr(self.graph, "step_timeout", None)
        )

    def _should_interrupt(self, nodes: tuple[str, ...], tasks: list[Task]) -> bool:
        if not nodes or self.saver is None:
            return False
        seen = self.checkpoint["versions_seen"].get(INTERRUPT_SEEN, {})
        if not any(v > seen.get(ch, "") for ch, v in self.checkpoint["channel_versions"].items()):
            return False
        return any(t.name in nodes or ("*" in nodes and t.name != START) for t in tasks)


_NO_LEASE = contextlib.nullcontext()
"""What a run holds when it takes no lease (an async context manager doing nothing)."""


def _nothing() -> None:
    return None


def _failed(tasks: list[Task]) -> bool:
    """Whether one of a step's ``tasks`` failed (a chain's step has one)."""
    if len(tasks) == 1:
        return tasks[0].status == "error"
    return any(t.status == "error" for t in tasks)
