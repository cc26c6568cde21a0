"""LangGraph's functional API on our engine: ``@entrypoint`` and ``@task``.

    @task
    def add_one(x: int) -> int:
        return x + 1

    @entrypoint(checkpointer=MemorySaver())
    def workflow(x: int, *, previous: int | None = None) -> int:
        return add_one(x).result() + (previous or 0)

    workflow.invoke(1, {"configurable": {"thread_id": "t"}})

``@entrypoint`` compiles the function to a one-node graph, as LangGraph does: the node (named
after the function) is triggered by the run input in ``__start__``; what it returns is written
to ``__end__`` (the thread's value: ``invoke``'s result, ``get_state().values``) and to
``__previous__`` (what the next run of the thread gets as ``previous``; ``entrypoint.final(
value=..., save=...)`` saves something else than it returns). So a run saves an ``input``
checkpoint (step -1, next the node) and a ``loop`` checkpoint (step 0) as LangGraph's does,
and runs the node through the ordinary ``RunLoop``: retries, interrupts, resume, time travel,
forks (``update_state``) and every stream mode work as for a StateGraph. Each ``@task`` call
is a push task of that step (``push.py``), saved as a pending write when it finishes.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, get_args, get_origin, overload

from typing_extensions import TypedDict

from durable_debug.checkpoint.base import BaseCheckpointSaver, RunnableConfig
from durable_debug.checkpoint.names import PREVIOUS
from durable_debug.graph.calls import Runtime, call_style
from durable_debug.graph.channels import Channel
from durable_debug.graph.deprecation import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    warn_renamed,
)
from durable_debug.graph.interrupts import current_scratchpad
from durable_debug.graph.jsonschema import root_jsonschema, schema_title
from durable_debug.graph.nodes import NodeSpec
from durable_debug.graph.pregel import CompiledStateGraph
from durable_debug.graph.push import TaskFunction, TaskFuture
from durable_debug.graph.schema import StateSchema
from durable_debug.graph.timeouts import check_timeout_target, coerce_timeout
from durable_debug.graph.types import (
    END,
    START,
    GraphInterrupt,
    InvalidUpdateError,
    RetryPolicy,
    StateSnapshot,
)

__all__ = ["EntrypointGraph", "TaskFunction", "TaskFuture", "entrypoint", "task"]

R = TypeVar("R")
S = TypeVar("S")
T = TypeVar("T")

_ENTRYPOINT_INJECTED = ("config", "writer", "store", "previous", "runtime")
"""Parameters an entrypoint function gets by name (LangGraph's)."""


@dataclass(frozen=True)
class Final(Generic[R, S]):
    """``entrypoint.final(value=..., save=...)``: return ``value`` to the caller and save
    ``save`` as the thread's ``previous`` for its next run."""

    value: R
    save: S


class _EntrypointSchema(StateSchema):
    """The channels of an entrypoint thread: ``__end__`` and ``__previous__``. Whatever the
    function returns is written to both (``entrypoint.final`` splits them)."""

    def __init__(self) -> None:
        super().__init__(TypedDict("EntrypointState", {END: Any, PREVIOUS: Any}))  # type: ignore[operator]  # TypedDict's functional form takes literal keys only; these are names.py's

    def updates_from(
        self,
        value: Any,
        *,
        where: str,
        on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
    ) -> dict[str, Any]:
        if isinstance(value, Final):
            return {END: value.value, PREVIOUS: value.save}
        return {END: value, PREVIOUS: value}


@dataclass
class _Builder:
    """What the compiled graph reads from its builder (drawing, context schema)."""

    nodes: dict[str, NodeSpec]
    context_schema: Any = None
    output_schema: StateSchema = field(default_factory=lambda: _EntrypointSchema())
    """What a run streams and returns is the function's value (``output_values``), never the
    one value of a root schema."""

    @property
    def _edge_order(self) -> list[tuple[str, str]]:
        return [(START, name) for name in self.nodes]

    joins: tuple[()] = ()
    branches: Mapping[str, Any] = field(default_factory=dict)


class EntrypointGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """What ``@entrypoint`` makes of a function: a graph with LangGraph's ``Pregel`` API
    (``invoke``, ``stream``, ``get_state``, ``get_state_history``, ``update_state``…) whose
    state is the function's last return value."""

    streams_while_running = True
    returns_end = True

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        checkpointer: BaseCheckpointSaver | None,
        store: Any,
        cache: Any,
        context_schema: Any,
        cache_policy: Any,
        retry_policy: tuple[RetryPolicy, ...],
        timeout: Any = None,
    ) -> None:
        name = getattr(func, "__name__", None) or type(func).__name__
        node = _entrypoint_node(func)
        spec = NodeSpec(
            name,
            node,
            style=call_style(node),
            retry=retry_policy,
            triggers=(START,),
            cache_policy=cache_policy,
            input_channel=START,
            timeout=timeout,
        )
        self.func = func
        super().__init__(
            builder=_Builder({name: spec}, context_schema),  # type: ignore[arg-type]  # _Builder stands in for a StateGraph, with every attribute the compiled graph reads
            schema=_EntrypointSchema(),
            nodes={name: spec},
            checkpointer=checkpointer,
            interrupt_before=(),
            interrupt_after=(),
            name="LangGraph",
            cache=cache,
            store=store,
        )

    def read_state(self, channels: Mapping[str, Channel]) -> Any:
        """The thread's value: what the function last returned (None before it has)."""
        channel = channels[END]
        return channel.value if channel.is_available() else None

    def input_updates(
        self,
        input: Any,
        on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
    ) -> dict[str, Any]:
        """Any value is a valid input: it is the function's first argument."""
        return {}

    def output_values(self, values: Any) -> Any:
        """``invoke``'s result: the function's return value."""
        return values

    def result_of(self, writes: Sequence[tuple[str, Any]]) -> dict[str, Any] | None:
        """The entrypoint's return value as ``{"__end__": value}`` (LangGraph's debug result)."""
        result = {ch: v for ch, v in writes if ch == END}
        return result or None

    def update_of(self, writes: Sequence[tuple[str, Any]]) -> tuple[Any] | None:
        """The ``updates`` chunk of the entrypoint's task: ``{name: return value}``."""
        for channel, value in writes:
            if channel == END:
                return (value,)
        return None

    async def aupdate_state(
        self,
        config: RunnableConfig,
        values: Any,
        as_node: str | None = None,
        *,
        wait: float | None = None,
        **kwargs: Any,
    ) -> RunnableConfig:
        """Save ``values`` as the function's return value (and ``previous``; an
        ``entrypoint.final`` splits them) on the checkpoint ``config`` names, as its node
        would (the default ``as_node``, also on a thread with no checkpoint yet)."""
        node = as_node if as_node is not None else next(iter(self.nodes))
        return await super().aupdate_state(config, values, node, wait=wait, **kwargs)

    def get_input_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The JSON schema of the function's first parameter (its annotation; any value
        without one), as LangGraph gives it."""
        parameters = inspect.signature(self.func).parameters
        first = next(iter(parameters.values()), None)
        typ = Any if first is None or first.annotation is first.empty else first.annotation
        return root_jsonschema(typ, schema_title(self.get_name(), "Input"))

    def get_output_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The JSON schema of the function's return value (``entrypoint.final[R, S]``: of
        ``R``), as LangGraph gives it."""
        returns = inspect.signature(self.func).return_annotation
        typ: Any = Any
        if returns is not inspect.Signature.empty and returns is not Final:
            typ = get_args(returns)[0] if get_origin(returns) is Final else returns
        return root_jsonschema(typ, schema_title(self.get_name(), "Output"))

    async def _state(
        self, saver: BaseCheckpointSaver, config: RunnableConfig, subgraphs: bool
    ) -> StateSnapshot:
        return _shown(await super()._state(saver, config, subgraphs))

    async def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first (as for a StateGraph)."""
        history = super().aget_state_history(config, filter=filter, before=before, limit=limit)
        async for snapshot in history:
            yield _shown(snapshot)

    def __repr__(self) -> str:
        node = next(iter(self.nodes))
        return f"<EntrypointGraph {node} checkpointer={type(self.checkpointer).__name__}>"


def _shown(snapshot: StateSnapshot) -> StateSnapshot:
    """A snapshot whose tasks show the entrypoint's return value as their ``result``, as
    LangGraph's do (not ``{"__end__": ..., "__previous__": ...}``)."""
    if not any(isinstance(t.result, dict) and END in t.result for t in snapshot.tasks):
        return snapshot
    tasks = tuple(
        t._replace(result=t.result[END]) if isinstance(t.result, dict) and END in t.result else t
        for t in snapshot.tasks
    )
    return snapshot._replace(tasks=tasks)


