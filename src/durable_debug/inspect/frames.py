"""A thread as pandas tables: its checkpoints, its blob versions, its pending writes.

    history_frame(graph, config)[["step", "source", "next", "writers", "lane"]]
    blobs_frame(graph, config).query("status == 'new'")     # what each checkpoint stored
    writes_frame(graph, config).query("kind == 'error'")    # which task failed, and how

Rows are oldest first; values are the real Python objects (not JSON copies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import OutlineSaver, RunnableConfig
from durable_debug.checkpoint.records import aread_records
from durable_debug.graph.findings import findings_of
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.dag import DagReader, dag_from_thread, dag_layout
from durable_debug.inspect.detail import blobs_of, write_kind, writes_of
from durable_debug.inspect.failures import failure_classes
from durable_debug.inspect.thread import Thread, aread_thread, checkpointer_of, thread_config

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BLOB_COLUMNS",
    "HISTORY_COLUMNS",
    "WRITE_COLUMNS",
    "ablobs_frame",
    "ahistory_frame",
    "aoutline_history_frame",
    "awrites_frame",
    "blobs_frame",
    "history_frame",
    "history_frame_of",
    "writes_frame",
]

HISTORY_COLUMNS = [
    "checkpoint_id",
    "parent_id",
    "step",
    "source",
    "next",
    "writers",
    "interrupts",
    "errors",
    "failure",
    "depth",
    "lane",
    "is_head",
    "created_at",
    "findings",
]
BLOB_COLUMNS = ["checkpoint_id", "step", "channel", "version", "status", "size"]
WRITE_COLUMNS = ["checkpoint_id", "step", "task_id", "node", "channel", "kind", "value"]


async def ahistory_frame(
    graph: GraphLike, config: RunnableConfig, *, values: bool = False
) -> pd.DataFrame:
    """One row per checkpoint of the thread (every branch), oldest first.

    Columns: :data:`HISTORY_COLUMNS`; with ``values=True`` also one column per state channel.
    ``frame.attrs`` names the thread and the namespace (a subgraph's, or "").

    Without ``values``, on a saver that gives outlines (every durable_debug saver) the
    table comes from the outline :class:`~durable_debug.inspect.dag.DagReader` reads (no
    state decoded); the thread is read in full only when a checkpoint may have a failure
    to classify (a failed task, or a head with tasks left to run).
    """
    if not values and isinstance(checkpointer_of(graph), OutlineSaver):
        reader = DagReader(graph, config)
        await reader.arefresh()
        if reader.outlined:
            return await aoutline_history_frame(reader)
    return history_frame_of(await aread_thread(graph, config), values=values)


async def aoutline_history_frame(reader: DagReader) -> pd.DataFrame:
    """The :func:`ahistory_frame` of what ``reader`` read from an outline: every column from
    its rows, but ``failure``, for which the thread is read in full only when a checkpoint
    has a failed task or is a head with tasks left to run (a run that may have crashed), and
    the findings, read from the debug records of the checkpoints that have some."""
    import pandas as pd

    rows = reader.history_rows()
    graph, thread_id, checkpoint_ns = reader.graph, reader.thread_id, reader.checkpoint_ns
    unsure = [
        row["checkpoint_id"]
        for row in rows
        if row["errors"] or (row["is_head"] and row["next"] and row["source"] != "update")
    ]
    found: dict[str, Any] = {}
    if unsure:
        thread = await aread_thread(graph, thread_config(thread_id, checkpoint_ns))
        for row in rows:
            record = thread.records.get(row["checkpoint_id"])
            if record is None:
                continue
            row["failure"] = ", ".join(sorted(set(failure_classes(thread, record).values())))
            if record.findings:
                found[record.id] = record.findings
    else:
        with_findings = [row["checkpoint_id"] for row in rows if row["findings"]]
        if with_findings:
            saver = checkpointer_of(graph)
            records = await aread_records(saver, thread_id, checkpoint_ns, with_findings)
            for (_, cid), debug in sorted(records.items()):
                if findings_of(debug):
                    found[cid] = findings_of(debug)
    for row in rows:
        row.setdefault("failure", "")
    frame = pd.DataFrame(rows, columns=HISTORY_COLUMNS)
    frame.attrs.update(thread_id=thread_id, checkpoint_ns=checkpoint_ns)
    if found:
        frame.attrs["findings"] = found
    return frame


def history_frame(
    graph: GraphLike, config: RunnableConfig, *, values: bool = False
) -> pd.DataFrame:
    """Sync twin of :func:`ahistory_frame`."""
    return run_sync(ahistory_frame(graph, config, values=values))


def history_frame_of(thread: Thread, *, values: bool = False) -> pd.DataFrame:
    """:func:`history_frame` of an already read thread."""
    import pandas as pd

    dag = dag_from_thread(thread)
    layout = dag_layout(dag)
    channels = thread.state_channels() if values else []
    rows = []
    for record in thread:
        attrs = dag.nodes[record.id]
        row = {
            "checkpoint_id": record.id,
            "parent_id": record.parent_id,
            "step": record.step,
            "source": record.source,
            "next": tuple(record.next),
            "writers": tuple(attrs["writers"]),
            "interrupts": attrs["interrupts"],
            "errors": attrs["errors"],
            "failure": ", ".join(sorted(set(failure_classes(thread, record).values()))),
            "depth": layout[record.id].depth,
            "lane": layout[record.id].lane,
            "is_head": dag.out_degree(record.id) == 0,
            "created_at": record.created_at,
            "findings": len(record.findings),
        }
        state = record.values
        for channel in channels:
            row[channel] = state.get(channel)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=HISTORY_COLUMNS + channels)
    for channel in channels:  # keep the values as they are (None stays None, not NaN)
        frame[channel] = pd.Series([row[channel] for row in rows], index=frame.index, dtype=object)
    frame.attrs.update(thread_id=thread.thread_id, checkpoint_ns=thread.checkpoint_ns)
    found = {r.id: r.findings for r in thread if r.findings}
    if found:  # by checkpoint id: what %checkpoints and the CLI print under each checkpoint
        frame.attrs["findings"] = found
    return frame


async def ablobs_frame(
    graph: GraphLike, config: RunnableConfig, *, all_channels: bool = False
) -> pd.DataFrame:
    """One row per (checkpoint, channel): the blob version the pointer map names, whether it is
    ``new`` at this checkpoint or ``shared`` with the parent, and its size in bytes.

    Internal channels are left out unless ``all_channels`` is true.
    """
    import pandas as pd

    thread = await aread_thread(graph, config)
    rows = [
        {"checkpoint_id": record.id, "step": record.step, **blob}
        for record in thread
        for blob in blobs_of(thread, record, all_channels=all_channels)
    ]
    frame = pd.DataFrame(rows, columns=BLOB_COLUMNS)
    frame["size"] = frame["size"].astype("Int64")
    return frame


def blobs_frame(
    graph: GraphLike, config: RunnableConfig, *, all_channels: bool = False
) -> pd.DataFrame:
    """Sync twin of :func:`ablobs_frame`."""
    return run_sync(ablobs_frame(graph, config, all_channels=all_channels))


async def awrites_frame(graph: GraphLike, config: RunnableConfig) -> pd.DataFrame:
    """One row per pending write saved on a checkpoint: the task, its node, the channel, what
    kind of write it is (write / error / interrupt / resume / internal) and the value."""
    import pandas as pd

    thread = await aread_thread(graph, config)
    rows = [
        {
            "checkpoint_id": record.id,
            "step": record.step,
            **write,
            "kind": write_kind(write["channel"]),
        }
        for record in thread
        for write in writes_of(record)
    ]
    return pd.DataFrame(rows, columns=WRITE_COLUMNS)


def writes_frame(graph: GraphLike, config: RunnableConfig) -> pd.DataFrame:
    """Sync twin of :func:`awrites_frame`."""
    return run_sync(awrites_frame(graph, config))
