"""A layered graph drawing in pure Python, for machines without graphviz's ``dot``.

    boxes = layered_layout([NodeBox("__start__", "__start__"), NodeBox("a", "a")],
                           [("__start__", "a")])
    boxes["a"].y > boxes["__start__"].y      # True: edges point down
    svg = render_svg(boxes, edges)           # '<svg xmlns=...>…</svg>'

The classic recipe, kept small: break cycles by reversing back edges found by a depth-first
search, put each node on the layer of its longest path from a source, order each layer by the
barycenter of its neighbours (a few sweeps down and up), then space the layers evenly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from durable_debug.checkpoint.names import END

__all__ = ["NodeBox", "layered_layout", "render_svg"]

CHAR_WIDTH = 7.5
"""Approximate width of one character of the 12 px label font."""
LAYER_GAP = 80.0
NODE_GAP = 30.0
NODE_HEIGHT = 36.0
NOTE_HEIGHT = 14.0
MARGIN = 20.0
SWEEPS = 4


@dataclass
class NodeBox:
    """A node to draw: its text, and (after layout) its centre and size."""

    id: str
    label: str
    note: str | None = None
    """Second line, e.g. the execution count."""
    terminal: bool = False
    """``__start__`` / ``__end__``: drawn as a pill."""
    rerun: bool = False
    """Highlighted: the node re-ran."""
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0
    layer: int = 0


def layered_layout(
    boxes: Sequence[NodeBox], edges: Iterable[tuple[str, str]]
) -> dict[str, NodeBox]:
    """Give every box a layer and a position; returns id → box (the same objects)."""
    by_id = {box.id: box for box in boxes}
    order = {box.id: i for i, box in enumerate(boxes)}
    edge_list = [(s, t) for s, t in edges if s in by_id and t in by_id and s != t]
    forward = _acyclic(list(by_id), edge_list, order)
    layers = _layers(list(by_id), forward, order)
    for node, layer in layers.items():
        by_id[node].layer = layer
    rows = _order_layers(layers, forward, order)
    for box in boxes:
        text = max(len(box.label), len(box.note or ""))
        box.width = max(60.0, text * CHAR_WIDTH + 24.0)
        box.height = NODE_HEIGHT + (NOTE_HEIGHT if box.note else 0.0)
    widest = max((_row_width(row, by_id) for row in rows), default=0.0)
    y = MARGIN
    for row in rows:
        tallest = max(by_id[n].height for n in row)
        x = MARGIN + (widest - _row_width(row, by_id)) / 2
        for node in row:
            box = by_id[node]
            box.x = round(x + box.width / 2, 1)
            box.y = round(y + tallest / 2, 1)
            x += box.width + NODE_GAP
        y += tallest + LAYER_GAP
    return by_id


def render_svg(boxes: Mapping[str, NodeBox], edges: Iterable[Any]) -> str:
    """Draw laid-out boxes and their edges as one ``<svg>`` element.

    ``edges`` are objects with ``source``, ``target``, ``conditional`` and ``label``;
    conditional edges are dashed, edges pointing up (loops) bend around the right side.
    """
    width = max((b.x + b.width / 2 for b in boxes.values()), default=0.0) + MARGIN
    height = max((b.y + b.height / 2 for b in boxes.values()), default=0.0) + MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dd-topology" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="12">',
        '<defs><marker id="dd-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
    ]
    for edge in edges:
        if edge.source in boxes and edge.target in boxes:
            parts.append(_edge_svg(boxes[edge.source], boxes[edge.target], edge))
    for box in boxes.values():
        parts.append(_node_svg(box))
    parts.append("</svg>")
    return "\n".join(parts)


# --- layout steps ---------------------------------------------------------------------------


def _acyclic(
    nodes: list[str], edges: list[tuple[str, str]], order: Mapping[str, int]
) -> list[tuple[str, str]]:
    """The edges with every back edge (one closing a cycle) reversed."""
    successors: dict[str, list[str]] = {n: [] for n in nodes}
    for s, t in edges:
        successors[s].append(t)
    state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
    back: set[tuple[str, str]] = set()
    for root in sorted(nodes, key=order.__getitem__):
        if root in state:
            continue
        stack = [(root, iter(sorted(successors[root], key=order.__getitem__)))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(sorted(successors[child], key=order.__getitem__))))
    return [(t, s) if (s, t) in back else (s, t) for s, t in edges]


def _layers(
    nodes: list[str], edges: list[tuple[str, str]], order: Mapping[str, int]
) -> dict[str, int]:
    """Longest-path layering of an acyclic edge list; ``__end__`` goes to the last layer."""
    predecessors: dict[str, list[str]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for s, t in edges:
        predecessors[t].append(s)
        indegree[t] += 1
    successors: dict[str, list[str]] = {n: [] for n in nodes}
    for s, t in edges:
        successors[s].append(t)
    layer: dict[str, int] = {}
    ready = sorted((n for n in nodes if indegree[n] == 0), key=order.__getitem__)
    while ready:
        node = ready.pop(0)
        layer[node] = max((layer[p] + 1 for p in predecessors[node]), default=0)
        for child in successors[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
        ready.sort(key=order.__getitem__)
    if END in layer and len(layer) > 1:
        layer[END] = max(v for k, v in layer.items() if k != END) + 1
    return layer


def _order_layers(
    layers: Mapping[str, int], edges: list[tuple[str, str]], order: Mapping[str, int]
) -> list[list[str]]:
    """Order the nodes of each layer by the barycenter of their neighbours."""
    count = 1 + max(layers.values(), default=-1)
    rows: list[list[str]] = [[] for _ in range(count)]
    for node in sorted(layers, key=order.__getitem__):
        rows[layers[node]].append(node)
    up: dict[str, list[str]] = {n: [] for n in layers}
    down: dict[str, list[str]] = {n: [] for n in layers}
    for s, t in edges:
        down[s].append(t)
        up[t].append(s)
    for sweep in range(SWEEPS):
        indices = range(1, count) if sweep % 2 == 0 else range(count - 2, -1, -1)
        neighbours = up if sweep % 2 == 0 else down
        for i in indices:
            ref = rows[i - 1] if sweep % 2 == 0 else rows[i + 1]
            position = {n: p for p, n in enumerate(ref)}
            current = {n: p for p, n in enumerate(rows[i])}
            keys = {
                n: (_barycenter(n, neighbours, position, current[n]), order[n]) for n in rows[i]
            }
            rows[i] = sorted(rows[i], key=keys.__getitem__)
    return rows


def _barycenter(
    node: str, neighbours: Mapping[str, list[str]], position: Mapping[str, int], current: int
) -> float:
    placed = [position[n] for n in neighbours[node] if n in position]
    return sum(placed) / len(placed) if placed else float(current)


def _row_width(row: list[str], boxes: Mapping[str, NodeBox]) -> float:
    return sum(boxes[n].width for n in row) + NODE_GAP * max(0, len(row) - 1)


# --- drawing --------------------------------------------------------------------------------


def _node_svg(box: NodeBox) -> str:
    from xml.sax.saxutils import escape  # here: it imports urllib.request, http.client

    left, top = box.x - box.width / 2, box.y - box.height / 2
    radius = box.height / 2 if box.terminal else 6
    fill = "#eeeeee" if box.terminal else ("#ffe0b2" if box.rerun else "#ffffff")
    stroke = "#e65100" if box.rerun else "#555555"
    text_y = box.y - (NOTE_HEIGHT / 2 if box.note else 0) + 4
    parts = [
        f'<g class="dd-node" data-node="{escape(box.id, {chr(34): "&quot;"})}">',
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" '
        f'rx="{radius:.1f}" fill="{fill}" stroke="{stroke}"/>',
        f'<text x="{box.x:.1f}" y="{text_y:.1f}" text-anchor="middle">{escape(box.label)}</text>',
    ]
    if box.note:
        parts.append(
            f'<text class="dd-count" x="{box.x:.1f}" y="{text_y + NOTE_HEIGHT:.1f}" '
            f'text-anchor="middle" font-size="11" fill="{stroke}">{escape(box.note)}</text>'
        )
    parts.append("</g>")
    return "".join(parts)


def _edge_svg(source: NodeBox, target: NodeBox, edge: Any) -> str:
    from xml.sax.saxutils import escape  # here: it imports urllib.request, http.client

    dash = ' stroke-dasharray="5,4"' if edge.conditional else ""
    if target.layer > source.layer:
        x1, y1 = source.x, source.y + source.height / 2
        x2, y2 = target.x, target.y - target.height / 2
        path = (
            f"M {x1:.1f} {y1:.1f} C {x1:.1f} {y1 + 30:.1f}, "
            f"{x2:.1f} {y2 - 30:.1f}, {x2:.1f} {y2:.1f}"
        )
        mid_x, mid_y = (x1 + x2) / 2, (y1 + y2) / 2
    else:  # a loop back up (or sideways): bend around the right-hand side
        x1, y1 = source.x + source.width / 2, source.y
        x2, y2 = target.x + target.width / 2, target.y
        bend = max(x1, x2) + 40
        path = f"M {x1:.1f} {y1:.1f} C {bend:.1f} {y1:.1f}, {bend:.1f} {y2:.1f}, {x2:.1f} {y2:.1f}"
        mid_x, mid_y = bend - 10, (y1 + y2) / 2
    parts = [
        f'<path class="dd-edge" d="{path}" fill="none" stroke="#555"{dash} '
        'marker-end="url(#dd-arrow)"/>'
    ]
    label = getattr(edge, "label", None)
    if label and label != edge.target:
        parts.append(
            f'<text x="{mid_x:.1f}" y="{mid_y:.1f}" font-size="10" fill="#555">'
            f"{escape(label)}</text>"
        )
    return "".join(parts)
