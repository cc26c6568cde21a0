"""The health of a checkpoint store, as pandas tables, read through the saver alone.

    report = health(saver, sla=timedelta(hours=4))
    report["latency"]      # samples, p50_ms, p95_ms: how long saving a checkpoint takes
    report["waiting"]      # threads waiting on an interrupt for longer than the SLA
    report["crashed"]      # threads whose run died mid-step (recover() resumes them)
    report["resumes"]      # failed steps, how many were resumed, how many then succeeded
    report["failures"]     # failed tasks by class (see durable_debug.inspect.failures)
    report["size"]         # threads, checkpoints, bytes; the file's size for SQLite
    report["growth"]       # checkpoints and bytes added per day (UTC)
    report["largest"]      # the threads holding the most bytes

``durable-debug health DB_OR_URL`` prints the same tables. Every saver works: the report
reads each thread like ``durable-debug inspect`` does (without the graph's code).

Write latency is the time ``aput_step`` took, which the run records on the *next*
checkpoint's debug record as ``parent_write_ms`` (``checkpoint/records.py``; a checkpoint
cannot hold the time of its own write); the last checkpoint of each run is therefore not
measured. Bytes are the serialized sizes of the blobs each checkpoint added plus its pending
writes, as the serializer produces them: what the store holds, before the database's own
overhead and compression.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import FAILURES as FAILURES_CHANNEL
from durable_debug.checkpoint.base import BaseCheckpointSaver
from durable_debug.checkpoint.records import PARENT_WRITE_MS
from durable_debug.inspect.detail import blobs_of
from durable_debug.inspect.failures import FAILURE_CLASSES, POISON_AFTER, failure_classes
from durable_debug.inspect.stored import SaverView
from durable_debug.inspect.thread import CheckpointRecord, Thread, aread_thread, thread_config

if TYPE_CHECKING:
    import pandas as pd

logger = logging.getLogger(__name__)

__all__ = [
    "CRASHED_COLUMNS",
    "DAMAGED_COLUMNS",
    "DEFAULT_SLA",
    "HEALTH_TABLES",
    "StoreCheck",
    "acheck_store",
    "acrashed_threads",
    "ahealth",
    "check_store",
    "crashed_threads",
    "created_at",
    "damage_text",
    "health",
    "health_data",
    "record_bytes",
]

DEFAULT_SLA = _dt.timedelta(hours=1)
"""How long an interrupt may wait before health lists its thread, unless told otherwise (the
CLI's ``--sla``, the widget's Health panel and :func:`health` all default to it)."""

HEALTH_TABLES = (
    "latency",
    "waiting",
    "crashed",
    "resumes",
    "failures",
    "size",
    "growth",
    "largest",
    "damaged",
)
"""The tables :func:`health` returns, in the order the CLI prints them."""

DAMAGED_COLUMNS = ["thread_id", "error"]
"""Columns of health's ``damaged`` table (and of the CLI's ``check``): a thread that could not
be read, and why, in one line. The other tables cover every other thread."""


def damage_text(exc: BaseException) -> str:
    """Why a thread could not be read, as one line: the error's type and message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


CRASHED_COLUMNS = ["thread_id", "checkpoint_id", "step", "tasks", "since"]
"""Columns of :func:`crashed_threads` (and of health's ``crashed`` table): the thread, the
checkpoint its dead run had reached and its step, the tasks of the next step that recorded
nothing (comma-separated node names), and when that checkpoint was saved."""


def created_at(record: CheckpointRecord) -> _dt.datetime | None:
    """When ``record`` was saved (UTC), None when the store does not say."""
    try:
        when = _dt.datetime.fromisoformat(record.created_at)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def record_bytes(thread: Thread, record: CheckpointRecord, serde: Any) -> int:
    """Bytes ``record`` added to the store: its new blobs and its pending writes."""
    size = sum(
        b["size"] or 0 for b in blobs_of(thread, record, all_channels=True) if b["status"] == "new"
    )
    for _, _, value in record.pending_writes:
        try:
            size += len(serde.dumps_typed(value)[1])
        except Exception:  # a value the serializer refuses now was stored by another version
            continue
    return size


def _file_bytes(saver: BaseCheckpointSaver) -> int | None:
    """Bytes of a SQLite store's file and its write-ahead log; None for other stores."""
    path = getattr(saver, "path", None)
    if not isinstance(path, str) or path == ":memory:" or not os.path.exists(path):
        return None
    return sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.exists(p))


