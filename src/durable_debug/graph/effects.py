"""``once()``: a side effect inside a node that happens once, however often the node re-runs.

A node re-runs from its top whenever its step is resumed before the node finished: after an
``interrupt()`` is answered, after a crash, after a failure. A payment, an e-mail or an API call
made before that point would happen again. Wrapped in ``once``, it does not::

    def charge(state):
        receipt = once(charge_customer, state["customer"], state["amount"])  # runs once
        approved = interrupt({"receipt": receipt})       # the node re-runs after the answer
        return {"receipt": receipt, "approved": approved}

The first call runs ``charge_customer`` and saves its result as a pending write of the task
(channel ``__once__``, with the results of the task's earlier ``once`` calls), before ``once``
returns. When the same task runs again — resumed in this process or another one — the n-th
``once`` call of the node returns the n-th saved result without calling the function. Results
are keyed by thread, namespace, checkpoint and task (the task id) and by call order, so a node
must make its ``once`` calls in the same order each time (as with ``interrupt()``).

The guarantee covers re-runs of a node after its effect was *saved*: an effect whose process
dies after the effect but before the save (a few milliseconds) happens again on resume, so the
effect itself should still accept an idempotency key where it can (pass the task id of
:func:`current_task_id`). A replay (time travel) runs new tasks, whose effects run anew —
except inside ``durable_debug.inspect.replaying``, where an effect recorded with the same
function and arguments at the same place in the node is answered from the recording
(``recording.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from durable_debug._sync import run_sync
from durable_debug.graph.interrupts import Scratchpad, current_scratchpad
from durable_debug.graph.recording import answer_once

__all__ = ["aonce", "current_task_id", "once"]

T = TypeVar("T")


def once(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Call ``fn(*args, **kwargs)`` the first time this call is reached in this task, save its
    result durably, and return the saved result on every re-run of the task instead.

    Use inside a (sync or async) node of a graph compiled with a checkpointer; in an async node
    prefer ``await aonce(...)``, which also accepts async functions. The result must be a value
    the saver can store (as a state value).
    """
    pad = _scratchpad("once")
    index = pad.once_counter
    pad.once_counter += 1
    if index < len(pad.once):
        saved: T = pad.once[index]
        return saved
    if pad.before_effect is not None:
        run_sync(pad.before_effect())
    answered, result, recorded = answer_once(fn, args, kwargs)
    if not answered:
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            close = getattr(result, "close", None)
            if callable(close):
                close()
            raise TypeError(
                f"once() in node {pad.node!r}: {_name(fn)} returned an awaitable; "
                "use `await aonce(...)` for async functions"
            )
        recorded(result)
    pad.once.append(result)
    if pad.save_once is not None:
        run_sync(pad.save_once(list(pad.once)))
    done: T = result
    return done


async def aonce(fn: Callable[..., T | Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
    """Async form of :func:`once`: ``fn`` may be a sync or an async function."""
    pad = _scratchpad("aonce")
    index = pad.once_counter
    pad.once_counter += 1
    if index < len(pad.once):
        saved: T = pad.once[index]
        return saved
    if pad.before_effect is not None:
        await pad.before_effect()
    answered, result, recorded = answer_once(fn, args, kwargs)
    if not answered:
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        recorded(result)
    pad.once.append(result)
    if pad.save_once is not None:
        await pad.save_once(list(pad.once))
    done: T = result
    return done


def current_task_id() -> str:
    """The id of the task running this node: the same on every re-run of the task, so it makes
    a good idempotency key for an external service."""
    return _scratchpad("current_task_id").task_id


def _scratchpad(what: str) -> Scratchpad:
    pad = current_scratchpad()
    if pad is None:
        raise RuntimeError(
            f"{what}() was called outside a running node; call it from inside a node function "
            "of a compiled graph"
        )
    return pad


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
