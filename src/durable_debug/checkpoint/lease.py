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

Fencing: every write a run makes (a step, pending writes, a ``once`` result, ``update_state``)
carries the run's lease token (:func:`fence_token`), and the saver checks in the same
transaction (SQLite, PostgreSQL) or script (Redis) that the token still holds the thread, so a
run whose lease was taken writes nothing more (:class:`LeaseLostError`). Before each step the
engine calls :func:`confirm_lease`, which renews the lease first when this process cannot be
sure it is still valid (a stall longer than a third of the lease), so a run that lost its lease
starts no further node.

Proof of life: a lease records its holder's host (boot id and pid namespace), pid and process
start time (:func:`holder_proof`). A lease whose holder is provably dead on this host (no such
process, or the pid now belongs to another process) is free at once (:func:`holder_is_dead`);
a holder on another host is waited for until its lease expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as _dt
import logging
import math
import os
import random
import socket
import threading
import time
from collections.abc import Set
from typing import TYPE_CHECKING, Any, NamedTuple

from durable_debug.checkpoint._io import io_loop
from durable_debug.checkpoint.errors import DurableDebugError, InvalidConfigError, ThreadBusyError

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "LEASE_LOST_MARK",
    "LEASE_SECONDS_ENV",
    "LOST_LEASES",
    "LeaseInfo",
    "LeaseLostError",
    "NoAbandonedLeaseError",
    "ThreadBusyError",
    "boot_clock",
    "check_lease",
    "confirm_lease",
    "default_lease_seconds",
    "fence_token",
    "holder_is_dead",
    "holder_name",
    "holder_proof",
    "lease_held",
    "lease_released",
    "lease_to_confirm",
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

_SENT_BACK: set[str] = set()
"""Tokens of leases whose give-back a saver sent without waiting for its answer
(:func:`release_sent`): their runs have ended, so a run of this process that finds one of them
still holding a thread (its give-back not processed yet, or failed) takes the thread at once,
through any saver on the same store."""


class LeaseInfo(NamedTuple):
    """Who holds a thread's lease."""

    token: str
    """Random id of the holding run; the lease is ours when it is our token."""
    holder: str
    """``host:pid`` of the holding process."""
    since: _dt.datetime | None
    """When the holder took the lease (UTC)."""


LEASE_LOST_MARK = "durable_debug: the lease on this thread was taken by another run"
"""The text of the error a saver's fenced write raises inside the store (a SQL statement, a
Redis script) when the run's lease no longer holds the thread; the saver turns it into
:class:`LeaseLostError`."""


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


def fence_token(saver: BaseCheckpointSaver, thread_id: str) -> str | None:
    """The token of the lease this run (this context) holds on ``thread_id`` of ``saver``, for
    the saver to check inside its write ("fencing"); None when the run holds none (a write made
    outside any run, which is not fenced). Raises :class:`LeaseLostError` at once when the
    lease is already known to be lost."""
    tokens = _TOKENS.get()
    if not tokens:
        return None
    key = (id(saver), thread_id)
    for k, token in tokens:
        if k == key:
            if token in _RENEWER.lost:
                raise LeaseLostError(thread_id)
            return token
    return None


