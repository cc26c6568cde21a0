"""Deterministic time travel: the calls a thread recorded, reruns that replay them, a check of
changed code against the recording, and one task stepped into under ``pdb``.

    recorded_calls(graph, config)                   # one row per model / tool / once() call
    with replaying(graph, config) as replay:        # a fork or rerun answers recorded calls
        graph.invoke(None, fork_config)
    replay.live                                     # the calls whose input changed (made live)
    report = replay_check(graph, config)            # every recorded task, run on the code now
    report.ok, report.diverged, report.live_calls
    debug_task(graph, config, "agent")              # that task of the checkpoint, under pdb

The recording is made by the engine (``graph/recording.py``) and kept in the debug records of
the thread's checkpoints; see docs/inspect.md, *Recorded calls and replay*.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import CheckpointNotFoundError, RunnableConfig
from durable_debug.checkpoint.names import NO_WRITES, START
from durable_debug.checkpoint.records import GRAPH_VERSION, TASK_CALLS, aread_records
from durable_debug.graph.algo import (
    Task,
    adopt_legacy_writes,
    prepare_tasks,
    read_pending_writes,
    restore_channels,
)
from durable_debug.graph.calls import CallContext, ExecutionInfo, Runtime, call
from durable_debug.graph.interrupts import Scratchpad, reset_scratchpad, set_scratchpad
from durable_debug.graph.recording import (
    ReplayMismatchError,
    ReplaySource,
    RunRecording,
    use_replay,
)
from durable_debug.graph.runner import node_config, node_writes, task_namespace
from durable_debug.graph.subgraph import Nesting, graph_at
from durable_debug.graph.types import from_langgraph
from durable_debug.graph.version import graph_version
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.diff import path_changes
from durable_debug.inspect.thread import (
    SPECIAL_CHANNELS,
    CheckpointRecord,
    aread_thread,
    asubgraph_namespaces,
    checkpointer_of,
    thread_config,
)

if TYPE_CHECKING:
    import pdb

    import pandas as pd

    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "CALL_COLUMNS",
    "RecordedTask",
    "ReplayCheck",
    "ReplayMismatchError",
    "ReplaySource",
    "TaskRun",
    "adebug_task",
    "arecorded_calls",
    "arecorded_tasks",
    "areplay_check",
    "areplay_source",
    "debug_task",
    "recorded_calls",
    "replay_check",
    "replay_text",
    "replaying",
    "use_replay",
]

CALL_COLUMNS = [
    "checkpoint_id",
    "task_id",
    "node",
    "kind",
    "name",
    "index",
    "input",
    "output",
    "tokens",
    "latency_ms",
    "replayed",
    "hash",
]


@dataclass(frozen=True)
class RecordedTask:
    """The recorded calls of one task."""

    task_id: str
    node: str
    checkpoint_id: str
    """The checkpoint the task ran from."""
    calls: list[dict[str, Any]]
    """Its calls in call order (``graph/recording.py`` documents an entry)."""
    graph_version: str | None = None
    """The fingerprint of the graph that recorded it (None when not known)."""


async def arecorded_tasks(graph: GraphLike, config: RunnableConfig) -> dict[str, RecordedTask]:
    """Every task of the thread (all branches) that recorded calls, by task id, oldest
    checkpoint first. Raises ``ValueError`` naming the thread, task and call for a recording
    that is damaged (a call without its index, kind or hash)."""
    thread_id, checkpoint_ns = _thread_of(config)
    saver = checkpointer_of(graph)
    records = await aread_records(saver, thread_id, checkpoint_ns)
    kept = sorted((cid, record) for (_, cid), record in records.items())
    return _recorded_tasks(thread_id, kept)


def _recorded_tasks(
    thread_id: str, records: Iterable[tuple[str, Mapping[str, Any]]]
) -> dict[str, RecordedTask]:
    """The recorded tasks in ``(checkpoint id, debug record)`` pairs, oldest first."""
    found: dict[str, RecordedTask] = {}
    for checkpoint_id, debug in records:
        kept = debug.get(TASK_CALLS)
        if not kept:
            continue
        if not isinstance(kept, Mapping):
            raise ValueError(
                f"thread {thread_id!r}, checkpoint {checkpoint_id}: its recorded calls are "
                "damaged (not a map of task ids)"
            )
        for task_id, task in kept.items():
            calls = task.get("calls") if isinstance(task, Mapping) else None
            if not isinstance(calls, list):
                raise ValueError(
                    f"thread {thread_id!r}, task {task_id} (checkpoint {checkpoint_id}): its "
                    "recorded calls are damaged (no list of calls)"
                )
            for n, entry in enumerate(calls):
                if not isinstance(entry, Mapping) or not {"i", "kind", "hash"} <= entry.keys():
                    raise ValueError(
                        f"thread {thread_id!r}, task {task_id} (node "
                        f"{task.get('node')!r}), call {n}: the recording is truncated or damaged "
                        "(a call needs its index, kind and hash)"
                    )
            found[str(task_id)] = RecordedTask(
                str(task_id),
                str(task.get("node")),
                str(task.get("from") or checkpoint_id),
                list(calls),
                debug.get(GRAPH_VERSION),
            )
    return found


async def arecorded_calls(graph: GraphLike, config: RunnableConfig) -> pd.DataFrame:
    """One row per recorded call of the thread (every branch), oldest first: the checkpoint
    its task ran from, the task, its node, the call's kind (``chat_model``, ``llm``,
    ``embedding``, ``tool``, ``once``), name, index in the task, input and output summaries,
    token usage, latency, whether a replay answered it (None outside a replay) and its input hash.
    Columns: :data:`CALL_COLUMNS`."""
    import pandas as pd

    tasks = await arecorded_tasks(graph, config)
    rows = [
        {
            "checkpoint_id": task.checkpoint_id,
            "task_id": task.task_id,
            "node": task.node,
            "kind": entry.get("kind"),
            "name": entry.get("name"),
            "index": entry.get("i"),
            "input": entry.get("input"),
            "output": entry.get("output"),
            "tokens": entry.get("tokens"),
            "latency_ms": entry.get("ms"),
            "replayed": entry.get("replayed"),
            "hash": entry.get("hash"),
        }
        for task in tasks.values()
        for entry in task.calls
    ]
    frame = pd.DataFrame(rows, columns=CALL_COLUMNS)
    frame.attrs.update(thread_id=(config.get("configurable") or {}).get("thread_id"))
    return frame


def recorded_calls(graph: GraphLike, config: RunnableConfig) -> pd.DataFrame:
    """Sync twin of :func:`arecorded_calls`."""
    return run_sync(arecorded_calls(graph, config))


async def areplay_source(
    graph: GraphLike, config: RunnableConfig, *, strict: bool = False, any_version: bool = False
) -> ReplaySource:
    """The :class:`ReplaySource` :func:`replaying` uses (for async code: ``with
    use_replay(await areplay_source(graph, config)):``); same checks and errors."""
    tasks = await arecorded_tasks(graph, config)
    thread_id = str((config.get("configurable") or {}).get("thread_id"))
    if not tasks:
        raise ValueError(
            f"thread {thread_id!r} has no recorded calls to replay (was it run with a "
            "checkpointer, and with recording on?)"
        )
    if not any_version:
        _check_versions(graph, thread_id, tasks)
    return ReplaySource.from_tasks(
        {t.task_id: {"node": t.node, "calls": t.calls} for t in tasks.values()},
        strict=strict,
        thread_id=thread_id,
    )


@contextlib.contextmanager
def replaying(
    graph: GraphLike, config: RunnableConfig, *, strict: bool = False, any_version: bool = False
) -> Iterator[ReplaySource]:
    """Runs inside the block answer each chat model, LLM, embedding, tool and ``once()`` call
    (a streamed one with its recorded chunks) from the recording of thread ``config`` (all
    its branches): a call of node N with index i is answered by a recorded call of N with
    index i and the same input hash. A call whose input changed goes live (``strict``:
    raises :class:`ReplayMismatchError`). The source yielded lists what was ``replayed`` and
    what went ``live``; the runs also record it (column ``replayed`` of
    :func:`recorded_calls`).

    Raises ``ValueError`` naming the thread when it recorded no call, or when its recording
    comes from another version of the graph's structure (``any_version=True`` replays it
    anyway)."""
    source = run_sync(areplay_source(graph, config, strict=strict, any_version=any_version))
    with use_replay(source):
        yield source


def _thread_of(config: RunnableConfig) -> tuple[str, str]:
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise ValueError("the config names no thread: give {'configurable': {'thread_id': ...}}")
    return str(thread_id), str(configurable.get("checkpoint_ns") or "")


def _check_versions(graph: GraphLike, thread_id: str, tasks: Mapping[str, RecordedTask]) -> None:
    from durable_debug.graph.pregel import CompiledStateGraph

    if not isinstance(graph, CompiledStateGraph):  # a LangGraph compiled graph: no fingerprint
        return
    now = graph_version(graph)
    for task in tasks.values():
        if task.graph_version is not None and task.graph_version != now:
            raise ValueError(
                f"thread {thread_id!r}, task {task.task_id} (node {task.node!r}, checkpoint "
                f"{task.checkpoint_id}): recorded by another version of the graph "
                f"({task.graph_version}, now {now}); its calls would answer another graph's "
                "calls. Pass any_version=True to replay it anyway"
            )


# -- running one recorded task ---------------------------------------------------------------


@dataclass
class TaskRun:
    """One task of a checkpoint run again, nothing saved."""

    checkpoint_id: str
    node: str
    task_id: str
    input: Any
    """The input the task received (reassembled from the checkpoint)."""
    writes: list[tuple[str, Any]] = field(default_factory=list)
    error: BaseException | None = None
    replayed: list[dict[str, Any]] = field(default_factory=list)
    live: list[dict[str, Any]] = field(default_factory=list)


async def _arun_task(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    record: CheckpointRecord,
    task: Task,
    source: ReplaySource,
    thread_id: str,
    trace: Any = None,
    *,
    checkpoint_ns: str = "",
    store: Any = None,
) -> TaskRun:
    """Run ``task`` of ``record`` once with ``source`` answering its calls; save nothing.

    A sync node runs on this thread (``trace``, when given, is this thread's trace function
    while the node runs: the debugger's hook). ``graph`` is the graph the task belongs to (a
    subgraph for a task of namespace ``checkpoint_ns``), ``store`` the root graph's store when
    it is not ``graph``'s own."""
    channels = restore_channels(graph, record.checkpoint)  # type: ignore[arg-type]  # a saved Checkpoint, typed a Mapping in CheckpointRecord
    config: dict[str, Any] = {
        "configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
    }
    run = TaskRun(record.id, task.name, task.id, task.input)
    scratchpad = Scratchpad(
        task.id, list(task.resume), can_interrupt=False, node=task.name, nesting=Nesting(None)
    )
    scratchpad.namespace, scratchpad.path = task_namespace(checkpoint_ns, task), task.path
    scratchpad.once = list(task.once)
    recording = RunRecording(config)
    token = set_scratchpad(scratchpad)
    step = record.step + 1
    with use_replay(source):
        taping = recording.start(task.name, task.id, record.id)
        try:
            own = node_config(config, task, step, record.id)
            own_ns = own["metadata"]["langgraph_checkpoint_ns"]
            info = ExecutionInfo(record.id, own_ns, task.id, thread_id, node_attempt=1)
            context = CallContext(
                own,
                Runtime(store=store if store is not None else graph.store),
                info,
            )
            previous = sys.gettrace()
            if trace is not None:
                sys.settrace(trace)
            try:
                assert task.node.style is not None
                result = await call(task.node.style, task.input, context, inline=True)
            finally:
                if trace is not None:
                    sys.settrace(previous)
            task.writes = await node_writes(graph, task, from_langgraph(result), channels, context)
            run.writes = [(ch, v) for ch, v in task.writes if ch != NO_WRITES]
        except Exception as exc:
            run.error = exc
        finally:
            recording.stop(taping)
            reset_scratchpad(token)
    run.replayed = [c for c in source.replayed if c["task_id"] == task.id]
    run.live = [c for c in source.live if c["task_id"] == task.id]
    return run


