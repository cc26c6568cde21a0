"""The thread list of a store: each thread's checkpoint count, latest step and status.

    rows = await athread_listing(saver)
    rows[0]          # ThreadRow(thread_id='job-1', checkpoints=7, step=3, status='done', ...)

A store whose every thread's newest checkpoint comes from one query
(:func:`~durable_debug.checkpoint.latest.alatest_heads`: durable_debug's SQLite layout and
LangGraph's layouts) is asked once, for what the status needs and no state: the trigger
channels that hold a value, what each node has seen, the pending writes. The status is then
worked out as :func:`status_of` would from the checkpoint's snapshot — the same tasks
(:func:`~durable_debug.inspect.stored.scheduled_tasks`), the same reading of their writes —
without building it; a thread whose newest checkpoint holds a run-input write (its keys are
read from the run input, a state value) is read in full instead. Any other saver is read
thread by thread. A thread whose newest checkpoint cannot be decoded is listed with the
reason, not dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, NamedTuple

from durable_debug._collector import collector_paused
from durable_debug.checkpoint.base import NULL_TASK_ID, BaseCheckpointSaver, PendingWrite
from durable_debug.checkpoint.errors import DurableDebugError, StoreUnavailableError
from durable_debug.checkpoint.latest import LatestHead, alatest_heads
from durable_debug.checkpoint.names import ERROR, INTERRUPT, NOT_FINISHING
from durable_debug.graph.ids import stored_task_id
from durable_debug.graph.nodes import INPUT_KEYS
from durable_debug.inspect.stored import SaverView, scheduled_tasks

__all__ = [
    "STATUS_KINDS",
    "ThreadRow",
    "athread_listing",
    "listing_text",
    "status_kind",
    "status_of",
]


class ThreadRow(NamedTuple):
    """One line of the thread list."""

    thread_id: str
    checkpoints: int
    """Checkpoints of the thread (top-level namespace)."""
    step: int | None
    """``metadata.step`` of its newest checkpoint; None when unreadable."""
    status: str
    """done, next …, failed at …, paused on N interrupt(s) at …, or ``broken: why``."""
    latest_id: str = ""
    """Id of its newest checkpoint ("" when unreadable): ids sort by creation time."""

    @property
    def broken(self) -> bool:
        """Whether the thread's newest checkpoint could not be read."""
        return self.status.startswith(BROKEN)


BROKEN = "broken: "
"""Prefix of the status of a thread that could not be read (the reason follows)."""


def status_of(snapshot: Any) -> str:
    """A snapshot's status in a few words."""
    if snapshot.interrupts:
        return f"paused on {len(snapshot.interrupts)} interrupt(s) at {', '.join(snapshot.next)}"
    if any(t.error for t in snapshot.tasks if t.result is None):
        return f"failed at {', '.join(snapshot.next)}"
    if snapshot.next:
        return f"next {', '.join(snapshot.next)}"
    return "done"


STATUS_KINDS = ("running", "paused", "failed", "done")
"""The kinds a thread list filters by, in :func:`status_kind`'s words."""


def status_kind(status: str) -> str:
    """Which of :data:`STATUS_KINDS` a :func:`status_of` status is: "running" for a thread
    with work left (``next …``: under way, or stopped between steps), "failed" for one whose
    last step failed or that could not be read."""
    if status.startswith("paused"):
        return "paused"
    if status.startswith(("failed", BROKEN)):
        return "failed"
    if status == "done":
        return "done"
    return "running"


async def athread_listing(saver: BaseCheckpointSaver) -> list[ThreadRow]:
    """Every thread of ``saver`` with its checkpoint count, latest step and status."""
    # One pause of the cyclic collector from the query to the last status: the decoded
    # values are freed before it runs again, so it never walks them (it would walk every one
    # of them once when turned back on in between).
    with collector_paused():
        heads = await alatest_heads(saver)
        if heads is None:
            return await _athread_by_thread(saver)
        found = [_row_of(head) for head in heads]
        del heads
        # The future that brought the heads back (a worker thread's, the connection's) holds
        # them until this task next yields: yield once, so they are freed before the
        # collector runs again (it would walk every one of them).
        await asyncio.sleep(0)
    rows: list[ThreadRow] = []
    for row in found:
        rows.append(row if isinstance(row, ThreadRow) else await _aread_whole(saver, row))
    return rows


def _row_of(head: LatestHead) -> ThreadRow | LatestHead:
    """The thread's row, from its head alone; the head itself when only reading the whole
    checkpoint can tell (a run-input write, whose keys the run input in the state holds)."""
    if head.error is not None:
        return ThreadRow(head.thread_id, head.checkpoints, None, BROKEN + head.error)
    try:
        step = None if head.step is None else int(head.step)
        if not head.triggers:  # schedules nothing
            return ThreadRow(head.thread_id, head.checkpoints, step, "done", head.checkpoint_id)
        status = _status(head, -1 if step is None else step)
    except Exception as exc:  # a malformed checkpoint: listed with the reason
        return ThreadRow(head.thread_id, head.checkpoints, None, BROKEN + _reason(exc))
    if status is None:
        return head
    return ThreadRow(head.thread_id, head.checkpoints, step, status, head.checkpoint_id)


