"""The life of a saver that talks to a server: open lazily, close, ``with``, forks, leaks.

A subclass says how to connect and disconnect; this class runs that on the I/O loop of
:mod:`durable_debug.checkpoint._io` (so one saver works from sync code, ``asyncio.run`` and
notebook cells alike), opens on first use, reconnects in a forked child, and warns with a
``ResourceWarning`` when a saver that was opened is never closed.

    class RedisSaver(ConnectedSaver):
        async def _open(self): ...             # connect, on the I/O loop
        async def aget_tuple(self, config):
            return await self._run(self._read, config)   # open if needed, run on the I/O loop

    saver = RedisSaver("redis://localhost/0")  # nothing is opened yet
    saver.setup()                              # or: await saver.setup() — connects
"""

from __future__ import annotations

import asyncio
import logging
import os
import warnings
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from durable_debug._sync import run_sync
from durable_debug.checkpoint._io import on_io_loop
from durable_debug.checkpoint.base import BaseCheckpointSaver, Completed, SerializerProtocol
from durable_debug.checkpoint.errors import DurableDebugError, StoreClosedError
from durable_debug.checkpoint.lease import default_lease_seconds
from durable_debug.checkpoint.serde import MsgpackSerializer

__all__ = ["ConnectedSaver"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def statements_only(fn: F) -> F:
    """Mark ``fn`` as reaching the database only through the saver's own statement methods
    (``_in_session``, ``_lease_fetch``): a saver that can run such calls on the caller's loop
    (:meth:`ConnectedSaver._call`) may run it there instead of on the I/O loop."""
    fn.statements_only = True  # type: ignore[attr-defined]  # a mark on the function object, which no type declares
    return fn


def is_statements_only(fn: Any) -> bool:
    """Whether ``fn`` was marked by :func:`statements_only`."""
    return getattr(fn, "statements_only", False) is True


class ConnectedSaver(BaseCheckpointSaver):
    """Base of the savers backed by a server or file: lifecycle on the savers' I/O loop."""

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        self.serde = serde or MsgpackSerializer()
        self._state = "new"  # "new" → "open" → "closed"
        self._open_lock: asyncio.Lock | None = None
        self._pid = os.getpid()
        self.lease_seconds: float | None = default_lease_seconds()
        """How long a thread's lease lives without renewal (see
        :mod:`durable_debug.checkpoint.lease`): a run that dies frees its thread after it."""

    @classmethod
    def from_conn_string(cls, conn_string: str, **kwargs: Any) -> Self:
        """Return a saver for ``conn_string``, usable with ``with`` and ``async with``
        (which open it on entry and close it on exit) or directly."""
        make: Any = cls  # each saver's constructor takes its connection string first
        made: Self = make(conn_string, **kwargs)
        return made

    def setup(self) -> Completed:
        """Connect and prepare the store; idempotent.

        Works as ``saver.setup()`` and ``await saver.setup()`` (in a notebook cell too). The
        first use of the saver runs it anyway.
        """
        run_sync(self.asetup())
        return Completed()

    async def asetup(self) -> None:
        """Async form of :meth:`setup`, which does not block the caller's event loop."""
        await on_io_loop(self._ensure_open())

    def close(self) -> None:
        """Close the connection(s). The saver cannot be used afterwards."""
        run_sync(self.aclose())

    async def aclose(self) -> None:
        """Async form of :meth:`close`."""
        await on_io_loop(self._close())

    def __enter__(self) -> Self:
        self.setup()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        await self.asetup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if getattr(self, "_state", None) != "open":
            return
        try:
            if self._pid != os.getpid():
                return
            warnings.warn(
                f"{self!r} was never closed; use it in a `with` block or call close()",
                ResourceWarning,
                stacklevel=2,
                source=self,
            )
            self._discard()
        except Exception:  # interpreter shutdown: modules may already be torn down
            pass

    async def _run(
        self,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        where: Mapping[str, str | None] | None = None,
    ) -> T:
        """Run ``fn(*args)`` on the I/O loop, after opening the store if needed.

        A driver's error that :meth:`_store_error` knows (a lost connection, a locked or
        damaged file) is raised as the package's own error naming ``where`` (thread,
        checkpoint), with the driver's error as its ``__cause__``.
        """

        try:
            return await self._call(fn, *args)
        except DurableDebugError:
            raise
        except Exception as exc:
            error = self._store_error(exc, where or {})
            if error is None:
                raise
            raise error from exc

    async def _call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``fn(*args)`` on the I/O loop after opening the store if needed; a saver whose
        calls need no I/O loop once open overrides this."""

        async def run() -> T:
            await self._ensure_open()
            return await fn(*args)

        return await on_io_loop(run())

    def _store_error(self, exc: Exception, where: Mapping[str, str | None]) -> Exception | None:
        """The package's error for a driver's ``exc``, naming ``where``; None to let ``exc``
        through unchanged (the default)."""
        return None

    async def _ensure_open(self) -> None:
        if self._state == "open" and self._pid != os.getpid():
            # A forked child inherited connections whose I/O threads only exist in the parent:
            # waiting on them would hang, so connect afresh (they are the parent's to close).
            logger.debug("reconnecting %r in forked process %d", self, os.getpid())
            self._forget()
            self._state, self._open_lock = "new", None
        if self._state == "open":
            return
        if self._state == "closed":
            raise StoreClosedError(f"{self!r} is closed; create a new saver to use the store")
        if self._open_lock is None:
            self._open_lock = asyncio.Lock()
        async with self._open_lock:
            if self._state == "new":
                await self._open()
                self._state, self._pid = "open", os.getpid()
                logger.debug("opened %r", self)

    async def _close(self) -> None:
        if self._state == "open":
            self._state = "closed"
            await self._disconnect()
            logger.debug("closed %r", self)
        self._state = "closed"

    # -- hooks ---------------------------------------------------------------------------------

    @abstractmethod
    async def _open(self) -> None:
        """Connect and prepare the store (on the I/O loop)."""

    @abstractmethod
    async def _disconnect(self) -> None:
        """Close every connection (on the I/O loop)."""

    @abstractmethod
    def _discard(self) -> None:
        """Close the connection(s) soon, from any thread, without waiting (garbage collection)."""

    @abstractmethod
    def _forget(self) -> None:
        """Drop the connection(s) without closing them (they belong to the parent of a fork)."""
