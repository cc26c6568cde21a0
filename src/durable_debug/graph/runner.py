"""Run one task: call the node's function (sync or async, with retries), catch its interrupt
or error, and turn its return value into writes.

Sync functions run in a worker thread so that an ``ainvoke`` in a notebook never blocks the
kernel's event loop, except when a lone task runs for a synchronous ``invoke`` (the caller is
blocked anyway, and the thread hop would only cost time).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import random
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import durable_debug.graph.cache as cache
import durable_debug.graph.hooks as hooks
from durable_debug._sync import in_runner_thread
from durable_debug.checkpoint.base import ONCE, checkpoint_config
from durable_debug.graph import ids
from durable_debug.graph.algo import PULL, Task, task_path_str
from durable_debug.graph.calls import (
    _CURRENT,
    _LANGCHAIN_VAR,
    CallContext,
    Runtime,
    _set_langchain_config,
    call,
)
from durable_debug.graph.delta_counters import delta_frequencies
from durable_debug.graph.interrupts import _SCRATCHPAD, Scratchpad, current_scratchpad
from durable_debug.graph.managed import managed_values
from durable_debug.graph.message_ids import ensure_message_ids
from durable_debug.graph.nodes import (
    NO_WRITES,
    branch_channel,
    command_update_pairs,
    fresh_state,
    state_writes,
    targets_to_writes,
)
from durable_debug.graph.recording import _TAPE, RunRecording
from durable_debug.graph.subgraph import Nesting
from durable_debug.graph.timeouts import AttemptClock, NodeCancelledError
from durable_debug.graph.types import (
    START,
    Command,
    GraphInterrupt,
    ParentCommand,
    RetryPolicy,
    Send,
    from_langgraph,
)

if TYPE_CHECKING:
    from durable_debug.graph.channels import Channel
    from durable_debug.graph.findings import RunFindings
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["edge_writes", "node_config", "node_writes", "run_task"]

_new_object = object.__new__
"""Makes an object without calling its class's ``__init__`` (a task's :class:`Scratchpad`
and :class:`CallContext`)."""

_OUTCOMES: dict[str | None, hooks.Outcome] = {
    "done": "ok",
    "error": "error",
    "interrupt": "interrupt",
    "cancelled": "cancelled",
}
"""A finished task's status → the outcome its ``finish`` event reports."""


