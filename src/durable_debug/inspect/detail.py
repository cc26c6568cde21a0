"""One checkpoint in full: state, blob versions, tasks, pending writes and interrupts.

    detail = checkpoint_detail(graph, snap.config)
    detail["next"], detail["values"]                 # (['b'], {'value': 'A', 'log': ['ran A']})
    [(b["channel"], b["status"]) for b in detail["blobs"]]
    # [('value', 'new'), ('log', 'new')]  -- 'shared' when the parent points at the same version

The result is the protocol's ``Detail`` (docs/widget-protocol.md), JSON-ready. The building
blocks (:func:`blobs_of`, :func:`writes_of`, :func:`tasks_of`, :func:`interrupts_of`) return
raw values and also feed the DataFrames of :mod:`durable_debug.inspect.frames`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from typing_extensions import NotRequired, TypedDict

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import ERROR, FAILURES, INTERRUPT, ONCE, RESUME, RunnableConfig
from durable_debug.checkpoint.records import TASK_CALLS
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.failures import failure_classes
from durable_debug.inspect.jsonable import clip, to_jsonable
from durable_debug.inspect.thread import (
    CheckpointRecord,
    CheckpointRef,
    Thread,
    aread_checkpoint,
)
from durable_debug.inspect.topology import node_names

__all__ = [
    "Blob",
    "Detail",
    "InterruptInfo",
    "Task",
    "Write",
    "acheckpoint_detail",
    "blobs_of",
    "checkpoint_detail",
    "clip_detail",
    "detail_of",
    "interrupts_of",
    "reducer_name",
    "reducers_of",
    "tasks_of",
    "write_kind",
    "writes_of",
]


class Blob(TypedDict):
    """One channel's blob as the checkpoint's pointer map names it."""

    channel: str
    version: str
    status: str
    """``"new"``: written at this checkpoint; ``"shared"``: same version as the parent's."""
    size: int | None
    """Bytes of the serialized blob (None when unknown)."""


class InterruptInfo(TypedDict):
    """An interrupt and the task that raised it."""

    id: str
    value: Any
    node: str
    task_id: str


class Task(TypedDict):
    """A task of the step that follows the checkpoint."""

    id: str
    name: str
    error: str | None
    failure: str | None
    """Its failure class (``durable_debug.inspect.failures``), None when it did not fail."""
    interrupts: list[InterruptInfo]
    result: Any


class Write(TypedDict):
    """One pending write saved by a task."""

    task_id: str
    node: str
    channel: str
    value: Any


class Detail(TypedDict):
    """Everything the widget shows for one selected checkpoint."""

    id: str
    parent: str | None
    step: int
    source: str
    next: list[str]
    created_at: str
    metadata: dict[str, Any]
    config: dict[str, Any]
    values: dict[str, Any]
    blobs: list[Blob]
    tasks: list[Task]
    writes: list[Write]
    interrupts: list[InterruptInfo]
    editable: list[str]
    nodes: list[str]
    findings: list[dict[str, Any]]
    """What the run let pass here as LangGraph does (``graph/findings.py``): ``code``,
    ``message``, ``node``, ``key`` each."""
    reducers: NotRequired[dict[str, str]]
    """State channels with a reducer → its name (``operator.add``): an edit of one goes
    through the reducer unless the user replaces the value (``Overwrite``)."""
    clipped: NotRequired[list[str]]
    """Channels whose value was cut for display (:func:`clip_detail`); absent when none."""
    calls: NotRequired[list[dict[str, Any]]]
    """The recorded model, tool and ``once()`` calls of the tasks whose step saved this
    checkpoint (:func:`calls_of`); absent when none."""


async def acheckpoint_detail(
    graph: GraphLike, config: RunnableConfig, ref: CheckpointRef = None
) -> Detail:
    """The protocol's ``Detail`` of the checkpoint ``config`` names (or ``ref``, if given).

    Reads only that checkpoint and its parent, not the whole thread.
    """
    thread, record = await aread_checkpoint(graph, config, ref)
    detail = detail_of(thread, record, nodes=node_names(graph))
    reducers = {channel: reducer_name(fn) for channel, fn in reducers_of(graph).items()}
    if reducers:
        detail["reducers"] = reducers
    return detail


def checkpoint_detail(
    graph: GraphLike, config: RunnableConfig, ref: CheckpointRef = None
) -> Detail:
    """Sync twin of :func:`acheckpoint_detail`."""
    return run_sync(acheckpoint_detail(graph, config, ref))


def detail_of(thread: Thread, record: CheckpointRecord, *, nodes: list[str]) -> Detail:
    """Build the ``Detail`` of ``record`` (its parent must be in ``thread`` for blob status)."""
    detail = _detail_of(thread, record, nodes=nodes)
    calls = calls_of(record)
    if calls:
        detail["calls"] = calls
    return detail


def calls_of(record: CheckpointRecord) -> list[dict[str, Any]]:
    """The recorded calls kept on ``record`` (``graph/recording.py``), by task: ``task_id``,
    ``node``, ``from`` (the checkpoint the task ran from) and ``calls`` — each call's index
    ``i``, ``kind``, ``name``, ``input``, ``output``, ``tokens``, ``ms`` and ``replayed``
    (True, False, or None outside a replay), without the stored output itself."""
    kept = record.debug.get(TASK_CALLS)
    if not isinstance(kept, Mapping):
        return []
    shown = ("i", "kind", "name", "input", "output", "tokens", "ms", "replayed", "error")
    return [
        {
            "task_id": str(task_id),
            "node": task.get("node"),
            "from": task.get("from"),
            "calls": [
                {key: call.get(key) for key in shown}
                for call in task.get("calls") or ()
                if isinstance(call, Mapping)
            ],
        }
        for task_id, task in kept.items()
        if isinstance(task, Mapping)
    ]


