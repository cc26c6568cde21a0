"""A thread written to files: JSON Lines for trace diffing, a standalone HTML page for browsing.

    export_jsonl(graph, config, "run-a.jsonl")                # one line per checkpoint
    export_jsonl(graph, config, "run-b.jsonl", stable=True)   # ids → #0, #1…, no timestamps
    # $ diff run-a.jsonl run-b.jsonl   -- which step wrote something different (notebook 10)
    export_html(graph, config, "thread.html")                 # the widget, read-only, offline

Lines are in checkpoint order (oldest first, every branch) with sorted keys, so two runs of the
same graph line up; ``stable=True`` also replaces ids and drops times so only behaviour differs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import OutlineSaver, RunnableConfig
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.dag import DagReader, dag_data_of, dag_wire_of
from durable_debug.inspect.detail import clip_detail, detail_of, writes_of
from durable_debug.inspect.jsonable import to_jsonable
from durable_debug.inspect.thread import Thread, aread_thread, checkpointer_of
from durable_debug.inspect.topology import node_names, topology_data

__all__ = [
    "aexport_html",
    "aexport_jsonl",
    "ahtml_data",
    "export_html",
    "export_jsonl",
    "html_data",
    "html_data_of",
    "jsonl_lines",
    "write_html",
]


async def aexport_jsonl(
    graph: GraphLike, config: RunnableConfig, path: str | os.PathLike[str], *, stable: bool = False
) -> Path:
    """Write one JSON line per checkpoint of the thread: ids, parent, step, source, next,
    writers, values and the pending writes saved on it. Returns the path written."""
    thread = await aread_thread(graph, config)
    target = Path(path)
    target.write_text("".join(line + "\n" for line in jsonl_lines(thread, stable=stable)), "utf-8")
    return target


def export_jsonl(
    graph: GraphLike, config: RunnableConfig, path: str | os.PathLike[str], *, stable: bool = False
) -> Path:
    """Sync twin of :func:`aexport_jsonl`."""
    return run_sync(aexport_jsonl(graph, config, path, stable=stable))


def jsonl_lines(thread: Thread, *, stable: bool = False) -> list[str]:
    """The JSON lines of :func:`export_jsonl` for an already read thread."""
    names = {cid: f"#{i}" for i, cid in enumerate(thread.records)} if stable else {}

    def name(checkpoint_id: str | None) -> str | None:
        if checkpoint_id is None or not stable:
            return checkpoint_id
        return names.get(checkpoint_id, checkpoint_id)

    lines = []
    for record in thread:
        writes = [
            {"node": w["node"], "channel": w["channel"], "value": w["value"]}
            | ({} if stable else {"task_id": w["task_id"]})
            for w in writes_of(record)
        ]
        entry: dict[str, Any] = {
            "thread_id": thread.thread_id,
            "checkpoint_ns": thread.checkpoint_ns,
            "checkpoint_id": name(record.id),
            "parent_id": name(record.parent_id),
            "step": record.step,
            "source": record.source,
            "next": list(record.next),
            "writers": thread.writers(record),
            "values": record.values,
            "writes": writes,
        }
        if not stable:
            entry["created_at"] = record.created_at
        lines.append(json.dumps(to_jsonable(entry), sort_keys=True, allow_nan=False))
    return lines


async def ahtml_data(
    graph: GraphLike, config: RunnableConfig, counts: Any = None
) -> dict[str, Any]:
    """The data a standalone page embeds: ``{thread_id, dag, details, topology}``; the tree
    read as the widget reads it (:class:`~durable_debug.inspect.dag.DagReader`: from the
    outline, no state decoded, on a saver that gives one), each detail from the full read."""
    dag = await _aoutline_wire(graph, config)
    return html_data_of(await aread_thread(graph, config), counts, dag=dag)


async def _aoutline_wire(graph: GraphLike, config: RunnableConfig) -> dict[str, Any] | None:
    """The thread's tree in the widget's compact form read from its outline, or None when the
    saver gives none (the full read's tree is the same)."""
    if not isinstance(checkpointer_of(graph), OutlineSaver):
        return None
    reader = DagReader(graph, config)
    await reader.arefresh()
    return reader.wire() if reader.outlined else None


def html_data_of(
    thread: Thread, counts: Any = None, *, dag: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The data of :func:`ahtml_data` for an already read thread: the DAG in the widget's
    compact form (``dag`` when the caller read it, e.g. from the outline), and each
    checkpoint's detail cut as the widget shows it, without what every detail shares
    (``detail_defaults``: the editable channels and the graph's nodes) or can be rebuilt (its
    ``config``); the page's model puts them back."""
    graph = thread.graph
    nodes = node_names(graph)
    details: dict[str, Any] = {}
    for record in thread:
        detail: dict[str, Any] = dict(clip_detail(detail_of(thread, record, nodes=nodes)))
        for shared in _SHARED_DETAIL_KEYS:
            del detail[shared]
        if not detail["findings"]:  # most checkpoints have none: the page reads a missing list
            del detail["findings"]
        details[record.id] = detail
    return {
        "thread_id": thread.thread_id,
        "checkpoint_ns": thread.checkpoint_ns,
        "dag": dag_wire_of(dag_data_of(thread)) if dag is None else dag,
        "details": details,
        "detail_defaults": {"editable": thread.state_channels(), "nodes": list(nodes)},
        "topology": topology_data(graph, counts) if nodes else None,
    }


_SHARED_DETAIL_KEYS = ("config", "editable", "nodes")
"""Detail fields the export leaves out of each detail (``detail_defaults``, or rebuilt)."""


def html_data(graph: GraphLike, config: RunnableConfig, counts: Any = None) -> dict[str, Any]:
    """Sync twin of :func:`ahtml_data`."""
    return run_sync(ahtml_data(graph, config, counts))


async def aexport_html(
    graph: GraphLike, config: RunnableConfig, path: str | os.PathLike[str], counts: Any = None
) -> Path:
    """Write one self-contained HTML file to browse the thread read-only (no kernel, no
    network). The page itself comes from ``durable_debug.inspect.html.render_html``."""
    dag = await _aoutline_wire(graph, config)
    return write_html(await aread_thread(graph, config), path, counts, dag=dag)


def write_html(
    thread: Thread,
    path: str | os.PathLike[str],
    counts: Any = None,
    *,
    dag: dict[str, Any] | None = None,
) -> Path:
    """Write the page of :func:`aexport_html` for an already read thread (``dag``: its tree
    in the widget's compact form, when the caller read it)."""
    from durable_debug.inspect.html import render_html  # the widget's page, built elsewhere

    target = Path(path)
    target.write_text(render_html(html_data_of(thread, counts, dag=dag)), "utf-8")
    return target


def export_html(
    graph: GraphLike, config: RunnableConfig, path: str | os.PathLike[str], counts: Any = None
) -> Path:
    """Sync twin of :func:`aexport_html`."""
    return run_sync(aexport_html(graph, config, path, counts))