async def run_task(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    channels: dict[str, Channel],
    *,
    step: int,
    config: dict[str, Any],
    checkpoint_id: str,
    alone: bool,
    runtime: Runtime[Any] | None = None,
    message_tap: Any = None,
    nesting: Nesting | None = None,
    graph_run: Any = None,
    findings: RunFindings | None = None,
    recording: RunRecording | None = None,
) -> None:
    """Execute ``task`` and record its outcome on it (status, writes, error, interrupts).

    ``runtime`` carries the run's context, store and stream writer; ``message_tap`` (stream
    mode ``"messages"``) sees the node's input and output; ``nesting`` is what a graph the
    node runs inherits (the run's saver, see ``subgraph.py``); ``graph_run`` (a
    ``callbacks.GraphRun``) is the run's callback run, when its config has callbacks: each
    attempt of the node is a child run of it. ``findings`` collects what the node let pass
    (a write to a key the schema lacks, dropped as LangGraph drops it; without it, an error).
    ``recording`` keeps the model, tool and ``once()`` calls the node makes (``recording.py``).
    Never raises for the node's own exceptions; only cancellation propagates.
    """
    spec = task.node
    runtime = runtime or Runtime()
    if spec.name == START:  # the virtual START node: not a user function, not observed
        try:
            context = CallContext(node_config(config, task, step), runtime)
            node_run = None
            if graph_run is not None:
                node_run = await graph_run.node(spec, task.input, step, context.config)
            try:
                task.writes = await _start_writes(graph, task, channels, context, node_run)
            except Exception as exc:
                if node_run is not None:
                    await node_run.error(exc)
                raise
            if node_run is not None:
                await node_run.end(task.input)
            task.status = "done"
        except Exception as exc:
            task.status, task.error = "error", exc
        return
    if spec.cache_policy is not None and cache.lookup(graph, task):  # cached: does not run
        return
    configurable = config.get("configurable") or {}
    run = _LAST_RUN_VALUES  # _run_values's check, made here
    if run[0] is not config.get("metadata") or run[1] is not configurable:
        run = _run_values(config, configurable)
    _, _, shared, thread_id, checkpoint_ns, graph_ns = run
    own_ns = ids.task_namespace(graph_ns, task.name, task.id)
    nesting = nesting or Nesting(graph.checkpointer)
    # Scratchpad(...) with these values, set field by field (its keyword __init__ costs
    # about as much as the rest of a trivial task's setup); the fields left out keep the
    # class's defaults, the mutable ones are the task's own.
    scratchpad = _new_object(Scratchpad)
    scratchpad.task_id = task.id
    scratchpad.resume = [*task.resume]
    scratchpad.namespace = own_ns
    scratchpad.path = task.path
    scratchpad.can_interrupt = nesting.saver is not None or nesting.resumable
    scratchpad.node = spec.name
    scratchpad.nesting = nesting
    scratchpad.answers = nesting.answers
    scratchpad.spare = nesting.spare
    scratchpad.once = [*task.once]
    scratchpad.root = nesting.root or task.id
    scratchpad.findings = findings
    scratchpad.managed = {}
    scratchpad.pushed = []
    reader = spec.input_schema or graph.schema
    stop = nesting.stop
    # The managed values go into the state a node reads (not into a Send's packet).
    if (
        reader.managed
        and stop is not None
        and task.path[0] == PULL
        and isinstance(task.input, dict)
    ):
        scratchpad.managed = managed_values(reader.managed, step, stop)
        task.input = {**task.input, **scratchpad.managed}
    saver = graph.checkpointer
    if saver is not None and thread_id is not None:
        settle = nesting.settle
        # a partial, not a closure: run_task's own variables stay plain locals
        scratchpad.save_once = functools.partial(
            _save_once, saver, settle, thread_id, checkpoint_ns, checkpoint_id, task
        )
        scratchpad.before_effect = settle

    token = _SCRATCHPAD.set(scratchpad)
    taping = recording.start(spec.name, task.id, checkpoint_id) if recording is not None else None
    attempt = 0
    first_attempt = time.time()
    given_run_id = config.get("run_id")  # as calls.config_run_id gives it
    run_id = str(given_run_id) if given_run_id else None
    inline = False
    try:
        while True:
            attempt += 1
            if attempt > 1:  # a retry starts from a clean slate
                if taping is not None:
                    RunRecording.restart(taping)
                scratchpad.counter = scratchpad.once_counter = scratchpad.subgraph_calls = 0
                scratchpad.calls = 0
                scratchpad.pushed = []
            # what the task observers (hooks.py) are told of, when there are any
            observed = (
                (task, step, checkpoint_id, thread_id, checkpoint_ns) if hooks.observers else None
            )
            if observed is not None:
                _notify(*observed, "start")
            try:
                own_config = _node_config(
                    config, configurable, shared, graph_ns, own_ns, task, step, checkpoint_id
                )
                info = (  # ExecutionInfo's fields, made into one if the node asks (few do)
                    checkpoint_id,
                    own_ns,
                    task.id,
                    thread_id,
                    run_id,
                    attempt,
                    first_attempt,
                )
                timeout = task.timeout or spec.timeout  # a Send's replaces its node's
                clock = AttemptClock(timeout, spec.name) if timeout else None
                # CallContext(own_config, runtime, info, task.node_error), set field by field
                context = _new_object(CallContext)
                context.config = own_config
                context._runtime = (
                    runtime if clock is None else runtime.override(heartbeat=clock.heartbeat)
                )
                context._info = info
                context.node_error = task.node_error
                style = spec.style
                assert style is not None
                inline = (
                    alone
                    and not style.bare  # (an async function: awaited on the loop)
                    and (not style.is_async or style.sync_target is not None)
                    and in_runner_thread()
                )
                if inline:  # (the same on every attempt; the class's default is False)
                    scratchpad.inline = True
                if message_tap is not None:
                    message_tap.node_input(task.input)
                node_run = None
                if graph_run is not None:
                    node_run = await graph_run.node(spec, task.input, step, context.config)
                    context.config = node_run.child_config(context.config)
                if clock is not None and clock.auto:
                    context.config, watched = clock.watch_progress(context.config, context.runtime)
                    context = CallContext(context.config, watched, None, task.node_error)
                try:
                    try:
                        if style.bare and node_run is None and clock is None:
                            # what ``call`` does for such a node, without its coroutine: the
                            # node's context (and LangChain's config) current while it runs
                            call_token = _CURRENT.set(context)
                            lc_token: tuple[Any, Any] | None
                            if _LANGCHAIN_VAR:
                                lc_var = _LANGCHAIN_VAR[0]
                                lc_token = lc_var, lc_var.set(own_config)
                            else:
                                lc_token = _set_langchain_config(own_config)
                            try:
                                result = await style.target(task.input)
                            finally:
                                if lc_token is not None:
                                    lc_token[0].reset(lc_token[1])
                                _CURRENT.reset(call_token)
                        else:
                            body = call(
                                style, task.input, context, inline=inline, node_run=node_run
                            )
                            parent = node_run.tracing_parent() if node_run is not None else None
                            if parent is None:
                                result = await (body if clock is None else clock.run(body))
                            else:  # the node's code runs inside its LangSmith run tree
                                from langsmith.run_helpers import tracing_context

                                with tracing_context(parent=parent):
                                    result = await (body if clock is None else clock.run(body))
                    except ParentCommand as exc:  # from a subgraph this node ran: its result
                        result = dataclasses.replace(exc.command, graph=None)
                    finally:
                        task.resume = [*scratchpad.resume]  # with answers it took as spare
                    if type(result) is not dict:
                        result = from_langgraph(result)
                        if isinstance(result, Command) and result.graph == Command.PARENT:
                            raise ParentCommand(result)  # for the graph running this one
                    if message_tap is not None:
                        message_tap.node_output(result, context.config["metadata"])
                    if spec.writer is None and not spec.branches:  # nothing to await
                        plain = graph.schema.plain_updates(result)
                        if plain is not None and not delta_frequencies(graph):
                            # what _writes_before_branches makes of a plain dict, made here
                            writes = [*plain.items(), *_static_edge_writes(task)] or [
                                (NO_WRITES, None)
                            ]
                        else:
                            writes = _writes_before_branches(
                                graph, task, result, channels, findings, plain
                            )[0] or [(NO_WRITES, None)]
                    else:
                        writes = await node_writes(
                            graph, task, result, channels, context, node_run, findings
                        )
                    if scratchpad.pushed:  # push_message()'s writes come first
                        writes = scratchpad.pushed + [w for w in writes if w[0] != NO_WRITES]
                except (Exception, asyncio.CancelledError) as exc:  # cancelled: a sibling failed
                    if node_run is not None:
                        await node_run.error(exc)
                    raise
                if node_run is not None:
                    await node_run.end(result)
                task.writes = writes
                task.status = "done"
                if spec.cache_policy is not None:
                    cache.remember(graph, task)
                if observed is None:
                    return  # nothing to report, nothing to retry
            except GraphInterrupt as exc:
                task.status, task.interrupts = "interrupt", exc.interrupts
            except ParentCommand as exc:  # ends this run; never retried
                task.status, task.error = "error", exc
            except asyncio.CancelledError as exc:
                if not _cancelled_from_outside():  # the node's own code raised it
                    task.status, task.error = "error", NodeCancelledError(spec.name)
                    task.error.__cause__ = exc
                else:
                    task.status = "cancelled"
                    if observed is not None:
                        _notify(*observed, "finish", "cancelled")
                    raise
            except Exception as exc:
                task.status, task.error = "error", exc
            if observed is not None:
                error = repr(task.error) if task.error else None
                _notify(*observed, "finish", _OUTCOMES[task.status], error)
            wait = 0.0
            if task.status == "error" and not isinstance(task.error, ParentCommand):
                wait = _retry_wait(spec.retry, task.error, attempt)
            if not wait:
                return
            if inline:  # a sync run's lone task: its caller waits anyway, as LangGraph's
                time.sleep(wait)  # sync loop does (tests patch time.sleep to watch back-off)
            else:
                await asyncio.sleep(wait)
            task.status, task.error = None, None
    finally:
        if taping is not None:  # RunRecording.stop
            _TAPE.reset(taping[1])
        _SCRATCHPAD.reset(token)


