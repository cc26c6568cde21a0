"""``run_sync``: what synchronous callers (``invoke``, the savers' sync methods) see of the
coroutine it runs (on the caller's own thread when no loop runs there, else on the shared
background loop): its value, its own exception, a task cancelled on the loop, a caller
interrupted (Ctrl-C) stopping the task, and which thread and loop do the work."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import gc
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable

import pytest
from typing_extensions import TypedDict

import durable_debug as dd
from durable_debug._sync import in_runner_thread, run_sync
from durable_debug.checkpoint._io import io_loop, on_io_loop

WAIT = 60.0  # seconds to wait for a condition (the suite runs under heavy load)


class _Value(TypedDict):
    value: int


def test_value_and_context_reach_the_caller() -> None:
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")
    seen.set("caller's")

    async def answer() -> tuple[int, str, bool]:
        return 42, seen.get(), in_runner_thread()

    assert run_sync(answer()) == (42, "caller's", True)


def test_the_coroutines_own_exception_is_raised() -> None:
    error = ValueError("from the coroutine")

    async def fail() -> None:
        raise error

    with pytest.raises(ValueError) as caught:
        run_sync(fail())
    assert caught.value is error


def test_a_task_cancelled_on_the_loop_raises_cancelled() -> None:
    async def cancelled() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(0)

    with pytest.raises(concurrent.futures.CancelledError):
        run_sync(cancelled())


@pytest.mark.parametrize("inside_a_loop", [False, True], ids=["own loop", "shared loop"])
def test_an_interrupted_caller_cancels_the_task(inside_a_loop: bool) -> None:
    """Ctrl-C while ``run_sync`` waits: in a script (the main thread runs the task on its own
    loop) and in a notebook (a cell, inside the kernel's running loop, waits for the shared
    loop): the task is cancelled, and the next call is served."""
    running, stopped = threading.Event(), threading.Event()

    async def forever() -> None:
        running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            stopped.set()
            raise

    main = threading.main_thread().ident
    assert main is not None

    def waiting() -> bool:  # the main thread blocked in run_sync, waiting for the task
        frame = sys._current_frames().get(main)
        if frame is None:
            return False
        names = set()
        while frame is not None:
            names.add(frame.f_code.co_name)
            frame = frame.f_back
        # on its own loop it waits in the selector; for the shared loop, on a lock
        return ("_run_on" if inside_a_loop else "_run_here") in names and "forever" not in names

    _interrupt_main_when(lambda: running.is_set() and waiting())
    with pytest.raises(KeyboardInterrupt):
        if inside_a_loop:

            async def cell() -> None:  # synchronous code inside a running loop
                run_sync(forever())

            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(cell())
            finally:
                loop.close()
        else:
            run_sync(forever())
    assert stopped.wait(WAIT), "the task kept running after its caller was interrupted"
    assert run_sync(asyncio.sleep(0, "still serving")) == "still serving"


def test_a_caller_with_no_loop_runs_the_coroutine_on_its_own_thread() -> None:
    """No thread hop where none is needed: the caller's thread runs the work, on a loop of
    its own kept from call to call, closed when the thread ends."""

    async def where() -> tuple[threading.Thread, asyncio.AbstractEventLoop]:
        return threading.current_thread(), asyncio.get_running_loop()

    thread, loop = run_sync(where())
    assert thread is threading.current_thread()
    assert run_sync(where())[1] is loop

    seen: list[tuple[threading.Thread, asyncio.AbstractEventLoop]] = []
    worker = threading.Thread(target=lambda: seen.extend([run_sync(where()), run_sync(where())]))
    worker.start()
    worker.join(WAIT)
    assert [s[0] for s in seen] == [worker, worker]
    worker_loop = seen[0][1]
    assert seen[1][1] is worker_loop and worker_loop is not loop
    seen.clear()
    gc.collect()  # the thread's locals, and with them its loop
    assert worker_loop.is_closed()
    assert not loop.is_closed()  # the main thread's, until the interpreter exits


def test_a_caller_inside_a_running_loop_waits_for_the_shared_loop() -> None:
    """A notebook cell runs inside the kernel's loop: the coroutine runs on another thread
    (``invoke`` there cannot run a loop of its own), and a call made from that coroutine runs
    on a private loop, not on the one it would wait for."""

    async def where() -> tuple[threading.Thread, bool]:
        return threading.current_thread(), in_runner_thread()

    async def nested() -> tuple[threading.Thread, threading.Thread]:
        return threading.current_thread(), run_sync(where())[0]

    async def cell() -> tuple[tuple[threading.Thread, bool], tuple[threading.Thread, ...]]:
        return run_sync(where()), run_sync(nested())

    loop = asyncio.new_event_loop()
    try:
        (thread, on_runner), (outer, inner) = loop.run_until_complete(cell())
    finally:
        loop.close()
    assert thread is not threading.current_thread() and on_runner
    assert outer is thread and inner not in (outer, threading.current_thread())


def test_a_sync_invoke_runs_its_lone_sync_node_in_the_callers_thread() -> None:
    """As LangGraph's sync loop does: a script's ``invoke`` runs a lone sync node in the
    thread that called it, and a graph invoked inside that node runs too (on a private loop)."""
    seen: list[threading.Thread] = []

    def inner_node(state: _Value) -> _Value:
        seen.append(threading.current_thread())
        return {"value": state["value"] + 1}

    inner = dd.StateGraph(_Value).add_node("inc", inner_node).add_edge(dd.START, "inc").compile()

    def outer_node(state: _Value) -> _Value:
        seen.append(threading.current_thread())
        return {"value": inner.invoke(state)["value"] + 1}

    graph = (
        dd.StateGraph(_Value)
        .add_node("outer", outer_node)
        .add_edge(dd.START, "outer")
        .compile(checkpointer=dd.MemorySaver())
    )
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"value": 0}, config) == {"value": 2}
    assert seen[0] is threading.current_thread()
    assert seen[1] is not threading.current_thread()
    assert graph.get_state(config).values == {"value": 2}


def _watched_fds(loop: asyncio.AbstractEventLoop) -> set[str]:
    """The descriptors the kernel's epoll instance behind ``loop`` watches (Linux)."""
    epoll = loop._selector.fileno()  # type: ignore[attr-defined]
    with open(f"/proc/self/fdinfo/{epoll}") as info:
        return {line.split()[1] for line in info if line.startswith("tfd:")}


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="reads Linux's fdinfo")
def test_a_forked_child_runs_on_a_loop_of_its_own() -> None:
    """A child forked after the parent ran sync calls gets a loop of its own, and leaves the
    parent's alone: the two share one epoll instance, so closing the parent's loop in the
    child would stop the parent's loop hearing its wake-up pipe (its next call handed a
    result from another thread would hang)."""

    async def running() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    async def from_a_thread() -> str:  # woken through the loop's pipe
        return await asyncio.to_thread(lambda: "woken")

    # a worker thread's loop too: in the child, every other thread's locals go at the fork
    worker_loop: list[asyncio.AbstractEventLoop] = []
    worker_saw: list[str] = []
    forked = threading.Event()

    def work() -> None:
        worker_loop.append(run_sync(running()))
        assert forked.wait(WAIT)
        worker_saw.append(run_sync(from_a_thread()))

    worker = threading.Thread(target=work)
    worker.start()
    parent_loop = run_sync(running())
    watched = _watched_fds(parent_loop)
    assert watched  # its wake-up pipe at least
    while not worker_loop:
        time.sleep(0.001)
    worker_watched = _watched_fds(worker_loop[0])
    pid = os.fork()
    if pid == 0:  # the child: exit with 0 only when its call ran on a new loop
        code = 1
        try:
            loop = run_sync(running())
            code = 0 if loop is not parent_loop and parent_loop.is_closed() else 3
            del parent_loop, loop
            gc.collect()  # what the child drops must not touch the parent's epoll either
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert run_sync(running()) is parent_loop and not parent_loop.is_closed()
    assert _watched_fds(parent_loop) == watched
    assert run_sync(from_a_thread()) == "woken"
    assert _watched_fds(worker_loop[0]) == worker_watched
    forked.set()
    worker.join(WAIT)
    assert worker_saw == ["woken"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="reads Linux's fdinfo")
