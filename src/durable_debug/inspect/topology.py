"""The shape of a compiled graph: nodes, edges and conditional edges, drawn to SVG.

    topo = topology(graph)
    [e for e in topo.edges if e.conditional]      # [TopologyEdge('gate', 'deploy', True, None)]
    svg = topology_svg(graph, counts={"gate": 2})  # graphviz when `dot` exists, else pure Python
    topology_data(graph, counts)                   # the protocol's Topology for the widget
    await atopology_data(graph, counts)            # the same, graphviz run in a worker thread

A fresh machine has no graphviz ``dot`` binary, so the drawing falls back to a layered layout
written in Python (:mod:`durable_debug.inspect.layout`); ``renderer="python"`` forces it.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from typing_extensions import TypedDict

from durable_debug.graph.types import END, START
from durable_debug.inspect.layout import NodeBox, layered_layout, render_svg

__all__ = [
    "END_NODE",
    "START_NODE",
    "GraphTopology",
    "Renderer",
    "Topology",
    "TopologyEdge",
    "TopologyNode",
    "atopology_data",
    "dot_available",
    "node_names",
    "topology",
    "topology_data",
    "topology_svg",
]

logger = logging.getLogger(__name__)

START_NODE = START
END_NODE = END

Renderer = Literal["auto", "graphviz", "python"]
"""How to draw: graphviz when ``dot`` exists ("auto"), always graphviz, or always Python."""


class TopologyNode(NamedTuple):
    """A node of the compiled graph (``__start__`` and ``__end__`` included)."""

    id: str
    name: str


class TopologyEdge(NamedTuple):
    """An edge of the compiled graph."""

    source: str
    target: str
    conditional: bool
    """True for an edge a routing function may take (``add_conditional_edges``)."""
    label: str | None
    """The edge's label (the routing function's return value), if any."""


class GraphTopology(NamedTuple):
    """Nodes and edges of a compiled graph."""

    nodes: tuple[TopologyNode, ...]
    edges: tuple[TopologyEdge, ...]

    @property
    def conditional_edges(self) -> tuple[TopologyEdge, ...]:
        """The edges a routing function chooses between."""
        return tuple(e for e in self.edges if e.conditional)


class TopologyDataNode(TypedDict):
    """A node of the protocol's ``Topology``: centre position and execution counts."""

    id: str
    x: float
    y: float
    count: int
    reruns: int


class TopologyDataEdge(TypedDict):
    """An edge of the protocol's ``Topology``."""

    source: str
    target: str
    conditional: bool


class Topology(TypedDict):
    """The protocol's ``Topology``: positions, counts and (when graphviz runs) an SVG."""

    nodes: list[TopologyDataNode]
    edges: list[TopologyDataEdge]
    width: float
    height: float
    svg: str | None


def topology(graph: Any) -> GraphTopology:
    """Nodes and edges of ``graph`` (anything with LangGraph's ``get_graph()``); empty when the
    shape is unknown (a store read without the graph's code)."""
    drawable = graph.get_graph()
    if drawable is None:
        return GraphTopology((), ())
    nodes = tuple(
        TopologyNode(str(key), str(getattr(node, "name", key) or key))
        for key, node in drawable.nodes.items()
    )
    edges = tuple(
        TopologyEdge(
            str(edge.source),
            str(edge.target),
            bool(getattr(edge, "conditional", False)),
            None if getattr(edge, "data", None) is None else str(edge.data),
        )
        for edge in drawable.edges
    )
    return GraphTopology(nodes, edges)


def node_names(graph: Any) -> list[str]:
    """The names of the graph's own nodes (without ``__start__`` and ``__end__``)."""
    return [n.id for n in topology(graph).nodes if n.id not in (START_NODE, END_NODE)]


def dot_available() -> bool:
    """True when the graphviz ``dot`` binary is on PATH."""
    return shutil.which("dot") is not None


def topology_svg(
    graph: Any, counts: Mapping[str, Any] | None = None, *, renderer: Renderer = "auto"
) -> str:
    """Draw the graph as an SVG element, each node labelled with its execution count.

    ``counts`` maps a node to an ``int`` or to a recorder count (anything with
    ``executions`` and ``reruns``); nodes that re-ran are highlighted.
    """
    topo = topology(graph)
    executions = _counts(counts)
    if _use_graphviz(renderer):
        return _graphviz_svg(topo, executions)
    boxes = layered_layout(_boxes(topo, executions), [(e.source, e.target) for e in topo.edges])
    return render_svg(boxes, topo.edges)


