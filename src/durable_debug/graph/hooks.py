"""Observers of task execution: the engine's hook for recorders and debuggers.

The engine reports every time it actually *executes* a node (a task restored from saved writes
is not executed, so it is not reported). ``inspect``'s recorder counts executions per
(thread, node) this way, without wrapping the user's functions.

    events = []
    remove = add_task_observer(events.append)
    graph.invoke(inputs, config)
    remove()
    [e.node for e in events if e.kind == "start"]     # ['a', 'b']
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, NamedTuple

__all__ = [
    "EventKind",
    "Outcome",
    "TaskEvent",
    "TaskObserver",
    "add_task_observer",
    "has_observers",
    "notify",
]

logger = logging.getLogger(__name__)

EventKind = Literal["start", "finish"]
"""When a task event is reported: before the node's function is called, or after."""
Outcome = Literal["ok", "error", "interrupt", "cancelled"]
"""How a node's execution ended."""


class TaskEvent(NamedTuple):
    """One execution of a node, reported when it starts and when it ends."""

    kind: EventKind
    """``"start"`` before the node's function is called, ``"finish"`` after it returns/raises."""
    thread_id: str | None
    """Thread of the run (None for a graph without a checkpointer)."""
    checkpoint_ns: str
    """Namespace of the checkpoint ("" for a top-level graph)."""
    checkpoint_id: str
    """The checkpoint the task runs from."""
    step: int
    """Step the task belongs to (the step of the checkpoint it will produce)."""
    node: str
    """Name of the node."""
    task_id: str
    """Deterministic id of the task."""
    outcome: Outcome | None
    """How the execution ended (None for ``"start"`` events)."""
    error: str | None
    """``repr`` of the exception for ``"error"`` outcomes."""


TaskObserver = Callable[[TaskEvent], None]

_observers: list[TaskObserver] = []

observers = _observers
"""The observers :func:`has_observers` looks at: ``runner.run_task`` reads the list itself
(a function call less per task)."""


def add_task_observer(observer: TaskObserver) -> Callable[[], None]:
    """Call ``observer`` with a :class:`TaskEvent` for every task execution.

    Returns a function that removes the observer again. Observers run synchronously in the
    engine's loop, so they must be quick.
    """
    _observers.append(observer)

    def remove() -> None:
        if observer in _observers:
            _observers.remove(observer)

    return remove


def has_observers() -> bool:
    """True if anyone is listening (lets the engine skip building events)."""
    return bool(_observers)


def notify(event: TaskEvent) -> None:
    """Deliver ``event`` to every observer; an observer's exception is logged, not raised,
    since a broken debugger must not change what the graph does."""
    for observer in list(_observers):
        try:
            observer(event)
        except Exception:
            logger.exception("task observer %r failed on %s", observer, event)
