"""Task calls: a functional-API ``@task`` called while a task of a run is running.

    @task
    def fetch(url): ...

    @entrypoint(checkpointer=saver)          # or inside a StateGraph node
    def workflow(urls):
        futures = [fetch(u) for u in urls]   # each call is a task of its own, started now
        return [f.result() for f in futures]

Each call is a *push task* of the step its caller runs in, as in LangGraph: its id hashes the
checkpoint, the step, the task's name and its path ``(PUSH, caller's task id, n)`` — the
caller's n-th call — so the same calls on the same checkpoint get the same ids. A call runs
concurrently with its caller (a sync function in a worker thread), retried by its
``retry_policy``, and the moment it finishes its outcome is saved as a pending write of the
checkpoint under its id: its return value as :data:`RETURN`, or its error. When the caller
runs again on that checkpoint (resumed after an interrupt, a failure or a crash), a call whose
return value is saved is not run again: its future holds the saved value. A call that failed
or never finished runs again.

``interrupt()`` inside a call pauses the call, then its caller (the caller's ``.result()``
raises the interrupt, which the caller's task saves); the answer reaches the call when the
caller runs again, through the run's shared answers by interrupt id (as a subgraph's
interrupt does). Each call reports ``tasks``/``debug`` events and an ``updates`` chunk
``{name: value}`` as it finishes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import durable_debug.graph.cache as cache
import durable_debug.graph.hooks as hooks
from durable_debug._sync import run_sync, submit
from durable_debug.checkpoint.base import ERROR, RESUME
from durable_debug.checkpoint.names import PREVIOUS, RETURN
from durable_debug.graph.algo import PUSH, Task, task_path_str
from durable_debug.graph.cache import call_namespace
from durable_debug.graph.calls import (
    INJECTED,
    CallContext,
    CallStyle,
    ExecutionInfo,
    call,
    config_run_id,
    current_call,
    reset_call_context,
    use_call_context,
)
from durable_debug.graph.ids import (
    adopt_legacy_call,
    call_task_id,
    interrupt_id,
    legacy_interrupt_id,
    task_namespace,
)
from durable_debug.graph.interrupts import (
    Scratchpad,
    current_scratchpad,
    reset_scratchpad,
    set_scratchpad,
)
from durable_debug.graph.nodes import NodeSpec
from durable_debug.graph.runner import _OUTCOMES, _retry_wait, node_config
from durable_debug.graph.streams import TaskResult
from durable_debug.graph.timeouts import AttemptClock, check_timeout_target
from durable_debug.graph.types import GraphInterrupt, RetryPolicy

if TYPE_CHECKING:
    from durable_debug.graph.loop import RunLoop

__all__ = ["CALL_STARTED", "CallRunner", "TaskFunction", "TaskFuture"]

CALL_STARTED = "on_task_call"
"""The ``event`` of the internal ``astream_events`` chunk that comes before a call's ``task``
event: ``{"event": CALL_STARTED, "task_id": ...}`` (``events.py``)."""

T = TypeVar("T")


class TaskFuture(Generic[T]):
    """What calling a ``@task`` returns: ``.result()`` waits for the call's value (or raises
    its error, or the interrupt that paused it); in an async caller, ``await`` it."""

    def __init__(self, future: concurrent.futures.Future[T] | asyncio.Future[T]) -> None:
        self._future = future

    def result(self, timeout: float | None = None) -> T:
        """The call's return value, waiting up to ``timeout`` seconds (None: as long as it
        takes). In an async caller use ``await`` instead: its call runs on the caller's loop."""
        if isinstance(self._future, asyncio.Future):
            if not self._future.done():
                raise RuntimeError(
                    "task future .result() called in an async function before the task "
                    "finished; use `await future` there"
                )
            return self._future.result()
        return self._future.result(timeout)

    def cancel(self) -> bool:
        """Cancel the call if it is still running; True if it was."""
        return self._future.cancel()

    def done(self) -> bool:
        """True once the call has finished (with a value, an error or an interrupt)."""
        return self._future.done()

    def exception(self) -> BaseException | None:
        """The call's error once it finished (None if it returned)."""
        if isinstance(self._future, asyncio.Future):
            return self._future.exception()
        return self._future.exception()

    def __await__(self) -> Generator[Any, None, T]:
        if isinstance(self._future, asyncio.Future):
            return self._future.__await__()
        return asyncio.wrap_future(self._future).__await__()

    def __repr__(self) -> str:
        return f"<TaskFuture {'done' if self.done() else 'running'}>"