async def _save_once(
    saver: Any,
    settle: Any,
    thread_id: Any,
    checkpoint_ns: Any,
    checkpoint_id: str,
    task: Task,
    results: list[Any],
) -> None:
    """Save the results of ``task``'s ``once()`` effects (its scratchpad's ``save_once``)."""
    at = checkpoint_config(str(thread_id), str(checkpoint_ns), checkpoint_id)
    if settle is not None:  # the checkpoint the write belongs to is saved first
        await settle()
    await saver.aput_writes(at, [(ONCE, results)], task.id, task_path_str(task.path))


def _notify(
    task: Task,
    step: int,
    checkpoint_id: str,
    thread_id: Any,
    checkpoint_ns: Any,
    kind: hooks.EventKind,
    outcome: hooks.Outcome | None = None,
    error: str | None = None,
) -> None:
    """Tell the task observers (``hooks.py``) that ``task`` started or finished."""
    hooks.notify(
        hooks.TaskEvent(
            kind, thread_id, checkpoint_ns, checkpoint_id, step, task.name, task.id, outcome, error
        )
    )


def _cancelled_from_outside() -> bool:
    """Whether the running task was asked to stop (a sibling failed, the run was cancelled),
    rather than a node raising ``asyncio.CancelledError`` of its own. Python 3.10's tasks
    do not count the requests (no ``cancelling()``): there every cancellation counts as
    asked for."""
    current = asyncio.current_task()
    if current is None or sys.version_info < (3, 11):
        return True
    return current.cancelling() > 0