def topology_data(
    graph: Any, counts: Mapping[str, Any] | None = None, *, renderer: Renderer = "auto"
) -> Topology:
    """The protocol's ``Topology``: node positions from the Python layout, counts, and the
    graphviz SVG when ``dot`` exists (else ``svg`` is None and the widget draws it)."""
    topo = topology(graph)
    executions = _counts(counts)
    boxes = layered_layout(_boxes(topo, executions), [(e.source, e.target) for e in topo.edges])
    svg = _graphviz_svg(topo, executions) if _use_graphviz(renderer) else None
    width = max((b.x + b.width / 2 for b in boxes.values()), default=0.0)
    height = max((b.y + b.height / 2 for b in boxes.values()), default=0.0)
    return Topology(
        nodes=[
            TopologyDataNode(
                id=n.id,
                x=boxes[n.id].x,
                y=boxes[n.id].y,
                count=executions.get(n.id, (0, 0))[0],
                reruns=executions.get(n.id, (0, 0))[1],
            )
            for n in topo.nodes
        ],
        edges=[
            TopologyDataEdge(source=e.source, target=e.target, conditional=e.conditional)
            for e in topo.edges
        ],
        width=round(width + 20, 1),
        height=round(height + 20, 1),
        svg=svg,
    )


async def atopology_data(
    graph: Any, counts: Mapping[str, Any] | None = None, *, renderer: Renderer = "auto"
) -> Topology:
    """:func:`topology_data` in a worker thread: graphviz's ``dot`` runs as a subprocess that
    takes a while on a large graph, and the caller's event loop (a kernel's) stays free."""
    return await asyncio.to_thread(topology_data, graph, counts, renderer=renderer)


# --- helpers --------------------------------------------------------------------------------


def _counts(counts: Mapping[str, Any] | None) -> dict[str, tuple[int, int]]:
    """node → (executions, reruns) from ints or recorder counts."""
    result: dict[str, tuple[int, int]] = {}
    for node, count in (counts or {}).items():
        if isinstance(count, int):
            result[str(node)] = (count, 0)
        else:
            result[str(node)] = (int(count.executions), int(count.reruns))
    return result


def _label(node: TopologyNode, executions: Mapping[str, tuple[int, int]]) -> tuple[str, str | None]:
    if node.id not in executions:
        return node.name, None
    count, reruns = executions[node.id]
    note = f"{count}×" + (f" (re-ran {reruns}×)" if reruns else "")
    return node.name, note


def _boxes(topo: GraphTopology, executions: Mapping[str, tuple[int, int]]) -> list[NodeBox]:
    boxes = []
    for node in topo.nodes:
        label, note = _label(node, executions)
        terminal = node.id in (START_NODE, END_NODE)
        boxes.append(
            NodeBox(
                id=node.id,
                label=label,
                note=note,
                terminal=terminal,
                rerun=executions.get(node.id, (0, 0))[1] > 0,
            )
        )
    return boxes


def _use_graphviz(renderer: Renderer) -> bool:
    if renderer == "python":
        return False
    if renderer == "graphviz":
        if not dot_available():
            raise RuntimeError(
                "renderer='graphviz' needs the graphviz `dot` binary, which is not on PATH: "
                "install it (apt-get install graphviz / brew install graphviz) or use "
                "renderer='python'."
            )
        return True
    if renderer != "auto":
        raise ValueError(f"renderer must be 'auto', 'graphviz' or 'python', not {renderer!r}.")
    return dot_available()


def _graphviz_svg(topo: GraphTopology, executions: Mapping[str, tuple[int, int]]) -> str:
    import graphviz  # the Python package is a dependency; only the binary may be missing

    dot = graphviz.Digraph(graph_attr={"rankdir": "TB"}, node_attr={"fontname": "Helvetica"})
    for node in topo.nodes:
        label, note = _label(node, executions)
        attrs = {"shape": "box", "style": "rounded"}
        if node.id in (START_NODE, END_NODE):
            attrs = {"shape": "oval", "style": "filled", "fillcolor": "#eeeeee"}
        elif executions.get(node.id, (0, 0))[1]:
            attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffe0b2"}
        dot.node(node.id, label if note is None else f"{label}\n{note}", **attrs)
    for edge in topo.edges:
        attrs = {"style": "dashed"} if edge.conditional else {}
        if edge.label and edge.label != edge.target:
            attrs["label"] = edge.label
        dot.edge(edge.source, edge.target, **attrs)
    svg = dot.pipe(format="svg").decode("utf-8")
    # Keep only the <svg> element so it can be embedded in HTML.
    return svg[svg.index("<svg") :] if "<svg" in svg else svg