def _detail_of(thread: Thread, record: CheckpointRecord, *, nodes: list[str]) -> Detail:
    return Detail(
        id=record.id,
        parent=record.parent_id,
        step=record.step,
        source=record.source,
        next=list(record.next),
        created_at=record.created_at,
        metadata=to_jsonable(record.metadata),
        config=to_jsonable(record.config),
        values=to_jsonable(record.values),
        blobs=blobs_of(thread, record),
        tasks=to_jsonable(tasks_of(record, failure_classes(thread, record))),
        writes=to_jsonable(writes_of(record)),
        interrupts=to_jsonable(interrupts_of(record)),
        editable=thread.state_channels(),
        nodes=list(nodes),
        findings=[f.as_dict() for f in record.findings],
    )


def clip_detail(detail: Detail) -> Detail:
    """``detail`` with large values cut for display (:func:`~durable_debug.inspect.jsonable.clip`):
    the state's channels (listed in ``clipped``, so the widget offers "show all"), and the
    values of tasks, writes, interrupts and metadata."""
    values: dict[str, Any] = {}
    clipped: list[str] = []
    for channel, value in detail["values"].items():
        values[channel], cut = clip(value)
        if cut:
            clipped.append(channel)
    result = Detail(**detail)
    result["values"] = values
    result["metadata"] = clip(detail["metadata"])[0]
    result["tasks"] = [clip(task)[0] for task in detail["tasks"]]
    result["writes"] = [clip(write)[0] for write in detail["writes"]]
    result["interrupts"] = [clip(interrupt)[0] for interrupt in detail["interrupts"]]
    if clipped:
        result["clipped"] = clipped
    return result


def reducers_of(graph: GraphLike) -> dict[str, Callable[[Any, Any], Any]]:
    """The state channels of ``graph`` that have a reducer, with it (durable_debug's schema or
    LangGraph's aggregate channels); ``{}`` for a graph without schema (a ``SaverView``)."""
    own = getattr(getattr(graph, "schema", None), "reducers", None)
    if callable(own):  # durable_debug
        return dict(own())
    channels = getattr(graph, "channels", None)  # LangGraph: BinaryOperatorAggregate
    if isinstance(channels, Mapping):
        return {
            str(name): channel.operator
            for name, channel in channels.items()
            if callable(getattr(channel, "operator", None)) and not str(name).startswith("__")
        }
    return {}


def reducer_name(fn: Any) -> str:
    """How a reducer is named to the user: ``operator.add``, ``add_messages``, ``merge``."""
    module = str(getattr(fn, "__module__", "") or "")
    name = str(getattr(fn, "__qualname__", "") or getattr(fn, "__name__", "") or repr(fn))
    if "<locals>." in name:  # a reducer a factory made (LangGraph's add_messages wrapper):
        name = name.rsplit("<locals>.", 1)[1].lstrip("_") or name  # its own name
    return f"operator.{name}" if module in ("operator", "_operator") else name


def blobs_of(thread: Thread, record: CheckpointRecord, *, all_channels: bool = False) -> list[Blob]:
    """The blob of every state channel in ``record``'s pointer map, new or shared with the parent.

    Internal channels (LangGraph's ``branch:to:…`` triggers, ``__start__``) are left out unless
    ``all_channels`` is true.
    """
    parent = thread.parent(record)
    parent_versions = parent.channel_versions if parent is not None else {}
    wanted = None if all_channels else set(thread.state_channels())
    values = record.channel_values
    blobs: list[Blob] = []
    for channel, version in record.channel_versions.items():
        if wanted is not None and channel not in wanted:
            continue
        size = thread.blob_size(channel, version, values[channel]) if channel in values else None
        status = "shared" if parent_versions.get(channel) == version else "new"
        blobs.append(Blob(channel=channel, version=version, status=status, size=size))
    return blobs


def tasks_of(record: CheckpointRecord, classes: Mapping[str, str] | None = None) -> list[Task]:
    """The tasks of the step after ``record``, with results, errors and interrupts (raw), and
    the failure class of each from ``classes`` (task id → class)."""
    tasks: list[Task] = []
    for task in record.tasks:
        interrupts = [_interrupt(task, i) for i in task.interrupts or ()]
        tasks.append(
            Task(
                id=str(task.id),
                name=str(task.name),
                error=str(task.error) if task.error else None,
                failure=(classes or {}).get(str(task.id)),
                interrupts=interrupts,
                result=task.result,
            )
        )
    return tasks


def interrupts_of(record: CheckpointRecord) -> list[InterruptInfo]:
    """The interrupts at ``record`` still waiting for an answer (raw values)."""
    return [_interrupt(task, interrupt) for task, interrupt in record.pending_interrupts()]


def writes_of(record: CheckpointRecord) -> list[Write]:
    """The pending writes saved on ``record``, with the node of each task (raw values)."""
    names = record.task_names()
    return [
        Write(task_id=task_id, node=names.get(task_id, ""), channel=channel, value=value)
        for task_id, channel, value in record.pending_writes
    ]


def write_kind(channel: str) -> str:
    """What a write records: ``"write"`` (a state update) or error / interrupt / resume / …"""
    return {
        ERROR: "error",
        FAILURES: "failures",
        INTERRUPT: "interrupt",
        RESUME: "resume",
        ONCE: "once",
    }.get(channel, "internal" if channel.startswith("__") or ":" in channel else "write")


def _interrupt(task: Any, interrupt: Any) -> InterruptInfo:
    return InterruptInfo(
        id=str(getattr(interrupt, "id", "")),
        value=getattr(interrupt, "value", interrupt),
        node=str(task.name),
        task_id=str(task.id),
    )
