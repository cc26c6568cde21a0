"""The standalone export in headless Chromium: what a person sees when they open the file.

Each test writes ``render_html(data)`` to a temp file, opens it over ``file://``, clicks like a
user would and asserts on the page's text. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import expect

from durable_debug.inspect.dag import dag_from_wire
from durable_debug.inspect.html import render_html

pytestmark = pytest.mark.browser


@pytest.fixture
def open_export(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """``open_export(data, dark=False)`` → a Playwright page showing that export, rendered.

    After the test, each page must have raised no script error, opened no dialog and requested
    nothing but the file itself (and the widget's blob: URL).
    """
    opened: list[tuple[Any, list[str], list[str]]] = []

    def open_(data: dict[str, Any], dark: bool = False) -> Any:
        path = tmp_path / f"export-{len(opened)}.html"
        path.write_text(render_html(data, title="durable_debug test"), encoding="utf-8")
        page = browser.new_page(
            viewport={"width": 1280, "height": 900}, color_scheme="dark" if dark else "light"
        )
        errors: list[str] = []
        requests: list[str] = []
        opened.append((page, errors, requests))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: errors.append(f"dialog opened: {dialog.message}"))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-dd-rendered]", timeout=15_000)
        assert page.get_attribute("html", "data-dd-failed") is None
        return page

    yield open_
    for page, errors, requests in opened:
        page.close()
        assert errors == [], errors
        outside = [url for url in requests if not url.startswith(("file:", "blob:", "data:"))]
        assert outside == [], f"the export reached the network: {outside}"


def mark(checkpoint_id: str) -> str:
    """CSS selector of a checkpoint's mark in the DAG."""
    return f'.dd-mark[data-id="{checkpoint_id}"]'


def detail_of(page: Any, checkpoint_id: str) -> Any:
    """Wait until the detail panel shows a checkpoint, and return it."""
    page.wait_for_selector(f'.dd-detail-head[data-id="{checkpoint_id}"]', timeout=5_000)
    return page.locator(".dd-detail")


def test_clicking_a_checkpoint_shows_its_state(
    open_export: Any, widget_fixtures: ModuleType, artifacts: Path
) -> None:
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export())
    assert page.locator(".dd-mark").count() == 5
    assert "5 checkpoints · 2 branches" in page.inner_text(".dd-thread")

    page.click(mark(small["tools"]))
    detail = detail_of(page, small["tools"])
    # The messages read as a conversation: each message's role and its text.
    messages = detail.locator('.dd-channel-row[data-channel="messages"] .dd-message')
    assert messages.all_inner_texts() == [
        "USER\nWhat is the capital of France?",
        "ASSISTANT\nLet me look that up.",
        "TOOL\nParis",
    ]
    count = detail.locator('.dd-channel-row[data-channel="count"] .dd-json-number').inner_text()
    assert count == "2"
    assert "gate" in detail.locator(".dd-next").inner_text()
    interrupt = detail.locator(".dd-interrupts").inner_text()
    assert "7c1e5a0d9b2f4e8a" in interrupt and "Send the reply?" in interrupt
    blobs = detail.locator(".dd-blob-table tbody tr")
    assert blobs.count() == 3
    assert "new here" in detail.locator('.dd-blob-table tr[data-channel="count"]').inner_text()
    page.screenshot(path=str(artifacts / "standalone-detail.png"), full_page=True)

    page.click(mark(small["input"]))
    detail = detail_of(page, small["input"])
    assert "(empty state)" in detail.locator(".dd-state").inner_text()


def test_failed_task_and_pending_writes_are_shown(
    open_export: Any, widget_fixtures: ModuleType
) -> None:
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export())
    assert "dd-has-error" in (page.get_attribute(mark(small["fork"]), "class") or "")
    page.click(mark(small["fork"]))
    tasks = detail_of(page, small["fork"]).locator(".dd-tasks").inner_text()
    assert "ValueError: count 10 is over the limit of 5" in tasks
    assert "audit" in tasks and "11" in tasks


def test_shift_click_shows_the_diff(
    open_export: Any, widget_fixtures: ModuleType, artifacts: Path
) -> None:
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export())
    page.click(mark(small["agent"]))
    detail_of(page, small["agent"])
    page.click(mark(small["fork"]), modifiers=["Shift"])
    row = page.locator('.dd-diff-table tr[data-channel="count"]')
    row.wait_for(timeout=5_000)
    cells = [cell.strip() for cell in row.locator("td").all_inner_texts()]
    assert cells == ["count", "changed", "1", "10"]
    assert page.locator(".dd-diff-table tbody tr").count() == 1, "messages did not change"
    page.screenshot(path=str(artifacts / "standalone-diff.png"), full_page=True)


