"""The thread list of a store: each thread's checkpoint count, latest step and status.

    rows = await athread_listing(saver)
    rows[0]          # ThreadRow(thread_id='job-1', checkpoints=7, step=3, status='done', ...)

A store whose every thread's newest checkpoint comes from one query
(:func:`~durable_debug.checkpoint.latest.alatest_rows`: durable_debug's SQLite layout and
LangGraph's layouts) is asked once; any other saver is read thread by thread. A thread whose
newest checkpoint cannot be decoded is listed with the reason, not dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from durable_debug.checkpoint.errors import DurableDebugError, StoreUnavailableError
from durable_debug.checkpoint.latest import LatestRow, alatest_rows, bulk_decoding
from durable_debug.inspect.stored import SaverView, snapshot_of

__all__ = ["ThreadRow", "athread_listing", "listing_text", "status_of"]


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


async def athread_listing(saver: Any) -> list[ThreadRow]:
    """Every thread of ``saver`` with its checkpoint count, latest step and status."""
    # One pause of the cyclic collector from the query to the last status: the decoded
    # checkpoints are freed before it runs again, so it never walks them (it would walk
    # every one of them once when turned back on in between).
    with bulk_decoding():
        latest = await alatest_rows(saver)
        if latest is not None:
            rows = _rows_of(latest, getattr(saver, "task_ids_of", None))
            del latest
            return rows
    return await _athread_by_thread(saver)


def _rows_of(latest: list[LatestRow], lookup: Any) -> list[ThreadRow]:
    """Thread rows from each thread's newest checkpoint (``lookup``: task ids by path)."""
    rows: list[ThreadRow] = []
    for row in latest:
        if row.tuple is None:
            rows.append(ThreadRow(row.thread_id, row.checkpoints, None, BROKEN + str(row.error)))
            continue
        task_ids = None if lookup is None else lookup(row.tuple.config)
        try:
            snapshot = snapshot_of(row.tuple, latest=True, task_ids=task_ids)
        except Exception as exc:  # a malformed checkpoint: listed with the reason
            rows.append(ThreadRow(row.thread_id, row.checkpoints, None, BROKEN + str(exc)))
            continue
        step = int(row.tuple.metadata.get("step", -1))
        latest_id = str(row.tuple.config["configurable"]["checkpoint_id"])
        rows.append(ThreadRow(row.thread_id, row.checkpoints, step, status_of(snapshot), latest_id))
    return rows


async def _athread_by_thread(saver: Any) -> list[ThreadRow]:
    view = SaverView(saver)
    rows = []
    for thread in await view.alist_threads():
        cfg = {"configurable": {"thread_id": thread}}
        try:
            count = 0
            async for _ in saver.alist(cfg):
                count += 1
            snapshot = await view.aget_state(cfg)
        except StoreUnavailableError:
            raise  # the store itself is gone: the other threads cannot be read either
        except Exception as exc:  # one broken thread does not hide the others
            known = isinstance(exc, DurableDebugError)
            reason = str(exc) if known else f"{type(exc).__name__}: {exc}"
            rows.append(ThreadRow(thread, 0, None, BROKEN + reason))
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
    for row in rows:
        step = "" if row.step is None else str(row.step)
        shown = row.thread_id if row.thread_id.isprintable() else repr(row.thread_id)
        lines.append(f"  {shown:<24} {row.checkpoints:>11}  {step:>4}  {row.status}")
    return "\n".join(lines)