def _require_engine(graph: GraphLike, what: str) -> CompiledStateGraph[Any, Any, Any, Any]:
    """``graph``, as ``what`` runs nodes through durable_debug's engine: a graph of another
    library (a LangGraph compiled graph) is refused by name."""
    from durable_debug.graph.pregel import CompiledStateGraph

    if not isinstance(graph, CompiledStateGraph):
        raise TypeError(
            f"{what} runs a task's node with durable_debug's engine; {type(graph).__name__} is "
            "not a durable_debug compiled graph (build it with durable_debug.StateGraph)"
        )
    return graph


def _tasks_of(
    graph: CompiledStateGraph[Any, Any, Any, Any], record: CheckpointRecord, checkpoint_ns: str = ""
) -> list[Task]:
    """The tasks of the step after ``record`` (of namespace ``checkpoint_ns``), with their
    input, answers and ``once()`` results as saved."""
    channels = restore_channels(graph, record.checkpoint)  # type: ignore[arg-type]  # a saved Checkpoint, typed a Mapping in CheckpointRecord
    checkpoint: Any = record.checkpoint
    tasks = prepare_tasks(
        graph, checkpoint, channels, record.step, checkpoint_ns=checkpoint_ns, for_execution=True
    )
    saved = types.SimpleNamespace(
        pending_writes=record.pending_writes, checkpoint=record.checkpoint
    )
    records, _ = read_pending_writes(saved)  # type: ignore[arg-type]  # reads only the pending_writes and checkpoint this one has
    records, _ = adopt_legacy_writes(
        checkpoint, record.pending_writes, records, tasks, checkpoint_ns, record.step + 1
    )
    for task in tasks:
        found = records.get(task.id)
        if found is not None:
            task.resume = list(found.resume or ())
            task.once = list(found.once or ())
    return tasks