def _crashed(thread: Thread) -> dict[str, Any] | None:
    """The thread's row of :data:`CRASHED_COLUMNS` when its last run died holding it."""
    if not thread.abandoned:
        return None
    if not len(thread):  # died before its first checkpoint was saved
        return dict.fromkeys(CRASHED_COLUMNS) | {"thread_id": thread.thread_id, "tasks": ""}
    latest = thread.latest
    found = failure_classes(thread, latest)
    names = sorted({str(t.name) for t in latest.tasks if found.get(str(t.id)) == "crash"})
    return {
        "thread_id": thread.thread_id,
        "checkpoint_id": latest.id,
        "step": latest.step,
        "tasks": ", ".join(names),
        "since": created_at(latest),
    }


async def acrashed_threads(saver: BaseCheckpointSaver) -> pd.DataFrame:
    """The threads whose last run died while it held the thread (its lease expired without
    being given back), told from interrupted, failed and finished threads by the store's
    rows alone (no graph code): one row each (:data:`CRASHED_COLUMNS`), oldest lease first.
    These are the threads :func:`durable_debug.graph.recovery.recover` resumes."""
    import pandas as pd

    view = SaverView(saver)
    rows = []
    for thread_id in sorted(await view.aabandoned_threads() or ()):
        try:
            row = _crashed(await aread_thread(view, thread_config(thread_id)))
        except Exception as exc:  # a damaged thread: the others are still listed
            logger.warning("thread %r could not be read: %s", thread_id, damage_text(exc))
            continue
        if row is not None:
            rows.append(row)
    return pd.DataFrame(rows, columns=CRASHED_COLUMNS)


def crashed_threads(saver: BaseCheckpointSaver) -> pd.DataFrame:
    """Sync twin of :func:`acrashed_threads`."""
    return run_sync(acrashed_threads(saver))


def _waiting(thread: Thread) -> tuple[CheckpointRecord, int] | None:
    """The thread's latest checkpoint and its unanswered interrupts, if it waits on one."""
    latest = thread.latest
    waiting = [task for task, _ in latest.pending_interrupts() if not task.error]
    return (latest, len(waiting)) if waiting else None


async def ahealth(
    saver: BaseCheckpointSaver,
    *,
    sla: _dt.timedelta = DEFAULT_SLA,
    now: _dt.datetime | None = None,
    top: int = 10,
    poison_after: int = POISON_AFTER,
) -> dict[str, pd.DataFrame]:
    """The store's health: one DataFrame per name of :data:`HEALTH_TABLES`.

    ``sla``: how long a thread may wait on an interrupt before it is listed in ``waiting``;
    ``now``: the time to measure against (default: the current time, UTC); ``top``: rows of
    ``largest``; ``poison_after``: see :func:`~durable_debug.inspect.failures.task_failure_class`.
    """
    import pandas as pd

    now = now or _dt.datetime.now(_dt.timezone.utc)
    view = SaverView(saver)
    latencies: list[float] = []
    waiting_rows: list[dict[str, Any]] = []
    failed_steps = resumed = succeeded = 0
    classes: Counter[str] = Counter()
    per_day: dict[str, list[int]] = {}
    sizes: list[dict[str, Any]] = []
    crashed_rows: list[dict[str, Any]] = []
    damaged_rows: list[dict[str, Any]] = []
    for thread_id in await view.alist_threads():
        try:
            thread = await aread_thread(view, thread_config(thread_id))
            sizes_of = [record_bytes(thread, record, saver.serde) for record in thread]
        except Exception as exc:  # a damaged thread is reported, and the others still are
            damaged_rows.append({"thread_id": thread_id, "error": damage_text(exc)})
            continue
        if not len(thread):
            continue
        total = 0
        for record, size in zip(thread, sizes_of, strict=True):
            ms = record.debug.get(PARENT_WRITE_MS)
            if isinstance(ms, (int, float)):
                latencies.append(float(ms))
            total += size
            when = created_at(record)
            day = per_day.setdefault(when.date().isoformat() if when else "unknown", [0, 0])
            day[0] += 1
            day[1] += size
            found = failure_classes(thread, record, poison_after=poison_after)
            classes.update(found.values())
            if record.failed_tasks():
                failed_steps += 1
                children = thread.children(record)
                again = any(c == FAILURES_CHANNEL for _, c, _ in record.pending_writes)
                if children or again:
                    resumed += 1
                if any(child.source == "loop" for child in children):
                    succeeded += 1
        sizes.append({"thread_id": thread_id, "checkpoints": len(thread), "bytes": total})
        crashed = _crashed(thread)
        if crashed is not None:
            crashed_rows.append(crashed)
        stuck = _waiting(thread)
        if stuck is not None:
            record, count = stuck
            since = created_at(record)
            if since is not None and now - since > sla:
                waiting_rows.append(
                    {
                        "thread_id": thread_id,
                        "checkpoint_id": record.id,
                        "interrupts": count,
                        "since": since,
                        "waiting_s": round((now - since).total_seconds(), 3),
                    }
                )
    series = pd.Series(latencies, dtype=float)
    latency = pd.DataFrame(
        [
            {
                "samples": len(latencies),
                "p50_ms": float(series.quantile(0.5)) if latencies else None,
                "p95_ms": float(series.quantile(0.95)) if latencies else None,
            }
        ]
    )
    resumes = pd.DataFrame(
        [
            {
                "failed_steps": failed_steps,
                "resumed": resumed,
                "succeeded": succeeded,
                "success_rate": succeeded / resumed if resumed else None,
            }
        ]
    )
    failures = pd.DataFrame(
        [{"class": name, "tasks": classes.get(name, 0)} for name in FAILURE_CLASSES]
    )
    growth = pd.DataFrame(
        [{"day": day, "checkpoints": c, "bytes": b} for day, (c, b) in sorted(per_day.items())],
        columns=["day", "checkpoints", "bytes"],
    )
    if len(growth):
        growth["total_bytes"] = growth["bytes"].cumsum()
    else:
        growth["total_bytes"] = pd.Series(dtype=int)
    largest = pd.DataFrame(sizes, columns=["thread_id", "checkpoints", "bytes"])
    largest = largest.sort_values(["bytes", "thread_id"], ascending=[False, True]).head(top)
    waiting = pd.DataFrame(
        waiting_rows, columns=["thread_id", "checkpoint_id", "interrupts", "since", "waiting_s"]
    ).sort_values("waiting_s", ascending=False)
    store = pd.DataFrame(
        [
            {
                "threads": len(sizes),
                "checkpoints": sum(row["checkpoints"] for row in sizes),
                "bytes": sum(row["bytes"] for row in sizes),
                "file_bytes": _file_bytes(saver),
            }
        ]
    )
    return {
        "latency": latency,
        "waiting": waiting.reset_index(drop=True),
        "crashed": pd.DataFrame(crashed_rows, columns=CRASHED_COLUMNS),
        "resumes": resumes,
        "failures": failures,
        "size": store,
        "growth": growth,
        "largest": largest.reset_index(drop=True),
        "damaged": pd.DataFrame(damaged_rows, columns=DAMAGED_COLUMNS),
    }


