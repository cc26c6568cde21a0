"""The package's own errors: one base, each also the builtin exception it resembles.

Every error that reaches a user from a saver, the serializer or a config check is a
:class:`DurableDebugError`, so one ``except DurableDebugError`` catches them all, while code
written for the builtins keeps working (a corrupt payload is still a ``ValueError``, an
unreachable store a ``ConnectionError``, a missing checkpoint a ``LookupError``)::

    DurableDebugError
    ├── SerdeError (ValueError)                  serde/
    │   ├── UnsupportedValueError (TypeError)    a value that cannot be saved
    │   └── CorruptPayloadError                  a stored byte that cannot be read, or a
    │                                            checkpoint pointing at a blob that is gone
    ├── InvalidConfigError (ValueError)          a thread_id / checkpoint_ns / checkpoint_id
    ├── CheckpointNotFoundError (LookupError)    a pinned checkpoint the store does not hold
    ├── StoreUnavailableError (ConnectionError)  the server went away mid-call
    ├── StoreClosedError (RuntimeError)          the saver was closed
    ├── ThreadBusyError (RuntimeError)           another run holds the thread's lease
    ├── DatabaseSetupError (RuntimeError)        a store that cannot be opened or migrated
    └── GraphChangedError (RuntimeError)         strict: a thread saved by a graph whose
                                                 channels changed (graph/version.py)

    DurableDebugWarning (UserWarning)            a *finding*: something LangGraph lets pass
                                                 silently that is likely a mistake

Each message names where it happened: the thread, and the checkpoint and channel when known.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

__all__ = [
    "CheckpointNotFoundError",
    "DurableDebugError",
    "DurableDebugWarning",
    "GraphChangedError",
    "InvalidConfigError",
    "StoreClosedError",
    "StoreUnavailableError",
    "ThreadBusyError",
]


class DurableDebugError(Exception):
    """Base of every error durable_debug raises about a store, a stored value or a config."""


class DurableDebugWarning(UserWarning):
    """A *finding*: the run did what LangGraph does where LangGraph stays silent about a
    likely mistake (a write to a key the schema lacks, a resume with nothing pending, a
    thread resumed by a changed graph). Warned once per graph, code and node or key; the
    debugger marks the checkpoint it concerns. ``compile(..., strict=True)`` raises instead."""


class InvalidConfigError(DurableDebugError, ValueError):
    """A config's ``thread_id``, ``checkpoint_ns`` or ``checkpoint_id`` cannot be used; raised
    before anything is read or written."""


class CheckpointNotFoundError(DurableDebugError, LookupError):
    """A config names a checkpoint id that the saver does not hold."""


class StoreUnavailableError(DurableDebugError, ConnectionError):
    """The store's server could not be reached, or dropped the connection during a call (a
    restart, a network failure). The call may be repeated once the server is back; the saver
    reconnects by itself."""

    @classmethod
    def at(cls, what: str, cause: BaseException, **where: str | None) -> StoreUnavailableError:
        """The error for ``cause`` (a driver's error) while reaching ``what`` (a redacted store
        name), naming ``where`` it happened (thread, checkpoint…, None values left out)."""
        place = ", ".join(f"{key} {value!r}" for key, value in where.items() if value is not None)
        detail = " ".join(str(cause).split()) or type(cause).__name__
        message = (
            f"{what} is unavailable ({type(cause).__name__}: {detail}); this call did not "
            "complete. Repeat it once the store is back: the saver reconnects by itself."
        )
        return cls(f"{place}: {message}" if place else message)


class StoreClosedError(DurableDebugError, RuntimeError):
    """The saver was closed; create a new one to use the store."""


class GraphChangedError(DurableDebugError, RuntimeError):
    """A run would resume or rerun a thread whose checkpoint was saved by a graph whose
    channels changed (removed, renamed, another reducer) or that lacks a node the checkpoint
    has next, and the graph was compiled with ``strict=True`` (or the config says
    ``allow_graph_change`` False); without those the run goes on, as in LangGraph, with a
    finding. :attr:`changes` lists what changed; ``{"configurable": {"allow_graph_change":
    True}}`` accepts it."""

    def __init__(
        self,
        message: str,
        *,
        thread_id: str,
        checkpoint_id: str,
        old_version: str,
        new_version: str,
        changes: list[str],
    ) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self.old_version = old_version
        self.new_version = new_version
        self.changes = changes


class ThreadBusyError(DurableDebugError, RuntimeError):
    """Another run holds the thread: one writer per thread (see docs/production.md).

    Raised before any node runs and before anything is written. ``holder`` is
    ``"host:pid"`` of the run that holds the thread, ``since`` when it took it (UTC).
    """

    def __init__(
        self, thread_id: str, holder: str, since: _dt.datetime | None, *, waited: float = 0.0
    ) -> None:
        self.thread_id = thread_id
        self.holder = holder
        self.since = since
        self._waited = waited
        when = since.isoformat(timespec="seconds") if since is not None else "an unknown time"
        waited_text = f" (waited {waited:g}s)" if waited else ""
        super().__init__(
            f"thread {thread_id!r} is busy: another run holds it (holder {holder}, since "
            f"{when}){waited_text}. Nothing was run or written. Retry later, or pass wait=SECONDS "
            "to invoke/stream/update_state (or compile) to wait for it."
        )

    def __reduce__(self) -> Any:
        # Picklable (a worker pool sends errors between processes): rebuild from the fields.
        return (_thread_busy, (self.thread_id, self.holder, self.since, self._waited))


def _thread_busy(
    thread_id: str, holder: str, since: _dt.datetime | None, waited: float
) -> ThreadBusyError:
    return ThreadBusyError(thread_id, holder, since, waited=waited)
