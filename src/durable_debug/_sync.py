"""Run a coroutine to completion from synchronous code, inside or outside an event loop.

Every synchronous method in durable_debug (``graph.invoke``, ``saver.get_tuple``…) is a thin
wrapper over its async twin. Where it runs the coroutine:

- In a thread with no event loop running (a script, a worker thread), on an event loop of that
  thread's own, kept from call to call: the caller's thread does the work, as LangGraph's sync
  ``invoke`` does. Handing every call to another thread and waiting for it costs two thread
  wake-ups, each of which may move the work to another CPU: on a two-core machine that was up
  to a quarter of a short graph run's time.
- In a thread whose event loop is running (a Jupyter cell runs inside the kernel's loop), the
  wrapper cannot run a loop of its own: the call runs on one long-lived event loop in a daemon
  thread, and the caller waits for it.
- Inside either of those (a synchronous node calling ``graph.invoke``), on a private loop in a
  fresh thread: waiting on the loop the caller runs on would never end.

The database savers do their loop-bound work on a loop of their own (``checkpoint/_io.py``), so
they may be called from any of these loops.

    >>> async def answer():
    ...     return 42
    >>> run_sync(answer())
    42
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import os
import signal
import socket
import sys
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterator
from typing import Any, TypeVar, cast

__all__ = [
    "call_outside_loop",
    "disown_loop",
    "in_runner_thread",
    "iterate_sync",
    "on_runner_loop",
    "private_loop_context",
    "run_in_background",
    "run_sync",
    "start_loop_thread",
    "submit",
    "sync_caller",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_lock = threading.Lock()
_SYNC_CALLER: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "durable_debug_sync_caller", default=False
)


_PRIVATE_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "durable_debug_private_loop", default=False
)


def private_loop_context() -> contextvars.Context:
    """A copy of the caller's context in which :func:`run_sync` runs its coroutine on a
    private loop, never on the shared one: for synchronous code called from a coroutine on a
    private loop (a nested run's), while the shared loop's thread may be the one waiting on
    that run."""
    context = contextvars.copy_context()
    context.run(_PRIVATE_LOOP.set, True)
    return context


def on_runner_loop() -> bool:
    """True inside a coroutine running on a loop :func:`run_sync` runs (the shared background
    loop, or a thread's own loop for its sync calls)."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return running is _loop or running is getattr(_here, "loop", None)


def sync_caller() -> bool:
    """True inside a coroutine that :func:`run_sync` runs: synchronous code started it (a
    graph run started by ``invoke``/``stream`` calls a user's sync saver methods)."""
    return _SYNC_CALLER.get()


_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def start_loop_thread(name: str) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    """Start a new event loop running forever in a daemon thread called ``name``."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    thread = threading.Thread(target=serve, name=name, daemon=True)
    thread.start()
    ready.wait()
    logger.debug("started an event loop in thread %s", name)
    return loop, thread


def _runner_loop() -> asyncio.AbstractEventLoop:
    """Return the shared background loop, starting its thread on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            _loop, _thread = start_loop_thread("durable-debug-sync")
        return _loop


def run_in_background(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the shared background loop and return at once (for a caller with no
    running event loop of its own, such as a plain script showing a widget)."""
    return asyncio.run_coroutine_threadsafe(coro, _runner_loop())


_here = threading.local()
"""Per thread: ``loop``, the event loop :func:`run_sync` runs that thread's calls on (made at
its first call, closed when the thread ends), ``wake``, the socket Ctrl-C wakes it through,
and ``busy``, true while one runs."""


def _close_own_loop(
    loop: asyncio.AbstractEventLoop, pid: int, wake: tuple[socket.socket, socket.socket]
) -> None:
    """Close a thread's own loop (and its Ctrl-C wake-up sockets) when the thread ends. In a
    forked child (every thread's locals go then) the loop's epoll instance is the parent's,
    and closing it would unregister the parent's wake-up pipe, leaving the parent's loop deaf
    to every call handed to it: there it is only marked closed, so neither ``close()`` nor its
    collection touches the selector (the child's copies of the descriptors close with their
    objects)."""
    if os.getpid() == pid:
        loop.close()
        for end in wake:
            end.close()
    else:
        disown_loop(loop)


def disown_loop(loop: asyncio.AbstractEventLoop) -> None:
    """In a forked child, make a loop of the parent's inert: marked closed, not closed. Its
    epoll instance, and every descriptor registered in it, is shared with the parent: closing
    the loop, or a transport of it (a database client's socket, when the child drops or
    collects it), would unregister the parent's descriptors and leave the parent's loop deaf
    to them. Marked closed, neither ``close()`` nor a transport's touches the selector."""
    loop._closed = True  # type: ignore[attr-defined]  # BaseEventLoop's flag (3.10-3.13)


def _new_own_loop() -> asyncio.AbstractEventLoop:
    """The calling thread's own loop, with a socket pair whose reading end it watches: Ctrl-C
    writes to the other end (``signal.set_wakeup_fd``, see :class:`_CtrlC`)."""
    loop = asyncio.new_event_loop()
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    loop.add_reader(reader.fileno(), _drain, reader)
    _here.loop, _here.wake = loop, writer
    # closed when the thread ends (its locals go) or, for the main thread, at exit
    _here.owner = owner = _LoopOwner()
    weakref.finalize(owner, _close_own_loop, loop, os.getpid(), (reader, writer))
    return loop


def _drain(reader: socket.socket) -> None:
    with contextlib.suppress(OSError):  # BlockingIOError once empty
        while reader.recv(4096):
            pass


def _forget_thread_loops() -> None:
    """In a forked child: the parent's loops are not its own (see :func:`disown_loop`); the
    shared background loop starts anew at its first use."""
    global _here
    _here = threading.local()
    if _loop is not None:
        disown_loop(_loop)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_thread_loops)


def in_runner_thread() -> bool:
    """True when the caller runs on a loop :func:`run_sync` runs: the shared background
    loop's thread, or a thread running a sync call on its own loop."""
    return (_thread is not None and threading.current_thread() is _thread) or getattr(
        _here, "busy", False
    )


def call_outside_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call ``fn`` as code no event loop runs: a sync node called on the loop's own thread (a
    lone node of a sync run) sees no running loop, so ``asyncio.run()`` inside it works, as
    in LangGraph's sync run, which calls nodes outside any loop. The loop waits for the call
    anyway; it is the running one again when ``fn`` returns."""
    running = asyncio.events._get_running_loop()
    if running is None:
        return fn(*args, **kwargs)
    asyncio.events._set_running_loop(None)
    try:
        return fn(*args, **kwargs)
    finally:
        asyncio.events._set_running_loop(running)


def run_sync(coro: Coroutine[Any, Any, T], *, context: contextvars.Context | None = None) -> T:
    """Run ``coro`` to completion and return its result, from any synchronous context.

    A caller with no running event loop runs the coroutine itself, on its thread's own loop;
    a caller inside a running loop (a notebook cell) waits for the shared background loop to
    run it. When the caller already runs on one of those loops (a synchronous node that itself
    calls ``graph.invoke``), a private loop in a fresh thread runs it instead, since waiting on
    our own loop would deadlock. Every way, the coroutine sees the caller's context variables
    (a graph invoked inside a node finds that node, and that it is inside its caller's run,
    which already holds the thread's lease).

    ``context``: run in this context rather than a copy of the caller's. Driving one async
    generator step by step (a sync ``stream``) passes the same context to every step, so
    what the generator set in a context variable (the lease its run holds) is still set at
    its next step and when it closes.
    """
    if context is None:
        context = contextvars.copy_context()
    if not context.run(_SYNC_CALLER.get):
        context.run(_SYNC_CALLER.set, True)
    nested = in_runner_thread() or _PRIVATE_LOOP.get()
    if not nested and _running_loop() is None:
        return _run_here(coro, context)
    if nested:

        def run_private() -> T:
            loop = asyncio.new_event_loop()
            try:
                return loop.run_until_complete(_task_in(loop, coro, context))
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(run_private).result()
    return _run_on(_runner_loop(), coro, context)


def _run_here(coro: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    """Run ``coro`` as a task of the calling thread's own loop, in ``context``."""
    loop: asyncio.AbstractEventLoop | None = getattr(_here, "loop", None)
    if loop is None or loop.is_closed():
        loop = _new_own_loop()
    _here.busy = True
    ctrl_c = _CtrlC(loop)  # before the task exists: no Ctrl-C leaves it pending on the loop
    task: asyncio.Task[T] | None = None
    try:
        task = ctrl_c.task = _task_in(loop, coro, context)
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        assert task is not None
        if ctrl_c.pressed:  # the run stopped at its next await: the caller sees Ctrl-C
            raise KeyboardInterrupt() from None
        if not task.cancelled():  # the run's own error (a cancelled node), not its end
            raise
        # as from the shared loop: the task was cancelled on its loop (a stopped run)
        raise concurrent.futures.CancelledError() from None
    except BaseException:
        # KeyboardInterrupt raised in the loop's own code (a second Ctrl-C, or a SIGINT
        # handler of the caller's that raises): the run is cancelled; yet another Ctrl-C
        # stops waiting for it.
        if task is None:  # never started
            coro.close()
        elif not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        raise
    finally:
        ctrl_c.restore()
        _here.busy = False


class _CtrlC:
    """While the main thread runs a task on its own loop: Ctrl-C cancels the task (it stops
    at its next ``await``, its ``finally`` blocks run) instead of raising KeyboardInterrupt
    wherever the thread happens to be, which may be inside the loop's own bookkeeping and
    leave the task unable to finish. A second Ctrl-C raises KeyboardInterrupt as usual (a
    synchronous node that never awaits is stopped that way). ``asyncio.run`` does the same.
    Only Python's default handler is replaced, and only in the main thread."""

    __slots__ = ("loop", "pressed", "previous", "previous_fd", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop, self.pressed = loop, False
        self.task: asyncio.Task[Any] | None = None
        self.previous: Any = None
        self.previous_fd = -1
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            # A signal that lands just before the loop blocks in select would only be handled
            # when select returns: the wake-up byte makes it return.
            self.previous_fd = signal.set_wakeup_fd(_here.wake.fileno(), warn_on_full_buffer=False)
            self.previous = signal.signal(signal.SIGINT, self._pressed)

    def _pressed(self, signum: int, frame: Any) -> None:
        if self.pressed or self.task is None or self.task.done():
            raise KeyboardInterrupt()
        self.pressed = True
        self.task.cancel()
        self.loop.call_soon_threadsafe(lambda: None)  # wake the loop waiting in select

    def restore(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            signal.set_wakeup_fd(self.previous_fd)


class _LoopOwner:
    """What a thread's own loop lives as long as (kept in the thread's locals)."""


def _run_on(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], context: contextvars.Context
) -> T:
    """Run ``coro`` as a task of ``loop`` (running in another thread) in ``context`` and wait
    for it: the caller sleeps on a bare lock the task's end releases (no concurrent Future
    and condition variable between them: a sync ``invoke`` pays this hop on every run)."""
    done = threading.Lock()
    done.acquire()
    started: list[Any] = []  # the task, or the error creating it

    def start() -> None:
        try:
            task = _task_in(loop, coro, context)
        except BaseException as exc:  # the caller waits on ``done``: never leave it held
            coro.close()
            started.append(exc)
            done.release()
            return
        started.append(task)
        task.add_done_callback(finished)

    def finished(task: asyncio.Task[T]) -> None:
        if not task.cancelled():
            task.exception()  # retrieved: a caller gone (interrupted) leaves no log of it
        done.release()

    def cancel() -> None:  # runs after ``start`` (the loop runs callbacks in order)
        if not started:  # interrupted before ``start`` was handed to the loop
            coro.close()
        elif isinstance(started[0], asyncio.Task):
            started[0].cancel()

    try:
        loop.call_soon_threadsafe(start)  # (inside: Ctrl-C right after it must cancel too)
        done.acquire()
    except BaseException:
        # KeyboardInterrupt in a notebook, or the caller's own cancellation: stop the work too.
        with contextlib.suppress(RuntimeError):  # the loop has closed
            loop.call_soon_threadsafe(cancel)
        raise
    outcome = started[0]
    if not isinstance(outcome, asyncio.Task):
        raise outcome
    if outcome.cancelled():
        raise concurrent.futures.CancelledError()
    return cast("T", outcome.result())


def iterate_sync(agen: AsyncGenerator[T, None]) -> Iterator[T]:
    """Iterate ``agen`` from synchronous code, as :func:`run_sync` runs a coroutine: every
    step, and its closing, in one context (what the generator sets in a context variable
    lasts from step to step) and on one loop. Where :func:`run_sync` would use a private loop
    (a sync node streaming a graph), one private loop in a thread of its own serves the whole
    iteration: a loop per step would finalize the generator after its first item."""
    context = contextvars.copy_context()
    if not context.run(_SYNC_CALLER.get):
        context.run(_SYNC_CALLER.set, True)
    private = in_runner_thread() or _PRIVATE_LOOP.get()
    thread: threading.Thread | None = None
    if private:  # what the generator runs synchronously must not wait on the loop we hold
        context.run(_PRIVATE_LOOP.set, True)
        loop, thread = start_loop_thread("durable-debug-stream")
    else:
        loop = _runner_loop()

    def step(coro: Coroutine[Any, Any, Any]) -> Any:
        future = _submit(coro, loop, context)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    try:
        while True:
            try:
                item = step(_anext(agen))
            except StopAsyncIteration:
                return
            yield item
    finally:
        # A stream left unfinished until the interpreter exits is dropped: no loop thread
        # runs any more to close it (waiting on one would hang the exit).
        if not sys.is_finalizing():
            _close(agen, step, loop, thread)


def _close(
    agen: AsyncGenerator[Any, None],
    step: Callable[[Coroutine[Any, Any, Any]], Any],
    loop: asyncio.AbstractEventLoop,
    thread: threading.Thread | None,
) -> None:
    """Close the generator :func:`iterate_sync` iterated, then its private loop if any.

    The iterator may be dropped, and so closed, by code running on the very loop it steps on
    (garbage collected there): waiting for that loop from its own thread would never end, so
    the generator's closing is then only scheduled on it."""
    if thread is None and _running_loop() is loop:
        loop.create_task(agen.aclose())
        return
    try:
        step(agen.aclose())
    finally:
        if thread is not None:
            step(loop.shutdown_asyncgens())
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _anext(agen: AsyncGenerator[T, None]) -> T:
    return await agen.__anext__()


def submit(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop
) -> concurrent.futures.Future[T]:
    """Start ``coro`` on ``loop`` (running in another thread) with the caller's context
    variables, and return at once; cancelling the future cancels the task."""
    return _submit(coro, loop, contextvars.copy_context())


def _submit(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop, context: contextvars.Context
) -> concurrent.futures.Future[T]:
    """``asyncio.run_coroutine_threadsafe`` with the task running in ``context``: cancelling
    the returned future cancels the task."""
    result: concurrent.futures.Future[T] = concurrent.futures.Future()

    def start() -> None:
        if result.cancelled():
            coro.close()
            return
        try:
            task = _task_in(loop, coro, context)
        except BaseException as exc:  # the caller waits on ``result``: never leave it pending
            coro.close()
            result.set_exception(exc)
            return

        def copy(done: asyncio.Task[T]) -> None:
            try:
                if done.cancelled():
                    result.cancel()
                elif done.exception() is not None:
                    result.set_exception(done.exception())
                else:
                    result.set_result(done.result())
            except concurrent.futures.InvalidStateError:  # the caller cancelled meanwhile
                pass

        task.add_done_callback(copy)
        result.add_done_callback(
            lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None
        )

    loop.call_soon_threadsafe(start)
    return result


def _task_in(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], context: contextvars.Context
) -> asyncio.Task[T]:
    """A task on ``loop`` running ``coro`` in ``context`` itself, so what it sets in a context
    variable is set in ``context`` afterwards (``run_sync(..., context=)``: the steps of one
    sync stream share it). Python 3.10's tasks always run in a copy of the context they are
    created in: there, the values the task leaves are copied back into ``context`` when it
    ends."""
    if sys.version_info >= (3, 11):
        return loop.create_task(coro, context=context)

    async def then_copy_back() -> T:
        try:
            return await coro
        finally:
            for var, value in contextvars.copy_context().items():
                context.run(var.set, value)

    return context.run(loop.create_task, then_copy_back())