@dataclass
class StoreCheck:
    """What :func:`acheck_store` found."""

    threads: int = 0
    checkpoints: int = 0
    damaged: list[tuple[str, str]] = field(default_factory=list)
    """(thread_id, why) of each thread a checkpoint of which could not be reassembled."""
    file_problems: list[str] = field(default_factory=list)
    """What SQLite's integrity check reported (a SQLite store only; empty when fine)."""


async def acheck_store(saver: BaseCheckpointSaver) -> StoreCheck:
    """Verify a whole store: SQLite's ``PRAGMA integrity_check`` for a SQLite file, then every
    checkpoint of every thread (all namespaces) reassembled with its values and pending
    writes. A damaged thread is named with why, and the others are still read."""
    report = StoreCheck()
    query = getattr(saver, "aquery", None)
    if callable(query) and getattr(saver, "path", None) not in (None, ":memory:"):
        try:
            rows = await query("PRAGMA integrity_check")
        except Exception as exc:
            report.file_problems.append(damage_text(exc))
        else:
            report.file_problems += [str(r[0]) for r in rows if str(r[0]) != "ok"]
    for thread_id in await saver.alist_threads():
        report.threads += 1
        count = 0
        try:
            async for _ in saver.alist({"configurable": {"thread_id": thread_id}}):
                count += 1
        except Exception as exc:
            report.damaged.append((thread_id, damage_text(exc)))
        report.checkpoints += count
    return report


def check_store(saver: BaseCheckpointSaver) -> StoreCheck:
    """Sync twin of :func:`acheck_store`."""
    return run_sync(acheck_store(saver))


def health(
    saver: BaseCheckpointSaver,
    *,
    sla: _dt.timedelta = DEFAULT_SLA,
    now: _dt.datetime | None = None,
    top: int = 10,
    poison_after: int = POISON_AFTER,
) -> dict[str, pd.DataFrame]:
    """Sync twin of :func:`ahealth`."""
    return run_sync(ahealth(saver, sla=sla, now=now, top=top, poison_after=poison_after))


def _cell(value: Any) -> Any:
    """One table cell as JSON: missing → None, numpy scalars → Python, times → ISO text."""
    import pandas as pd

    if value is None or (not isinstance(value, (str, bytes)) and bool(pd.isna(value))):
        return None
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, (bool, int, str)):
        return value
    return str(value)


def health_data(report: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """``report`` (from :func:`health`) as JSON for the widget: one ``{name, columns, rows}``
    per name of :data:`HEALTH_TABLES`, in that order; cells are numbers, text or None."""
    tables = []
    for name in HEALTH_TABLES:
        frame = report[name]
        rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
        tables.append({"name": name, "columns": [str(c) for c in frame.columns], "rows": rows})
    return tables
