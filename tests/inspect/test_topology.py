"""topology: the compiled graph's shape, drawn by graphviz or by the pure-Python layout."""

from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ET

import pytest

from durable_debug.inspect import Recorder, topology, topology_data, topology_svg
from durable_debug.inspect.layout import NodeBox, layered_layout
from durable_debug.inspect.topology import dot_available

SVG = "{http://www.w3.org/2000/svg}"


def test_topology_lists_nodes_edges_and_conditional_edges(seed):
    g = seed("loop")["g"]
    topo = topology(g)
    assert [n.id for n in topo.nodes] == ["__start__", "agent", "tools", "__end__"]
    edges = {(e.source, e.target): e.conditional for e in topo.edges}
    assert edges == {
        ("__start__", "agent"): False,
        ("agent", "tools"): True,
        ("agent", "__end__"): True,
        ("tools", "agent"): False,
    }
    assert {(e.source, e.target) for e in topo.conditional_edges} == {
        ("agent", "tools"),
        ("agent", "__end__"),
    }


async def test_python_drawing_shows_counts_and_reruns(seed):
    ns = seed("rerun_rule")
    with Recorder() as rec:
        await ns["g"].ainvoke({"prep": "", "decision": ""}, ns["cfg"])
        await ns["g"].ainvoke(ns["Command"](resume="yes"), ns["cfg"])
    svg = topology_svg(ns["g"], rec.counts("hitl-1"), renderer="python")
    root = ET.fromstring(svg)  # well-formed SVG
    groups = {g.get("data-node"): g for g in root.iter(f"{SVG}g")}
    assert set(groups) == {"__start__", "prepare", "gate", "__end__"}
    texts = {k: [t.text for t in v.iter(f"{SVG}text")] for k, v in groups.items()}
    assert texts["prepare"] == ["prepare", "1×"]
    assert texts["gate"] == ["gate", "2× (re-ran 1×)"]
    assert groups["gate"].find(f"{SVG}rect").get("fill") == "#ffe0b2"  # highlighted
    assert groups["prepare"].find(f"{SVG}rect").get("fill") == "#ffffff"


def test_python_drawing_of_a_loop_with_conditional_edges(seed):
    g = seed("loop")["g"]
    root = ET.fromstring(topology_svg(g, {"agent": 3, "tools": 2}, renderer="python"))
    paths = list(root.iter(f"{SVG}path"))[1:]  # the first path is the arrow head
    dashed = [p for p in paths if p.get("stroke-dasharray")]
    assert len(paths) == 4 and len(dashed) == 2


def test_layered_layout_puts_edges_downward_and_breaks_cycles():
    boxes = [NodeBox(n, n) for n in ["__start__", "agent", "tools", "__end__"]]
    edges = [("__start__", "agent"), ("agent", "tools"), ("tools", "agent"), ("agent", "__end__")]
    placed = layered_layout(boxes, edges)
    layers = {n: b.layer for n, b in placed.items()}
    assert layers == {"__start__": 0, "agent": 1, "tools": 2, "__end__": 3}
    assert placed["agent"].y < placed["tools"].y < placed["__end__"].y
    wide = [NodeBox(n, n) for n in ["s", "a", "b", "c", "e"]]
    fan = layered_layout(wide, [("s", "a"), ("s", "b"), ("s", "c"), ("a", "e"), ("b", "e")])
    row = sorted((fan[n] for n in "abc"), key=lambda b: b.x)
    assert all(a.x + a.width / 2 < b.x - b.width / 2 for a, b in itertools.pairwise(row))


def test_graphviz_drawing_when_dot_exists_else_a_clear_error(seed):
    g = seed("loop")["g"]
    if dot_available():
        svg = topology_svg(g, {"agent": 3}, renderer="graphviz")
        assert svg.startswith("<svg") and "agent" in svg and "3×" in svg
        assert topology_svg(g, renderer="auto").startswith("<svg")
    else:
        with pytest.raises(RuntimeError, match="apt-get install graphviz"):
            topology_svg(g, renderer="graphviz")
    with pytest.raises(ValueError, match="renderer must be"):
        topology_svg(g, renderer="mermaid")


def test_topology_data_is_the_protocol_shape(seed):
    g = seed("loop")["g"]
    data = topology_data(g, {"agent": 3, "tools": 2}, renderer="python")
    json.dumps(data, allow_nan=False)
    assert data["svg"] is None  # the widget draws it from the positions
    assert [(n["id"], n["count"], n["reruns"]) for n in data["nodes"]] == [
        ("__start__", 0, 0),
        ("agent", 3, 0),
        ("tools", 2, 0),
        ("__end__", 0, 0),
    ]
    assert all(0 < n["x"] < data["width"] and 0 < n["y"] < data["height"] for n in data["nodes"])
    assert {"source": "agent", "target": "tools", "conditional": True} in data["edges"]
    auto = topology_data(g)
    assert (auto["svg"] is not None) == dot_available()


def test_auto_falls_back_to_python_without_dot_on_path(seed, monkeypatch, tmp_path):
    """A fresh machine has no `dot`: an empty PATH makes that real for this test."""
    g = seed("loop")["g"]
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not dot_available()
    assert 'class="dd-topology"' in topology_svg(g, renderer="auto")
    assert topology_data(g)["svg"] is None
    with pytest.raises(RuntimeError, match="not on PATH"):
        topology_svg(g, renderer="graphviz")
