"""``run_sync``: what synchronous callers (``invoke``, the savers' sync methods) see of the
coroutine it runs on the shared background loop: its value, its own exception, a task
cancelled on the loop, and a caller interrupted (Ctrl-C in a notebook) stopping the task."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import signal
import sys
import threading
import time

import pytest

from durable_debug._sync import in_runner_thread, run_sync

WAIT = 60.0  # seconds to wait for a condition (the suite runs under heavy load)


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


def test_an_interrupted_caller_cancels_the_task() -> None:
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
        return frame is not None and frame.f_code.co_name == "_run_on"

    def interrupt() -> None:
        assert running.wait(WAIT)
        while not waiting():
            time.sleep(0.001)
        signal.pthread_kill(main, signal.SIGINT)  # what Ctrl-C does

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run_sync(forever())
    assert stopped.wait(WAIT), "the task kept running after its caller was interrupted"
    assert run_sync(asyncio.sleep(0, "still serving")) == "still serving"