def test_arrow_keys_walk_the_graph(open_export: Any, widget_fixtures: ModuleType) -> None:
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export())
    page.click(mark(small["agent"]))
    detail_of(page, small["agent"])
    for key, expected in [
        ("ArrowRight", "tools"),
        ("ArrowDown", "fork"),
        ("ArrowLeft", "agent"),
        ("ArrowLeft", "start"),
    ]:
        page.keyboard.press(key)
        detail_of(page, small[expected])


def test_export_is_read_only(open_export: Any, widget_fixtures: ModuleType) -> None:
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export())
    page.click(mark(small["tools"]))
    detail_of(page, small["tools"])
    for control in ["Fork", "Rerun from here", "Resume", "Edit"]:
        assert page.get_by_role("button", name=control, exact=True).count() == 0, control
    assert page.locator("textarea").count() == 0


def test_topology_shows_counts_and_reruns(open_export: Any, widget_fixtures: ModuleType) -> None:
    page = open_export(widget_fixtures.small_export())
    agent = page.locator('.dd-topo-node[data-node="agent"]')
    assert agent.text_content() == "agent ×2"
    assert "dd-rerun" in (agent.get_attribute("class") or "")
    assert "1 re-execution" in page.inner_text(".dd-count-table")


def test_dark_theme_is_readable(
    open_export: Any, widget_fixtures: ModuleType, artifacts: Path
) -> None:
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export(), dark=True)
    page.click(mark(small["tools"]))
    detail_of(page, small["tools"])
    background, text = page.evaluate(
        """() => { const s = getComputedStyle(document.querySelector('.dd-root'));
                   return [s.backgroundColor, s.color]; }"""
    )
    assert luminance(background) < 0.2 < 0.6 < luminance(text), (background, text)
    page.screenshot(path=str(artifacts / "standalone-dark.png"), full_page=True)


def test_hostile_values_show_as_text(open_export: Any, widget_fixtures: ModuleType) -> None:
    small = widget_fixtures.SMALL
    data = widget_fixtures.small_export()
    hostile = '</script><img src=x onerror="alert(1)"><b>bold</b>'
    data["details"][small["tools"]]["values"]["messages"] = [hostile]
    page = open_export(data)
    page.click(mark(small["tools"]))
    state = detail_of(page, small["tools"]).locator(".dd-state")
    assert json.dumps(hostile) in state.inner_text()
    assert state.locator("img, b").count() == 0


def test_large_thread_renders_and_answers_clicks(
    open_export: Any, widget_fixtures: ModuleType, artifacts: Path
) -> None:
    data = widget_fixtures.large_export(2000, forks=5)
    page = open_export(data)
    assert "2000 checkpoints · 6 branches" in page.inner_text(".dd-thread")
    latest = next(node for node in dag_from_wire(data["dag"])["nodes"] if node["is_latest"])
    page.click(mark(latest["id"]))
    detail = detail_of(page, latest["id"])
    assert f"step {latest['step']}" in detail.locator(".dd-detail-head").inner_text()
    page.screenshot(path=str(artifacts / "standalone-large.png"))

    # Scroll back to the start of the thread: the first checkpoints are drawn and clickable.
    page.eval_on_selector(".dd-dag-scroll", "box => { box.scrollLeft = 0; box.scrollTop = 0; }")
    first = dag_from_wire(data["dag"])["nodes"][0]
    page.click(mark(first["id"]))
    assert "step -1" in detail_of(page, first["id"]).locator(".dd-detail-head").inner_text()