def _entrypoint_node(func: Callable[..., Any]) -> Callable[..., Any]:
    """The node running ``func``: its input is the run input; ``previous``, ``config``,
    ``writer``, ``store`` and ``runtime`` are passed when ``func`` names them. The node
    waits for the task calls ``func`` left running before it ends."""
    if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
        raise NotImplementedError(
            f"@entrypoint {getattr(func, '__name__', func)!r}: generators are not supported "
            "in the functional API (as in LangGraph)"
        )
    params = inspect.signature(func).parameters
    if not params:
        raise ValueError(
            f"@entrypoint {getattr(func, '__name__', func)!r}: the function must take at "
            "least one parameter (the run input)"
        )
    wanted = tuple(n for n in _ENTRYPOINT_INJECTED if n in params and n != next(iter(params)))

    def arguments(config: dict[str, Any], runtime: Runtime[Any]) -> dict[str, Any]:
        pad = current_scratchpad()
        calls = pad.nesting.calls if pad is not None and pad.nesting is not None else None
        values = {
            "config": config,
            "writer": runtime.stream_writer,
            "store": runtime.store,
            "runtime": runtime,
            "previous": calls.previous() if calls is not None else None,
        }
        if "runtime" in wanted:
            values["runtime"] = runtime.override(previous=values["previous"])
        return {n: values[n] for n in wanted}

    def calls() -> tuple[Any, str]:
        pad = current_scratchpad()
        if pad is None or pad.nesting is None or pad.nesting.calls is None:
            return None, ""
        return pad.nesting.calls, pad.task_id

    # The calls the function left running: awaited when it returned or paused on an
    # interrupt (their results are saved for the resume), cancelled when it failed or was
    # cancelled (they run again on resume, like any unfinished task).
    if inspect.iscoroutinefunction(func):

        async def run_async(input: Any, *, config: Any, runtime: Any) -> Any:
            runner, caller = calls()
            try:
                result = await func(input, **arguments(config, runtime))
            except GraphInterrupt:
                if runner is not None:
                    await runner.drain(caller)
                raise
            except BaseException:
                if runner is not None:
                    await runner.stop(caller)
                raise
            if runner is not None:
                await runner.drain(caller)
            return result

        return run_async

    def run(input: Any, *, config: Any, runtime: Any) -> Any:
        runner, caller = calls()
        try:
            result = func(input, **arguments(config, runtime))
        except GraphInterrupt:
            _wait(runner, caller)
            raise
        except BaseException:
            if runner is not None:
                runner.stop_sync(caller)
            raise
        _wait(runner, caller)
        return result

    return run