def _source_for(
    task_id: str, tasks: Mapping[str, RecordedTask], thread_id: str, recorded_as: str | None = None
) -> ReplaySource:
    """The recorded calls of task ``task_id`` (recorded under ``recorded_as`` when given: its
    older id), to replay it."""
    recorded = tasks.get(recorded_as or task_id)
    return ReplaySource(by_task={task_id: recorded.calls if recorded else []}, thread_id=thread_id)


# -- replay_check ----------------------------------------------------------------------------


@dataclass
class ReplayCheck:
    """What :func:`replay_check` found."""

    thread_id: str
    checked: int = 0
    """Tasks run again."""
    diverged: list[dict[str, Any]] = field(default_factory=list)
    """One per task whose writes differ now: ``checkpoint_id``, ``namespace`` (for a task of a
    subgraph: its checkpoint namespace, ``node:task_id``), ``node``, ``task_id``,
    ``paths`` (the differing write paths, ``channel`` or ``channel.key[2]``), ``recorded``
    and ``now`` (the writes, by channel), and ``error`` when the task now fails."""
    live_calls: list[dict[str, Any]] = field(default_factory=list)
    """The calls the code makes now that the recording does not have (made live):
    ``checkpoint_id``, ``node``, ``task_id``, ``i``, ``kind``, ``name``, ``input``."""

    @property
    def ok(self) -> bool:
        """True when every task wrote what it recorded."""
        return not self.diverged

    def __repr__(self) -> str:
        nodes = sorted({d["node"] for d in self.diverged})
        state = "ok" if self.ok else f"diverged in {nodes}"
        return (
            f"ReplayCheck(thread {self.thread_id!r}: {self.checked} tasks, {state}, "
            f"{len(self.live_calls)} live calls)"
        )


