"""Graph versions: a fingerprint of a graph's structure, saved in every checkpoint's record.

    graph_structure(graph)   # {"nodes": [...], "edges": ["a -> b", "a -.-> c"], "channels": [...]}
    graph_version(graph)     # "3f9a0c1d2e4b5a69": the same in every process for the same graph

The structure lists the nodes, the edges (``-.->`` for a conditional edge), and the state
channels with their reducers by qualified name (``log: operator.add``); a graph whose nodes
run from channels of the user's names (a low-level ``Pregel``) also lists each such
subscription (``"triggers": ["a -> one"]``), so a reader without the graph knows which node a
changed channel runs. Nothing in it
depends on the process (no ``id()``, no memory address), so a worker on another machine
computes the same version for the same code.

Every checkpoint a run or ``update_state`` saves carries ``graph_fingerprint`` in its debug
record (``checkpoint/records.py``, never in ``metadata``); the first checkpoint of a version
on a thread also carries ``graph_structure``, so a later change can be listed and the widget
draws a version boundary there. Resuming a thread whose checkpoint came from another
structure works as in LangGraph; a change that can lose saved state (a channel removed,
renamed or given another reducer, a node the checkpoint has next removed) is recorded as a
``graph-changed`` finding, and raises
:class:`~durable_debug.checkpoint.errors.GraphChangedError` under ``compile(strict=True)`` or
``{"configurable": {"allow_graph_change": False}}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import BaseCheckpointSaver, RunnableConfig, checkpoint_config
from durable_debug.checkpoint.errors import GraphChangedError
from durable_debug.checkpoint.names import START, TASKS, is_trigger_channel, parse_trigger
from durable_debug.checkpoint.records import (
    GRAPH_STRUCTURE,
    GRAPH_VERSION,
    aread_records,
    record_of,
)
from durable_debug.graph.channels import BinaryOperatorAggregate
from durable_debug.graph.drawing import draw_graph
from durable_debug.graph.findings import Finding, RunFindings

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "ALLOW_GRAPH_CHANGE",
    "GRAPH_STRUCTURE_KEY",
    "GRAPH_VERSION_KEY",
    "STRUCTURE_TRIGGERS",
    "acheck_graph_version",
    "destructive_changes",
    "graph_structure",
    "graph_version",
    "scheduled_nodes",
    "structure_changes",
    "version_record",
]

GRAPH_VERSION_KEY = GRAPH_VERSION
"""Debug-record key of a checkpoint's graph version (not ``graph_version``, a name users give
their own version in ``config["metadata"]``)."""
GRAPH_STRUCTURE_KEY = GRAPH_STRUCTURE
"""Debug-record key of the structure, saved on the first checkpoint of a version."""
ALLOW_GRAPH_CHANGE = "allow_graph_change"
"""``configurable`` key: True resumes a thread saved by another structure without a finding,
False refuses a change that can lose saved state (as ``compile(strict=True)`` does)."""


def _qualified(fn: Any) -> str:
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}" if module else str(name)


def _storable(text: str) -> str:
    """``text``, with what UTF-8 cannot hold (a lone surrogate) and what a JSON column cannot
    (NUL) written as escapes, so the structure is always storable; the store still refuses
    such a name where it is a channel, naming it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


STRUCTURE_TRIGGERS = "triggers"
"""Part of a structure listing the subscriptions ``"<channel> -> <node>"`` of a graph whose
nodes run from channels other than the engine's trigger channels (absent for a
``StateGraph``, whose structure and version it leaves as they were)."""


def graph_structure(graph: CompiledStateGraph[Any, Any, Any, Any]) -> dict[str, list[str]]:
    """The graph's nodes, edges and state channels (with reducers), sorted; and the
    subscriptions to channels of the user's names (:data:`STRUCTURE_TRIGGERS`), if any."""
    cached: dict[str, list[str]] | None = graph.__dict__.get("_structure")
    if cached is not None:
        return cached
    # A low-level Pregel has no builder's edges: it is drawn through its channels.
    channel_drawing = getattr(graph, "_channel_drawing", None)
    drawing = channel_drawing() if channel_drawing is not None else draw_graph(graph.builder)
    edges = sorted(
        f"{e.source} {'-.->' if e.conditional else '->'} {e.target}" for e in drawing.edges
    )
    channels = []
    for key, channel in graph.schema.make_channels().items():
        if isinstance(channel, BinaryOperatorAggregate):
            channels.append(f"{key}: {_qualified(channel.operator)}")
        else:
            channels.append(key)
    structure = {
        "nodes": sorted(_storable(n) for n in graph.nodes if not n.startswith("__")),
        "edges": sorted(_storable(e) for e in edges),
        "channels": sorted(_storable(c) for c in channels),
    }
    subscribed = {
        f"{channel} -> {name}"
        for name, spec in graph.nodes.items()
        for channel in spec.triggers
        if not is_trigger_channel(channel)
    }
    if subscribed:
        structure[STRUCTURE_TRIGGERS] = sorted(_storable(s) for s in subscribed)
    graph.__dict__["_structure"] = structure
    return structure


