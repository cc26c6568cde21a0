"""LangChain callback runs of a graph run, its nodes and its conditional edges.

A run whose config has ``callbacks`` (LangChain handlers, or a callback manager) reports to
them the way LangGraph 1.2 does:

* the graph's chain run (named after the graph, or the config's ``run_name``; its input, then
  its output state, or the error);
* under it, one chain run per node task and attempt, named after the node, tagged
  ``graph:step:N``, with the node's ``langgraph_*`` metadata; it ends with what the node
  returned, or with the error (a ``GraphInterrupt`` too). The virtual START node has a run
  (tagged ``langsmith:hidden``) only when it has a conditional edge;
* under a node's run, one run per conditional edge the node evaluates, named after the path
  function (``RunnableCallable`` for a lambda), tagged ``seq:step:K`` where K counts the
  node's function, its state writer, one writer per plain edge or join, then the branches in
  the order they were added (LangGraph's step numbers);
* a runnable node runs under the node's run: a ``RunnableSequence``'s steps are children of
  the node's run (``seq:step:1``, ``seq:step:2``, …), any other runnable is one child run.

A node function gets a config whose ``callbacks`` is the node run's child manager (tag
``seq:step:1``), so chat models, tools and runnables it calls are children of its run.

Only imported when a run's config has callbacks: LangChain is then installed.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks.base import BaseCallbackManager
from langchain_core.callbacks.manager import AsyncCallbackManager

try:  # time-ordered run ids, as LangChain gives its runs
    from langchain_core.utils.uuid import uuid7 as _new_run_id
except ImportError:  # pragma: no cover - older langchain-core
    _new_run_id = uuid.uuid4  # type: ignore[assignment]  # uuid4 takes no argument, uuid7 an optional one; both are called bare

from durable_debug._sync import in_runner_thread
from durable_debug.graph.chat_stream import GRAPH_RUN_METADATA
from durable_debug.graph.trace_policy import recorded_payload, split_tracers
from durable_debug.graph.types import TAG_HIDDEN

if TYPE_CHECKING:
    from durable_debug.graph.nodes import Branch, NodeSpec

__all__ = [
    "CallRun",
    "GraphRun",
    "NodeRun",
    "branch_run_name",
    "has_callbacks",
    "with_handler",
    "without_taps",
]


def has_callbacks(config: dict[str, Any]) -> bool:
    """True when ``config`` carries callback handlers (a list, or a manager with some)."""
    callbacks = config.get("callbacks")
    if not callbacks:
        return False
    if isinstance(callbacks, (list, tuple)):
        return True
    return bool(getattr(callbacks, "handlers", None))


def _is_tap(handler: Any) -> bool:
    """A run's ``messages`` tap (``chat_stream.py``)."""
    return bool(getattr(handler, "durable_debug_message_tap", False))


def _is_run_tap(handler: Any) -> bool:
    """A run's ``messages`` tap or ``tools`` tap (``tool_stream.py``)."""
    return _is_tap(handler) or bool(getattr(handler, "durable_debug_tool_tap", False))


def with_handler(callbacks: Any, handler: Any) -> Any:
    """``callbacks`` (None, a list or a manager) plus ``handler``, inherited by child runs."""
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        manager.add_handler(handler, inherit=True)
        return manager
    others = list(callbacks) if isinstance(callbacks, (list, tuple)) else []
    return [*others, handler]


def without_taps(callbacks: Any) -> Any:
    """``callbacks`` without the ``messages`` and ``tools`` taps of enclosing runs (see
    ``subgraph.py``)."""
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        for handler in [*manager.handlers, *manager.inheritable_handlers]:
            if _is_run_tap(handler):
                manager.remove_handler(handler)
        return manager
    if isinstance(callbacks, (list, tuple)):
        return [c for c in callbacks if not _is_run_tap(c)]
    return callbacks


def _mark_engine_run(manager: Any, run_id: uuid.UUID) -> None:
    """Tell the run's taps that ``run_id`` is the engine's own run (a graph or a node), whose
    events ``astream_events`` builds itself (see ``chat_stream.py``)."""
    for handler in manager.handlers:
        if _is_tap(handler):
            handler.engine_runs.add(run_id)


def _manager(config: dict[str, Any], callbacks: Any) -> AsyncCallbackManager:
    return AsyncCallbackManager.configure(
        inheritable_callbacks=callbacks,
        inheritable_tags=config.get("tags"),
        inheritable_metadata=config.get("metadata"),
    )


def branch_run_name(path: Any, *, sync: bool) -> str | None:
    """The name of a conditional edge's run, as LangGraph gives it: the path function's
    ``__name__``; for a lambda (or a callable without a name) ``RunnableCallable`` in a sync
    run and no name (None) in an async one. None too for a runnable, which names its own run
    (see :meth:`NodeRun.branch`)."""
    name = getattr(path, "__name__", None)
    if name and name != "<lambda>":
        return str(name)
    return "RunnableCallable" if sync else None