async def areplay_check(graph: GraphLike, config: RunnableConfig) -> ReplayCheck:
    """Run every task of the thread (all branches) that finished with writes again, on the
    code as it is now, with its recorded input, ``once()`` results and calls (each task's
    own recording), and compare its writes with the recorded ones. The tasks of the
    subgraphs the thread ran (each subgraph namespace that saved checkpoints) are run with
    the subgraph as it is now; their entries name the ``namespace``. Nothing is saved."""
    engine = _require_engine(graph, "replay_check")
    thread = await aread_thread(engine, config)
    report = ReplayCheck(thread.thread_id)
    await _check_thread(engine, thread, "", engine.store, report)
    for namespace in await asubgraph_namespaces(engine, thread.thread_id):
        subgraph = graph_at(engine, namespace)
        inner = await aread_thread(engine, thread_config(thread.thread_id, namespace))
        await _check_thread(subgraph, inner, namespace, engine.store, report)
    return report


async def _check_thread(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    thread: Any,
    namespace: str,
    store: Any,
    report: ReplayCheck,
) -> None:
    """:func:`areplay_check` for the checkpoints of one namespace (``graph``: the graph whose
    checkpoints they are)."""
    tasks = _recorded_tasks(thread.thread_id, ((r.id, r.debug) for r in thread))
    where = {"namespace": namespace} if namespace else {}
    for record in thread:
        if not record.pending_writes:
            continue
        saved = types.SimpleNamespace(
            pending_writes=record.pending_writes, checkpoint=record.checkpoint
        )
        done, _ = read_pending_writes(saved)  # type: ignore[arg-type]  # reads only the pending_writes and checkpoint this one has
        scheduled = _tasks_of(graph, record, namespace)
        # A thread an older version saved keys writes and recordings by its older task ids.
        done, older = adopt_legacy_writes(
            record.checkpoint,
            record.pending_writes,
            done,
            scheduled,
            namespace,
            record.step + 1,
        )
        for task in scheduled:
            was = done.get(task.id)
            if task.name == START or was is None or not was.finished or was.error:
                continue
            if graph.subgraph_of(task.name) is not None:
                continue  # a subgraph node: its own tasks are checked in its namespace
            source = _source_for(task.id, tasks, thread.thread_id, older.get(task.id))
            run = await _arun_task(
                graph, record, task, source, thread.thread_id, checkpoint_ns=namespace, store=store
            )
            report.checked += 1
            for live in run.live:
                report.live_calls.append({"checkpoint_id": record.id, **where, **live})
            recorded = _by_channel(was.writes)
            found = {"checkpoint_id": record.id, **where, "node": task.name, "task_id": task.id}
            if run.error is not None:
                report.diverged.append(
                    {
                        **found,
                        "paths": sorted(recorded),
                        "recorded": recorded,
                        "now": {},
                        "error": repr(run.error),
                    }
                )
                continue
            now = _by_channel(run.writes)
            paths = _differing_paths(recorded, now)
            if paths:
                report.diverged.append({**found, "paths": paths, "recorded": recorded, "now": now})