def test_a_forked_child_leaves_the_parents_sockets_on_the_savers_io_loop() -> None:
    """A database client's socket on the savers' I/O loop stays the parent's after a fork:
    the child closing its copy of the client's transport (as a Redis connection does when
    the child drops the client it inherited) must not unregister the socket from the epoll
    instance the two share, or the parent's next read on it would never wake."""
    here, there = socket.socketpair()

    async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(sock=here)

    async def read_one() -> bytes:
        return await asyncio.wait_for(reader.read(1), WAIT)

    reader, writer = run_sync(on_io_loop(connect()))
    loop = io_loop()
    watched = _watched_fds(loop)
    assert str(here.fileno()) in watched
    pid = os.fork()
    if pid == 0:  # the child: exit with 0 only when it left the parent's loop alone
        code = 1
        try:
            with contextlib.suppress(RuntimeError):  # ("Event loop is closed": not its own)
                writer.transport.close()
            code = 0 if loop.is_closed() else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _watched_fds(loop) == watched and not loop.is_closed()
    there.sendall(b"x")
    assert run_sync(on_io_loop(read_one())) == b"x"
    writer.close()
    there.close()


def _interrupt_main_when(*conditions: Callable[[], bool]) -> None:
    """Send the main thread SIGINT (what Ctrl-C does) once per condition, each once it holds
    (from another thread; after WAIT seconds regardless, so a broken case fails, not hangs)."""
    main = threading.main_thread().ident
    assert main is not None

    def interrupt() -> None:
        for condition in conditions:
            deadline = time.monotonic() + WAIT
            while not condition() and time.monotonic() < deadline:
                time.sleep(0.001)
            signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()


