"""The event loop on which the database savers do all their I/O.

Database clients are bound to the event loop they were opened on: an ``asyncio.Lock`` guarding
a SQLite transaction, a psycopg connection pool and its worker tasks. A saver, however, is used
from many loops: a notebook's loop, a fresh ``asyncio.run`` per script or test, and the
background loop behind every sync twin (:mod:`durable_debug._sync`). So every saver opens its
connections and runs its loop-bound database work on *this* loop, in a daemon thread that runs
nothing else, and callers on any loop await the result (once open, ``SqliteSaver`` and
``PostgresSaver`` run their reads and writes from the caller's loop instead, over connections
that keep no loop-bound state; see their ``_call``):

    rows = await on_io_loop(fetch_rows())   # from any loop, any thread

No user code runs on this loop, so it is never blocked by a synchronous node waiting on itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from durable_debug._sync import disown_loop, start_loop_thread

__all__ = ["io_loop", "on_io_loop", "run_soon_on_io_loop"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid: int | None = None


def io_loop() -> asyncio.AbstractEventLoop:
    """Return the savers' I/O loop, starting its daemon thread on first use (and after a fork)."""
    global _loop, _thread, _pid
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive() or _pid != os.getpid():
            _loop, _thread = start_loop_thread("durable-debug-io")
            _pid = os.getpid()
        return _loop


async def on_io_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the I/O loop and return its result to the calling loop.

    Cancelling the caller cancels ``coro`` too.
    """
    loop = io_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def run_soon_on_io_loop(coro: Coroutine[Any, Any, Any]) -> None:
    """Schedule ``coro`` on the I/O loop without waiting (used to close forgotten savers)."""
    loop = _loop
    if loop is None or loop.is_closed() or _pid != os.getpid():
        coro.close()
        return
    try:
        asyncio.run_coroutine_threadsafe(coro, loop)
    except RuntimeError:  # the loop stopped (interpreter shutdown)
        coro.close()


def _disown_io_loop() -> None:
    """In a forked child: the parent's I/O loop, and the savers' connections on it, are not
    its own (``_sync.disown_loop``); :func:`io_loop` starts one for the child."""
    if _loop is not None:
        disown_loop(_loop)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_disown_io_loop)
