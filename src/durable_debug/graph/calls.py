"""How the engine calls a node or a branch function, decided once when it is added.

LangGraph code passes many kinds of callables and expects run-time values by parameter
*name*, never by position:

    def node(state): ...                          # the state only
    async def node(state, i=i): ...               # still the state only: ``i`` keeps its default
    def node(state, config): ...                  # config injected by name
    def node(state, *, config, writer, store, runtime): ...
    add_node(MyNode())                            # any callable object (named after its class)
    add_node("llm", runnable)                     # an object with invoke/ainvoke

:func:`call_style` looks at the signature once; :func:`call` then calls the function with the
state and the keyword arguments it asked for. While a node (or a branch) runs,
:func:`get_config`, :func:`get_runtime`, :func:`get_stream_writer` and :func:`get_store` return
the values of the task that is running.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, TypeVar

from durable_debug._sync import call_outside_loop, in_runner_thread
from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.graph.types import adopt_langchain_tool_output

__all__ = [
    "DEFAULT_RUNTIME",
    "INJECTED",
    "CallContext",
    "CallStyle",
    "ExecutionInfo",
    "RunControl",
    "Runtime",
    "ServerInfo",
    "StreamWriter",
    "call",
    "call_style",
    "callable_name",
    "coerce_context",
    "config_run_id",
    "current_call",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "merge_configs",
    "use_call_context",
]

ContextT = TypeVar("ContextT")

StreamWriter = Callable[[Any], None]
"""Type of a node's ``writer`` parameter: call it with a chunk for stream mode ``"custom"``."""

INJECTED = ("config", "writer", "store", "runtime")
"""Parameter names the engine fills in by name (LangGraph's names)."""

_INJECTABLE_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _no_writer(chunk: Any) -> None:
    """The stream writer outside a run that streams ``"custom"``: drops the chunk."""


def _no_heartbeat() -> None:
    """The heartbeat of a runtime with no idle timeout to refresh: does nothing."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Where the running node is: its checkpoint, namespace, task and attempt."""

    checkpoint_id: str
    """The checkpoint the task runs from."""
    checkpoint_ns: str
    """Namespace of the checkpoint ("" for a top-level graph)."""
    task_id: str
    """Deterministic id of the task."""
    thread_id: str | None = None
    """Thread of the run (None without a checkpointer)."""
    run_id: str | None = None
    """The ``run_id`` of the run's config, as a string (None when it has none)."""
    node_attempt: int = 1
    """Attempt number of this execution (1 for the first, more under a RetryPolicy)."""
    node_first_attempt_time: float | None = None
    """Unix time (seconds) when the task's first attempt started."""

    def patch(self, **overrides: Any) -> ExecutionInfo:
        """A copy with some fields replaced."""
        return replace(self, **overrides)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What LangGraph's server tells the runs it hosts (``Runtime.server_info``); runs here
    have none, but code written for the server may build one."""

    assistant_id: str
    """The assistant the run belongs to."""
    graph_id: str
    """The graph the run runs."""
    user: Any = None
    """The authenticated user, if any."""


class RunControl:
    """Asks a run to stop cooperatively (LangGraph's ``RunControl``): after
    :meth:`request_drain`, the run finishes the step it is running, saves it, and raises
    :class:`~durable_debug.errors.GraphDrained` instead of starting the next one (a run with
    nothing left to do finishes normally; a breakpoint before the next step still pauses).
    Pass one per run as ``invoke(..., control=control)``; safe to call from any thread."""

    __slots__ = ("_reason",)

    def __init__(self) -> None:
        self._reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        """Ask the run to stop before its next step; ``reason`` is GraphDrained's."""
        self._reason = reason

    @property
    def drain_requested(self) -> bool:
        """Whether :meth:`request_drain` was called."""
        return self._reason is not None

    @property
    def drain_reason(self) -> str | None:
        """The reason given to :meth:`request_drain` (None before)."""
        return self._reason


@dataclass(frozen=True)
class Runtime(Generic[ContextT]):
    """Run-scoped values a node receives as its ``runtime`` parameter (or from
    :func:`get_runtime`): the run's ``context``, the graph's ``store``, the ``stream_writer``
    of stream mode ``"custom"``."""

    context: ContextT = None  # type: ignore[assignment]  # None when the run got no context, whatever ContextT is (as LangGraph's)
    """What the caller passed as ``invoke(..., context=...)`` (None when nothing)."""
    store: Any = None
    """The store given to ``compile(store=...)`` (None when none)."""
    stream_writer: Callable[[Any], None] = _no_writer
    """Send a chunk to stream mode ``"custom"``; does nothing when that mode is not streamed."""
    heartbeat: Callable[[], None] = _no_heartbeat
    """Report that the node is making progress (what a ``TimeoutPolicy(idle_timeout=...,
    refresh_on="heartbeat")`` waits for); does nothing where no such timeout is running."""
    previous: Any = None
    """The functional API's previous return value; always None for a StateGraph."""
    execution_info: ExecutionInfo | None = None
    """The running task's checkpoint, namespace, task id and attempt (None outside a task)."""
    server_info: Any = None
    """Set by LangGraph's server for runs it hosts; always None here (LangGraph's prebuilt
    ``ToolNode`` reads it)."""
    control: RunControl | None = None
    """The run's :class:`RunControl` (the one given to ``invoke(control=...)``, or the
    run's own)."""

    @property
    def drain_requested(self) -> bool:
        """Whether the run was asked to stop before its next step."""
        return self.control.drain_requested if self.control is not None else False

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy with some fields replaced."""
        if type(self) is not Runtime or not _RUNTIME_FIELDS.issuperset(overrides):
            return replace(self, **overrides)  # a subclass, or the error naming a bad field
        # What ``replace`` makes, without the frozen dataclass's per-field ``__init__``
        # (a runnable node's config carries a runtime given its task: one per call).
        copy = object.__new__(Runtime)
        fields = copy.__dict__
        fields.update(self.__dict__)
        fields.update(overrides)
        return copy

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """``other``, its unset fields taken from this runtime (LangGraph's rule: a falsy
        context, store, execution or server info, a None ``previous``, the no-op writer)."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=(
                other.stream_writer if other.stream_writer is not _no_writer else self.stream_writer
            ),
            heartbeat=(other.heartbeat if other.heartbeat is not _no_heartbeat else self.heartbeat),
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )


