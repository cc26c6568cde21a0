"""topology: the compiled graph's shape, drawn by graphviz or by the pure-Python layout."""

from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ET

import pytest

from durable_debug.inspect import Recorder, topology, topology_data, topology_svg
from durable_debug.inspect.layout import NodeBox, layered_layout
from durable_debug.inspect.names import short_name
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


# --- hostile node names and a failing `dot` ---------------------------

HTML_LABEL = '<<TABLE HREF="javascript&#58;alert(1)"><TR><TD>click me</TD></TR></TABLE>>'
SCRIPT_END = "</script><script>alert(1)</script>"
ODD = 'back\\slash "quoted" &amp; two\nlines \\N \\G'
HOSTILE_NAMES = [HTML_LABEL, SCRIPT_END, ODD]


def graph_named(engine: str, *names: str):
    """A compiled graph on ``engine`` whose nodes run in a line and carry ``names``."""
    if engine == "langgraph":
        from langgraph.checkpoint.memory import MemorySaver
        from langgraph.graph import END, START, StateGraph
    else:
        from durable_debug import END, START, MemorySaver, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        value: str

    builder = StateGraph(State)
    previous = START
    for name in names:
        builder.add_node(name, lambda state: {"value": "x"})
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=MemorySaver())


def drawn_nodes(svg: str) -> dict[str, list[str]]:
    """data-node → the texts shown in that node's group."""
    root = ET.fromstring(svg)
    return {
        g.get("data-node"): ["".join(t.itertext()) for t in g.iter(f"{SVG}text")]
        for g in root.iter(f"{SVG}g")
        if g.get("data-node") is not None
    }


def assert_inert(svg: str) -> None:
    """Only drawing elements; no link, handler, script, style, reference or scheme anywhere."""
    root = ET.fromstring(svg)
    allowed = {"svg", "g", "polygon", "polyline", "ellipse", "circle", "rect", "line", "path"}
    allowed |= {"text", "defs", "marker"}
    for element in root.iter():
        assert element.tag.startswith(SVG), element.tag
        assert element.tag[len(SVG) :] in allowed, element.tag
        for name, value in element.attrib.items():
            assert not name.lower().startswith("on") and "href" not in name, name
            assert name != "style" and not name.startswith("{"), name
            if name != "data-node":
                assert "javascript" not in value.lower() and "url(" not in value, (name, value)


@pytest.mark.skipif(not dot_available(), reason="needs graphviz `dot` (apt-get install graphviz)")
def test_graphviz_draws_hostile_node_names_as_plain_text(engine):
    g = graph_named(engine, *HOSTILE_NAMES)
    svg = topology_svg(g, {HTML_LABEL: 2, SCRIPT_END: 1}, renderer="graphviz")
    assert_inert(svg)
    nodes = drawn_nodes(svg)
    # Not an HTML label: no table, no link; a long name is cut (inspect.names.short_name).
    assert nodes[HTML_LABEL] == [short_name(HTML_LABEL), "2×"]
    assert nodes[SCRIPT_END] == [SCRIPT_END, "1×"]  # and `dot` no longer fails on it
    assert nodes[ODD] == [short_name(ODD)]  # its line break shown as \u000a, not broken
    data = topology_data(g, renderer="graphviz")
    assert data["svg"] is not None
    assert_inert(data["svg"])


def test_sanitize_svg_keeps_the_drawing_and_drops_everything_active():
    from durable_debug.inspect.topology import sanitize_svg

    hostile = f"""<?xml version="1.0"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="{SVG[1:-1]}" xmlns:xlink="http://www.w3.org/1999/xlink" width="10pt" onload="alert(1)">
<script>alert(2)</script><style>* {{ background: url(http://evil/) }}</style>
<g id="node1" class="node" onclick="alert(3)" style="x"><title>n0</title>
<a xlink:href="javascript:alert(4)" href="javascript:alert(5)"><text>click me</text></a>
<text x="1" fill="url(http://evil/x)" font-family="java&#10;script:x">&lt;b&gt;kept&lt;/b&gt;</text>
<foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onclick="alert(6)">x</div></foreignObject>
<set attributeName="href" to="javascript:alert(7)"/><animate attributeName="onclick"/>
<image href="http://evil/pixel.png"/><use href="#node1"/>
<html:script xmlns:html="http://www.w3.org/1999/xhtml">alert(8)</html:script>
</g></svg>"""
    clean = sanitize_svg(hostile, node_names={"n0": "my node"})
    assert_inert(clean)
    assert "alert" not in clean and "evil" not in clean and "click me" not in clean
    root = ET.fromstring(clean)
    (group,) = root.iter(f"{SVG}g")
    assert group.get("data-node") == "my node" and group.get("class") == "node"
    (text,) = root.iter(f"{SVG}text")
    assert text.text == "<b>kept</b>" and text.get("x") == "1"
    assert text.get("fill") is None and text.get("font-family") is None
    assert root.get("width") == "10pt"


@pytest.mark.parametrize("garbage", ["not svg at all", "<svg><g></svg>", "<html></html>"])
def test_sanitize_svg_refuses_what_is_not_an_svg_drawing(garbage):
    from durable_debug.inspect.topology import DrawingError, sanitize_svg

    with pytest.raises(DrawingError, match="dot"):
        sanitize_svg(garbage)
    with pytest.raises(DrawingError):
        sanitize_svg('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="x">&a;</svg>')


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ('echo "Error: syntax error in line 5" >&2; exit 1', "syntax error in line 5"),
        ("echo '<svg xmlns=\"http://www.w3.org/2000/svg\"><g>'", "does not parse"),
    ],
)
def test_a_failing_dot_falls_back_to_the_python_layout(
    seed, monkeypatch, tmp_path, caplog, script, reason
):
    """A real `dot` on PATH that fails (or prints broken SVG): auto draws with Python."""
    from durable_debug.inspect.topology import DrawingError

    fake = tmp_path / "dot"
    fake.write_text(f"#!/bin/sh\ncat >/dev/null\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    g = seed("loop")["g"]
    with caplog.at_level("WARNING", logger="durable_debug.inspect.topology"):
        data = topology_data(g, {"agent": 1})
        svg = topology_svg(g, renderer="auto")
    assert data["svg"] is None and [n["id"] for n in data["nodes"]][1] == "agent"
    assert 'class="dd-topology"' in svg  # the Python layout
    assert reason in caplog.text
    with pytest.raises(DrawingError, match=reason):
        topology_svg(g, renderer="graphviz")
