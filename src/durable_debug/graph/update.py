"""``update_state``: write values onto a checkpoint as if a node had returned them.

The update becomes a new checkpoint whose parent is the checkpoint it was applied to, so an
update on an old checkpoint is a *fork*: the original branch stays as it was.

    target = next(s.config for s in graph.get_state_history(cfg) if s.metadata["step"] == 1)
    new_cfg = graph.update_state(target, {"value": "FORKED"})     # source "update", step 2
    graph.invoke(None, new_cfg)                                    # grows the new branch

The update runs the node's edges too (as LangGraph does): updating "as" node ``a`` schedules
whatever follows ``a``; triggers nobody rewrites are cleared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import (
    RunnableConfig,
    checkpoint_config,
    checkpoint_metadata,
    config_checkpoint_ns,
    config_thread_id,
    empty_checkpoint,
    new_checkpoint_id,
)
from durable_debug.graph.algo import (
    Task,
    apply_writes,
    make_checkpoint,
    restore_channels,
    task_id,
)
from durable_debug.graph.runner import edge_writes
from durable_debug.graph.types import START, InvalidUpdateError
from durable_debug.graph.version import version_metadata

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["COPY", "INPUT", "aupdate_state", "infer_as_node"]

COPY = "__copy__"
"""``as_node`` that copies the checkpoint as a sibling (source "fork") instead of updating."""
INPUT = "__input__"
"""``as_node`` that applies the values as new run input (source "input")."""


async def aupdate_state(
    graph: CompiledStateGraph,
    config: RunnableConfig,
    values: Any,
    as_node: str | None = None,
) -> RunnableConfig:
    """Apply ``values`` to the checkpoint ``config`` names (or the thread's latest)."""
    saver = graph.checkpointer
    if saver is None:
        raise ValueError("update_state needs a checkpointer: compile(checkpointer=MemorySaver())")
    thread_id = config_thread_id(config)
    checkpoint_ns = config_checkpoint_ns(config)
    saved = await saver.aget_tuple(config)
    if saved is None:
        checkpoint = empty_checkpoint()
        step = -1
        parent_config = checkpoint_config(thread_id, checkpoint_ns, None)
    else:
        checkpoint = saved.checkpoint
        step = int(saved.metadata.get("step", -1))
        parent_config = saved.config
    if as_node == COPY:
        if saved is None:
            raise ValueError(f"Thread {thread_id!r} has no checkpoint to copy")
        copy_id = new_checkpoint_id()
        copied = make_checkpoint(
            copy_id,
            restore_channels(graph, checkpoint),
            dict(checkpoint["channel_versions"]),
            {n: dict(v) for n, v in checkpoint["versions_seen"].items()},
            None,
        )
        fork = checkpoint_metadata(
            config, "fork", step + 1, **version_metadata(graph, saved.metadata)
        )
        parent = saved.parent_config or checkpoint_config(thread_id, checkpoint_ns, None)
        return await saver.aput(parent, copied, fork, {})
    channels = restore_channels(graph, checkpoint)
    source = "update"
    if as_node == INPUT:
        node, source = START, "input"
    elif as_node is None:
        node = infer_as_node(graph, checkpoint["versions_seen"], thread_id)
    else:
        node = as_node
    if node not in graph.nodes:
        raise InvalidUpdateError(
            f"update_state(as_node={node!r}): no such node in this graph "
            f"(nodes: {', '.join(n for n in graph.nodes if n != START)})"
        )
    where = "update_state" if node == START else f"update_state(as_node={node!r})"
    updates = graph.schema.updates_from(values, where=where)
    new_id = new_checkpoint_id()
    spec = graph.nodes[node]
    task = Task(
        task_id(new_id, checkpoint_ns, step + 1, node, ("__update__",)),
        node,
        ("__update__", node),
        spec,
    )
    task.writes = list(updates.items()) + await edge_writes(graph, task, updates, channels)
    task.status = "done"
    versions, seen, updated = apply_writes(graph, checkpoint, channels, [task], new_id)
    new_checkpoint = make_checkpoint(new_id, channels, versions, seen, updated)
    extra: dict[str, Any] = {"as_node": node} if source == "update" else {}
    extra.update(version_metadata(graph, saved.metadata if saved else None))
    metadata = checkpoint_metadata(config, source, step + 1, **extra)
    old_versions = checkpoint["channel_versions"]
    new_versions = {ch: v for ch, v in versions.items() if old_versions.get(ch) != v}
    return await saver.aput(parent_config, new_checkpoint, metadata, new_versions)


def infer_as_node(
    graph: CompiledStateGraph, versions_seen: dict[str, dict[str, str]], thread_id: str
) -> str:
    """The node an update is attributed to when ``as_node`` is not given: the node that ran
    last, or START on a thread where no node has run (then the update acts as input and
    schedules START's edges). Raises when two nodes ran last together (LangGraph's
    "Ambiguous update")."""
    latest: list[tuple[str, str]] = sorted(
        (version, node)
        for node, seen in versions_seen.items()
        if node in graph.nodes
        for version in seen.values()
    )
    if not latest:
        return START
    top = latest[-1][0]
    candidates = sorted({node for version, node in latest if version == top})
    if len(candidates) > 1:
        raise InvalidUpdateError(
            f"Ambiguous update on thread {thread_id!r}: nodes {', '.join(candidates)} ran last "
            "together; pass as_node= to say which node the update comes from"
        )
    return candidates[0]
