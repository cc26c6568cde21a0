"""Finding the compiled graph that holds a thread, among the objects of a namespace.

The recorder learns which threads ran, not which graph object ran them; the notebook's
namespace holds the graphs. This picks the one whose saver has the thread (and whose nodes
include the nodes that ran, when several savers have it), preferring the most recent.

    name, graph = find_graph(get_ipython().user_ns, "hitl-1", nodes=["gate"])   # ('g', <…>)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from durable_debug._sync import run_sync
from durable_debug.inspect.access import aget_checkpoint
from durable_debug.inspect.thread import thread_config
from durable_debug.inspect.topology import node_names

__all__ = ["afind_graph", "find_graph", "graphs_in", "is_compiled_graph"]

logger = logging.getLogger(__name__)


def is_compiled_graph(obj: Any) -> bool:
    """True for an object with the compiled-graph API and a saver (durable_debug or LangGraph)."""
    if isinstance(obj, type):
        return False
    try:
        saver = getattr(obj, "checkpointer", None)
        return (
            callable(getattr(obj, "aget_state_history", None))
            and callable(getattr(obj, "get_graph", None))
            and callable(getattr(saver, "aget_tuple", None))
        )
    except Exception:  # an object whose attribute access raises is not a graph
        return False


def graphs_in(namespace: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(name, graph)`` for every compiled graph in ``namespace`` (first name of each object)."""
    found: dict[int, tuple[str, Any]] = {}
    for name, obj in list(namespace.items()):
        if not name.startswith("_") and id(obj) not in found and is_compiled_graph(obj):
            found[id(obj)] = (name, obj)
    return list(found.values())


async def afind_graph(
    namespace: Mapping[str, Any], thread_id: str, *, nodes: Iterable[str] = ()
) -> tuple[str, Any]:
    """The ``(name, graph)`` in ``namespace`` that holds ``thread_id``.

    Raises ``LookupError`` naming the thread and the graphs looked at when none has it, with
    the error of every saver that could not be read (so the real cause is never hidden).
    """
    wanted = set(nodes)
    holders: list[tuple[bool, str, str, Any]] = []
    failures: list[str] = []
    candidates = graphs_in(namespace)
    for name, graph in candidates:
        try:
            tup = await aget_checkpoint(graph.checkpointer, thread_config(thread_id))
        except Exception as exc:  # reported below if no other graph holds the thread
            logger.debug("graph %s: cannot read thread %s", name, thread_id, exc_info=True)
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if tup is None:
            continue
        has_nodes = wanted <= set(node_names(graph)) if wanted else True
        latest = str(tup.config["configurable"].get("checkpoint_id") or "")
        holders.append((has_nodes, latest, name, graph))
    if not holders:
        looked = ", ".join(name for name, _ in candidates) or "none"
        if failures:
            raise LookupError(
                f"No compiled graph in the namespace could be read for thread {thread_id!r} "
                f"(graphs looked at: {looked}); the saver raised: {'; '.join(failures)}"
            )
        raise LookupError(
            f"No compiled graph in the namespace holds thread {thread_id!r} (graphs looked at: "
            f"{looked}); name the graph explicitly, e.g. --graph my_graph."
        )
    _, _, name, graph = max(holders, key=lambda h: (h[0], h[1]))
    return name, graph


def find_graph(
    namespace: Mapping[str, Any], thread_id: str, *, nodes: Iterable[str] = ()
) -> tuple[str, Any]:
    """Sync twin of :func:`afind_graph`."""
    return run_sync(afind_graph(namespace, thread_id, nodes=nodes))
