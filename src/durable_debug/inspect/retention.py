"""Sweeping and retention: what to do with threads stuck on an interrupt, and old checkpoints.

    sweep(saver, older_than=timedelta(days=7), policy="fail")        # or "delete", "escalate"
    sweep(saver, older_than=timedelta(days=7), policy="escalate", escalate=page_someone)
    prune(saver, keep_last=20, dry_run=True)      # what would go, and the bytes it frees
    delete_thread(saver, "t-42")

A thread is *stuck* when its latest checkpoint has interrupts nobody answered (and no error
recorded on them) for longer than ``older_than``. The policies:

``fail``
    Record an ``InterruptExpired`` error on each waiting task (an ``__error__`` write on the
    checkpoint), so the thread shows as failed in ``history_frame``, the widget, ``health``
    and the CLI; nothing is deleted and an answer can still resume it.
``delete``
    Delete the whole thread (:func:`delete_thread`).
``escalate``
    Call ``escalate(stuck)`` with a :class:`StuckThread` for each one and change nothing.

``fail`` and ``delete`` write to the thread, so each holds the thread's lease as a run does
(one writer per thread, docs/production.md): a thread a run holds right now (someone is
answering it) is skipped, and so is one that moved on between the listing and the lease.
:func:`delete_thread` holds the lease too and raises ``ThreadBusyError`` while a run holds it.

:func:`prune` keeps, in each thread, the last ``keep_last`` checkpoints of every branch
(counted back from each head), every fork point and every head, and deletes the others with
their pending writes and the blobs no kept checkpoint points at
(:meth:`~durable_debug.checkpoint.base.BaseCheckpointSaver.adelete_checkpoints`): every kept
checkpoint still reassembles exactly. A kept checkpoint whose parent went is drawn as a root.
Only the top-level namespace is pruned (a subgraph's checkpoints are left as they are). On
SQLite, run ``VACUUM`` afterwards to give the freed pages back to the file system. Each thread
is pruned under its lease: a thread a run holds is skipped (or waited for, ``wait=seconds``).

Every function returns a DataFrame of what it did (or, with ``dry_run=True``, would do).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import ERROR, BaseCheckpointSaver, CheckpointTuple
from durable_debug.checkpoint.errors import ThreadBusyError
from durable_debug.checkpoint.lease import thread_lease
from durable_debug.inspect.health import created_at, damage_text
from durable_debug.inspect.stored import SaverView
from durable_debug.inspect.thread import aread_thread, thread_config

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PRUNE_COLUMNS",
    "SWEEP_COLUMNS",
    "SWEEP_POLICIES",
    "StuckThread",
    "adelete_thread",
    "aprune",
    "asweep",
    "delete_thread",
    "prune",
    "sweep",
]

SWEEP_POLICIES = ("fail", "delete", "escalate")
"""What :func:`sweep` may do with a stuck thread."""
PRUNE_COLUMNS = ["thread_id", "checkpoint_id", "step", "bytes", "action"]
"""Columns of the frame :func:`prune` returns: one row per deleted checkpoint; ``bytes`` is
what deleting it frees (its metadata, writes, and the blobs only it pointed at, serialized)."""
SWEEP_COLUMNS = ["thread_id", "checkpoint_id", "since", "waiting_s", "interrupts", "action"]
"""Columns of the frame :func:`sweep` returns."""


@dataclass(frozen=True)
class StuckThread:
    """A thread waiting on an interrupt for longer than the sweep allows."""

    thread_id: str
    checkpoint_id: str
    """The checkpoint it waits at (its latest)."""
    since: _dt.datetime
    """When that checkpoint was saved (UTC)."""
    waited: _dt.timedelta
    task_ids: tuple[str, ...]
    """The tasks waiting for an answer."""
    questions: tuple[Any, ...]
    """What each interrupt asked (its value)."""


async def _sweep_one(
    saver: BaseCheckpointSaver, stuck: StuckThread, policy: str, older_than: _dt.timedelta
) -> str | None:
    """Fail or delete ``stuck`` under its lease; a reason it was skipped, or None when done."""
    latest = await saver.aget_tuple(thread_config(stuck.thread_id))
    if latest is None or latest.checkpoint["id"] != stuck.checkpoint_id:
        return "skipped: it moved on"
    if policy == "delete":
        await saver.adelete_thread(stuck.thread_id)
        return None
    message = (
        f"waited {stuck.waited.total_seconds():.0f} s for an answer (longer than "
        f"{older_than.total_seconds():.0f} s); failed by sweep"
    )
    config = thread_config(stuck.thread_id, "", stuck.checkpoint_id)
    for task_id in stuck.task_ids:
        await saver.aput_writes(config, [(ERROR, f"InterruptExpired({message!r})")], task_id)
    return None


async def astuck_threads(
    saver: BaseCheckpointSaver, *, older_than: _dt.timedelta, now: _dt.datetime | None = None
) -> list[StuckThread]:
    """Threads whose latest checkpoint has waited on unanswered interrupts longer than
    ``older_than``, longest first (a thread that cannot be read is left out)."""
    return (await _stuck_and_damaged(saver, older_than=older_than, now=now))[0]


async def _stuck_and_damaged(
    saver: BaseCheckpointSaver, *, older_than: _dt.timedelta, now: _dt.datetime | None = None
) -> tuple[list[StuckThread], list[tuple[str, str]]]:
    """The stuck threads (see :func:`astuck_threads`) and the threads that could not be read,
    each with why (one line)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    view = SaverView(saver)
    stuck: list[StuckThread] = []
    damaged: list[tuple[str, str]] = []
    for thread_id in await view.alist_threads():
        try:
            thread = await aread_thread(view, thread_config(thread_id))
        except Exception as exc:  # reported; the other threads are still swept
            damaged.append((thread_id, damage_text(exc)))
            continue
        if not len(thread):
            continue
        latest = thread.latest
        waiting = [(t, i) for t, i in latest.pending_interrupts() if not t.error]
        since = created_at(latest)
        if not waiting or since is None or now - since <= older_than:
            continue
        stuck.append(
            StuckThread(
                thread_id=thread_id,
                checkpoint_id=latest.id,
                since=since,
                waited=now - since,
                task_ids=tuple(dict.fromkeys(str(t.id) for t, _ in waiting)),
                questions=tuple(i.value for _, i in waiting),
            )
        )
    return sorted(stuck, key=lambda s: (-s.waited.total_seconds(), s.thread_id)), damaged