_RUNTIME_FIELDS = frozenset(f.name for f in fields(Runtime))
"""The fields :meth:`Runtime.override` may replace."""

DEFAULT_RUNTIME: Runtime[Any] = Runtime()
"""The runtime of code run outside a graph's task: no context, store, previous value or
execution info, and a stream writer that does nothing."""


class CallContext:
    """What a running node may ask for: its config and the run's :class:`Runtime` (given the
    task's ``execution_info`` when first asked for: most nodes never ask).

    ``_info`` is the task's execution info, or what makes it (built only when a node asks):
    a function, or the tuple of its fields in order; ``node_error`` the
    :class:`~durable_debug.graph.types.NodeError` an error handler handles. A task's runner
    (``runner.run_task``) sets the four fields itself, without ``__init__``."""

    __slots__ = ("_info", "_runtime", "config", "node_error")

    def __init__(
        self,
        config: RunnableConfig,
        runtime: Runtime[Any] | None = None,
        execution_info: ExecutionInfo | Callable[[], ExecutionInfo] | tuple[Any, ...] | None = None,
        node_error: Any = None,
    ) -> None:
        self.config = config
        self._runtime = runtime or Runtime()
        self._info = execution_info
        self.node_error = node_error

    def with_config(self, config: RunnableConfig) -> CallContext:
        """The same runtime and task, another config (a conditional edge's run)."""
        context = CallContext(config, self._runtime, self._info)
        return context

    @property
    def runtime(self) -> Runtime[Any]:
        """The run's runtime, with this task's ``execution_info``."""
        info = self._info
        if info is not None:
            if type(info) is tuple:
                info = ExecutionInfo(*info)
            elif not isinstance(info, ExecutionInfo):
                info = info()  # type: ignore[operator]  # not a tuple: the function making it
            self._runtime = self._runtime.override(execution_info=info)
            self._info = None
        return self._runtime


_CURRENT: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "durable_debug_call", default=None
)


def current_call() -> CallContext | None:
    """The call context of the node running in this context, if any."""
    return _CURRENT.get()


def use_call_context(context: CallContext | None) -> contextvars.Token[CallContext | None]:
    """Make ``context`` current (returns the token for ``_CURRENT.reset``)."""
    return _CURRENT.set(context)


def reset_call_context(token: contextvars.Token[CallContext | None]) -> None:
    """Undo :func:`use_call_context`."""
    _CURRENT.reset(token)


def _require(what: str) -> CallContext:
    context = _CURRENT.get()
    if context is None:
        raise RuntimeError(
            f"{what} was called outside a running node; call it from inside a node (or a "
            "conditional edge) of a compiled graph"
        )
    return context


