"""The shape of a graph as data: nodes and edges, the way LangGraph's ``get_graph()`` gives it.

g = graph.get_graph()
[(e.source, e.target, e.conditional) for e in g.edges]
print(g.draw_mermaid())
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from durable_debug.graph.types import END, START

if TYPE_CHECKING:
    from durable_debug.graph.state import StateGraph

__all__ = ["DrawableGraph", "Edge", "Node", "draw_graph"]


class Node(NamedTuple):
    """A node of the drawing."""

    id: str
    name: str
    data: Any = None
    metadata: dict[str, Any] | None = None


class Edge(NamedTuple):
    """An edge of the drawing; ``conditional`` for conditional edges and Command targets."""

    source: str
    target: str
    data: Any = None
    conditional: bool = False


class DrawableGraph:
    """Nodes (including ``__start__`` and ``__end__``) and edges of a compiled graph."""

    def __init__(self, nodes: dict[str, Node], edges: list[Edge]) -> None:
        self.nodes = nodes
        self.edges = edges

    def draw_mermaid(self) -> str:
        """A Mermaid flowchart of the graph (dotted arrows are conditional)."""
        lines = ["graph TD;"]
        for node in self.nodes:
            label = node.strip("_") if node in (START, END) else node
            lines.append(
                f"\t{_mermaid_id(node)}([{label}])"
                if node in (START, END)
                else f"\t{_mermaid_id(node)}({label})"
            )
        for edge in self.edges:
            arrow = "-.->" if edge.conditional else "-->"
            lines.append(f"\t{_mermaid_id(edge.source)} {arrow} {_mermaid_id(edge.target)};")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"DrawableGraph(nodes={list(self.nodes)}, edges={len(self.edges)})"


def _mermaid_id(name: str) -> str:
    return name.replace(":", "_").replace(" ", "_")


def draw_graph(builder: StateGraph[Any, Any, Any, Any]) -> DrawableGraph:
    """Build the drawing of ``builder``'s nodes and edges."""
    nodes = {START: Node(START, START)}
    for name, spec in builder.nodes.items():
        nodes[name] = Node(name, name, spec.fn, spec.metadata or None)
    edges: list[Edge] = []

    def add(source: str, target: str, conditional: bool, label: str | None = None) -> None:
        edge = Edge(source, target, label, conditional)
        if edge not in edges:
            edges.append(edge)

    for source, target in builder._edge_order:
        add(source, target, False)
    for sources, target in builder.joins:
        for source in sources:
            add(source, target, False)
    for source, branches in builder.branches.items():
        for branch in branches:
            targets = branch.destinations()
            if targets is None:  # unknown: the function may pick any node
                targets = [*builder.nodes, END]
            for target in targets:
                add(source, target, True)
    for name, spec in builder.nodes.items():
        for target in spec.destinations:
            add(name, target, True, spec.destination_labels.get(target))
    for name, spec in builder.nodes.items():
        # An error handler has no edges of its own (it routes with Command), as LangGraph.
        if not spec.is_error_handler and not any(e.source == name for e in edges):
            add(name, END, False)
    if any(e.target == END for e in edges):
        nodes[END] = Node(END, END)
    return DrawableGraph(nodes, edges)