async def adelete_thread(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Delete every checkpoint, blob and write of ``thread_id`` (all namespaces), holding
    the thread's lease (:class:`ThreadBusyError` while a run holds it)."""
    async with thread_lease(saver, thread_id):
        await saver.adelete_thread(thread_id)


def delete_thread(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Sync twin of :func:`adelete_thread`."""
    run_sync(adelete_thread(saver, thread_id))


async def asweep(
    saver: BaseCheckpointSaver,
    *,
    older_than: _dt.timedelta,
    policy: str,
    escalate: Callable[[StuckThread], Any] | None = None,
    dry_run: bool = False,
    now: _dt.datetime | None = None,
) -> pd.DataFrame:
    """Apply ``policy`` (one of :data:`SWEEP_POLICIES`) to every thread stuck on an interrupt
    for longer than ``older_than``; one row per thread (:data:`SWEEP_COLUMNS`), ``action``
    saying what was (or, with ``dry_run``, would be) done."""
    import pandas as pd

    if policy not in SWEEP_POLICIES:
        raise ValueError(f"sweep policy {policy!r}: use one of {', '.join(SWEEP_POLICIES)}")
    if policy == "escalate" and escalate is None:
        raise ValueError("sweep policy 'escalate' needs escalate=callback(stuck_thread)")
    if older_than < _dt.timedelta(0):
        raise ValueError(f"sweep older_than must not be negative (got {older_than})")
    rows = []
    found, damaged = await _stuck_and_damaged(saver, older_than=older_than, now=now)
    for stuck in found:
        action = {"fail": "failed", "delete": "deleted", "escalate": "escalated"}[policy]
        if not dry_run:
            if policy == "escalate":
                assert escalate is not None
                escalate(stuck)
            else:
                try:
                    async with thread_lease(saver, stuck.thread_id):
                        action = await _sweep_one(saver, stuck, policy, older_than) or action
                except ThreadBusyError as busy:
                    action = f"skipped: a run holds it ({busy.holder})"
                except Exception as exc:  # this thread only: the others are still swept
                    action = f"error: {damage_text(exc)}"
        rows.append(
            {
                "thread_id": stuck.thread_id,
                "checkpoint_id": stuck.checkpoint_id,
                "since": stuck.since,
                "waiting_s": round(stuck.waited.total_seconds(), 3),
                "interrupts": len(stuck.questions),
                "action": f"would be {action}" if dry_run else action,
            }
        )
    for thread_id, error in damaged:
        rows.append(
            {
                "thread_id": thread_id,
                "checkpoint_id": None,
                "since": None,
                "waiting_s": None,
                "interrupts": None,
                "action": f"damaged: {error}",
            }
        )
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


def sweep(
    saver: BaseCheckpointSaver,
    *,
    older_than: _dt.timedelta,
    policy: str,
    escalate: Callable[[StuckThread], Any] | None = None,
    dry_run: bool = False,
    now: _dt.datetime | None = None,
) -> pd.DataFrame:
    """Sync twin of :func:`asweep`."""
    return run_sync(
        asweep(
            saver, older_than=older_than, policy=policy, escalate=escalate, dry_run=dry_run, now=now
        )
    )


def kept_checkpoints(parents: dict[str, str | None], keep_last: int) -> set[str]:
    """The checkpoint ids :func:`prune` keeps, given each id's parent id."""
    children: dict[str, int] = {}
    for parent in parents.values():
        if parent is not None and parent in parents:
            children[parent] = children.get(parent, 0) + 1
    heads = [cid for cid in parents if cid not in children]
    kept = set(heads) | {cid for cid, n in children.items() if n > 1}
    for head in heads:
        cid: str | None = head
        for _ in range(keep_last):
            if cid is None or cid not in parents:
                break
            kept.add(cid)
            cid = parents[cid]
    return kept


async def aprune(
    saver: BaseCheckpointSaver,
    *,
    keep_last: int,
    thread_ids: Sequence[str] | None = None,
    dry_run: bool = False,
    wait: float | None = None,
) -> pd.DataFrame:
    """Delete all but the last ``keep_last`` checkpoints of every branch (fork points and
    heads stay) in ``thread_ids`` (default: every thread); one row per deleted checkpoint
    (:data:`PRUNE_COLUMNS`). With ``dry_run``, nothing is deleted.

    Each thread is read and pruned under its lease, as a run holds it: a thread a run holds
    (which may be saving a checkpoint that points at what prune would delete) is waited for
    up to ``wait`` seconds (default: not at all), then left alone with one row whose
    ``action`` is ``skipped: a run holds it (host:pid)`` and no checkpoint id."""
    import pandas as pd

    if keep_last < 1:
        raise ValueError(f"prune keep_last must be at least 1 (got {keep_last})")
    rows: list[dict[str, Any]] = []
    threads = list(thread_ids) if thread_ids is not None else await saver.alist_threads()
    for thread_id in threads:
        skipped: str | None = None
        try:
            if dry_run:  # reads only: no lease
                rows += await _prune_one(saver, thread_id, keep_last, dry_run=True)
                continue
            async with thread_lease(saver, thread_id, wait=wait):
                rows += await _prune_one(saver, thread_id, keep_last, dry_run=False)
        except ThreadBusyError as busy:
            skipped = f"skipped: a run holds it ({busy.holder})"
        except Exception as exc:  # a damaged thread is left as it is; the others are pruned
            skipped = f"damaged: {damage_text(exc)}"
        if skipped is not None:
            rows.append(
                {
                    "thread_id": thread_id,
                    "checkpoint_id": None,
                    "step": None,
                    "bytes": 0,
                    "action": skipped,
                }
            )
    return pd.DataFrame(rows, columns=PRUNE_COLUMNS)


async def _prune_one(
    saver: BaseCheckpointSaver, thread_id: str, keep_last: int, *, dry_run: bool
) -> list[dict[str, Any]]:
    """Prune one thread (the caller holds its lease unless ``dry_run``); its rows."""
    serde = saver.serde
    tuples = [
        t
        async for t in saver.alist(thread_config(thread_id))
        if t.config["configurable"].get("checkpoint_ns", "") == ""
    ]
    by_id = {str(t.config["configurable"]["checkpoint_id"]): t for t in tuples}
    parents = {
        cid: (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        for cid, t in by_id.items()
    }
    kept = kept_checkpoints(parents, keep_last)
    doomed = sorted(set(by_id) - kept)
    if not doomed:
        return []
    rows: list[dict[str, Any]] = []
    still_used = _pointers(by_id, kept)
    for cid in doomed:
        item = by_id[cid]
        size = _size(serde, item.metadata)
        size += sum(_size(serde, value) for _, _, value in item.pending_writes or ())
        values = item.checkpoint["channel_values"]
        for channel, version in _pointers(by_id, [cid]) - still_used:
            if channel in values:
                size += _size(serde, values[channel])
            still_used.add((channel, version))  # count a shared blob once
        rows.append(
            {
                "thread_id": thread_id,
                "checkpoint_id": cid,
                "step": item.metadata.get("step"),
                "bytes": size,
                "action": "would be deleted" if dry_run else "deleted",
            }
        )
    if not dry_run:
        await saver.adelete_checkpoints(thread_id, "", doomed)
    return rows


def prune(
    saver: BaseCheckpointSaver,
    *,
    keep_last: int,
    thread_ids: Sequence[str] | None = None,
    dry_run: bool = False,
    wait: float | None = None,
) -> pd.DataFrame:
    """Sync twin of :func:`aprune`."""
    return run_sync(
        aprune(saver, keep_last=keep_last, thread_ids=thread_ids, dry_run=dry_run, wait=wait)
    )


def _pointers(by_id: Mapping[str, CheckpointTuple], ids: Iterable[str]) -> set[tuple[str, str]]:
    """The (channel, version) pairs the checkpoints ``ids`` point at."""
    return {
        (channel, str(version))
        for cid in ids
        for channel, version in by_id[cid].checkpoint["channel_versions"].items()
    }


def _size(serde: Any, value: Any) -> int:
    try:
        return len(serde.dumps_typed(value)[1])
    except Exception:  # a value this serializer cannot write again: count nothing for it
        return 0