def get_config() -> RunnableConfig:
    """The config of the running node: the run's config plus ``metadata["langgraph_node"]``,
    ``["langgraph_step"]`` and the other keys LangGraph adds."""
    return _require("get_config()").config


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The :class:`Runtime` of the running node (``context_schema`` is for type checkers)."""
    return _require("get_runtime()").runtime


def get_stream_writer() -> Callable[[Any], None]:
    """The function that sends a chunk to stream mode ``"custom"`` from the running node."""
    return _require("get_stream_writer()").runtime.stream_writer


def get_store() -> Any:
    """The store of the running graph (``compile(store=...)``), or None."""
    return _require("get_store()").runtime.store


@dataclass(frozen=True, slots=True)
class CallStyle:
    """How to call one function: sync or async, which values it takes by name."""

    target: Callable[..., Any]
    """What is called with the state: the function, or a runnable's invoke/ainvoke."""
    is_async: bool
    injects: tuple[str, ...] = ()
    """Names among :data:`INJECTED` the function takes as keyword arguments."""
    runnable: bool = False
    """An object with ``invoke``/``ainvoke(input, config)`` (a LangChain runnable)."""
    sync_target: Callable[..., Any] | None = None
    """A runnable's ``invoke``: what a lone task of a sync run calls (as LangGraph calls a
    runnable's sync side in a sync run), sparing the event loop a thread hand-off."""
    error_param: str | None = None
    """The parameter annotated ``NodeError``: an error handler gets the failure there."""
    bare: bool = field(init=False, repr=False, compare=False)
    """An async function taking the state only: :func:`call` just awaits it (a task's
    runner does so itself, see ``runner.run_task``)."""

    def __post_init__(self) -> None:
        """Work out :attr:`bare` (once, when the style is made)."""
        bare = self.is_async and not (self.runnable or self.injects or self.error_param)
        object.__setattr__(self, "bare", bare)


def callable_name(fn: Any) -> str | None:
    """The name ``add_node(fn)`` gives a node: a runnable's ``get_name()``, a function's
    ``__name__``, else the class name of a callable object (None for a lambda)."""
    if _is_runnable(fn) and callable(getattr(fn, "get_name", None)):
        name = fn.get_name()
    else:
        name = getattr(fn, "__name__", None) or type(fn).__name__
    return None if name == "<lambda>" else str(name)


def _is_runnable(fn: Any) -> bool:
    """Whether ``fn``'s class has an ``ainvoke`` (a LangChain runnable, a compiled graph). The
    class is asked, not the object: a test double (``unittest.mock.Mock``) answers every
    attribute, and LangGraph calls it as the function it stands for."""
    return not inspect.isroutine(fn) and callable(getattr(type(fn), "ainvoke", None))


def call_style(fn: Callable[..., Any]) -> CallStyle:
    """Decide once how to call ``fn`` (a node's action or a branch's path)."""
    if _is_runnable(fn):
        invoke = getattr(fn, "invoke", None)
        # Our own graphs' ``invoke`` runs ``ainvoke`` on another thread (``_sync.run_sync``):
        # awaiting ``ainvoke`` in place is the direct way (a subgraph node).
        hops = getattr(type(fn), "sync_invoke_hops_threads", False) is True
        direct = callable(invoke) and not hops
        return CallStyle(
            fn.ainvoke,  # type: ignore[attr-defined]  # _is_runnable found a Runnable; fn is typed as the plain callable
            True,
            runnable=True,
            sync_target=invoke if direct else None,
        )
    method = fn if inspect.isroutine(fn) else getattr(fn, "__call__", fn)  # noqa: B004
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(method)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return CallStyle(fn, is_async)
    from durable_debug.graph.inputs import warn_config_typing

    warn_config_typing(fn, params)  # as LangGraph warns when it wraps the function
    injects = tuple(name for name in INJECTED if _injectable(params.get(name)))
    error_param = next(
        (n for n, p in params.items() if _injectable(p) and _names_node_error(p.annotation)),
        None,
    )
    return CallStyle(fn, is_async, injects, error_param=error_param)


def _names_node_error(annotation: Any) -> bool:
    """True for an annotation naming ``NodeError`` (the class, or its name as a string)."""
    from durable_debug.graph.types import NodeError

    if isinstance(annotation, str):
        return annotation.rpartition(".")[2] == "NodeError"
    return annotation is NodeError or getattr(annotation, "__name__", None) == "NodeError"


def _injectable(param: inspect.Parameter | None) -> bool:
    """A parameter is filled in by name whatever its annotation (LangGraph skips ``config``
    annotated other than ``RunnableConfig``, and the call then fails; we pass it)."""
    return param is not None and param.kind in _INJECTABLE_KINDS


def _kwargs(style: CallStyle, context: CallContext) -> dict[str, Any]:
    values: Mapping[str, Any] = {
        "config": context.config,
        "writer": context.runtime.stream_writer,
        "store": context.runtime.store,
        "runtime": context.runtime,
    }
    kwargs = {name: values[name] for name in style.injects}
    if style.error_param is not None:
        kwargs[style.error_param] = context.node_error
    return kwargs