def check_lease(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Raise :class:`LeaseLostError` if the lease this run holds on ``thread_id`` was found
    taken by another run when it was last renewed; nothing when it holds none. (The saver's
    own check, inside each write, is what guarantees it; this one fails earlier.)"""
    if _RENEWER.lost:  # no lease of this process is known lost: nothing to look up
        fence_token(saver, thread_id)


def lease_to_confirm() -> bool:
    """False when :func:`confirm_lease` has nothing to do for any thread (no lease of this
    process expires or was lost): the engine then skips the call."""
    return bool(_RENEWER.lost or _RENEWER._valid)  # a lease renewed here, or one lost


async def confirm_lease(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Make sure the lease this run holds on ``thread_id`` is still its own before the run
    starts more work (the engine calls it before each step's nodes).

    Free while the lease is known valid (renewed less than two thirds of its life ago, by this
    process's monotonic clock, which counts a stopped process's time too). After a longer
    stall the lease is renewed here first, and :class:`LeaseLostError` is raised if another
    run took the thread meanwhile, so a run that lost its lease starts no further node."""
    if not lease_to_confirm():
        return  # no lease of this process expires (the memory saver's), none is lost
    token = fence_token(saver, thread_id)
    if token is None:
        return
    entry = _RENEWER.entry(token)
    if entry is None:  # a lease that never expires (the memory saver), or being given back
        return
    seconds, valid_until = entry
    if time.monotonic() < valid_until - seconds / 3:
        return
    sent = time.monotonic()
    if not await saver._lease_renew(thread_id, token, seconds):
        _RENEWER.mark_lost(token)
        raise LeaseLostError(thread_id)
    _RENEWER.renewed(token, sent + seconds)


# -- proof of life: who holds a lease, and whether that process still exists --------------------


class HolderProof(NamedTuple):
    """What a lease records about its holder, so that a process on the same host can tell
    whether the holder still lives (:func:`holder_is_dead`)."""

    boot: str
    """The kernel's boot id (``/proc/sys/kernel/random/boot_id``): same machine, same boot."""
    pidns: str
    """The inode of the holder's pid namespace: pids mean the same thing only within one."""
    pid: int
    start: int
    """The process's start time (field 22 of ``/proc/<pid>/stat``, clock ticks after boot): a
    pid reused by a newer process has another start time."""
    ticks: float | None
    """When the lease expires on :func:`boot_clock` (the SQLite saver's clock), or None."""


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _process_start(pid: int) -> tuple[int, str] | None:
    """(start time, state letter) of process ``pid`` in this pid namespace, or None when no
    such process exists."""
    text = _read(f"/proc/{pid}/stat")
    if text is None:
        return None
    # "pid (comm) state ppid …": comm may hold spaces and parentheses; fields follow the last ")".
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[19]), fields[0]
    except (IndexError, ValueError):
        return None


_SELF: dict[int, tuple[str, str, int]] = {}
"""pid → (boot id, pid namespace, start time) of this process (recomputed after a fork)."""


def _self_identity() -> tuple[str, str, int] | None:
    pid = os.getpid()
    found = _SELF.get(pid)
    if found is None:
        boot = (_read("/proc/sys/kernel/random/boot_id") or "").strip()
        try:
            pidns = str(os.stat("/proc/self/ns/pid").st_ino)
        except OSError:
            pidns = ""
        started = _process_start(pid)
        if not boot or not pidns or started is None:
            return None  # not Linux, or no /proc: leases then only expire
        found = _SELF[pid] = (boot, pidns, started[0])
    return found


def boot_clock() -> float:
    """Seconds since the machine booted (CLOCK_BOOTTIME, what ``/proc/uptime`` shows): the
    clock every process on one host shares and no one sets, unlike the wall clock. SQLite
    leases expire on it (every process using a SQLite file in WAL mode runs on the file's
    host). Where
    that clock is missing (not Linux), the monotonic clock; leases there carry no proof and
    expire on the wall clock."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is not None:
        return time.clock_gettime(boottime)
    return time.monotonic()


def holder_proof(expires_ticks: float | None = None) -> str:
    """This process's proof of life as a lease records it (``boot pidns pid start [ticks]``);
    empty where ``/proc`` cannot say (the lease then only expires)."""
    found = _self_identity()
    if found is None:
        return ""
    boot, pidns, start = found
    text = f"{boot} {pidns} {os.getpid()} {start}"
    if expires_ticks is not None:
        text += f" {expires_ticks:.3f}"
    return text


def parse_proof(text: str | None) -> HolderProof | None:
    """The :class:`HolderProof` a lease recorded, or None (an older lease, another format)."""
    parts = (text or "").split()
    if len(parts) not in (4, 5):
        return None
    try:
        ticks = float(parts[4]) if len(parts) == 5 else None
        return HolderProof(parts[0], parts[1], int(parts[2]), int(parts[3]), ticks)
    except ValueError:
        return None


def holder_is_dead(text: str | None) -> bool:
    """Whether the holder a lease's proof names is provably dead: it ran on this host (same
    boot, same pid namespace) and its process is gone, a zombie, or its pid now belongs to a
    process started at another time. False whenever this cannot be known (another host)."""
    proof = parse_proof(text)
    if proof is None:
        return False
    own = _self_identity()
    if own is None or (proof.boot, proof.pidns) != own[:2]:
        return False
    if proof.pid == os.getpid():
        return proof.start != own[2]
    found = _process_start(proof.pid)
    if found is None:
        return True
    start, state = found
    return start != proof.start or state in ("Z", "X", "x")


def boot_expired(text: str | None) -> bool | None:
    """For a lease whose proof holds an expiry on :func:`boot_clock`: whether it has expired,
    if this host's boot clock is the one it was set on (same boot id); None otherwise."""
    proof = parse_proof(text)
    if proof is None or proof.ticks is None:
        return None
    own = _self_identity()
    if own is None or proof.boot != own[0]:
        return None
    return proof.ticks < boot_clock()