def _first_press_handled() -> bool:
    """Whether the run's Ctrl-C handler has taken a press (two signals sent before the first
    is handled would be handled as one)."""
    handler = signal.getsignal(signal.SIGINT)
    return bool(getattr(getattr(handler, "__self__", None), "pressed", False))


def test_ctrl_c_stops_a_scripts_sync_invoke_and_the_thread_runs_again() -> None:
    """Ctrl-C during ``invoke`` in a script (the main thread runs the graph): the node waiting
    is cancelled, the caller gets KeyboardInterrupt, and the thread can run again at once."""
    waiting, cancelled = threading.Event(), threading.Event()

    async def wait_forever(state: _Value) -> _Value:
        waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return state

    def quick(state: _Value) -> _Value:
        return {"value": state["value"] + 1}

    builder = dd.StateGraph(_Value).add_node("slow", wait_forever).add_node("quick", quick)
    builder = builder.add_conditional_edges(
        dd.START, lambda s: "slow" if s["value"] == 0 else "quick"
    )
    graph = builder.compile(checkpointer=dd.MemorySaver())
    config = {"configurable": {"thread_id": "ctrl-c"}}
    _interrupt_main_when(waiting.is_set)
    with pytest.raises(KeyboardInterrupt):
        graph.invoke({"value": 0}, config)
    assert cancelled.is_set()
    assert graph.invoke({"value": 1}, config) == {"value": 2}  # its lease was given back


def test_a_second_ctrl_c_stops_a_sync_node_that_never_awaits() -> None:
    """The first Ctrl-C can only cancel the run at its next await; a sync node that loops
    without one is stopped by the second, raised inside it (as LangGraph's sync run is)."""
    looping = threading.Event()
    seen: list[str] = []

    def spin(state: _Value) -> _Value:
        looping.set()
        try:
            while True:
                time.sleep(0.005)
        except KeyboardInterrupt:
            seen.append("interrupted in the node")
            raise

    graph = (
        dd.StateGraph(_Value)
        .add_node("spin", spin)
        .add_edge(dd.START, "spin")
        .compile(checkpointer=dd.MemorySaver())
    )
    config = {"configurable": {"thread_id": "spin"}}
    _interrupt_main_when(looping.is_set, _first_press_handled)
    with pytest.raises(KeyboardInterrupt):
        graph.invoke({"value": 0}, config)
    assert seen == ["interrupted in the node"]
    assert run_sync(asyncio.sleep(0, "still serving")) == "still serving"