class GraphRun:
    """The graph's own callback run."""

    def __init__(self, run: Any) -> None:
        self.run = run

    @classmethod
    async def start(
        cls, config: dict[str, Any], name: str, input: Any, metadata: dict[str, Any]
    ) -> GraphRun:
        """Start the graph's run under ``config["callbacks"]``."""
        manager = AsyncCallbackManager.configure(
            inheritable_callbacks=config.get("callbacks"),
            inheritable_tags=config.get("tags"),
            inheritable_metadata={**GRAPH_RUN_METADATA, **metadata},
        )
        run_id = config.get("run_id") or _new_run_id()
        _mark_engine_run(manager, run_id)
        run = await manager.on_chain_start(
            None, input, name=config.get("run_name") or name, run_id=run_id
        )
        return cls(run)

    async def end(self, output: Any) -> None:
        """The graph's run ended with ``output`` (its state)."""
        await self.run.on_chain_end(output)

    async def error(self, exc: BaseException) -> None:
        """The graph's run failed (or paused inside an enclosing run) with ``exc``."""
        await self.run.on_chain_error(exc)

    async def node(
        self, spec: NodeSpec, input: Any, step: int, config: dict[str, Any]
    ) -> NodeRun | None:
        """Start the run of one attempt of a node task (None: the START node has none
        unless it has a conditional edge)."""
        hidden = spec.fn is None
        if hidden and not spec.branches:
            return None
        tags = [*(config.get("tags") or ()), *((TAG_HIDDEN,) if hidden else ())]
        manager = _manager({**config, "tags": tags}, self.run.get_child(f"graph:step:{step}"))
        run_id = _new_run_id()
        if not hidden:  # START's run is reported by the taps like a nested one
            _mark_engine_run(manager, run_id)
        policy = spec.trace_policy
        recorded = recorded_payload(input, policy.process_inputs if policy else None)
        if recorded is input:
            run = await manager.on_chain_start(None, input, name=spec.name, run_id=run_id)
            return NodeRun(run, spec, tags)
        real, tracers = split_tracers(manager)  # tracers record the policy's input
        run = await real.on_chain_start(None, input, name=spec.name, run_id=run_id)
        await tracers.on_chain_start(None, recorded, name=spec.name, run_id=run_id)
        run.handlers = manager.handlers
        return NodeRun(run, spec, tags)


class NodeRun:
    """The callback run of one attempt of a node task."""

    def __init__(self, run: Any, spec: NodeSpec, tags: list[str]) -> None:
        self.run = run
        self.spec = spec
        self.tags = tags
        """The node's config tags (the run's, plus ``langsmith:hidden`` for START)."""

    def child_config(self, config: dict[str, Any], step: int = 1) -> dict[str, Any]:
        """``config`` with the node run's child manager (tag ``seq:step:<step>``); the run's
        ``run_id`` (the graph run's own) is not passed on, as LangChain's ``patch_config``."""
        child = {**config, "tags": self.tags, "callbacks": self.run.get_child(f"seq:step:{step}")}
        child.pop("run_id", None)
        return child

    def branch_step(self, index: int) -> int:
        """LangGraph's ``seq:step`` of the node's ``index``-th conditional edge."""
        spec = self.spec
        if spec.fn is None:  # START: its input writer, then its edges and branches
            return 1 + len(spec.edges_to) + len(spec.joins) + index + 1
        steps = len(runnable_steps(spec.fn)) if spec.style and spec.style.runnable else 1
        return steps + 1 + len(spec.edges_to) + len(spec.joins) + index + 1

    async def end(self, output: Any) -> None:
        """The node returned ``output``: streaming handlers see it as the run's one chunk (as
        LangGraph streams a node's output when a handler streams), then the run ends."""
        await _stream_output(self.run, output)
        policy = self.spec.trace_policy
        recorded = recorded_payload(output, policy.process_outputs if policy else None)
        if recorded is output:
            await self.run.on_chain_end(output)
            return
        real, tracers = split_tracers(self.run)  # tracers record the policy's output
        await tracers.on_chain_end(recorded)
        await real.on_chain_end(output)

    def tracing_parent(self) -> Any:
        """The LangSmith run tree LangChain's tracer keeps for this run (None when no tracer
        follows it): the node's code runs under it, so ``get_current_run_tree()`` and
        ``@traceable`` functions see the node's run, as in LangGraph."""
        for handler in self.run.handlers:
            runs = getattr(handler, "run_map", None)
            if isinstance(runs, dict) and type(handler).__name__ == "LangChainTracer":
                return runs.get(str(self.run.run_id))
        return None

    async def error(self, exc: BaseException) -> None:
        """The node raised ``exc`` (or paused on an interrupt)."""
        await self.run.on_chain_error(exc)

    async def branch(
        self, branch: Branch, index: int, state: Any, call: Any, config: dict[str, Any]
    ) -> Any:
        """Evaluate a conditional edge under this node's run: ``call(config)`` with the
        edge's config; a function path gets a run of its own around the call."""
        child = self.child_config(config, self.branch_step(index))
        if branch.style.runnable:  # its own run is the branch's
            return await call(child)
        manager = _manager(child, child["callbacks"])
        name = branch_run_name(branch.path, sync=in_runner_thread())
        run = await manager.on_chain_start(None, state, name=name)
        try:
            result = await call({**child, "callbacks": run.get_child()})
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(result)
        return result