class TaskFunction(Generic[T]):
    """A function decorated with ``@task``: calling it inside a running task (an entrypoint,
    a StateGraph node, another task) schedules a task call and returns a :class:`TaskFuture`."""

    def __init__(
        self,
        func: Callable[..., T | Awaitable[T]],
        *,
        name: str | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: Any = None,
        timeout: Any = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"@task needs a function, not {type(func).__name__} {func!r:.60}")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError(
                f"@task {getattr(func, '__name__', func)!r}: generators are not supported in "
                "the functional API (as in LangGraph)"
            )
        self.func = func
        inner = func.func if isinstance(func, functools.partial) else None
        self.name: str = (
            name
            or getattr(func, "__name__", None)
            or getattr(inner, "__name__", None)  # a partial: its function's name, as LangGraph
            or type(func).__name__
        )
        if retry_policy is None:
            retries: tuple[RetryPolicy, ...] = ()
        elif isinstance(retry_policy, RetryPolicy):
            retries = (retry_policy,)
        else:
            retries = tuple(retry_policy)
        self.retry_policy = retries
        self.cache_policy = cache_policy
        self.is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004
        )
        params: Mapping[str, inspect.Parameter]
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            params = {}
        self.injects = tuple(
            n
            for n in INJECTED
            if n in params and params[n].kind is not inspect.Parameter.POSITIONAL_ONLY
        )
        """Names among config/writer/store/runtime the function takes, filled in by name
        when the caller does not pass them."""
        self.timeout = timeout
        """Each attempt's ``TimeoutPolicy`` (``timeouts.py``), or None."""
        if timeout is not None:
            check_timeout_target(self.is_async, f"@task {self.name!r}")
        self.spec = NodeSpec(
            self.name, func, retry=retries, cache_policy=cache_policy
        )  # a task's node (its cache key uses the function)
        self.__name__ = self.name
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func

    def __call__(self, *args: Any, **kwargs: Any) -> TaskFuture[T]:
        pad = current_scratchpad()
        runner = pad.nesting.calls if pad is not None and pad.nesting is not None else None
        if pad is None or runner is None:
            raise RuntimeError(
                f"@task {self.name!r} was called outside a running graph; call it inside an "
                "@entrypoint function, a StateGraph node or another @task"
            )
        future: TaskFuture[T] = runner.start(pad, self, args, kwargs)
        return future

    def clear_cache(self, cache: Any) -> None:
        """Forget what ``cache`` holds for this task's calls (nothing without a
        ``cache_policy``), as LangGraph's ``task.clear_cache``."""
        if self.cache_policy is not None:
            cache.clear([call_namespace(self.func)])

    async def aclear_cache(self, cache: Any) -> None:
        """Async twin of :meth:`clear_cache`."""
        if self.cache_policy is not None:
            await cache.aclear([call_namespace(self.func)])

    def __repr__(self) -> str:
        return f"<task {self.name}>"