# -- waking the runs that wait for a lease ------------------------------------------------------

_WAITERS_LOCK = threading.Lock()
_WAITERS: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
"""thread_id → futures of runs of this process waiting for that thread's lease."""

CROSS_PROCESS_POLL = 0.05
"""How often a run waiting for a lease another process holds looks again (seconds, at most)."""


def release_sent(token: str) -> None:
    """A saver's report that it sent the give-back of ``token``'s lease without waiting for
    its answer (see :data:`_SENT_BACK`)."""
    _SENT_BACK.add(token)


def release_confirmed(token: str) -> None:
    """A saver's report that the give-back of ``token``'s lease, sent earlier, succeeded."""
    _SENT_BACK.discard(token)


def release_unconfirmed(
    saver: BaseCheckpointSaver, thread_id: str, token: str, error: BaseException
) -> None:
    """A saver's report that giving back ``token``'s lease on ``thread_id`` failed after the
    run ended (the give-back was sent without waiting for its answer): logged, and remembered
    so this process's next run on the thread takes the lease back at once."""
    _UNRELEASED.add(((id(saver), thread_id), token))
    logger.warning("could not release the lease on thread %r: %s", thread_id, error)


def lease_released(thread_id: str) -> None:
    """Wake the runs of this process waiting for ``thread_id``'s lease (it was given back)."""
    with _WAITERS_LOCK:
        waiting = _WAITERS.pop(thread_id, None)
    for loop, future in waiting or ():
        with contextlib.suppress(RuntimeError):  # that loop has closed
            loop.call_soon_threadsafe(_wake, future)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _wait_released(thread_id: str, timeout: float) -> None:
    """Return when this process gives ``thread_id``'s lease back, or after ``timeout``."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    entry = (loop, future)
    with _WAITERS_LOCK:
        _WAITERS.setdefault(thread_id, set()).add(entry)
    try:
        with contextlib.suppress(asyncio.TimeoutError):  # not the builtin one before 3.11
            await asyncio.wait_for(future, timeout)
    finally:
        with _WAITERS_LOCK:
            waiting = _WAITERS.get(thread_id)
            if waiting is not None:
                waiting.discard(entry)
                if not waiting:
                    del _WAITERS[thread_id]


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


_HOLDER: str | None = None
""":func:`holder_name` as computed: once per process (a forked child forgets it), not per
run (``os.getpid`` is a system call)."""


def holder_name() -> str:
    """``host:pid`` of this process, as leases record it."""
    global _HOLDER
    if _HOLDER is None:
        _HOLDER = f"{socket.gethostname()}:{os.getpid()}"
    return _HOLDER


def _forget_holder() -> None:
    global _HOLDER
    _HOLDER = None


if hasattr(os, "register_at_fork"):  # POSIX: a forked child has a pid of its own
    os.register_at_fork(after_in_child=_forget_holder)


def _check_wait(thread_id: str, wait: float | None) -> None:
    if wait is not None and (
        isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0
    ):
        raise InvalidConfigError(
            f"thread {thread_id!r}: wait must be a number of seconds >= 0 (or None), got {wait!r}"
        )


def lease_held(saver: BaseCheckpointSaver, thread_id: str, *, wait: float | None = None) -> bool:
    """Whether the running context already holds ``thread_id``'s lease on ``saver`` (a run
    nested in a task of the run holding it), so :func:`thread_lease` would take nothing: the
    caller may skip it. Raises as :func:`thread_lease` does for an unusable ``wait``."""
    _check_wait(thread_id, wait)
    return (id(saver), thread_id) in _HELD.get()


def thread_lease(
    saver: BaseCheckpointSaver,
    thread_id: str,
    *,
    wait: float | None = None,
    only_abandoned: bool = False,
) -> _ThreadLease:
    """Hold ``thread_id``'s lease on ``saver`` for the body of the ``async with``.

    Raises :class:`ThreadBusyError` when another run holds it and ``wait`` seconds (default:
    none) pass without it being released or expiring. Re-entrant within one run.

    ``only_abandoned`` (recovery): take the lease only if a dead holder left it behind
    (expired, never given back), in one statement; :class:`NoAbandonedLeaseError` when the
    thread has no such lease (its run ended, or another worker recovered it meanwhile).
    """
    return _ThreadLease(saver, thread_id, wait, only_abandoned)


class _ThreadLease:
    """The context manager :func:`thread_lease` returns (a plain class: every run enters
    one, and a generator-based context manager costs more than the lease itself)."""

    __slots__ = ("only_abandoned", "restore", "saver", "thread_id", "token", "wait")

    def __init__(
        self, saver: BaseCheckpointSaver, thread_id: str, wait: float | None, only_abandoned: bool
    ) -> None:
        self.saver = saver
        self.thread_id = thread_id
        self.wait = wait
        self.only_abandoned = only_abandoned
        self.token: str | None = None
        """The lease taken (None: the context already held it, nothing to give back)."""
        self.restore: tuple[Any, ...] = ()
        """The context variables' tokens and former values, reset on exit."""

    async def __aenter__(self) -> None:
        saver, thread_id, wait = self.saver, self.thread_id, self.wait
        _check_wait(thread_id, wait)
        key = (id(saver), thread_id)
        held = _HELD.get()
        if key in held:
            return
        token = _new_token()
        holder = holder_name()
        seconds = saver.lease_seconds
        started = time.monotonic()
        pause = 0.005
        while True:
            sent = time.monotonic()
            if self.only_abandoned:
                found = await saver._lease_take_abandoned(thread_id, token, holder, seconds)
                if found is None:
                    raise NoAbandonedLeaseError(thread_id)
                info = found
            else:
                info = await saver._lease_acquire(thread_id, token, holder, seconds)
            if info.token == token:
                break
            if (key, info.token) in _UNRELEASED or info.token in _SENT_BACK:
                # This process's own earlier run, whose give-back failed (the store was away)
                # or is still on its way.
                await saver._lease_release(thread_id, info.token)
                _UNRELEASED.discard((key, info.token))
                continue
            waited = time.monotonic() - started
            if wait is None or waited >= wait:
                raise ThreadBusyError(thread_id, info.holder, info.since, waited=round(waited, 1))
            # Woken at once when a run of this process gives it back; another process's
            # release is seen within CROSS_PROCESS_POLL.
            await _wait_released(thread_id, min(pause, max(wait - waited, 0.0)))
            pause = min(pause * 2, CROSS_PROCESS_POLL)
        if seconds is not None:
            _RENEWER.add(token, saver, thread_id, seconds, sent + seconds)
        tokens = _TOKENS.get()
        self.restore = (
            _HELD.set(held | {key}),
            _TOKENS.set(tokens | {(key, token)}),
            held,
            tokens,
        )
        self.token = token

    async def __aexit__(self, *exc_info: object) -> None:
        token = self.token
        if token is None:
            return
        saver, thread_id = self.saver, self.thread_id
        previous, previous_tokens, held, tokens = self.restore
        try:
            _HELD.reset(previous)
            _TOKENS.reset(previous_tokens)
        except ValueError:  # left from another context (an async generator closed there)
            _HELD.set(held)
            _TOKENS.set(tokens)
        _RENEWER.discard(token)
        try:
            await saver._lease_release(thread_id, token)
        except Exception:
            # Not raised: it would hide the run's own outcome or error. The lease expires by
            # itself; this process's next run on the thread takes it back at once.
            _UNRELEASED.add(((id(saver), thread_id), token))
            logger.warning("could not release the lease on thread %r", thread_id, exc_info=True)
        finally:
            lease_released(thread_id)