def graph_version(graph: CompiledStateGraph[Any, Any, Any, Any]) -> str:
    """A 16-hex-digit fingerprint of :func:`graph_structure` (computed once per graph)."""
    cached: str | None = graph.__dict__.get("_version")
    if cached is None:
        text = json.dumps(graph_structure(graph), sort_keys=True, separators=(",", ":"))
        cached = graph.__dict__["_version"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return cached


def version_record(
    graph: CompiledStateGraph[Any, Any, Any, Any], parent_record: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The debug-record keys a new checkpoint gets: its version, plus the structure when the
    parent checkpoint had another version (or none): a version boundary."""
    version = graph.__dict__.get("_version") or graph_version(graph)  # (once per graph)
    extra: dict[str, Any] = {GRAPH_VERSION_KEY: version}
    if parent_record is None or parent_record.get(GRAPH_VERSION_KEY) != version:
        extra[GRAPH_STRUCTURE_KEY] = graph_structure(graph)
    return extra


def structure_changes(
    old: Mapping[str, list[str]] | None, new: Mapping[str, list[str]]
) -> list[str]:
    """What changed from ``old`` to ``new``, one line each (``node 'x' added``)."""
    if old is None:
        return ["the earlier structure was not saved"]
    lines = []
    for part, word in (("nodes", "node"), ("edges", "edge"), ("channels", "channel")):
        before, after = set(old.get(part, ())), set(new.get(part, ()))
        lines += [f"{word} {item!r} removed" for item in sorted(before - after)]
        lines += [f"{word} {item!r} added" for item in sorted(after - before)]
    return lines


def destructive_changes(
    old: Mapping[str, list[str]] | None, new: Mapping[str, list[str]], pending_nodes: set[str]
) -> list[str]:
    """The changes that can lose or misread saved state: a channel removed, renamed or given
    another reducer (its old line is gone), a node the checkpoint has next removed, or an
    earlier structure that was not saved. Added nodes, edges and channels are not."""
    if old is None:
        return structure_changes(old, new)
    lines = []
    channels_after = set(new.get("channels", ()))
    lines += [
        f"channel {item!r} removed or changed"
        for item in sorted(set(old.get("channels", ())) - channels_after)
    ]
    nodes_after = set(new.get("nodes", ()))
    lines += [
        f"node {node!r}, which the checkpoint has next, removed"
        for node in sorted(pending_nodes - nodes_after)
        if node in set(old.get("nodes", ()))
    ]
    return lines


def scheduled_nodes(checkpoint: Mapping[str, Any]) -> set[str]:
    """Nodes a saved checkpoint may have next, read from its channels alone (a graph that no
    longer has them cannot prepare their tasks): edge and join triggers that hold a value,
    and the targets of its ``Send`` packets."""
    nodes: set[str] = set()
    for channel, value in (checkpoint.get("channel_values") or {}).items():
        if channel == TASKS:
            for packet in value or ():
                target = packet[0] if isinstance(packet, (list, tuple)) else None
                target = getattr(packet, "node", target)
                if isinstance(target, str):
                    nodes.add(target)
            continue
        trigger = parse_trigger(channel)
        if trigger is not None and trigger.node != START:
            nodes.add(trigger.node)
    return nodes


async def _saved_structure(
    saver: BaseCheckpointSaver, thread_id: str, checkpoint_ns: str, version: str
) -> dict[str, list[str]] | None:
    """The structure saved with the first checkpoint of ``version`` in the thread: from the
    debug records, else (a checkpoint of an older durable_debug) from the metadata."""
    records = await aread_records(saver, thread_id, checkpoint_ns)
    for record in records.values():
        if record.get(GRAPH_VERSION_KEY) == version and GRAPH_STRUCTURE_KEY in record:
            found: dict[str, list[str]] = record[GRAPH_STRUCTURE_KEY]
            return found
    async for item in saver.alist(checkpoint_config(thread_id, checkpoint_ns, None)):
        legacy = record_of({}, item)
        if legacy.get(GRAPH_VERSION_KEY) == version and GRAPH_STRUCTURE_KEY in legacy:
            found = legacy[GRAPH_STRUCTURE_KEY]
            return found
    return None


async def acheck_graph_version(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    saver: BaseCheckpointSaver,
    config: RunnableConfig,
    record: Mapping[str, Any],
    findings: RunFindings,
    *,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    pending_nodes: set[str],
) -> None:
    """Compare the graph with the one that saved the checkpoint whose debug record is
    ``record`` (a checkpoint saved before versions were recorded is accepted).

    As in LangGraph, a changed graph resumes the thread: the run's first checkpoint then
    starts a new version (it carries the new structure, which the widget draws as a
    boundary). Changes that can lose saved state (:func:`destructive_changes`) are reported
    as a ``graph-changed`` finding; with ``compile(strict=True)``, or a config that sets
    ``allow_graph_change`` to False, they raise :class:`GraphChangedError` instead. A config
    that sets it to True accepts them without a finding.
    """
    saved = record.get(GRAPH_VERSION_KEY)
    current = graph_version(graph)
    if saved is None or saved == current:
        return
    allowed = (config.get("configurable") or {}).get(ALLOW_GRAPH_CHANGE)
    if allowed:
        return
    old = await _saved_structure(saver, thread_id, checkpoint_ns, str(saved))
    lost = destructive_changes(old, graph_structure(graph), pending_nodes)
    if not lost:
        return
    changes = structure_changes(old, graph_structure(graph))
    error = GraphChangedError(
        f"Thread {thread_id!r}: checkpoint {checkpoint_id!r} was saved by graph version "
        f"{saved} and this graph is version {current}: {'; '.join(changes) or 'reordered'}. "
        f'Pass config {{"configurable": {{"{ALLOW_GRAPH_CHANGE}": True}}}} to run it anyway.',
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        old_version=str(saved),
        new_version=current,
        changes=changes,
    )
    if allowed is False:
        raise error
    findings.report(
        Finding(
            "graph-changed",
            f"Thread {thread_id!r} was saved by graph version {saved} and resumed by version "
            f"{current}: {'; '.join(lost)} (all changes: {'; '.join(changes)}). It ran on, "
            "as LangGraph runs it.",
        ),
        error,
    )