def replay_check(graph: GraphLike, config: RunnableConfig) -> ReplayCheck:
    """Sync twin of :func:`areplay_check`."""
    return run_sync(areplay_check(graph, config))


def replay_text(report: ReplayCheck) -> str:
    """The report as ``%replay_check`` and ``durable-debug replay-check`` print it."""
    if report.ok:
        lines = [f"thread {report.thread_id!r}: {report.checked} tasks write what they recorded"]
    else:
        lines = [
            f"thread {report.thread_id!r}: {len(report.diverged)} of {report.checked} tasks "
            "write something else now"
        ]
    for found in report.diverged:
        inside = f", subgraph {found['namespace']}" if found.get("namespace") else ""
        where = (
            f"  {found['node']} (task {found['task_id']}, checkpoint {found['checkpoint_id']}"
            f"{inside})"
        )
        if "error" in found:
            lines.append(f"{where}: now fails with {found['error']}")
        else:
            lines.append(f"{where}: differs at {', '.join(found['paths'])}")
    for live in report.live_calls:
        lines.append(
            f"  live call: {live['node']} call {live['i']} ({live['kind']} {live['name']!r}) "
            f"at checkpoint {live['checkpoint_id']}: its input is not in the recording"
        )
    return "\n".join(lines)


def _by_channel(writes: list[tuple[str, Any]]) -> dict[str, Any]:
    """Writes by channel (several writes to one channel: a list of them), state writes only."""
    kept: dict[str, list[Any]] = {}
    for channel, value in writes:
        if channel in SPECIAL_CHANNELS or channel == NO_WRITES:
            continue
        kept.setdefault(channel, []).append(value)
    return {ch: values[0] if len(values) == 1 else values for ch, values in kept.items()}


