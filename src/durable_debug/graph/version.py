"""Graph versions: a fingerprint of a graph's structure, saved in every checkpoint's metadata.

    graph_structure(graph)   # {"nodes": [...], "edges": ["a -> b", "a -.-> c"], "channels": [...]}
    graph_version(graph)     # "3f9a0c1d2e4b5a69": the same in every process for the same graph

The structure lists the nodes, the edges (``-.->`` for a conditional edge), and the state
channels with their reducers by qualified name (``log: operator.add``). Nothing in it
depends on the process (no ``id()``, no memory address), so a worker on another machine
computes the same version for the same code.

Every checkpoint a run or ``update_state`` saves carries ``metadata["graph_fingerprint"]``; the
first checkpoint of a version on a thread also carries ``metadata["graph_structure"]`` so a
later change can be listed. Resuming or rerunning a thread whose checkpoint came from
another structure raises :class:`~durable_debug.checkpoint.errors.GraphChangedError`,
unless the run's config says ``{"configurable": {"allow_graph_change": True}}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import BaseCheckpointSaver, RunnableConfig, checkpoint_config
from durable_debug.checkpoint.errors import GraphChangedError
from durable_debug.graph.channels import BinaryOperatorAggregate
from durable_debug.graph.drawing import draw_graph

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "ALLOW_GRAPH_CHANGE",
    "GRAPH_STRUCTURE_KEY",
    "GRAPH_VERSION_KEY",
    "acheck_graph_version",
    "graph_structure",
    "graph_version",
    "structure_changes",
    "version_metadata",
]

GRAPH_VERSION_KEY = "graph_fingerprint"
"""Metadata key of a checkpoint's graph version (not ``graph_version``, a name users give
their own version in ``config["metadata"]``)."""
GRAPH_STRUCTURE_KEY = "graph_structure"
"""Metadata key of the structure, saved on the first checkpoint of a version."""
ALLOW_GRAPH_CHANGE = "allow_graph_change"
"""``configurable`` key: True lets a run resume a thread saved by another structure."""


def _qualified(fn: Any) -> str:
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}" if module else str(name)


def _storable(text: str) -> str:
    """``text``, with what UTF-8 cannot hold (a lone surrogate) written as an escape, so the
    structure is always storable; the store still refuses such a name where it is a channel,
    naming it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def graph_structure(graph: CompiledStateGraph) -> dict[str, list[str]]:
    """The graph's nodes, edges and state channels (with reducers), sorted."""
    cached: dict[str, list[str]] | None = graph.__dict__.get("_structure")
    if cached is not None:
        return cached
    drawing = draw_graph(graph.builder)
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
    graph.__dict__["_structure"] = structure
    return structure


def graph_version(graph: CompiledStateGraph) -> str:
    """A 16-hex-digit fingerprint of :func:`graph_structure` (computed once per graph)."""
    cached: str | None = graph.__dict__.get("_version")
    if cached is None:
        text = json.dumps(graph_structure(graph), sort_keys=True, separators=(",", ":"))
        cached = graph.__dict__["_version"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return cached


def version_metadata(
    graph: CompiledStateGraph, parent_metadata: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The metadata keys a new checkpoint gets: its version, plus the structure when the
    parent checkpoint had another version (or none)."""
    version = graph_version(graph)
    extra: dict[str, Any] = {GRAPH_VERSION_KEY: version}
    if (parent_metadata or {}).get(GRAPH_VERSION_KEY) != version:
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


async def acheck_graph_version(
    graph: CompiledStateGraph,
    saver: BaseCheckpointSaver,
    config: RunnableConfig,
    metadata: Mapping[str, Any],
    *,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
) -> None:
    """Raise :class:`GraphChangedError` if the checkpoint with ``metadata`` was saved by a
    graph of another structure and ``config`` does not allow it. A checkpoint saved before
    versions were recorded is accepted."""
    saved = metadata.get(GRAPH_VERSION_KEY)
    current = graph_version(graph)
    if saved is None or saved == current:
        return
    if (config.get("configurable") or {}).get(ALLOW_GRAPH_CHANGE):
        return
    old: dict[str, list[str]] | None = None
    async for item in saver.alist(checkpoint_config(thread_id, checkpoint_ns, None)):
        if item.metadata.get(GRAPH_VERSION_KEY) == saved and GRAPH_STRUCTURE_KEY in item.metadata:
            old = item.metadata[GRAPH_STRUCTURE_KEY]  # type: ignore[literal-required]
            break
    changes = structure_changes(old, graph_structure(graph))
    raise GraphChangedError(
        f"Thread {thread_id!r}: checkpoint {checkpoint_id!r} was saved by graph version "
        f"{saved} and this graph is version {current}: {'; '.join(changes) or 'reordered'}. "
        f'Pass config {{"configurable": {{"{ALLOW_GRAPH_CHANGE}": True}}}} to run it anyway.',
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        old_version=str(saved),
        new_version=current,
        changes=changes,
    )