def _retry_wait(policies: Sequence[RetryPolicy], exc: BaseException | None, attempt: int) -> float:
    """Seconds to wait before retrying after ``attempt`` failed; 0 means do not retry.

    The first policy whose ``retry_on`` matches the error decides (attempts are counted
    across policies, as LangGraph does).
    """
    if exc is None:
        return 0.0
    policy = next((p for p in policies if p.should_retry(exc)), None)
    if policy is None or attempt >= policy.max_attempts:
        return 0.0
    wait = min(
        policy.max_interval, policy.initial_interval * policy.backoff_factor ** (attempt - 1)
    )
    if policy.jitter:
        wait += random.uniform(0, 1)
    return max(wait, 1e-6)


def node_config(
    config: dict[str, Any], task: Task, step: int, checkpoint_id: str | None = None
) -> dict[str, Any]:
    """The config a node receives as its ``config`` parameter (LangGraph's metadata keys).

    As in LangGraph, its ``checkpoint_ns`` is the task's own namespace (where a graph the
    node runs saves its checkpoints) and ``checkpoint_map`` maps each enclosing namespace to
    the checkpoint its task runs from (a nested graph's ``metadata["parents"]``).
    """
    configurable = config.get("configurable") or {}
    run = _run_values(config, configurable)
    shared, graph_ns = run[2], run[5]
    own_ns = task_namespace(graph_ns, task)
    return _node_config(config, configurable, shared, graph_ns, own_ns, task, step, checkpoint_id)


def _node_config(
    config: dict[str, Any],
    configurable: Mapping[str, Any],
    shared: dict[str, Any],
    graph_ns: str,
    own_ns: str,
    task: Task,
    step: int,
    checkpoint_id: str | None,
) -> dict[str, Any]:
    """:func:`node_config` given the run's ``configurable``, its :func:`run_metadata`
    (``shared``, not to be changed), its namespace and the task's."""
    metadata = {
        **shared,
        "langgraph_step": step,
        "langgraph_node": task.name,
        "langgraph_triggers": task.listed_triggers,
        "langgraph_path": task.path,
        "langgraph_checkpoint_ns": own_ns,
    }
    if checkpoint_id is not None:
        parents = configurable.get("checkpoint_map")
        own_configurable = {
            **configurable,
            "checkpoint_map": {**parents, graph_ns: checkpoint_id}
            if parents
            else {graph_ns: checkpoint_id},
            "checkpoint_id": None,
            "checkpoint_ns": own_ns,
        }
    else:
        own_configurable = dict(configurable)
    # a run name given to a runnable node names that run only, not the runs of a graph it is
    outer = {**config, "configurable": own_configurable, "metadata": metadata}
    if "run_name" in config:  # the pop, a method call, only for a config that has one
        outer.pop("run_name")
    return outer


_RunValues = tuple[Any, Any, dict[str, Any], Any, Any, str]
"""What :func:`_run_values` gives: ``(metadata, configurable, run metadata, thread_id,
checkpoint_ns, graph namespace)``."""

