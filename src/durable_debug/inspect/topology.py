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
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from typing import Any, Literal, NamedTuple

from typing_extensions import TypedDict

from durable_debug.graph.types import END, START
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.layout import NodeBox, layered_layout, render_svg
from durable_debug.inspect.names import short_name

__all__ = [
    "DOT_TIMEOUT",
    "END_NODE",
    "START_NODE",
    "SVG_ATTRIBUTES",
    "SVG_ELEMENTS",
    "DrawingError",
    "GraphTopology",
    "Renderer",
    "Topology",
    "TopologyEdge",
    "TopologyNode",
    "atopology_data",
    "dot_available",
    "node_names",
    "sanitize_svg",
    "topology",
    "topology_data",
    "topology_svg",
]

logger = logging.getLogger(__name__)

START_NODE = START
END_NODE = END

Renderer = Literal["auto", "graphviz", "python"]
"""How to draw: graphviz when ``dot`` exists ("auto"), always graphviz, or always Python."""

DOT_TIMEOUT = 20.0
"""Seconds ``dot`` may take to draw a graph before the drawing falls back to Python's layout."""

SVG_NS = "http://www.w3.org/2000/svg"

SVG_ELEMENTS = frozenset(
    {"svg", "g", "polygon", "polyline", "ellipse", "circle", "rect", "line", "path", "text"}
)
"""The SVG elements a sanitized drawing keeps; anything else goes, with everything inside it
(``a``, ``script``, ``foreignObject``, ``style``, ``image``, ``use``, ``title``…)."""

SVG_ATTRIBUTES = frozenset(
    {
        "width", "height", "viewBox", "preserveAspectRatio", "transform", "class",
        "fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
        "points", "d", "cx", "cy", "r", "rx", "ry", "x", "y", "x1", "y1", "x2", "y2",
        "text-anchor", "font-family", "font-size", "font-weight", "font-style",
    }
)  # fmt: skip
"""The attributes a sanitized drawing keeps (no namespace: no ``xlink:href``), plus the
``data-node`` this module adds; ``on*`` handlers, ``href``, ``style`` and ``id`` are dropped."""

_UNSAFE_VALUE = re.compile(r"[:<>\\]|url\(|expression\(", re.IGNORECASE)
"""A presentational value with a scheme (``javascript:``), markup or a reference is dropped."""


class DrawingError(RuntimeError):
    """graphviz could not draw the graph, or its output is not an SVG this module accepts."""


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


def topology(graph: GraphLike) -> GraphTopology:
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


def node_names(graph: GraphLike) -> list[str]:
    """The names of the graph's own nodes (without ``__start__`` and ``__end__``)."""
    return [n.id for n in topology(graph).nodes if n.id not in (START_NODE, END_NODE)]


def dot_available() -> bool:
    """True when the graphviz ``dot`` binary is on PATH."""
    return shutil.which("dot") is not None


def topology_svg(
    graph: GraphLike, counts: Mapping[str, Any] | None = None, *, renderer: Renderer = "auto"
) -> str:
    """Draw the graph as an SVG element, each node labelled with its execution count.

    ``counts`` maps a node to an ``int`` or to a recorder count (anything with
    ``executions`` and ``reruns``); nodes that re-ran are highlighted. With ``renderer="auto"``
    a ``dot`` that fails falls back to the Python layout; ``renderer="graphviz"`` raises
    :class:`DrawingError` instead.
    """
    topo = topology(graph)
    executions = _counts(counts)
    if _use_graphviz(renderer):
        try:
            return _graphviz_svg(topo, executions)
        except DrawingError as error:
            if renderer == "graphviz":
                raise
            logger.warning("%s; drawing the graph with the Python layout instead", error)
    boxes = layered_layout(_boxes(topo, executions), [(e.source, e.target) for e in topo.edges])
    return render_svg(boxes, topo.edges)