def _wait(runner: Any, caller: str) -> None:
    """Wait in a sync entrypoint for the calls it left running."""
    if runner is not None:
        for future in runner.running.pop(caller, []):
            with contextlib.suppress(BaseException):  # the function's to see
                future.result()


class entrypoint:
    """``@entrypoint(checkpointer=..., store=..., cache=..., context_schema=...,
    cache_policy=..., retry_policy=...)``: turn a function of one input into a graph
    (an :class:`EntrypointGraph`) whose ``@task`` calls are durable tasks."""

    final = Final
    """``entrypoint.final(value=..., save=...)``: return one thing, save another as
    ``previous``."""

    def __init__(
        self,
        checkpointer: BaseCheckpointSaver | None = None,
        store: Any = None,
        cache: Any = None,
        context_schema: Any = None,
        cache_policy: Any = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - {"config_schema", "timeout", "retry"})
        if unknown:
            raise TypeError(f"entrypoint() got unexpected keyword argument(s) {unknown}")
        self.timeout = coerce_timeout(kwargs.get("timeout"), "entrypoint(timeout=...)")
        if "config_schema" in kwargs:
            warn_renamed("config_schema", "context_schema", LangGraphDeprecatedSinceV10)
        if "retry" in kwargs:
            warn_renamed("retry", "retry_policy", LangGraphDeprecatedSinceV05)
            retry_policy = retry_policy if retry_policy is not None else kwargs["retry"]
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.context_schema = context_schema or kwargs.get("config_schema")
        self.cache_policy = cache_policy
        self.retry_policy: tuple[RetryPolicy, ...] = (
            ()
            if retry_policy is None
            else (retry_policy,)
            if isinstance(retry_policy, RetryPolicy)
            else tuple(retry_policy)
        )

    def __call__(self, func: Callable[..., Any]) -> EntrypointGraph:
        if self.timeout is not None:
            name = getattr(func, "__name__", func)
            check_timeout_target(inspect.iscoroutinefunction(func), f"@entrypoint {name!r}")
        return EntrypointGraph(
            func,
            timeout=self.timeout,
            checkpointer=self.checkpointer,
            store=self.store,
            cache=self.cache,
            context_schema=self.context_schema,
            cache_policy=self.cache_policy,
            retry_policy=self.retry_policy,
        )


@overload
def task(
    __func_or_none__: None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: Any = None,
    **kwargs: Any,
) -> Callable[[Callable[..., Awaitable[T] | T]], TaskFunction[T]]: ...


@overload
def task(
    __func_or_none__: Callable[..., Awaitable[T] | T],
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: Any = None,
    **kwargs: Any,
) -> TaskFunction[T]: ...


def task(
    __func_or_none__: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: Any = None,
    **kwargs: Any,
) -> Any:
    """``@task`` (or ``@task(name=..., retry_policy=..., cache_policy=...)``): calling the
    function inside a running graph starts a durable task and returns its future."""
    unknown = sorted(set(kwargs) - {"timeout", "retry"})
    if unknown:
        raise TypeError(f"task() got unexpected keyword argument(s) {unknown}")
    timeout = coerce_timeout(kwargs.get("timeout"), "task(timeout=...)")
    if "retry" in kwargs:
        warn_renamed("retry", "retry_policy", LangGraphDeprecatedSinceV05)
        retry_policy = retry_policy if retry_policy is not None else kwargs["retry"]

    def decorate(func: Callable[..., Any]) -> TaskFunction[Any]:
        return TaskFunction(
            func, name=name, retry_policy=retry_policy, cache_policy=cache_policy, timeout=timeout
        )

    if __func_or_none__ is not None:
        return decorate(__func_or_none__)
    return decorate
