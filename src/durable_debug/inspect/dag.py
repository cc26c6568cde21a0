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
from durable_debug.checkpoint.base import RunnableConfig, config_checkpoint_id
from durable_debug.checkpoint.outline import alatest_mark, alist_outline
from durable_debug.graph.version import GRAPH_VERSION_KEY
from durable_debug.inspect.thread import (
    CheckpointRecord,
    Thread,
    _thread_of,
    aread_thread,
    checkpointer_of,
    loop_links,
    thread_config,
)

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
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
    graph_changed: bool
    """The graph version differs from the parent checkpoint's (the code changed here)."""
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


class DagReader:
    """Reads one thread's ``Dag`` again and again, as a view that refreshes does.

    On durable_debug's SQLite saver the tree comes from checkpoint rows and metadata only
    (:func:`~durable_debug.checkpoint.outline.alist_outline`: no state value is decoded), one
    query per read, and each read after the first asks only for the checkpoints from the
    newest one seen on (plus the parents of newer ones, whose writes grew). Any other saver
    is read in full each time (:func:`~durable_debug.inspect.thread.aread_thread`).

        reader = DagReader(graph, {"configurable": {"thread_id": "job-1"}})
        dag = await reader.aread()          # the whole tree
        dag = await reader.aread()          # only what was written since
    """

    def __init__(self, graph: Any, config: RunnableConfig) -> None:
        self.graph = graph
        self.thread_id, self.checkpoint_ns = _thread_of(config, "DagReader")
        self._records: dict[str, CheckpointRecord] = {}
        self._marks: dict[str, DagNode] = {}
        self.reads = 0
        """Reads of the store so far (one per :meth:`aread`)."""
        self.last_read = 0
        """Checkpoints the last read returned (the whole thread, or only the newer ones)."""

    async def alatest_mark(self) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)``: a cheap mark of the thread's progress
        to watch (one index query on durable_debug's SQLite saver; else the newest checkpoint
        read through the saver)."""
        saver = checkpointer_of(self.graph)
        mark = await alatest_mark(saver, self.thread_id, self.checkpoint_ns)
        if mark is not None:
            return mark
        from durable_debug.inspect.access import aget_checkpoint

        latest = await aget_checkpoint(saver, thread_config(self.thread_id, self.checkpoint_ns))
        if latest is None:
            return ("", 0)
        return (str(config_checkpoint_id(latest.config)), len(latest.pending_writes or ()))

    def forget(self) -> None:
        """Drop what was read: the next :meth:`aread` reads the whole thread again."""
        self._records, self._marks = {}, {}

    async def aread(self) -> Dag:
        """The thread's ``Dag`` as it is now."""
        saver = checkpointer_of(self.graph)
        since = (
            thread_config(self.thread_id, self.checkpoint_ns, max(self._records))
            if self._records
            else None
        )
        self.reads += 1
        listed = await alist_outline(saver, self.thread_id, self.checkpoint_ns, since=since)
        if listed is None:
            thread = await aread_thread(
                self.graph, thread_config(self.thread_id, self.checkpoint_ns)
            )
            self.last_read = len(thread)
            return dag_data_of(thread)
        from durable_debug.inspect.stored import snapshot_of

        read: list[str] = []
        for saved in listed:
            parent = saved.parent_config
            record = CheckpointRecord(
                snapshot=snapshot_of(saved, latest=False),
                checkpoint=saved.checkpoint,
                # Only the special writes' values were read: the others are known by channel.
                pending_writes=tuple((str(t), str(c), v) for t, c, v in saved.pending_writes or ()),
                parent_id=config_checkpoint_id(parent) if parent else None,
            )
            self._records[record.id] = record
            read.append(record.id)
        self.last_read = len(listed)
        # Only what was read is marked again (a child's writers come from its parent's
        # writes, and a re-read parent comes before its new children in id order).
        broken = loop_links({cid: r.parent_id for cid, r in self._records.items()})
        thread = Thread(
            self.graph, self.thread_id, self.checkpoint_ns, self._records, broken_links=broken
        )
        again = set(read)
        # Known children of a re-read checkpoint too: their writers come from its writes.
        again.update(i for i, mark in self._marks.items() if mark["parent"] in again)
        for checkpoint_id in sorted(again):
            self._marks[checkpoint_id] = _marks(thread, self._records[checkpoint_id])
        return _assemble(self.thread_id, self.checkpoint_ns, self._marks)


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
        is_head=False,
        is_latest=False,
        depth=0,
        lane=0,
        created_at=record.created_at,
    )


def _graph_changed(parent: CheckpointRecord, record: CheckpointRecord) -> bool:
    """True when the checkpoint records a graph version other than its parent's."""
    version = (record.metadata or {}).get(GRAPH_VERSION_KEY)
    before = (parent.metadata or {}).get(GRAPH_VERSION_KEY)
    return version is not None and before is not None and version != before


def _assemble(thread_id: str, checkpoint_ns: str, marks: dict[str, DagNode]) -> Dag:
    """Place the checkpoints (the layout of :func:`dag_layout`, without building a graph)."""
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for node_id, mark in marks.items():
        parent = mark["parent"]
        if parent is not None and parent in marks:
            children.setdefault(parent, []).append(node_id)
        else:
            roots.append(node_id)
    depth: dict[str, int] = {}
    branch_of: dict[str, str] = {}
    branch_starts: list[str] = []
    for root in sorted(roots):
        branch_starts.append(root)
        stack = [(root, 0, root)]
        while stack:
            node_id, d, branch = stack.pop()
            depth[node_id] = d
            branch_of[node_id] = branch
            for i, child in enumerate(sorted(children.get(node_id, ()))):
                if i > 0:
                    branch_starts.append(child)
                stack.append((child, d + 1, branch if i == 0 else child))
    lanes = {start: i for i, start in enumerate(branch_starts[:1] + sorted(branch_starts[1:]))}
    latest = max(marks) if marks else None
    nodes: list[DagNode] = []
    for node_id, mark in marks.items():
        node = DagNode(**mark)
        node["depth"] = depth[node_id]
        node["lane"] = lanes[branch_of[node_id]]
        node["is_head"] = node_id not in children
        node["is_latest"] = node_id == latest
        nodes.append(node)
    nodes.sort(key=lambda n: (n["depth"], n["lane"], n["id"]))
    return Dag(
        thread_id=thread_id,
        checkpoint_ns=checkpoint_ns,
        nodes=nodes,
        depth=1 + max((n["depth"] for n in nodes), default=-1),
        lanes=1 + max((n["lane"] for n in nodes), default=-1),
    )
