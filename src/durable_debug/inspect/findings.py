"""The findings of a thread, per checkpoint (see ``durable_debug.graph.findings``).

    from durable_debug import inspect as ddi
    for checkpoint_id, found in ddi.findings(graph, config).items():
        for finding in found:
            print(checkpoint_id, finding.code, finding.message)

Findings live in each checkpoint's debug record (``checkpoint/records.py``): stored by our
savers, kept in this process only for any other saver.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import (
    RunnableConfig,
    config_checkpoint_ns_filter,
    config_thread_id,
)
from durable_debug.checkpoint.records import aread_records
from durable_debug.graph.findings import Finding, findings_of
from durable_debug.inspect.access import GraphLike, SaverLike

__all__ = ["afindings", "finding_line", "findings", "findings_text", "frame_findings_text"]


async def afindings(
    graph_or_saver: GraphLike | SaverLike, config: RunnableConfig
) -> dict[str, list[Finding]]:
    """The findings of the thread ``config`` names, by checkpoint id, oldest checkpoint
    first; checkpoints without findings are left out. ``graph_or_saver`` is a compiled graph
    (its checkpointer is read) or a saver. A config with a ``checkpoint_ns`` reads that
    namespace only; without one, every namespace of the thread."""
    saver = getattr(graph_or_saver, "checkpointer", None) or graph_or_saver
    thread_id = config_thread_id(config)
    namespace = config_checkpoint_ns_filter(config)
    records = await aread_records(saver, thread_id, namespace)
    found: dict[str, list[Finding]] = {}
    for _ns, checkpoint_id in sorted(records, key=lambda key: key[1]):
        listed = findings_of(records[(_ns, checkpoint_id)])
        if listed:
            found[checkpoint_id] = listed
    return found


def findings(
    graph_or_saver: GraphLike | SaverLike, config: RunnableConfig
) -> dict[str, list[Finding]]:
    """Sync twin of :func:`afindings`."""
    return run_sync(afindings(graph_or_saver, config))


def finding_line(finding: Finding) -> str:
    """One finding as a line of text: its code, where (node, key), and its message."""
    where = ", ".join(
        f"{label} {value!r}"
        for label, value in (("node", finding.node), ("key", finding.key))
        if value is not None
    )
    return f"{finding.code}{f' ({where})' if where else ''}: {finding.message}"


def findings_text(rows: Iterable[tuple[int, str, list[Finding]]]) -> str:
    """``findings:`` then, for each ``(step, checkpoint id, findings)``, a line naming the
    checkpoint and one indented line per finding under it; ``""`` when there is none."""
    from durable_debug.inspect.text import short_id

    lines = []
    for step, checkpoint_id, listed in rows:
        if listed:
            lines.append(f"  step {step:>3}  {short_id(checkpoint_id)}")
            lines += [f"      ⚑ {finding_line(f)}" for f in listed]
    return "\n".join(["findings:", *lines]) if lines else ""


def frame_findings_text(frame: Any) -> str:
    """:func:`findings_text` of a ``history_frame`` (its ``findings`` attribute)."""
    found = frame.attrs.get("findings") or {}
    steps = dict(zip(frame["checkpoint_id"], frame["step"], strict=True))
    return findings_text((int(steps[cid]), cid, listed) for cid, listed in found.items())
