"""The checkpoint DAG of a thread: a tree built from ``parent_checkpoint_id``, forks as branches.

    dag = checkpoint_dag(graph, {"configurable": {"thread_id": "demo-1"}})
    [dag.nodes[c]["step"] for c in nx.topological_sort(dag)]   # [-1, 0, 1, 2, 3, 2, 3, 4]
    dag_layout(dag)[fork_id]                                    # DagPosition(depth=3, lane=1)
    dag_data(graph, config)["lanes"]                            # 2: the widget draws this

Layout: a column per depth (distance from the root) and a lane per branch. The branch of the
first run is lane 0; at every checkpoint the oldest child continues its parent's lane and each
younger child starts a new branch; branches get lanes in the order they were created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from typing_extensions import TypedDict

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.inspect.thread import Thread, aread_thread

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "Dag",
    "DagNode",
    "DagPosition",
    "acheckpoint_dag",
    "adag_data",
    "checkpoint_dag",
    "dag_data",
    "dag_data_of",
    "dag_from_thread",
    "dag_layout",
]


class DagPosition(NamedTuple):
    """Where a checkpoint is drawn."""

    depth: int
    """Column: distance from the root."""
    lane: int
    """Row: branch index (0 = the branch of the first run)."""


class DagNode(TypedDict):
    """One checkpoint of the protocol's ``Dag`` (see docs/widget-protocol.md)."""

    id: str
    parent: str | None
    broken_parent: str | None
    """The parent id the store names when that link closes a loop (a damaged store): the
    checkpoint is then drawn as a root, ``parent`` is None."""
    step: int
    source: str
    next: list[str]
    writers: list[str]
    interrupts: int
    errors: int
    is_head: bool
    is_latest: bool
    depth: int
    lane: int
    created_at: str


class Dag(TypedDict):
    """A thread's checkpoint tree with its layout, as the widget draws it."""

    thread_id: str
    checkpoint_ns: str
    """The namespace shown: "" for the thread's own graph, ``node:task_id`` for a subgraph."""
    nodes: list[DagNode]
    depth: int
    lanes: int


async def acheckpoint_dag(graph: Any, config: RunnableConfig) -> nx.DiGraph:
    """The checkpoint tree of the thread ``config`` names, as a ``networkx.DiGraph``.

    One node per checkpoint (attributes: id, parent, broken_parent, step, source, next,
    writers, interrupts, errors, created_at, config, metadata), one edge parent → child (none
    for a parent link that loops back, see :attr:`Thread.broken_links`). Graph attributes
    hold ``thread_id`` and ``checkpoint_ns``.
    """
    return dag_from_thread(await aread_thread(graph, config))


def checkpoint_dag(graph: Any, config: RunnableConfig) -> nx.DiGraph:
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


def dag_layout(dag: nx.DiGraph) -> dict[str, DagPosition]:
    """Place every checkpoint: a column per depth, a lane per branch (deterministic).

    Checkpoint ids sort by creation time, so "oldest" below means "smallest id".
    """
    roots = sorted(n for n in dag.nodes if dag.in_degree(n) == 0)
    depth: dict[str, int] = {}
    branch_starts: list[str] = []
    branch_of: dict[str, str] = {}
    for root in roots:
        branch_starts.append(root)
        stack = [(root, 0, root)]
        while stack:
            node, d, branch = stack.pop()
            depth[node] = d
            branch_of[node] = branch
            children = sorted(dag.successors(node))
            for i, child in enumerate(children):
                child_branch = branch if i == 0 else child
                if i > 0:
                    branch_starts.append(child)
                stack.append((child, d + 1, child_branch))
    # Lane 0 is the first root's branch; the other branches in the order they were created.
    first = branch_starts[:1]
    lanes = {start: i for i, start in enumerate(first + sorted(branch_starts[1:]))}
    return {node: DagPosition(depth[node], lanes[branch_of[node]]) for node in dag.nodes}


async def adag_data(graph: Any, config: RunnableConfig) -> Dag:
    """The protocol's ``Dag`` for the thread ``config`` names (JSON-ready)."""
    return dag_data_of(await aread_thread(graph, config))


def dag_data(graph: Any, config: RunnableConfig) -> Dag:
    """Sync twin of :func:`adag_data`."""
    return run_sync(adag_data(graph, config))


def dag_data_of(thread: Thread) -> Dag:
    """The protocol's ``Dag`` of an already read :class:`Thread`."""
    dag = dag_from_thread(thread)
    layout = dag_layout(dag)
    latest = max(dag.nodes) if dag.nodes else None
    nodes: list[DagNode] = []
    for node_id, attrs in dag.nodes(data=True):
        position = layout[node_id]
        nodes.append(
            DagNode(
                id=node_id,
                parent=attrs["parent"],
                broken_parent=attrs["broken_parent"],
                step=attrs["step"],
                source=attrs["source"],
                next=list(attrs["next"]),
                writers=list(attrs["writers"]),
                interrupts=attrs["interrupts"],
                errors=attrs["errors"],
                is_head=dag.out_degree(node_id) == 0,
                is_latest=node_id == latest,
                depth=position.depth,
                lane=position.lane,
                created_at=attrs["created_at"],
            )
        )
    nodes.sort(key=lambda n: (n["depth"], n["lane"], n["id"]))
    return Dag(
        thread_id=thread.thread_id,
        checkpoint_ns=thread.checkpoint_ns,
        nodes=nodes,
        depth=1 + max((n["depth"] for n in nodes), default=-1),
        lanes=1 + max((n["lane"] for n in nodes), default=-1),
    )