async def call(
    style: CallStyle, state: Any, context: CallContext, *, inline: bool, node_run: Any = None
) -> Any:
    """Call the function with ``state`` and what it takes by name; await what it returns.

    A sync function runs in a worker thread (the event loop stays free) unless ``inline``;
    an ``inline`` runnable is called through its sync ``invoke`` when the run is a sync one.
    ``context`` is current while it runs, so ``get_config()`` and friends work inside it.
    ``node_run`` (a ``callbacks.NodeRun``, when the run reports to callback handlers) is the
    run a runnable node's steps run under.
    """
    token = _CURRENT.set(context)
    lc_token: tuple[Any, Any] | None
    if _LANGCHAIN_VAR:
        lc_var = _LANGCHAIN_VAR[0]
        lc_token = lc_var, lc_var.set(context.config)
    else:
        lc_token = _set_langchain_config(context.config)
    try:
        if style.runnable:
            config = runnable_config(context)
            if node_run is not None:
                from durable_debug.graph.callbacks import run_runnable_node

                runnable = getattr(style.target, "__self__", style.target)
                return await run_runnable_node(runnable, state, node_run, config)
            if inline and style.sync_target is not None and in_runner_thread():
                return call_outside_loop(style.sync_target, state, config)
            return await style.target(state, config)
        if not (style.injects or style.error_param):  # the state only: a plain call
            if style.is_async:
                return await style.target(state)
            kwargs: dict[str, Any] = {}
        else:
            kwargs = _kwargs(style, context)
            if style.is_async:
                return await style.target(state, **kwargs)
        if inline:  # on the loop's thread, yet as code no loop runs (``asyncio.run`` works)
            result = call_outside_loop(style.target, state, **kwargs)
        else:
            loop = asyncio.get_running_loop()
            run = contextvars.copy_context().run
            result = await loop.run_in_executor(None, lambda: run(style.target, state, **kwargs))
        if inspect.isawaitable(result):  # a sync-looking callable that returned a coroutine
            result = await result
        return result
    finally:
        if lc_token is not None:
            lc_token[0].reset(lc_token[1])
        _CURRENT.reset(token)


LANGGRAPH_RUNTIME_KEY = "__pregel_runtime"
"""The ``configurable`` key under which LangGraph's own runnables (``ToolNode`` and other
prebuilt nodes) look for the run's :class:`Runtime` (its ``store``, ``context``,
``stream_writer``); a runnable node gets ours there."""


def runnable_config(context: CallContext) -> RunnableConfig:
    """The config a runnable node is invoked with: the node's config, with the run's
    runtime where LangGraph's prebuilt runnables read it."""
    adopt_langchain_tool_output()  # its tools (a ToolNode's) may return a Command
    config = context.config
    configurable = {**(config.get("configurable") or {}), LANGGRAPH_RUNTIME_KEY: context.runtime}
    return {**config, "configurable": configurable}


def _set_langchain_config(config: RunnableConfig) -> tuple[Any, Any] | None:
    """Make ``config`` LangChain's current config while a node runs, so the chat models and
    runnables it calls without passing a config inherit its callbacks and metadata (as they
    do under LangGraph). Only when LangChain is already imported: never imported for this."""
    module = sys.modules.get("langchain_core.runnables.config")
    if module is None:
        return None
    adopt_langchain_tool_output()  # the node may call tools that return a Command
    var = module.var_child_runnable_config
    if "langchain_core.messages.tool" in sys.modules:  # adopted: nothing left to look up
        _LANGCHAIN_VAR.append(var)
    return var, var.set(config)


_LANGCHAIN_VAR: list[Any] = []
"""LangChain's ``var_child_runnable_config`` once :func:`_set_langchain_config` found it and
made :class:`Command` a tool output (then :func:`call` sets it directly)."""


def coerce_context(schema: Any, context: Any) -> Any:
    """The run's ``context``: a dict becomes an instance of ``context_schema`` when that is a
    dataclass or a pydantic model (as LangGraph does); anything else is passed as it is."""
    if context is None or schema is None or not isinstance(context, Mapping):
        return context
    import dataclasses

    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_validate"):
        return schema(**context)
    return context


def config_run_id(config: Mapping[str, Any]) -> str | None:
    """The config's ``run_id`` as a string (what ``ExecutionInfo.run_id`` shows), or None."""
    run_id = config.get("run_id")
    return str(run_id) if run_id else None


def merge_configs(base: RunnableConfig | None, config: RunnableConfig | None) -> RunnableConfig:
    """``config`` over ``base``: ``configurable`` and ``metadata`` merged key by key, ``tags``
    concatenated (each once), any other key of ``config`` wins."""
    if not base:
        return dict(config or {})
    merged: dict[str, Any] = dict(base)
    for key, value in (config or {}).items():
        if key in ("configurable", "metadata") and isinstance(value, Mapping):
            merged[key] = {**(merged.get(key) or {}), **value}
        elif key == "tags":  # each tag once, as LangChain merges them
            merged[key] = list(dict.fromkeys([*(merged.get(key) or []), *value]))
        else:
            merged[key] = value
    return merged