def luminance(css_color: str) -> float:
    """Relative luminance (0 black … 1 white) of an ``rgb(...)`` colour."""
    channels = css_color[css_color.index("(") + 1 : css_color.index(")")].split(",")[:3]
    r, g, b = (float(c) / 255 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("how", ["window", "output area"])
def test_the_layout_works_from_600_px_wide(
    open_export: Any, widget_fixtures: ModuleType, artifacts: Path, how: str
) -> None:
    """A 600 px window, or a 600 px output area in a wide window (the widget's own width
    decides): the panels stack, each keeps a usable size, nothing overflows sideways."""
    small = widget_fixtures.SMALL
    page = open_export(widget_fixtures.small_export())
    if how == "window":
        page.set_viewport_size({"width": 600, "height": 900})
    else:
        page.eval_on_selector("#durable-debug-root", "el => { el.style.width = '600px'; }")
    page.click(mark(small["tools"]))
    detail_of(page, small["tools"])
    root = page.locator(".dd-root")
    expect(root.locator(".dd-detail-panel .dd-state")).to_contain_text("Paris")
    sizes = page.evaluate(
        """() => Object.fromEntries(
             ['.dd-root', '.dd-dag-panel', '.dd-topology-panel', '.dd-detail-panel'].map((s) => {
               const box = document.querySelector(s).getBoundingClientRect();
               return [s, [Math.round(box.width), Math.round(box.height)]]; }))"""
    )
    root_width = sizes[".dd-root"][0]
    assert root_width <= 600, sizes
    for panel in [".dd-dag-panel", ".dd-topology-panel", ".dd-detail-panel"]:
        width, height = sizes[panel]
        assert width >= root_width - 40 and height >= 120, (panel, sizes)  # stacked, full width
    assert root.evaluate("el => el.scrollWidth <= el.clientWidth"), "the widget overflows sideways"
    page.screenshot(path=str(artifacts / f"standalone-600px-{how.replace(' ', '-')}.png"))


def test_the_export_shows_no_code_panel(open_export: Any, widget_fixtures: ModuleType) -> None:
    """The export cannot fork, rerun or resume, so it does not promise their Python."""
    page = open_export(widget_fixtures.small_export())
    expect(page.locator(".dd-code-panel")).to_be_hidden()
    assert "shows its Python here" not in page.inner_text(".dd-root")


def test_the_graphviz_topology_fits_and_follows_the_dark_theme(
    open_export: Any, widget_fixtures: ModuleType, artifacts: Path
) -> None:
    """A wide graphviz drawing (twelve parallel nodes) fits its panel; in the dark theme its
    page is see-through and its labels and lines are light, not black on white."""
    from typing_extensions import TypedDict

    from durable_debug import END, START, StateGraph
    from durable_debug.inspect.topology import topology_data

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    for i in range(12):
        builder.add_node(f"worker_with_a_long_name_{i}", lambda s: {})
        builder.add_edge(START, f"worker_with_a_long_name_{i}")
        builder.add_edge(f"worker_with_a_long_name_{i}", END)
    topology = topology_data(builder.compile(), {})
    assert topology["svg"], "graphviz's dot is installed in the test environment"
    data = widget_fixtures.small_export()
    data["topology"] = topology
    page = open_export(data, dark=True)
    picture = page.locator(".dd-topology-picture")
    expect(picture.locator("svg text").first).to_be_visible()
    fit = page.evaluate(
        """() => { const box = document.querySelector('.dd-topology-picture');
                   const svg = box.querySelector('svg');
                   return [svg.getBoundingClientRect().width, box.clientWidth]; }"""
    )
    assert fit[0] <= fit[1] + 1, fit
    page_fill, text_fill, line = page.evaluate(
        """() => { const svg = document.querySelector('.dd-topology-picture svg');
                   const style = (el) => getComputedStyle(el);
                   return [style(svg.querySelector('g.graph > polygon')).fill,
                           style(svg.querySelector('text')).fill,
                           style(svg.querySelector('g.edge path')).stroke]; }"""
    )
    assert page_fill in ("transparent", "rgba(0, 0, 0, 0)"), page_fill
    assert luminance(text_fill) > 0.6 and luminance(line) > 0.3, (text_fill, line)
    page.screenshot(path=str(artifacts / "standalone-dark-topology.png"), full_page=True)


def test_a_checkpoint_with_a_finding_is_flagged_and_its_detail_lists_it(
    open_export: Any, tmp_path: Path, artifacts: Path
) -> None:
    """A real run whose node wrote a key its schema lacks (dropped, as LangGraph drops it):
    the exported page flags that checkpoint's mark and lists the finding in its detail."""
    import warnings

    from typing_extensions import TypedDict

    from durable_debug import START, SqliteSaver, StateGraph
    from durable_debug.inspect import html_data

    class Note(TypedDict):
        note: str

    with SqliteSaver(str(tmp_path / "found.db")) as saver:
        graph = (
            StateGraph(Note)
            .add_node("write", lambda s: {"note": "n", "nte": "typo"})
            .add_edge(START, "write")
            .compile(checkpointer=saver)
        )
        cfg = {"configurable": {"thread_id": "found"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph.invoke({"note": ""}, cfg)
        data = html_data(graph, cfg)
        flagged = graph.get_state(cfg).config["configurable"]["checkpoint_id"]
    page = open_export(data)
    expect(page.locator(".dd-badge-finding")).to_have_count(1)
    badge = page.locator(f"{mark(flagged)} .dd-badge-finding")
    expect(badge).to_be_visible()
    page.click(mark(flagged))
    detail = detail_of(page, flagged)
    finding = detail.locator(".dd-findings .dd-finding")
    expect(finding).to_have_count(1)
    expect(finding.locator(".dd-finding-code")).to_have_text("unknown-key")
    expect(finding.locator(".dd-finding-message")).to_contain_text(
        "Node 'write' wrote key 'nte', which the state schema Note does not have"
    )
    page.screenshot(path=str(artifacts / "standalone-finding.png"))
    # a checkpoint without findings has no such section
    first = dag_from_wire(data["dag"])["nodes"][0]["id"]
    page.click(mark(first))
    detail_of(page, first)
    expect(page.locator(".dd-detail .dd-findings")).to_have_count(0)
