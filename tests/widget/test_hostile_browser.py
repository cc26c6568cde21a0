"""Hostile node names in the exported page, in headless Chromium.

A graph whose nodes are named like a graphviz HTML label with a ``javascript:`` link, like the
end of a ``<script>`` element and like an ``<img onerror>`` runs once; ``export_html`` writes
its page. Opened in Chromium, every name shows as text (in the topology drawn by graphviz, in
the DAG's marks, in the detail panel), and clicking each of them runs nothing:
``window.__pwned`` stays undefined, no dialog opens, no script error, no request leaves the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, MemorySaver, StateGraph
from durable_debug.inspect import export_html, html_data
from durable_debug.inspect.html import render_html
from durable_debug.inspect.names import short_name
from durable_debug.inspect.topology import dot_available

pytestmark = pytest.mark.browser

HTML_LABEL = '<<TABLE HREF="javascript&#58;window.__pwned=1"><TR><TD>click me</TD></TR></TABLE>>'
SCRIPT_END = "</script><script>window.__pwned=2</script>"
IMG = '<img src=x onerror="window.__pwned=3">'
NAMES = (HTML_LABEL, SCRIPT_END, IMG)


class State(TypedDict):
    value: str


def hostile_graph() -> Any:
    """START → each hostile name in turn → END; each node writes its own name."""
    builder = StateGraph(State)
    previous = START
    for name in NAMES:
        builder.add_node(name, lambda state, name=name: {"value": name})
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=MemorySaver())


ACTIVE = "a, script, foreignObject, iframe, img, image, use, [onclick], [onload], [href]"
"""Elements and attributes that could run script or navigate: none may be in the widget."""


def open_page(browser: Any, path: Path, problems: list[str]) -> Any:
    """A Chromium page showing the export at ``path``; script errors, dialogs and requests
    that leave the file are collected in ``problems``."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(("file:", "blob:", "data:"))
            else problems.append(f"request: {request.url}")
        ),
    )
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-dd-rendered]", timeout=30_000)
    assert page.get_attribute("html", "data-dd-failed") is None
    return page


def test_hostile_node_names_show_as_text_and_clicks_run_nothing(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    g = hostile_graph()
    cfg = {"configurable": {"thread_id": IMG}}
    g.invoke({"value": ""}, cfg)
    path = export_html(g, cfg, tmp_path / "hostile.html")  # no counts: the bare names are labels
    problems: list[str] = []
    page = open_page(browser, path, problems)
    try:
        root = page.locator(".dd-root")
        assert IMG in root.locator(".dd-thread").inner_text()

        # The topology: graphviz's drawing when `dot` exists, each name one text, nothing active.
        topology = root.locator(".dd-topology-picture")
        topology.wait_for(timeout=30_000)
        if dot_available():
            assert topology.locator("svg").first.get_attribute("class") != "dd-topology-svg"
        drawn = topology.evaluate("el => el.textContent")
        for name in NAMES:
            label = short_name(name)  # a long name is cut with an ellipsis, whole in the detail
            assert label in drawn, (label, drawn)
            node = topology.locator("g").filter(has_text=label).last
            node.click()
        assert root.locator(ACTIVE).count() == 0

        # The DAG and the detail panel: every checkpoint clicked, the names read back as text.
        marks = root.locator(".dd-mark")
        assert marks.count() == len(NAMES) + 2  # the input, then one per step
        seen = ""
        for index in range(marks.count()):
            mark = marks.nth(index)
            checkpoint = mark.get_attribute("data-id")
            mark.click()
            page.wait_for_selector(f'.dd-detail-head[data-id="{checkpoint}"]', timeout=30_000)
            seen += root.locator(".dd-detail").inner_text()
        for name in NAMES:
            assert name in seen, name
        assert root.locator(ACTIVE).count() == 0
        page.screenshot(path=str(artifacts / "hostile-export.png"), full_page=True)
        assert page.evaluate("() => window.__pwned") is None
    finally:
        page.close()
    assert problems == [], problems


def test_an_active_drawing_is_rebuilt_inert_by_the_page(browser: Any, tmp_path: Path) -> None:
    """Even an SVG that Python did not sanitize (an edited export) runs nothing in the page."""
    g = hostile_graph()
    cfg = {"configurable": {"thread_id": "drawing"}}
    g.invoke({"value": ""}, cfg)
    data = html_data(g, cfg)
    data["topology"]["svg"] = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'width="300" height="120" onload="window.__pwned=\'onload\'">'
        '<g class="node" onclick="window.__pwned=\'onclick\'"><rect width="300" height="40"/>'
        '<text x="10" y="20">safe text</text></g>'
        '<a xlink:href="javascript:window.__pwned=\'link\'"><rect y="40" width="300" height="40"/>'
        '<text x="10" y="60">click me</text></a>'
        '<foreignObject y="80" width="300" height="40"><img xmlns="http://www.w3.org/1999/xhtml" '
        'src="x" onerror="window.__pwned=\'img\'"/></foreignObject>'
        "<script>window.__pwned='script'</script></svg>"
    )
    path = tmp_path / "drawing.html"
    path.write_text(render_html(data), encoding="utf-8")
    problems: list[str] = []
    page = open_page(browser, path, problems)
    try:
        topology = page.locator(".dd-topology-picture")
        topology.wait_for(timeout=30_000)
        assert topology.locator("text").all_text_contents() == ["safe text"]
        assert page.locator(f".dd-root :is({ACTIVE})").count() == 0
        topology.locator("g.node").click()
        topology.click(position={"x": 20, "y": 60})
        assert page.evaluate("() => window.__pwned") is None
    finally:
        page.close()
    assert problems == [], problems