def topology_data(
    graph: GraphLike, counts: Mapping[str, Any] | None = None, *, renderer: Renderer = "auto"
) -> Topology:
    """The protocol's ``Topology``: node positions from the Python layout, counts, and the
    graphviz SVG (sanitized) when ``dot`` exists and succeeds (else ``svg`` is None and the
    widget draws it from the positions)."""
    topo = topology(graph)
    executions = _counts(counts)
    boxes = layered_layout(_boxes(topo, executions), [(e.source, e.target) for e in topo.edges])
    svg = None
    if _use_graphviz(renderer):
        try:
            svg = _graphviz_svg(topo, executions)
        except DrawingError as error:
            if renderer == "graphviz":
                raise
            logger.warning("%s; the widget draws the graph from the Python layout", error)
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
    graph: GraphLike, counts: Mapping[str, Any] | None = None, *, renderer: Renderer = "auto"
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
    # A drawn name is cut short and its invisible characters shown (inspect.names): a name of
    # 10,000 characters would otherwise make the drawing that wide.
    label = short_name(node.name)
    if node.id not in executions:
        return label, None
    count, reruns = executions[node.id]
    note = f"{count}×" + (f" (re-ran {reruns}×)" if reruns else "")
    return label, note


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
    """Run ``dot`` on the graph and return its drawing, sanitized (:func:`sanitize_svg`).

    The DOT source is written here rather than by the ``graphviz`` package: every node gets a
    synthetic id (``n0``, ``n1``…) and every label is a double-quoted string with ``\\``,
    ``"``, ``&`` and line breaks escaped, so no name can become an HTML label, a record, an
    escape sequence or a syntax error. Raises :class:`DrawingError` when ``dot`` fails.
    """
    ids = {node.id: f"n{i}" for i, node in enumerate(topo.nodes)}
    lines = [
        "digraph {",
        "  rankdir=TB;",
        f"  node [fontname={_dot_string('Helvetica')}];",
        f"  edge [fontname={_dot_string('Helvetica')}];",
    ]
    for node in topo.nodes:
        label, note = _label(node, executions)
        attrs = {"shape": "box", "style": "rounded"}
        if node.id in (START_NODE, END_NODE):
            attrs = {"shape": "oval", "style": "filled", "fillcolor": "#eeeeee"}
        elif executions.get(node.id, (0, 0))[1]:
            attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffe0b2"}
        attrs["label"] = label if note is None else f"{label}\n{note}"
        lines.append(f"  {ids[node.id]} [{_dot_attrs(attrs)}];")
    for edge in topo.edges:
        if edge.source not in ids or edge.target not in ids:
            continue
        attrs = {"style": "dashed"} if edge.conditional else {}
        if edge.label and edge.label != edge.target:
            attrs["label"] = edge.label
        lines.append(f"  {ids[edge.source]} -> {ids[edge.target]} [{_dot_attrs(attrs)}];")
    lines.append("}")
    dot = shutil.which("dot") or "dot"
    try:
        done = subprocess.run(
            [dot, "-Tsvg"],
            input="\n".join(lines).encode("utf-8"),
            capture_output=True,
            timeout=DOT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DrawingError(f"graphviz `dot` could not draw the graph: {error}") from error
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise DrawingError(f"graphviz `dot` could not draw the graph: {reason}")
    names = {dot_id: node_id for node_id, dot_id in ids.items()}
    return sanitize_svg(done.stdout.decode("utf-8", "replace"), node_names=names)


def _dot_string(text: str) -> str:
    """``text`` as a DOT double-quoted string shown literally: never HTML, never an escape."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("&", "&amp;")
        .replace("\r\n", "\n")
        .replace("\r", "\n")
        .replace("\n", "\\n")
    )
    return f'"{"".join(ch if ch >= " " or ch == chr(9) else " " for ch in escaped)}"'


def _dot_attrs(attrs: Mapping[str, str]) -> str:
    return ", ".join(f"{name}={_dot_string(value)}" for name, value in attrs.items())


def sanitize_svg(text: str, *, node_names: Mapping[str, str] | None = None) -> str:
    """An SVG drawing reduced to an allowlist, safe to insert into a page as markup.

    ``text`` is parsed with the standard library's XML parser; only the elements of
    :data:`SVG_ELEMENTS` in the SVG namespace and the attributes of :data:`SVG_ATTRIBUTES`
    survive (no links, no event handlers, no ``foreignObject``, no scripts, no styles, no
    references), and a value holding a scheme, markup or ``url(`` is dropped. Text is kept as
    text. ``node_names`` maps graphviz node ids (a node group's ``<title>``) to the names that
    the result carries as ``data-node``. Raises :class:`DrawingError` for input that is not an
    SVG document.
    """
    start = text.find("<svg")
    if start < 0 or "<!ENTITY" in text:
        raise DrawingError("graphviz `dot` produced no SVG drawing this widget accepts")
    try:
        root = ET.fromstring(text[start:])
    except ET.ParseError as error:
        raise DrawingError(f"graphviz `dot` produced SVG that does not parse: {error}") from error
    if root.tag != f"{{{SVG_NS}}}svg":
        raise DrawingError("graphviz `dot` produced no SVG drawing this widget accepts")
    return "".join(_clean(root, dict(node_names or {}), top=True))


def _clean(element: ET.Element, names: Mapping[str, str], *, top: bool = False) -> Iterator[str]:
    """The allowed part of ``element`` as markup, every text and value escaped."""
    # Imported here: xml.sax.saxutils pulls in urllib.request and http.client, which
    # importing durable_debug.inspect (or listing threads) does not need.
    from xml.sax.saxutils import escape, quoteattr

    tag = element.tag[len(SVG_NS) + 2 :] if element.tag.startswith(f"{{{SVG_NS}}}") else ""
    if tag not in SVG_ELEMENTS:
        return
    attrs = {
        name: value
        for name, value in element.attrib.items()
        if name in SVG_ATTRIBUTES and not _UNSAFE_VALUE.search("".join(value.split()))
    }
    title = element.find(f"{{{SVG_NS}}}title")
    if tag == "g" and title is not None and (title.text or "") in names:
        attrs["data-node"] = names[title.text or ""]
    if top:
        attrs = {"xmlns": SVG_NS, **attrs}
    yield f"<{tag}" + "".join(f" {name}={quoteattr(value)}" for name, value in attrs.items())
    yield ">"
    if tag == "text" and element.text:
        yield escape(element.text)
    for child in element:
        yield from _clean(child, names)
    yield f"</{tag}>"
