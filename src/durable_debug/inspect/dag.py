"""The checkpoint DAG of a thread: a tree built from ``parent_checkpoint_id``, forks as branches.

    dag = checkpoint_dag(graph, {"configurable": {"thread_id": "demo-1"}})
    [dag.nodes[c]["step"] for c in nx.topological_sort(dag)]   # [-1, 0, 1, 2, 3, 2, 3, 4]
    dag_layout(dag)[fork_id]                                    # DagPosition(depth=3, lane=1)
    dag_data(graph, config)["lanes"]                            # 2: the widget draws this

The tree's shape and layout are :mod:`durable_debug.inspect.dag_shape`, the reader views
refresh with :mod:`durable_debug.inspect.dag_reader`, the widget's compact form
:mod:`durable_debug.inspect.dag_wire`; this module builds the tree for a caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.graph.version import GRAPH_VERSION_KEY
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.dag_reader import DagReader
from durable_debug.inspect.dag_shape import Dag, DagNode, DagPosition, dag_layout, placement
from durable_debug.inspect.dag_wire import (
    DAG_WIRE_FORMAT,
    dag_from_wire,
    dag_wire_of,
    merge_wire,
    pack_wire,
    unpack_wire,
)
from durable_debug.inspect.thread import CheckpointRecord, Thread

if TYPE_CHECKING:
    import networkx as nx

_T = TypeVar("_T")

__all__ = [
    "DAG_WIRE_FORMAT",
    "Dag",
    "DagNode",
    "DagPosition",
    "DagReader",
    "acheckpoint_dag",
    "adag_data",
    "checkpoint_dag",
    "dag_data",
    "dag_data_of",
    "dag_from_thread",
    "dag_from_wire",
    "dag_layout",
    "dag_wire_of",
    "merge_wire",
    "pack_wire",
    "unpack_wire",
]


async def acheckpoint_dag(graph: GraphLike, config: RunnableConfig) -> nx.DiGraph:
    """The checkpoint tree of the thread ``config`` names, as a ``networkx.DiGraph``.

    One node per checkpoint (attributes: id, parent, broken_parent, step, source, next,
    writers, interrupts, errors, created_at, config, metadata), one edge parent → child (none
    for a parent link that loops back, see :attr:`Thread.broken_links`). Graph attributes
    hold ``thread_id`` and ``checkpoint_ns``. Read as :class:`DagReader` reads: on a saver
    that gives an outline (:class:`~durable_debug.checkpoint.base.OutlineSaver`) no state is
    decoded; open one checkpoint's state with :func:`~durable_debug.inspect.checkpoint_detail`.
    """
    reader = DagReader(graph, config)
    return await reader.arefresh_then(reader.networkx_handed_over)


def checkpoint_dag(graph: GraphLike, config: RunnableConfig) -> nx.DiGraph:
    """Sync twin of :func:`acheckpoint_dag`."""
    return run_sync(acheckpoint_dag(graph, config))


def dag_from_thread(thread: Thread) -> nx.DiGraph:
    """Build the checkpoint tree of an already read :class:`Thread`."""
    import networkx as nx

    dag = nx.DiGraph(thread_id=thread.thread_id, checkpoint_ns=thread.checkpoint_ns)
    for record in thread:
        dag.add_node(
            record.id,
            id=record.id,
            parent=None if record.id in thread.broken_links else record.parent_id,
            broken_parent=thread.broken_links.get(record.id),
            step=record.step,
            source=record.source,
            next=list(record.next),
            writers=thread.writers(record),
            interrupts=len(record.pending_interrupts()),
            errors=len(record.failed_tasks()),
            created_at=record.created_at,
            config=record.config,
            metadata=record.metadata,
        )
    for record in thread:
        parent = thread.parent(record)
        if parent is not None:
            dag.add_edge(parent.id, record.id)
    return dag


async def adag_data(graph: GraphLike, config: RunnableConfig) -> Dag:
    """The protocol's ``Dag`` for the thread ``config`` names (JSON-ready), read as
    :class:`DagReader` reads it (no state decoded where the saver gives an outline)."""
    reader = DagReader(graph, config)
    return await reader.arefresh_then(lambda: _built(reader, reader.dag()))


def _built(reader: DagReader, result: _T) -> _T:
    """``result``, once ``reader`` let its columns go: the collection after the read's pause
    then walks only the result."""
    reader.forget()
    return result


def dag_data(graph: GraphLike, config: RunnableConfig) -> Dag:
    """Sync twin of :func:`adag_data`."""
    return run_sync(adag_data(graph, config))


def dag_data_of(thread: Thread) -> Dag:
    """The protocol's ``Dag`` of an already read :class:`Thread`."""
    marks = {record.id: _marks(thread, record) for record in thread}
    return _assemble(thread.thread_id, thread.checkpoint_ns, marks)


def _marks(thread: Thread, record: CheckpointRecord) -> DagNode:
    """What the DAG shows of one checkpoint, before it is placed (depth, lane, head, latest)."""
    parent = thread.parent(record)
    return DagNode(
        id=record.id,
        parent=None if record.id in thread.broken_links else record.parent_id,
        broken_parent=thread.broken_links.get(record.id),
        step=record.step,
        source=record.source,
        next=list(record.next),
        writers=thread.writers(record),
        interrupts=len(record.pending_interrupts()),
        errors=len(record.failed_tasks()),
        graph_changed=parent is not None and _graph_changed(parent, record),
        findings=len(record.findings),
        is_head=False,
        is_latest=False,
        depth=0,
        lane=0,
        created_at=record.created_at,
    )


def _graph_changed(parent: CheckpointRecord, record: CheckpointRecord) -> bool:
    """True when the checkpoint records a graph version other than its parent's."""
    version = record.debug.get(GRAPH_VERSION_KEY)
    before = parent.debug.get(GRAPH_VERSION_KEY)
    return version is not None and before is not None and version != before


def _assemble(thread_id: str, checkpoint_ns: str, marks: dict[str, DagNode]) -> Dag:
    """Place the checkpoints (the layout of :func:`dag_layout`, without building a graph)."""
    children, place, lanes = placement({cid: mark["parent"] for cid, mark in marks.items()})
    latest = max(marks) if marks else None
    nodes: list[DagNode] = []
    for node_id, mark in marks.items():
        node = DagNode(**mark)
        node["depth"], node["lane"] = place[node_id]
        node["is_head"] = node_id not in children
        node["is_latest"] = node_id == latest
        nodes.append(node)
    nodes.sort(key=lambda n: (n["depth"], n["lane"], n["id"]))
    return Dag(
        thread_id=thread_id,
        checkpoint_ns=checkpoint_ns,
        nodes=nodes,
        depth=1 + max((n["depth"] for n in nodes), default=-1),
        lanes=lanes,
    )