class CallRunner:
    """Runs the task calls made by the tasks of one run (one per :class:`RunLoop`)."""

    def __init__(self, loop: RunLoop) -> None:
        # Held weakly: the run holds its runner, and a cycle between them would leave every
        # run's channels and bookkeeping to the garbage collector instead of freeing them.
        self._loop = weakref.ref(loop)
        self.aio: asyncio.AbstractEventLoop | None = None
        """The event loop running the run (where calls run)."""
        self.thread: int | None = None
        self.running: dict[str, list[TaskFuture[Any]]] = {}
        """Caller task id → the futures of the calls it made that are still running."""

    @property
    def loop(self) -> RunLoop:
        """The run whose tasks make the calls (alive while any of its tasks runs)."""
        loop = self._loop()
        if loop is None:
            raise RuntimeError("a @task was called after the run that made its caller ended")
        return loop

    def bind(self) -> None:
        """Note the running event loop (called from the run's coroutine)."""
        if self.aio is None:
            self.aio = asyncio.get_running_loop()
            self.thread = threading.get_ident()

    def previous(self) -> Any:
        """The thread's saved ``previous`` value as the running step sees it (None if none)."""
        channel = self.loop.channels.get(PREVIOUS)
        return channel.get() if channel is not None and channel.is_available() else None

    def start(
        self, pad: Scratchpad, fn: TaskFunction[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> TaskFuture[Any]:
        """Schedule ``fn(*args, **kwargs)`` as a task of the running step, for the task whose
        scratchpad is ``pad``; returns its future (already done when its value was saved)."""
        loop = self.loop
        index = pad.calls
        pad.calls += 1
        step = loop.step + 1
        path: tuple[Any, ...] = (PUSH, pad.task_id, index)
        checkpoint_id = loop.checkpoint["id"]
        tid = call_task_id(checkpoint_id, pad.namespace, step, fn.name, pad.path, index)
        task = Task(tid, fn.name, path, fn.spec, input=(args, kwargs))
        record = loop.pending.get(tid)
        if record is None and pad.task_id in loop.legacy_ids:  # saved by an older version
            record = adopt_legacy_call(
                loop.pending,
                loop.legacy_ids,
                tid,
                pad.task_id,
                checkpoint_id,
                loop.checkpoint_ns,
                step,
                fn.name,
                index,
            )
        if record is not None and record.finished and loop.reuse_writes:
            # Reported as started, as LangGraph reports it; its saved result is not.
            self._mark_call(task)
            self._report("task", lambda: loop._debug_event("task", task))
            saved: concurrent.futures.Future[Any] = concurrent.futures.Future()
            saved.set_result(dict(record.writes).get(RETURN))
            return TaskFuture(saved)
        resume = list(record.resume or []) if record is not None else []
        caller = current_call()
        base = caller.config if caller is not None else loop.config
        assert self.aio is not None
        if threading.get_ident() == self.thread and pad.inline:
            # A sync caller on the run's own thread, which waits for it: run the call here.
            done: concurrent.futures.Future[Any] = concurrent.futures.Future()
            try:
                done.set_result(self._execute_inline(task, fn, pad, resume, step, base))
            except Exception as exc:  # handed to the caller's .result()
                done.set_exception(exc)
            return TaskFuture(done)
        coro = self._execute(task, fn, pad, resume, step, base)
        if threading.get_ident() != self.thread:  # a sync caller in a worker thread
            future = TaskFuture(submit(coro, self.aio))
        else:  # an async caller
            future = TaskFuture(self.aio.create_task(coro))  # in a copy of the caller's context
        self.running.setdefault(pad.task_id, []).append(future)
        return future

    async def drain(self, caller: str) -> None:
        """Wait for the calls ``caller`` made that are still running (their outcomes are
        saved; their errors were the caller's to see)."""
        for future in self.running.pop(caller, []):
            if not future.done():
                with contextlib.suppress(BaseException):  # reported through the future
                    await future

    async def stop(self, caller: str) -> None:
        """Cancel the calls ``caller`` made that are still running, and wait until they have
        stopped (the caller failed or was cancelled: they run again on resume, as unfinished
        tasks do)."""
        futures = self.running.pop(caller, [])
        for future in futures:
            future.cancel()
        for future in futures:
            with contextlib.suppress(BaseException):  # cancelled: nothing to report
                await future

    def stop_sync(self, caller: str) -> None:
        """:meth:`stop` for a sync caller in a worker thread."""
        futures = self.running.pop(caller, [])
        for future in futures:
            future.cancel()
        for future in futures:
            with contextlib.suppress(BaseException):  # cancelled: nothing to report
                future.result()

    async def _execute(
        self,
        task: Task,
        fn: TaskFunction[Any],
        parent: Scratchpad,
        resume: list[Any],
        step: int,
        base: dict[str, Any],
    ) -> Any:
        """Run one call to its outcome, save it, report it; return its value or raise."""
        if self._begin(task, fn, parent, resume):
            attempt, first = 0, time.time()
            while True:
                attempt += 1
                pad, context, call_fn = self._attempt(
                    task, fn, parent, resume, step, (attempt, first), base
                )
                traced = await _call_run(context, task, fn)
                token = set_scratchpad(pad)
                self._observe("start", task, step)
                try:
                    style = CallStyle(call_fn, fn.is_async)
                    work = call(style, None, context, inline=False)
                    if fn.timeout is not None:
                        work = AttemptClock(fn.timeout, fn.name).run(work)
                    self._done(task, fn, await work)
                except BaseException as exc:
                    self._failed(task, exc, step)
                finally:
                    reset_scratchpad(token)
                if traced is not None:
                    await _end_call_run(traced, task)
                self._observe("finish", task, step)
                wait = self._retry(task, fn, attempt)
                if not wait:
                    break
                await asyncio.sleep(wait)
        await self._save(task, resume)
        return self._end(task)

    def _execute_inline(
        self,
        task: Task,
        fn: TaskFunction[Any],
        parent: Scratchpad,
        resume: list[Any],
        step: int,
        base: dict[str, Any],
    ) -> Any:
        """:meth:`_execute` for a sync caller running on the run's own thread (which waits
        for it, so nothing can run on the run's loop): the function runs here, and so do
        the calls it makes; its outcome is saved through ``run_sync``, as a ``once()``
        result of such a node is."""
        if self._begin(task, fn, parent, resume):
            attempt, first = 0, time.time()
            while True:
                attempt += 1
                pad, context, call_fn = self._attempt(
                    task, fn, parent, resume, step, (attempt, first), base
                )
                pad.inline = True
                traced = run_sync(_call_run(context, task, fn))
                token = set_scratchpad(pad)
                call_token = use_call_context(context)
                self._observe("start", task, step)
                try:
                    result = call_fn(None)
                    if inspect.isawaitable(result):
                        result = run_sync(_awaited(result))
                    self._done(task, fn, result)
                except BaseException as exc:
                    self._failed(task, exc, step)
                finally:
                    reset_call_context(call_token)
                    reset_scratchpad(token)
                if traced is not None:
                    run_sync(_end_call_run(traced, task))
                self._observe("finish", task, step)
                wait = self._retry(task, fn, attempt)
                if not wait:
                    break
                time.sleep(wait)
        run_sync(self._save(task, resume))
        return self._end(task)

    def _begin(
        self, task: Task, fn: TaskFunction[Any], parent: Scratchpad, resume: list[Any]
    ) -> bool:
        """Report the call's start and take the answers the run holds for its interrupts;
        False when its cache answered it (the function does not run)."""
        loop = self.loop
        self._mark_call(task)
        self._report("task", lambda: loop._debug_event("task", task))
        answers = parent.answers
        if answers is not None:  # answers given to the run for this call's interrupts
            own = task_namespace(parent.namespace, task.name, task.id)
            older = loop.legacy_ids.get(task.id)  # its id in a thread an older version saved
            while True:
                asked = interrupt_id(own, len(resume))
                if asked not in answers.values and older is not None:
                    asked = legacy_interrupt_id(older, len(resume))
                if asked not in answers.values:
                    break
                answers.claim(asked)
                resume.append(answers.values[asked])
        return fn.spec.cache_policy is None or not cache.lookup(loop.graph, task, call=True)

    def _attempt(
        self,
        task: Task,
        fn: TaskFunction[Any],
        parent: Scratchpad,
        resume: list[Any],
        step: int,
        attempt: tuple[int, float],
        base: dict[str, Any],
    ) -> tuple[Scratchpad, CallContext, Callable[[Any], Any]]:
        """The scratchpad, call context and bound function of one attempt of a call. Its
        config is built on its caller's (``base``), so its namespace is under the caller's
        (``caller:id|name:id``), as LangGraph's is."""
        loop = self.loop
        checkpoint_id = loop.checkpoint["id"]
        pad = Scratchpad(
            task.id,
            resume,
            # As LangGraph: under the caller's namespace, and the path a call's calls hash.
            namespace=task_namespace(parent.namespace, task.name, task.id),
            path=(PUSH, parent.path, task.path[2], True),
            can_interrupt=parent.can_interrupt,
            node=task.name,
            nesting=parent.nesting,
            answers=parent.answers,
            spare=parent.spare,
            root=parent.root,
            findings=parent.findings,
        )
        config = node_config(base, task, step, checkpoint_id)
        metadata = config["metadata"]
        metadata["langgraph_path"] = pad.path  # LangGraph's: the caller's path, the index, True
        if "checkpoint_ns" in metadata:  # the caller's, inherited: the call's own, as LangGraph
            metadata["checkpoint_ns"] = config["configurable"]["checkpoint_ns"]
        info = ExecutionInfo(
            checkpoint_id,
            config["metadata"]["langgraph_checkpoint_ns"],  # the call's namespace
            task.id,
            loop.thread_id,
            run_id=config_run_id(base),
            node_attempt=attempt[0],
            node_first_attempt_time=attempt[1],
        )
        context = CallContext(config, loop.runtime, info)
        args, kwargs = task.input
        given = dict(kwargs)
        for name in fn.injects:
            if name not in given:
                given[name] = _injected(name, context)
        return pad, context, functools.partial(_apply, fn.func, args, given)

    def _done(self, task: Task, fn: TaskFunction[Any], result: Any) -> None:
        task.writes, task.status = [(RETURN, result)], "done"
        if fn.spec.cache_policy is not None:
            cache.remember(self.loop.graph, task, call=True)

    def _failed(self, task: Task, exc: BaseException, step: int) -> None:
        if isinstance(exc, GraphInterrupt):
            task.status, task.interrupts = "interrupt", exc.interrupts
        elif isinstance(exc, Exception):
            task.status, task.error = "error", exc
        else:  # cancelled, KeyboardInterrupt: not an outcome of the call
            task.status = "cancelled"
            self._observe("finish", task, step)
            raise exc

    def _observe(self, kind: hooks.EventKind, task: Task, step: int) -> None:
        """Tell the task observers (the debugger's execution counts) about an attempt."""
        if not hooks.has_observers():
            return
        outcome = _OUTCOMES.get(task.status) if kind == "finish" else None
        loop = self.loop
        hooks.notify(
            hooks.TaskEvent(
                kind,
                loop.thread_id,
                loop.checkpoint_ns,
                loop.checkpoint["id"],
                step,
                task.name,
                task.id,
                outcome,
                repr(task.error) if kind == "finish" and task.error else None,
            )
        )

    @staticmethod
    def _retry(task: Task, fn: TaskFunction[Any], attempt: int) -> float:
        """Seconds to wait before the next attempt (0: the outcome stands)."""
        wait = _retry_wait(fn.retry_policy, task.error, attempt) if task.error else 0.0
        if wait:
            task.status, task.error = None, None
        return wait

    def _end(self, task: Task) -> Any:
        """Report a call's result (an interrupt is its caller's to report, as in LangGraph)
        and return its value, or raise its error or interrupt."""
        if task.status != "interrupt":
            self._report("task_result", lambda: self._result_event(task))
        if task.status == "done":
            return dict(task.writes).get(RETURN)
        if task.status == "interrupt":
            raise GraphInterrupt(task.interrupts)
        assert task.error is not None
        raise task.error

    async def _save(self, task: Task, resume: list[Any]) -> None:
        """Save a call's outcome as pending writes of the checkpoint it runs on. An interrupt
        is saved by the caller, which it pauses; the call keeps the answers it took."""
        saves = self.loop.saves
        if saves is None:
            return
        where = self.loop.checkpoint_config
        if task.status == "done":
            await saves.put_writes(where, task.writes, task.id, task_path_str(task.path))
        elif task.status == "interrupt":
            if resume:
                await saves.put_writes(where, [(RESUME, resume)], task.id)
        elif task.status == "error":
            await saves.put_writes(where, [(ERROR, repr(task.error))], task.id)

    def _result_event(self, task: Task) -> TaskResult:
        """The ``task_result`` event of a finished call: its debug payload's ``result`` is
        ``{"__return__": value}``; its ``updates`` chunk is ``{name: value}``."""
        event = self.loop._debug_event("task_result", task)
        if task.status != "done":
            return event, task.cached, None, ()
        value = dict(task.writes).get(RETURN)
        event["payload"]["result"] = {RETURN: value}
        return event, task.cached, (value,), ()

    def _mark_call(self, task: Task) -> None:
        """Tell ``astream_events`` (its internal mode only) that the task about to be reported
        is a call: it has no node run of its own there, its callback run under the caller's
        run is its only one, as in LangGraph."""
        loop = self.loop
        if loop.producers.wants("callback"):
            loop._write_callback({"event": CALL_STARTED, "task_id": task.id})

    def _report(self, kind: str, build: Callable[[], Any]) -> None:
        if kind != "task" or self.loop.producers.wants(kind):
            self.loop.report_live(kind, build)


async def _call_run(context: CallContext, task: Task, fn: TaskFunction[Any]) -> Any:
    """The callback run of a call's attempt when its caller's config has callbacks (None
    otherwise); the call's config then has the run's child manager."""
    if not context.config.get("callbacks"):
        return None
    from durable_debug.graph.callbacks import CallRun, has_callbacks

    if not has_callbacks(dict(context.config)):
        return None
    args, kwargs = task.input
    run = await CallRun.start(dict(context.config), task.name, fn.func, args, kwargs)
    context.config = run.child_config(dict(context.config))
    return run


async def _end_call_run(run: Any, task: Task) -> None:
    """End a call's callback run with its outcome."""
    if task.status == "done":
        await run.end(task.writes[0][1] if task.writes else None)
    elif task.status == "interrupt":
        await run.error(GraphInterrupt(task.interrupts))
    else:
        await run.error(task.error or RuntimeError(f"task {task.name!r} did not finish"))


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _apply(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], _: Any) -> Any:
    """Call a task's function with its arguments (``call`` passes a state it ignores)."""
    return func(*args, **kwargs)


def _injected(name: str, context: CallContext) -> Any:
    """The value a function's ``config`` / ``writer`` / ``store`` / ``runtime`` parameter
    gets (as a node's does)."""
    if name == "config":
        return context.config
    runtime = context.runtime
    return {"writer": runtime.stream_writer, "store": runtime.store, "runtime": runtime}[name]
