"""The shape of a thread's checkpoint tree: the protocol's ``Dag``, and where each checkpoint goes.

Layout: a column per depth (distance from the root) and a lane per branch. The branch of the
first run is lane 0; at every checkpoint the oldest child continues its parent's lane and each
younger child starts a new branch; branches get lanes in the order they were created.

    dag_layout(dag)[fork_id]                                    # DagPosition(depth=3, lane=1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from typing_extensions import TypedDict

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Dag", "DagNode", "DagPosition", "dag_layout", "placement"]


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
    findings: int
    """How many findings the checkpoint's debug record holds (``graph/findings.py``)."""
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


def placement(
    parents: dict[str, str | None],
) -> tuple[dict[str, list[str]], dict[str, tuple[int, int]], int]:
    """``(children, checkpoint id → (depth, lane), lanes)``: a column per depth, a lane per
    branch; the oldest child continues its parent's lane, each younger child (and each root
    after the first) starts a branch, and branches get lanes in the order they were created."""
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for node_id in sorted(parents):
        parent = parents[node_id]
        if parent is not None and parent in parents:
            children.setdefault(parent, []).append(node_id)
        else:
            roots.append(node_id)
    depth: dict[str, int] = {}
    branch_of: dict[str, str] = {}
    branch_starts: list[str] = []
    for root in roots:
        branch_starts.append(root)
        stack = [(root, 0, root)]
        while stack:
            node_id, d, branch = stack.pop()
            depth[node_id] = d
            branch_of[node_id] = branch
            for i, child in enumerate(children.get(node_id, ())):
                if i > 0:
                    branch_starts.append(child)
                stack.append((child, d + 1, branch if i == 0 else child))
    lanes = {start: i for i, start in enumerate(branch_starts[:1] + sorted(branch_starts[1:]))}
    place = {node_id: (depth[node_id], lanes[branch_of[node_id]]) for node_id in parents}
    return children, place, len(lanes)
