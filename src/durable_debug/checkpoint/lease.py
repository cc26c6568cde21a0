"""One writer per thread: the lease a run holds on its thread for its whole duration.

Every run (``invoke``/``stream``, a resume, ``update_state``, the widget's fork and rerun)
takes its thread's lease before it reads the checkpoint it starts from, and gives it back when
it ends. A second writer meanwhile gets :class:`ThreadBusyError` naming the holder, before any
node runs, or waits for the lease when asked to (``wait=seconds``).

    async with thread_lease(saver, "t-1", wait=5.0):
        ...                                        # this process is the thread's only writer

Each saver stores leases its own way (hooks ``_lease_acquire``/``_lease_renew``/
``_lease_release`` of :class:`BaseCheckpointSaver`): in-process for the memory saver, a lease
row with an expiry for SQLite and PostgreSQL, ``SET NX PX`` for Redis. A lease that expires is
free to take, so a holder that dies (SIGKILL, lost machine) releases its threads after
``saver.lease_seconds``; a live holder renews its lease every third of that time, on the
savers' I/O loop (which runs no user code, so a long synchronous node does not stop renewal).
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as _dt
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, NamedTuple

from durable_debug.checkpoint._io import io_loop
from durable_debug.checkpoint.errors import InvalidConfigError, ThreadBusyError

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "LEASE_SECONDS_ENV",
    "LeaseInfo",
    "ThreadBusyError",
    "default_lease_seconds",
    "holder_name",
    "thread_lease",
]

logger = logging.getLogger(__name__)

_HELD: contextvars.ContextVar[frozenset[tuple[int, str]]] = contextvars.ContextVar(
    "durable_debug_held_leases", default=frozenset()
)
"""(id(saver), thread_id) of the leases this context already holds: a graph run inside a node
of a run on the same thread (a subgraph) does not wait for its own caller."""


_UNRELEASED: set[tuple[tuple[int, str], str]] = set()
"""((id(saver), thread_id), token) of leases this process failed to release."""


class LeaseInfo(NamedTuple):
    """Who holds a thread's lease."""

    token: str
    """Random id of the holding run; the lease is ours when it is our token."""
    holder: str
    """``host:pid`` of the holding process."""
    since: _dt.datetime | None
    """When the holder took the lease (UTC)."""


DEFAULT_LEASE_SECONDS = 30.0
"""How long a lease of a database saver lives without renewal, unless configured."""

LEASE_SECONDS_ENV = "DURABLE_DEBUG_LEASE_SECONDS"
"""Environment variable overriding :data:`DEFAULT_LEASE_SECONDS` for savers made afterwards
(every worker of a deployment should use the same value)."""


def default_lease_seconds() -> float:
    """The lease length new database savers start with: :data:`LEASE_SECONDS_ENV` if set,
    else :data:`DEFAULT_LEASE_SECONDS`."""
    text = os.environ.get(LEASE_SECONDS_ENV)
    if not text:
        return DEFAULT_LEASE_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(
            f"{LEASE_SECONDS_ENV}={text!r}: the lease length must be a positive number of seconds"
        )
    return seconds


def holder_name() -> str:
    """``host:pid`` of this process, as leases record it."""
    return f"{socket.gethostname()}:{os.getpid()}"


@asynccontextmanager
async def thread_lease(
    saver: BaseCheckpointSaver, thread_id: str, *, wait: float | None = None
) -> AsyncIterator[None]:
    """Hold ``thread_id``'s lease on ``saver`` for the body of the ``async with``.

    Raises :class:`ThreadBusyError` when another run holds it and ``wait`` seconds (default:
    none) pass without it being released or expiring. Re-entrant within one run.
    """
    if wait is not None and (
        isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0
    ):
        raise InvalidConfigError(
            f"thread {thread_id!r}: wait must be a number of seconds >= 0 (or None), got {wait!r}"
        )
    key = (id(saver), thread_id)
    held = _HELD.get()
    if key in held:
        yield
        return
    token = uuid.uuid4().hex
    holder = holder_name()
    seconds = saver.lease_seconds
    started = time.monotonic()
    pause = 0.02
    while True:
        info = await saver._lease_acquire(thread_id, token, holder, seconds)
        if info.token == token:
            break
        if (key, info.token) in _UNRELEASED:
            # This process's own earlier run, whose release failed (the store was away).
            await saver._lease_release(thread_id, info.token)
            _UNRELEASED.discard((key, info.token))
            continue
        waited = time.monotonic() - started
        if wait is None or waited >= wait:
            raise ThreadBusyError(thread_id, info.holder, info.since, waited=round(waited, 1))
        await asyncio.sleep(min(pause, max(wait - waited, 0.0)))
        pause = min(pause * 2, 1.0)
    renewal = None
    if seconds is not None:
        renewal = asyncio.run_coroutine_threadsafe(
            _renew(saver, thread_id, token, seconds), io_loop()
        )
    previous = _HELD.set(held | {key})
    try:
        yield
    finally:
        try:
            _HELD.reset(previous)
        except ValueError:  # an async generator closed from another context
            _HELD.set(held)
        if renewal is not None:
            renewal.cancel()
        try:
            await saver._lease_release(thread_id, token)
        except Exception:
            # Not raised: it would hide the run's own outcome or error. The lease expires by
            # itself; this process's next run on the thread takes it back at once.
            _UNRELEASED.add((key, token))
            logger.warning("could not release the lease on thread %r", thread_id, exc_info=True)


async def _renew(saver: BaseCheckpointSaver, thread_id: str, token: str, seconds: float) -> None:
    """Extend the lease every third of its life until cancelled (runs on the I/O loop)."""
    while True:
        await asyncio.sleep(seconds / 3)
        try:
            if not await saver._lease_renew(thread_id, token, seconds):
                logger.warning(
                    "the lease on thread %r expired and was taken by another run; this run "
                    "is no longer the thread's only writer",
                    thread_id,
                )
                return
        except Exception:  # the store is briefly away: try again next time
            logger.warning("could not renew the lease on thread %r", thread_id, exc_info=True)