def _status(head: LatestHead, step: int) -> str | None:
    """:func:`status_of` the snapshot of ``head``'s checkpoint, without building it; None
    when a run-input write needs the whole checkpoint."""
    scheduled = scheduled_tasks(head.triggers, head.versions, head.seen)
    if not scheduled:
        return "done"
    states = task_states(head.writes) if head.writes else None
    if not states:
        if states is None and head.writes:
            return None  # a run-input write
        # No task saved anything: every scheduled task waits (no id needs working out).
        return "next " + ", ".join([name for name, _ in scheduled])
    known = head.task_ids or _NO_IDS
    checkpoint_id = head.checkpoint_id
    waiting: list[str] = []
    interrupts = 0
    failed = False
    for name, path in scheduled:
        tid = (
            known.get(path)
            or stored_task_id(
                checkpoint_id, "", step + 1, name, path, head.versions, head.seen, states
            )[1]
        )
        state = states.get(tid)
        if state is None:
            waiting.append(name)
            continue
        if state.finished:
            continue  # the latest snapshot leaves finished tasks out of next
        waiting.append(name)
        interrupts += state.interrupts
        failed = failed or bool(state.error)
    at = ", ".join(waiting)
    if interrupts:
        return f"paused on {interrupts} interrupt(s) at {at}"
    if failed:
        return f"failed at {at}"
    return f"next {at}" if waiting else "done"


_NO_IDS: dict[tuple[str, Any], str] = {}


class TaskState:
    """What a status needs of a task's pending writes (a :class:`TaskRecord`, cut down)."""

    __slots__ = ("error", "finished", "interrupts")

    def __init__(self) -> None:
        self.finished = False
        """It saved a result: a write to a channel, or the marker of a task that wrote
        nothing."""
        self.error: Any = None
        """The value of its error write, if any."""
        self.interrupts = 0
        """How many interrupts its interrupt write holds."""

    def __repr__(self) -> str:
        return (
            f"TaskState(finished={self.finished}, error={self.error!r}, "
            f"interrupts={self.interrupts})"
        )


def task_states(writes: Sequence[PendingWrite]) -> dict[str, TaskState] | None:
    """Each task's :class:`TaskState` from a checkpoint's pending writes, as
    ``read_pending_writes`` reads them (``tests/inspect/test_listing_status.py`` checks every
    write channel against it); None if one is a run-input write, whose keys are read from the
    run input, a state value. Only the values of errors and interrupts are read."""
    states: dict[str, TaskState] = {}
    for task, channel, value in writes:
        if task == NULL_TASK_ID:
            continue
        if channel == INPUT_KEYS:
            return None
        state = states.get(task)
        if state is None:
            state = states[task] = TaskState()
        if channel == ERROR:
            state.error = value
        elif channel == INTERRUPT:
            state.interrupts = _interrupt_count(value)
        elif channel not in NOT_FINISHING:
            state.finished = True
    return states


def _interrupt_count(value: Any) -> int:
    """How many interrupts an interrupt write holds; a malformed one fails as reading it
    does (each interrupt has a value and an id)."""
    count = 0
    for interrupt in value or ():
        _ = (interrupt["value"], interrupt["id"])
        count += 1
    return count


async def _aread_whole(saver: BaseCheckpointSaver, head: LatestHead) -> ThreadRow:
    """The row of a thread whose head could not say its status: its newest top-level
    checkpoint read in full."""
    cfg = {"configurable": {"thread_id": head.thread_id, "checkpoint_ns": ""}}
    try:
        snapshot = await SaverView(saver).aget_state(cfg)
        step = (snapshot.metadata or {}).get("step")
        step = None if step is None else int(step)
        status = status_of(snapshot)
    except StoreUnavailableError:
        raise
    except Exception as exc:  # one broken thread does not hide the others
        return ThreadRow(head.thread_id, head.checkpoints, None, BROKEN + _reason(exc))
    latest_id = str((snapshot.config.get("configurable") or {}).get("checkpoint_id") or "")
    return ThreadRow(head.thread_id, head.checkpoints, step, status, latest_id)


def _reason(exc: BaseException) -> str:
    """An error as a broken row shows it (our own errors say where; others name their type)."""
    return str(exc) if isinstance(exc, DurableDebugError) else f"{type(exc).__name__}: {exc}"


async def _athread_by_thread(saver: BaseCheckpointSaver) -> list[ThreadRow]:
    view = SaverView(saver)
    rows = []
    for thread in await view.alist_threads():
        cfg = {"configurable": {"thread_id": thread}}
        top = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        try:
            count = 0
            async for _ in saver.alist(top):  # top-level only, as the one-query path counts
                count += 1
            snapshot = await view.aget_state(cfg)
        except StoreUnavailableError:
            raise  # the store itself is gone: the other threads cannot be read either
        except Exception as exc:  # one broken thread does not hide the others
            rows.append(ThreadRow(thread, 0, None, BROKEN + _reason(exc)))
            continue
        step = (snapshot.metadata or {}).get("step")
        latest_id = str((snapshot.config.get("configurable") or {}).get("checkpoint_id") or "")
        rows.append(
            ThreadRow(
                thread,
                count,
                None if step is None else int(step),
                status_of(snapshot),
                latest_id,
            )
        )
    return rows


def listing_text(rows: Sequence[ThreadRow]) -> str:
    """The thread list as ``durable-debug inspect`` prints it."""
    lines = [f"{len(rows)} thread{'s' if len(rows) != 1 else ''}:"]
    lines.append(f"  {'thread':<24} {'checkpoints':>11}  {'step':>4}  status")
    append = lines.append
    for thread_id, checkpoints, step, status, _ in rows:
        shown = thread_id if thread_id.isprintable() else repr(thread_id)
        append(f"  {shown:<24} {checkpoints:>11}  {'' if step is None else step:>4}  {status}")
    return "\n".join(lines)
