"""Failure classes: why each failed (or vanished) task of a thread failed.

    failure_classes(thread, record)      # {task_id: "transient"}
    history_frame(graph, config)["failure"]

A task is classified from what its checkpoint holds (see ``durable_debug.graph.failures``):

``transient``
    A timeout, a connection or rate-limit error, or an error the node's
    ``RetryPolicy.retry_on`` retries: resuming later is likely to work.
``deterministic``
    The same error again on the same checkpoint: resuming will not help until the code or
    the state changes (``update_state``, a fix and a resume).
``poison``
    It failed more than ``poison_after`` times (resumes included) on the same checkpoint,
    whatever the error: stop resuming it.
``crash``
    The task is scheduled at the head of its branch and recorded neither writes, an error
    nor an interrupt, while the graph does not pause before it and no interrupt_after
    pause explains it: the process running the step died (or is still running it). Read
    without the graph (the CLI, :func:`~durable_debug.inspect.health.health`), the store's
    lease rows say it: the unfinished tasks at the head of a thread whose run died holding
    its lease (``Thread.abandoned``) crashed; a pause before a node gave its lease back. A
    store without leases shows only a step whose sibling finished.
``failed``
    One failure that is none of the above yet: resume once to know whether it repeats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from durable_debug.checkpoint.base import FAILURES
from durable_debug.graph.failures import error_type_name, transient_name
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.thread import CheckpointRecord, Thread

__all__ = ["FAILURE_CLASSES", "POISON_AFTER", "failure_classes", "task_failure_class"]

FAILURE_CLASSES = ("transient", "deterministic", "poison", "crash", "failed")
"""Every class a failed task may get."""

POISON_AFTER = 3
"""Failures on one checkpoint after which a task is ``poison`` (the default)."""


def task_failure_class(
    error: str,
    failures: list[Mapping[str, Any]] | None,
    *,
    poison_after: int = POISON_AFTER,
    retried: tuple[str, ...] = (),
) -> str:
    """The class of a task that failed with ``error`` and recorded ``failures`` (the
    ``__failures__`` write, None when it failed only once); ``retried`` names the exception
    types the node's ``RetryPolicy.retry_on`` lists (for a first failure, known by name)."""
    if not failures:
        name = error_type_name(error)
        transient = transient_name(name) or name.rsplit(".", 1)[-1] in retried
        failures = [{"error": error, "type": name, "transient": transient}]
    if len(failures) > poison_after:
        return "poison"
    if failures[-1].get("transient"):
        return "transient"
    if len(failures) >= 2 and failures[-1].get("error") == failures[-2].get("error"):
        return "deterministic"
    return "failed"


def _retried_names(graph: GraphLike, node: str) -> tuple[str, ...]:
    """Names of the exception classes a node's ``RetryPolicy.retry_on`` lists (none for a
    predicate, or a graph without policies)."""
    spec = (getattr(graph, "nodes", None) or {}).get(node)
    policies = getattr(spec, "retry", None)
    if not isinstance(policies, (list, tuple)):  # one policy, or none
        policies = [] if policies is None else [policies]
    names: list[str] = []
    for policy in policies:
        rule = getattr(policy, "retry_on", None)
        classes = (
            [rule] if isinstance(rule, type) else rule if isinstance(rule, (list, tuple)) else []
        )
        names += [c.__name__ for c in classes if isinstance(c, type)]
    return tuple(names)


def _paused_nodes(graph: GraphLike, attribute: str) -> set[str] | None:
    """Nodes a graph pauses before/after (durable_debug or LangGraph graph); None when the
    graph does not say (a store read without the graph's code)."""
    for name in (attribute, f"{attribute}_nodes"):
        if hasattr(graph, name):
            value = getattr(graph, name) or ()
            return {"*"} if value == "*" else set(value)
    return None


def failure_classes(
    thread: Thread, record: CheckpointRecord, *, poison_after: int = POISON_AFTER
) -> dict[str, str]:
    """Task id → failure class for the tasks of the step after ``record`` that failed or
    crashed (tasks that are fine are left out)."""
    recorded: dict[str, list[Mapping[str, Any]]] = {
        str(tid): list(value or ())
        for tid, channel, value in record.pending_writes
        if channel == FAILURES
    }
    classes: dict[str, str] = {}
    for task in record.tasks:
        if task.error:
            error = task.error
            classes[str(task.id)] = task_failure_class(
                repr(error) if isinstance(error, BaseException) else str(error),
                recorded.get(str(task.id)),
                poison_after=poison_after,
                retried=_retried_names(thread.graph, str(task.name)),
            )
    if thread.children(record) or record.source == "update":
        return classes
    before = _paused_nodes(thread.graph, "interrupt_before")
    after = _paused_nodes(thread.graph, "interrupt_after")
    silent = [t for t in record.tasks if not t.error and not t.interrupts and t.result is None]
    if before is None or after is None:
        # Without the graph, a pause before a node looks the same as a crash, but the store's
        # lease rows tell: a run that died left its lease behind. Without them, only a step
        # that is partly done (a sibling finished) shows that it started.
        if (thread.abandoned and record is thread.latest) or any(
            t.result is not None for t in record.tasks
        ):
            classes.update({str(t.id): "crash" for t in silent})
        return classes
    if "*" in after or after & set(thread.writers(record)):
        return classes
    for task in silent:
        if "*" not in before and str(task.name) not in before:
            classes[str(task.id)] = "crash"
    return classes
