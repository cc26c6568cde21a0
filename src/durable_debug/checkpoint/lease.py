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
import contextlib
import contextvars
import datetime as _dt
import logging
import math
import os
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, NamedTuple

from durable_debug.checkpoint._io import io_loop
from durable_debug.checkpoint.errors import DurableDebugError, InvalidConfigError, ThreadBusyError

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "LEASE_SECONDS_ENV",
    "LeaseInfo",
    "LeaseLostError",
    "NoAbandonedLeaseError",
    "ThreadBusyError",
    "check_lease",
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


_TOKENS: contextvars.ContextVar[frozenset[tuple[tuple[int, str], str]]] = contextvars.ContextVar(
    "durable_debug_lease_tokens", default=frozenset()
)
"""((id(saver), thread_id), token) of each lease this context holds."""


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


class LeaseLostError(DurableDebugError, RuntimeError):
    """This run's lease on its thread expired without being renewed (the process stalled,
    or lost the store, for longer than the lease) and another run took the thread. The run
    stops before it saves anything more, so the thread does not fork; what it saved before
    stays."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"thread {thread_id!r}: this run's lease expired and another run took the thread; "
            "the run stopped before saving its next checkpoint, so the thread has one writer. "
            "A longer lease (saver.lease_seconds or DURABLE_DEBUG_LEASE_SECONDS) avoids this "
            "when a process can stall that long."
        )
        self.thread_id = thread_id

    def __reduce__(self) -> tuple[type[LeaseLostError], tuple[str]]:
        return (LeaseLostError, (self.thread_id,))


def check_lease(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Raise :class:`LeaseLostError` if the lease this run holds on ``thread_id`` was found
    taken by another run when it was last renewed; nothing when it holds none."""
    key = (id(saver), thread_id)
    if any(k == key and token in _RENEWER.lost for k, token in _TOKENS.get()):
        raise LeaseLostError(thread_id)


class NoAbandonedLeaseError(LookupError):
    """``thread_lease(..., only_abandoned=True)``: the thread has no lease left behind by a
    dead holder (its last run gave the lease back): there is no crashed run to take over."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"thread {thread_id!r} has no lease left behind by a dead run: its last run ended "
            "and gave the thread back"
        )
        self.thread_id = thread_id


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
    saver: BaseCheckpointSaver,
    thread_id: str,
    *,
    wait: float | None = None,
    only_abandoned: bool = False,
) -> AsyncIterator[None]:
    """Hold ``thread_id``'s lease on ``saver`` for the body of the ``async with``.

    Raises :class:`ThreadBusyError` when another run holds it and ``wait`` seconds (default:
    none) pass without it being released or expiring. Re-entrant within one run.

    ``only_abandoned`` (recovery): take the lease only if a dead holder left it behind
    (expired, never given back), in one statement; :class:`NoAbandonedLeaseError` when the
    thread has no such lease (its run ended, or another worker recovered it meanwhile).
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
        if only_abandoned:
            found = await saver._lease_take_abandoned(thread_id, token, holder, seconds)
            if found is None:
                raise NoAbandonedLeaseError(thread_id)
            info = found
        else:
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
    if seconds is not None:
        _RENEWER.add(token, saver, thread_id, seconds)
    previous = _HELD.set(held | {key})
    tokens = _TOKENS.get()
    previous_tokens = _TOKENS.set(tokens | {(key, token)})
    try:
        yield
    finally:
        try:
            _HELD.reset(previous)
            _TOKENS.reset(previous_tokens)
        except ValueError:  # an async generator closed from another context
            _HELD.set(held)
            _TOKENS.set(tokens)
        _RENEWER.discard(token)
        try:
            await saver._lease_release(thread_id, token)
        except Exception:
            # Not raised: it would hide the run's own outcome or error. The lease expires by
            # itself; this process's next run on the thread takes it back at once.
            _UNRELEASED.add((key, token))
            logger.warning("could not release the lease on thread %r", thread_id, exc_info=True)


class _Renewer:
    """Renews every lease this process holds, each a third of its life after it was taken or
    last renewed, from one task on the savers' I/O loop (which runs no user code, so a long
    synchronous node does not stop renewal).

    Taking a lease only adds it to a table: the I/O loop is woken only when the new lease is due
    before everything it already waits for (the first lease, or a shorter lease length), so a
    run does not pay a thread hop to start and stop a renewal of its own.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._leases: dict[str, tuple[BaseCheckpointSaver, str, float, float]] = {}
        """token → (saver, thread_id, lease seconds, monotonic time of the next renewal)."""
        self._wake_at = math.inf
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self._event: asyncio.Event | None = None
        self._tasks: set[asyncio.Future[None]] = set()
        """Renewals in flight (kept referenced until done)."""
        self.lost: set[str] = set()
        """Tokens of held leases another run took (found when renewing them)."""

    def add(self, token: str, saver: BaseCheckpointSaver, thread_id: str, seconds: float) -> None:
        """Renew ``token``'s lease until :meth:`discard`."""
        due = time.monotonic() + seconds / 3
        loop = io_loop()
        with self._lock:
            if self._loop is not loop or self._pid != os.getpid():  # first use, or a fork
                self._loop, self._pid, self._event = loop, os.getpid(), None
                self._leases.clear()
                self._wake_at = math.inf
                asyncio.run_coroutine_threadsafe(self._run(), loop)
            self._leases[token] = (saver, thread_id, seconds, due)
            wake = due < self._wake_at
            if wake:
                self._wake_at = due
        if wake:
            loop.call_soon_threadsafe(self._poke)

    def discard(self, token: str) -> None:
        """Stop renewing ``token``'s lease (it is being given back)."""
        with self._lock:
            self._leases.pop(token, None)
            self.lost.discard(token)

    def _poke(self) -> None:
        if self._event is not None:
            self._event.set()

    async def _run(self) -> None:
        self._event = event = asyncio.Event()
        while True:
            now = time.monotonic()
            with self._lock:
                due = [(t, v) for t, v in self._leases.items() if v[3] <= now]
                for token, (saver, thread_id, seconds, _) in due:
                    self._leases[token] = (saver, thread_id, seconds, now + seconds / 3)
                self._wake_at = min((v[3] for v in self._leases.values()), default=math.inf)
                event.clear()
                wait = self._wake_at - now
            for token, (saver, thread_id, seconds, _) in due:
                task = asyncio.ensure_future(self._renew(token, saver, thread_id, seconds))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            if wait == math.inf:
                await event.wait()
            else:
                # asyncio's own TimeoutError: before Python 3.11 it is not the builtin one
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(event.wait(), max(wait, 0.0))

    async def _renew(
        self, token: str, saver: BaseCheckpointSaver, thread_id: str, seconds: float
    ) -> None:
        try:
            renewed = await saver._lease_renew(thread_id, token, seconds)
        except Exception:  # the store is briefly away: try again next time
            logger.warning("could not renew the lease on thread %r", thread_id, exc_info=True)
            return
        if not renewed:
            with self._lock:
                held = self._leases.pop(token, None) is not None
                if held:
                    self.lost.add(token)
            if held:
                logger.warning(
                    "the lease on thread %r expired and was taken by another run; this run "
                    "stops before saving its next checkpoint",
                    thread_id,
                )


_RENEWER = _Renewer()
"""This process's one renewer of the leases it holds."""