_LAST_RUN_VALUES: _RunValues = (None, None, {}, None, "", "")
"""The last :func:`_run_values` made (the tasks of a run share them)."""


def _run_values(config: dict[str, Any], configurable: Mapping[str, Any]) -> _RunValues:
    """What every task of a run takes from its ``config`` (whose ``configurable`` is given):
    that ``metadata`` and ``configurable`` (the objects), the :func:`run_metadata` (not to be
    changed), the ``thread_id``, the ``checkpoint_ns`` as given and as a string (the graph's
    namespace). Made again only when ``metadata`` or ``configurable`` is another object."""
    global _LAST_RUN_VALUES
    given = config.get("metadata")
    last = _LAST_RUN_VALUES
    if last[0] is given and last[1] is configurable:
        return last
    checkpoint_ns = configurable.get("checkpoint_ns", "")
    made = (
        given,
        configurable,
        run_metadata(config),
        configurable.get("thread_id"),
        checkpoint_ns,
        str(checkpoint_ns or ""),
    )
    _LAST_RUN_VALUES = made
    return made


_PROPAGATED = (
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "task_id",
    "run_id",
    "assistant_id",
    "graph_id",
)
"""The ``configurable`` keys a node's config metadata copies (LangGraph's list); the run's
other configurable keys stay out of it."""


def run_metadata(config: dict[str, Any]) -> dict[str, Any]:
    """A run's metadata as LangGraph's configs give it: ``metadata`` plus the run's address
    keys among its ``configurable`` ones (``thread_id``…, see :data:`_PROPAGATED`)."""
    metadata = dict(config.get("metadata") or {})
    configurable = config.get("configurable") or {}
    for key in _PROPAGATED:
        if key in configurable and key not in metadata and configurable[key]:
            metadata[key] = configurable[key]
    return metadata


def task_namespace(parent_ns: str, task: Task) -> str:
    """The namespace of a task's own work, ``node:task_id`` (under its graph's namespace)."""
    return ids.task_namespace(parent_ns, task.name, task.id)


async def node_writes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    result: Any,
    channels: dict[str, Channel],
    context: CallContext,
    node_run: Any = None,
    findings: RunFindings | None = None,
) -> list[tuple[str, Any]]:
    """A node's return value plus its outgoing edges, as ``(channel, value)`` writes. A key
    the schema lacks is dropped and reported to ``findings`` (quietly for a compiled graph
    added as a node: it returns its own state, of which the parent keeps its keys, as in
    LangGraph)."""
    spec = task.node
    if spec.writer is not None:  # a low-level Pregel node writes where it was told to
        return spec.writer(result) or [(NO_WRITES, None)]
    writes, updates = _writes_before_branches(graph, task, result, channels, findings)
    if spec.branches:
        writes += await _branch_writes(graph, task, updates, channels, context, node_run, result)
    return writes or [(NO_WRITES, None)]


_UNKNOWN: Any = object()
"""Not given (:func:`_writes_before_branches`'s ``plain``)."""


def _writes_before_branches(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    result: Any,
    channels: dict[str, Channel],
    findings: RunFindings | None,
    plain: Any = _UNKNOWN,
) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """:func:`node_writes` up to its conditional edges (all of it for a node that has none,
    which is then done without awaiting anything), and the state updates among them.
    ``plain`` is the schema's ``plain_updates(result)`` when the caller has it."""
    spec = task.node
    if plain is _UNKNOWN:
        plain = graph.schema.plain_updates(result)
    goto: list[Any] = []
    if plain is not None:  # the common case: nothing to check, so nothing to report
        updates = [*plain.items()]
    else:
        on_unknown = None
        if findings is not None:
            fn: object = spec.fn  # a compiled subgraph added as a node is its own fn
            is_subgraph = fn is not None and graph.subgraph_of(spec.name) is fn
            on_unknown = findings.on_unknown_key(spec.name, quiet=is_subgraph)
        updates, goto = state_writes(graph.schema, spec.name, result, on_unknown)
    if delta_frequencies(graph):  # only a DeltaChannel key's messages are given ids
        updates = ensure_message_ids(channels, updates)
    writes: list[tuple[str, Any]] = [*updates]
    if goto:
        writes += targets_to_writes(spec.name, goto, graph.nodes)
    writes += _static_edge_writes(task)
    return writes, updates