def _differing_paths(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The paths where ``now`` differs from ``recorded``. Message ids are left out: the engine
    gives a message without one an id when it saves the write, and a fresh run makes new ones."""
    recorded, now = _without_ids(recorded), _without_ids(now)
    paths: list[str] = []
    for channel in [*recorded, *(c for c in now if c not in recorded)]:
        if channel not in now or channel not in recorded:
            paths.append(channel)
            continue
        changes = path_changes(recorded[channel], now[channel], channel)
        paths.extend(sorted({c["path"] or channel for c in changes}))
    return paths


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_without_ids(v) for v in value)
    is_message = hasattr(value, "content") and hasattr(value, "model_copy")
    if is_message and getattr(value, "id", None) is not None:
        return value.model_copy(update={"id": None})
    return value


# -- debug_task ------------------------------------------------------------------------------


async def adebug_task(
    graph: GraphLike,
    config: RunnableConfig,
    node: str,
    *,
    debugger: pdb.Pdb | None = None,
    stop: bool = True,
) -> TaskRun:
    """Run the task of ``node`` of the checkpoint ``config`` names (the thread's latest when
    it names none) with its exact input, under ``pdb``: it stops at the node's first line
    (``stop=False``: only at an exception), and at the exception, post-mortem, for a task
    that fails. Its model, tool and ``once()`` calls are answered from its recording (a call
    it did not record goes live). Nothing is saved. ``debugger``: a ``pdb.Pdb`` of your own
    (tests give one reading commands from a string)."""
    engine = _require_engine(graph, "debug_task")
    thread = await aread_thread(graph, config)
    if not len(thread):
        raise CheckpointNotFoundError(f"thread {thread.thread_id!r} has no checkpoints")
    record = thread.resolve(config)
    tasks = [t for t in _tasks_of(engine, record) if t.name == node]
    if not tasks:
        names = sorted({t.name for t in _tasks_of(engine, record)})
        raise ValueError(
            f"thread {thread.thread_id!r}, checkpoint {record.id}: no task of node {node!r} "
            f"runs from it (its tasks: {names})"
        )
    task = tasks[0]
    recorded = _recorded_tasks(thread.thread_id, ((r.id, r.debug) for r in thread))
    source = _source_for(task.id, recorded, thread.thread_id)
    import pdb  # only when stepping into a task: the CLI and magics start without it

    debugger = debugger or pdb.Pdb()
    target = task.node.style.target if task.node.style is not None else None
    trace = _stop_in(_code_of(target), debugger) if stop else None
    run = await _arun_task(engine, record, task, source, thread.thread_id, trace=trace)
    if run.error is not None and run.error.__traceback__ is not None:
        debugger.reset()
        debugger.interaction(None, run.error.__traceback__)
    return run


def debug_task(
    graph: GraphLike,
    config: RunnableConfig,
    node: str,
    *,
    debugger: pdb.Pdb | None = None,
    stop: bool = True,
) -> TaskRun:
    """Sync twin of :func:`adebug_task`."""
    return run_sync(adebug_task(graph, config, node, debugger=debugger, stop=stop))


def _code_of(fn: Any) -> Any:
    """The code object of a node's function (through bound methods and wrappers)."""
    seen = 0
    while seen < 10:
        seen += 1
        code = getattr(fn, "__code__", None)
        if code is not None:
            return code
        fn = (
            getattr(fn, "__func__", None)
            or getattr(fn, "__wrapped__", None)
            or getattr(fn, "func", None)
        )
        if fn is None:
            return None
    return None


def _stop_in(code: Any, debugger: pdb.Pdb) -> Any:
    """A trace function that hands the first frame running ``code`` to ``debugger``."""

    def trace(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code is code:
            debugger.set_trace(frame)
            return debugger.trace_dispatch
        return None

    return trace