class CallRun:
    """The callback run of one attempt of a ``@task`` call: a child of its caller's run
    (the node, entrypoint or task that called it), named after the task, with the call's
    arguments by parameter name as its input, as LangGraph traces it."""

    def __init__(self, run: Any) -> None:
        self.run = run

    @classmethod
    async def start(
        cls, config: dict[str, Any], name: str, func: Any, args: Any, kwargs: Any
    ) -> CallRun:
        manager = _manager(config, config.get("callbacks"))
        run = await manager.on_chain_start(None, call_inputs(func, args, kwargs), name=name)
        return cls(run)

    def child_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` with this run's child manager: what the call runs is its child."""
        return {**config, "callbacks": self.run.get_child()}

    async def end(self, output: Any) -> None:
        """The call returned ``output``: its one chunk for streaming handlers (LangGraph
        streams a call's run as it streams a node's), then the run ends."""
        await _stream_output(self.run, output)
        await self.run.on_chain_end(output)

    async def error(self, exc: BaseException) -> None:
        await self.run.on_chain_error(exc)


async def _stream_output(run: Any, output: Any) -> None:
    """``output`` as the one chunk of ``run`` for the handlers that stream runs
    (``astream_events``' tap, LangChain's streaming handlers)."""
    for handler in run.handlers:
        if _is_tap(handler) and not handler.durable_debug_streams_nodes:
            continue
        if _streams(handler):
            async for _ in handler.tap_output_aiter(run.run_id, _one(output)):
                pass


def call_inputs(func: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    """A call's arguments by parameter name (``**kwargs`` spread out), as LangGraph traces a
    ``@task`` call's input; positional names ``args[i]`` when the signature cannot be read."""
    try:
        bound = inspect.signature(func).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return {**{f"args[{i}]": a for i, a in enumerate(args)}, **kwargs}
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments.pop("self", None)
    arguments.pop("cls", None)
    for name, param in bound.signature.parameters.items():
        if param.kind == inspect.Parameter.VAR_KEYWORD and name in arguments:
            arguments.update(arguments.pop(name))
    return arguments


async def _one(value: Any) -> AsyncIterator[Any]:
    yield value


def runnable_steps(runnable: Any) -> list[Any]:
    """A runnable node's steps as LangGraph runs them: a ``RunnableSequence``'s steps, else
    the runnable itself."""
    from langchain_core.runnables import RunnableSequence

    if isinstance(runnable, RunnableSequence):
        return list(runnable.steps)
    return [runnable]


def wants_stream(config: dict[str, Any]) -> bool:
    """True when a handler streams runs (``astream_events``): runnable nodes are then
    streamed, as LangGraph does, so their steps report their chunks."""
    callbacks = config.get("callbacks")
    handlers: Iterable[Any] = getattr(callbacks, "handlers", None) or ()
    return any(getattr(h, "durable_debug_streams_nodes", False) for h in handlers) or any(
        _streams(h) and not _is_tap(h) for h in handlers
    )


def _streams(handler: Any) -> bool:
    """A LangChain streaming handler (``astream_events``', ``astream_log``'s): one deriving
    from its streaming base class, as LangGraph tells them (a handler that merely has
    ``tap_output_aiter`` is not streamed to)."""
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    return _StreamingCallbackHandler in type(handler).__mro__


async def run_runnable_node(
    runnable: Any, state: Any, node_run: NodeRun, config: dict[str, Any]
) -> Any:
    """Run a runnable node's steps under its node run, streamed when a handler wants it."""
    steps = runnable_steps(runnable)
    configs = [node_run.child_config(config, i + 1) for i in range(len(steps))]
    streamed = all(callable(getattr(step, "atransform", None)) for step in steps)
    if not (streamed and wants_stream(configs[0])):  # a compiled graph streams on its own
        value = state
        for step, step_config in zip(steps, configs, strict=True):
            value = await step.ainvoke(value, step_config)
        return value

    async def first() -> AsyncIterator[Any]:
        yield state

    chunks: AsyncIterator[Any] = first()
    for step, step_config in zip(steps, configs, strict=True):
        chunks = step.atransform(chunks, step_config)
    final: Any = None
    started = False
    async for chunk in chunks:
        if not started:
            final, started = chunk, True
            continue
        try:
            final = final + chunk
        except TypeError:
            final = chunk
    return final