_TOKEN_MASK = ~((0xF000 << 64) | (0xC000 << 48))
_TOKEN_MARKS = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


_token_bits = random.Random(os.urandom(16)).getrandbits
"""Random bits of lease tokens: a generator seeded from the system's randomness once per
process (re-seeded in a forked child), not a system call per run."""


def _new_token() -> str:
    """A new lease token: 32 hex digits, as ``uuid.uuid4().hex`` writes them (the version
    and variant bits set), from :data:`_token_bits`."""
    bits = _token_bits(128) & _TOKEN_MASK | _TOKEN_MARKS
    return f"{bits:032x}"


def _reseed_tokens() -> None:
    global _token_bits
    _token_bits = random.Random(os.urandom(16)).getrandbits


if hasattr(os, "register_at_fork"):  # a forked child's tokens draw bits of their own
    os.register_at_fork(after_in_child=_reseed_tokens)


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
        self._valid: dict[str, tuple[float, float]] = {}
        """token → (lease seconds, monotonic time until which the lease is surely ours)."""

    def entry(self, token: str) -> tuple[float, float] | None:
        """(lease seconds, valid until) of a held lease, or None when not renewed here."""
        return self._valid.get(token)

    def renewed(self, token: str, valid_until: float) -> None:
        """Record a successful renewal (sent at ``valid_until`` minus the lease length)."""
        with self._lock:
            found = self._valid.get(token)
            if found is not None and valid_until > found[1]:
                self._valid[token] = (found[0], valid_until)

    def mark_lost(self, token: str) -> None:
        """Record that another run took ``token``'s lease: it is not renewed any more."""
        with self._lock:
            if self._leases.pop(token, None) is not None or token in self._valid:
                self.lost.add(token)

    def add(
        self,
        token: str,
        saver: BaseCheckpointSaver,
        thread_id: str,
        seconds: float,
        valid_until: float,
    ) -> None:
        """Renew ``token``'s lease until :meth:`discard`; it is valid until ``valid_until``
        (monotonic: when the statement that took it was sent, plus its length)."""
        due = time.monotonic() + seconds / 3
        self._valid[token] = (seconds, valid_until)
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
            self._valid.pop(token, None)
            self.lost.discard(token)

    def _poke(self) -> None:
        if self._event is not None:
            self._event.set()

    async def _run(self) -> None:
        _quiet_at_exit()
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
        _quiet_at_exit()
        sent = time.monotonic()
        try:
            renewed = await saver._lease_renew(thread_id, token, seconds)
        except Exception:  # the store is briefly away: try again next time
            logger.warning("could not renew the lease on thread %r", thread_id, exc_info=True)
            return
        if renewed:
            self.renewed(token, sent + seconds)
        else:
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


def _quiet_at_exit() -> None:
    """The renewer's tasks wait on the savers' daemon I/O loop for as long as the process
    lives; at interpreter exit that loop simply stops, and a task still waiting there is not
    an error to report ("Task was destroyed but it is pending")."""
    task = asyncio.current_task()
    if task is not None:
        task._log_destroy_pending = False  # type: ignore[attr-defined]  # asyncio's private flag, not in typeshed's Task


_RENEWER = _Renewer()
"""This process's one renewer of the leases it holds."""

LOST_LEASES: Set[str] = _RENEWER.lost
"""The tokens of this process's leases found taken by another run (read only): empty while
none is, when :func:`check_lease` has nothing to check (a caller may skip the call)."""