def _static_edge_writes(task: Task) -> tuple[tuple[str, Any], ...]:
    """The writes of a node's plain edges (triggers) and joins (barrier entries), made once
    per node for as long as its edges stay the ones they were made from (shared: not to be
    changed)."""
    spec = task.node
    made: tuple[Any, Any, tuple[tuple[str, Any], ...]] | None = spec.__dict__.get(_EDGE_WRITES)
    if made is None or made[0] is not spec.edges_to or made[1] is not spec.joins:
        writes: list[tuple[str, Any]] = [(branch_channel(dst), None) for dst in spec.edges_to]
        writes += [(join, spec.name) for join in spec.joins]
        made = (spec.edges_to, spec.joins, tuple(writes))
        spec.__dict__[_EDGE_WRITES] = made
    return made[2]


_EDGE_WRITES = "_edge_writes"
"""Where :func:`_static_edge_writes` keeps a node's edge writes (in the node's ``__dict__``;
not a field: copies and comparisons of the node ignore it)."""


async def edge_writes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    updates: Mapping[str, Any] | Sequence[tuple[str, Any]],
    channels: dict[str, Channel],
    context: CallContext | None = None,
    node_run: Any = None,
    output: Any = None,
) -> list[tuple[str, Any]]:
    """Writes made by the node's edges: triggers for plain edges, barrier entries for joins,
    and whatever its conditional edges pick on the state including ``updates`` (and, as
    LangGraph passes them, the other keys of the node's returned dict ``output``).

    Conditional edges are called as nodes are (``context`` gives their ``config`` and
    ``runtime``), on the event loop's thread; each is a child run of ``node_run`` when the
    run reports to callback handlers."""
    writes = [*_static_edge_writes(task)]
    if task.node.branches:
        writes += await _branch_writes(graph, task, updates, channels, context, node_run, output)
    return writes


async def _branch_writes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    updates: Mapping[str, Any] | Sequence[tuple[str, Any]],
    channels: dict[str, Channel],
    context: CallContext | None,
    node_run: Any,
    output: Any,
) -> list[tuple[str, Any]]:
    """The writes of the targets a node's conditional edges pick (see :func:`edge_writes`)."""
    spec = task.node
    writes: list[tuple[str, Any]] = []
    pad = current_scratchpad()
    context = context or CallContext({})
    for index, branch in enumerate(spec.branches):
        reader = branch.input_schema or spec.input_schema
        passed = output if branch.input_schema is None else None
        state = fresh_state(graph.schema, channels, updates, reader, passed)
        if pad is not None and pad.managed and isinstance(state, dict):
            state = {**state, **pad.managed}
        if node_run is None:
            result = await call(branch.style, state, context, inline=True)
        else:

            async def evaluate(
                config: dict[str, Any], branch: Any = branch, state: Any = state
            ) -> Any:
                return await call(branch.style, state, context.with_config(config), inline=True)

            result = await node_run.branch(branch, index, state, evaluate, context.config)
        writes += targets_to_writes(spec.name, branch.resolve(result), graph.nodes)
    return writes


def _ignore_unknown(key: str, what: str, error: BaseException) -> None:
    """A key of the run input the schema lacks, already reported when the run began."""


async def _start_writes(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    task: Task,
    channels: dict[str, Channel],
    context: CallContext,
    node_run: Any = None,
) -> list[tuple[str, Any]]:
    """The virtual START node: the run input becomes state writes, then START's edges fire."""
    # The run checked (and reported) the input when it began: unknown keys are dropped here.
    if isinstance(task.input, Command):  # a Command starting a thread: its update and goto
        accepted = graph.builder.input_schema.key_set
        update = task.input.update
        pairs = command_update_pairs(graph.schema, update, "The graph input", _ignore_unknown)
        updates = ensure_message_ids(channels, [(k, v) for k, v in pairs if k in accepted])
        goto = task.input.goto
        targets = [goto] if isinstance(goto, (str, Send)) else list(goto or ())
        edges = targets_to_writes(START, targets, graph.nodes)
        edges += await edge_writes(graph, task, updates, channels, context, node_run)
        return updates + edges
    given = graph.input_updates(task.input, on_unknown=_ignore_unknown)
    updates = ensure_message_ids(channels, list(given.items()))
    edges = [*_static_edge_writes(task)]
    if task.node.branches:
        edges += await _branch_writes(graph, task, updates, channels, context, node_run, task.input)
    return updates + edges
