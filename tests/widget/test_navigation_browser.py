"""Getting around a big thread in headless Chromium: the first view, zoom,
pan, the overview strip, jump to a step, search by node, filter errors, expand a run.

The page is the standalone export of a synthetic thread of 6,000 checkpoints with 12 forks
(``large_export``), opened over ``file://``. Every step waits for what the user would see.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import expect

from durable_debug.inspect.html import render_html

pytestmark = pytest.mark.browser

CHECKPOINTS = 6000
FORKS = 12
# Generous: the page holds 6,000 checkpoints and the suite runs on a loaded two-core machine.
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def big(widget_fixtures: ModuleType) -> dict[str, Any]:
    """The export data of the big thread (built once for the module)."""
    data: dict[str, Any] = widget_fixtures.large_export(CHECKPOINTS, forks=FORKS)
    return data


@pytest.fixture
def page(browser: Any, big: dict[str, Any], tmp_path: Path) -> Iterator[Any]:
    """The big thread's export, rendered; after the test, no script error and no dialog."""
    path = tmp_path / "big.html"
    path.write_text(render_html(big, title="durable_debug navigation"), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: errors.append(f"dialog opened: {dialog.message}"))
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-dd-rendered]", timeout=30_000)
    assert page.get_attribute("html", "data-dd-failed") is None
    yield page
    page.close()
    assert errors == [], errors


def in_view(page: Any, selector: str) -> bool:
    """Whether the element's centre lies inside the DAG's visible box."""
    return bool(
        page.evaluate(
            """(selector) => {
                 const el = document.querySelector(selector);
                 if (!el) return false;
                 const box = document.querySelector('.dd-dag-scroll').getBoundingClientRect();
                 const at = el.getBoundingClientRect();
                 const x = at.left + at.width / 2, y = at.top + at.height / 2;
                 return x >= box.left && x <= box.right && y >= box.top && y <= box.bottom;
               }""",
            selector,
        )
    )


def wait_in_view(page: Any, selector: str) -> None:
    """Wait until the element is drawn inside the DAG's visible box."""
    page.wait_for_function(
        """(selector) => {
             const el = document.querySelector(selector);
             if (!el) return false;
             const box = document.querySelector('.dd-dag-scroll').getBoundingClientRect();
             const at = el.getBoundingClientRect();
             const x = at.left + at.width / 2, y = at.top + at.height / 2;
             return x >= box.left && x <= box.right && y >= box.top && y <= box.bottom;
           }""",
        arg=selector,
        timeout=WAIT_MS,
    )


def selected_detail(page: Any) -> Any:
    """The detail header, once the detail of the selected checkpoint is shown."""
    page.wait_for_function(
        """() => {
             const head = document.querySelector('.dd-detail-head');
             const mark = document.querySelector('.dd-mark[aria-current]');
             return head && mark && head.dataset.id === mark.dataset.id;
           }""",
        timeout=WAIT_MS,
    )
    return page.locator(".dd-detail-head")


def scroll_left(page: Any) -> float:
    return float(page.eval_on_selector(".dd-dag-scroll", "box => box.scrollLeft"))


def zoom_level(page: Any) -> str:
    return str(page.inner_text(".dd-zoom-level"))


def test_the_first_view_shows_the_path_to_the_main_runs_latest_checkpoint_selected(
    page: Any, big: dict[str, Any], artifacts: Path
) -> None:
    # The main run: from the root, the oldest child every time (the forks came later).
    children: dict[str | None, list[str]] = {}
    for node in big["dag"]["nodes"]:
        children.setdefault(node["parent"], []).append(node["id"])
    main = min(children[None])
    while main in children:
        main = min(children[main])
    expect(page.locator(f'.dd-detail-head[data-id="{main}"]')).to_be_visible(timeout=WAIT_MS)
    wait_in_view(page, f'.dd-mark[data-id="{main}"][aria-current]')
    # Its history leads in from the left along the highlighted path, runs folded on the way.
    on_path = page.locator(".dd-mark.dd-on-path")
    assert on_path.count() > 3
    assert page.locator(".dd-run").count() > 0
    assert 0 < page.locator(".dd-mark, .dd-run").count() < 1500
    assert page.get_attribute(".dd-path-edges", "d")
    page.screenshot(path=str(artifacts / "navigation-first-view.png"))


def test_zoom_with_buttons_keys_and_ctrl_wheel(
    page: Any, big: dict[str, Any], artifacts: Path
) -> None:
    before = zoom_level(page)
    width = float(page.get_attribute("svg.dd-dag", "width") or 0)
    page.click('[data-nav="zoom-out"]')
    expect(page.locator(".dd-zoom-level")).not_to_have_text(before, timeout=WAIT_MS)
    assert float(page.get_attribute("svg.dd-dag", "width") or 0) < width

    page.focus(".dd-dag-scroll")
    after_button = zoom_level(page)
    page.keyboard.press("+")
    expect(page.locator(".dd-zoom-level")).not_to_have_text(after_button, timeout=WAIT_MS)
    after_key = zoom_level(page)

    box = page.locator(".dd-dag-scroll").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.keyboard.down("Control")
    page.mouse.wheel(0, 400)
    page.keyboard.up("Control")
    expect(page.locator(".dd-zoom-level")).not_to_have_text(after_key, timeout=WAIT_MS)

    page.click('[data-nav="fit"]')
    page.wait_for_function(
        """() => { const svg = document.querySelector('svg.dd-dag');
                   const box = document.querySelector('.dd-dag-scroll');
                   return +svg.getAttribute('width') <= box.clientWidth + 1
                       || +svg.getAttribute('height') <= box.clientHeight + 1; }""",
        timeout=WAIT_MS,
    )
    page.screenshot(path=str(artifacts / "navigation-fit.png"))
    # That far out, checkpoints are dots; a click on one selects it (here the thread's root,
    # where the first branch's edge starts).
    expect(page.locator("svg.dd-dag.dd-dots")).to_have_count(1, timeout=WAIT_MS)
    zoom = float(zoom_level(page).rstrip("%")) / 100
    svg = page.locator("svg.dd-dag").bounding_box()
    start = re.match(r"M([\d.]+) ([\d.]+)", page.get_attribute(".dd-edges", "d") or "")
    assert start, "no edge drawn"
    page.mouse.click(svg["x"] + float(start[1]) * zoom, svg["y"] + float(start[2]) * zoom)
    root = big["dag"]["nodes"][0]["id"]
    expect(page.locator(f'.dd-detail-head[data-id="{root}"]')).to_be_visible(timeout=WAIT_MS)


def test_drag_pans_and_the_overview_moves_the_view(page: Any, big: dict[str, Any]) -> None:
    box = page.locator(".dd-dag-scroll").bounding_box()
    start = scroll_left(page)
    selected = page.get_attribute(".dd-detail-head", "data-id")
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] - 12
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 150, y, steps=5)
    page.mouse.move(x + 300, y, steps=5)
    page.mouse.up()
    page.wait_for_function(
        "(start) => document.querySelector('.dd-dag-scroll').scrollLeft <= start - 250",
        arg=start,
        timeout=WAIT_MS,
    )
    assert page.get_attribute(".dd-detail-head", "data-id") == selected, "a drag selects nothing"

    # The overview's viewport follows, and a click at its left end shows the thread's start.
    overview = page.locator("svg.dd-overview").bounding_box()
    page.mouse.click(overview["x"] + 3, overview["y"] + 3)
    root = big["dag"]["nodes"][0]["id"]
    wait_in_view(page, f'.dd-mark[data-id="{root}"]')
    view_x = float(page.get_attribute(".dd-overview-view", "x") or -1)
    assert view_x < 200, view_x


def test_jump_to_a_step_inside_a_folded_run(page: Any, big: dict[str, Any]) -> None:
    page.fill(".dd-find", "step 1234")
    page.press(".dd-find", "Enter")
    head = selected_detail(page)
    expect(head).to_contain_text("step 1234", timeout=WAIT_MS)
    checkpoint = head.get_attribute("data-id")
    wait_in_view(page, f'.dd-mark[data-id="{checkpoint}"]')
    expect(page.locator(".dd-find-count")).to_have_text("1 of 1", timeout=WAIT_MS)


def test_search_by_node_steps_through_its_checkpoints(page: Any, big: dict[str, Any]) -> None:
    wanted = [
        n["id"] for n in big["dag"]["nodes"] if "agent" in n["writers"] or "agent" in n["next"]
    ]
    page.fill(".dd-find", "agent")
    # The main run's latest checkpoint (selected) is one of them: the count says which.
    expect(page.locator(".dd-find-count")).to_have_text(
        re.compile(rf"^\d+ of {len(wanted)}$"), timeout=WAIT_MS
    )
    at = int(page.inner_text(".dd-find-count").split()[0])
    page.press(".dd-find", "Enter")
    following = at % len(wanted) + 1
    expect(page.locator(".dd-find-count")).to_have_text(
        f"{following} of {len(wanted)}", timeout=WAIT_MS
    )
    first = selected_detail(page).get_attribute("data-id")
    page.press(".dd-find", "Shift+Enter")
    page.press(".dd-find", "Shift+Enter")
    expect(page.locator(".dd-find-count")).to_have_text(
        f"{at - 1} of {len(wanted)}", timeout=WAIT_MS
    )
    second = selected_detail(page).get_attribute("data-id")
    assert first != second and {first, second} <= set(wanted)
    wait_in_view(page, f'.dd-mark[data-id="{second}"]')


def test_filter_errors_and_step_through_them(
    page: Any, big: dict[str, Any], artifacts: Path
) -> None:
    errors = [n for n in big["dag"]["nodes"] if n["errors"] > 0]
    assert errors
    button = page.locator('[data-filter="error"]')
    expect(button.locator(".dd-filter-count")).to_have_text(f" {len(errors)}", timeout=WAIT_MS)
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true", timeout=WAIT_MS)
    expect(page.locator(".dd-find-count")).to_have_text(f"{len(errors)} found", timeout=WAIT_MS)
    page.click('[data-nav="next"]')
    expect(page.locator(".dd-find-count")).to_have_text(f"1 of {len(errors)}", timeout=WAIT_MS)
    page.click('[data-nav="next"]')
    expect(page.locator(".dd-find-count")).to_have_text(f"2 of {len(errors)}", timeout=WAIT_MS)
    checkpoint = selected_detail(page).get_attribute("data-id")
    assert checkpoint in {n["id"] for n in errors}
    mark = f'.dd-mark[data-id="{checkpoint}"]'
    wait_in_view(page, mark)
    assert "dd-match" in (page.get_attribute(mark, "class") or "")
    assert "dd-has-error" in (page.get_attribute(mark, "class") or "")
    expect(page.locator(".dd-detail")).to_contain_text("TimeoutError", timeout=WAIT_MS)
    # The others fade; the overview shows a tick per error.
    assert page.locator("svg.dd-dag.dd-filtering").count() == 1
    ticks = (page.get_attribute(".dd-overview-match", "d") or "").count("M")
    assert 1 < ticks <= len(errors)  # matches within one pixel of the strip share a tick
    page.screenshot(path=str(artifacts / "navigation-errors.png"))


def test_clicking_a_run_expands_it(page: Any) -> None:
    # A run the user can see (the first view shows the main run's history, folded).
    run_id = page.evaluate(
        """() => {
             const box = document.querySelector('.dd-dag-scroll').getBoundingClientRect();
             const seen = [...document.querySelectorAll('.dd-run')].find((run) => {
               const at = run.querySelector('.dd-run-shape').getBoundingClientRect();
               return at.left > box.left && at.right < box.right
                 && at.top > box.top && at.bottom < box.bottom;
             });
             return seen ? seen.dataset.run : null;
           }"""
    )
    assert run_id, "no folded run in view"
    run = page.locator(f'.dd-run[data-run="{run_id}"]')
    count = int(run.locator(".dd-run-count").text_content() or 0)
    assert count >= 3
    marks = page.locator(".dd-mark").count()
    run.locator(".dd-run-shape").click()
    expect(page.locator(f'.dd-run[data-run="{run_id}"]')).to_have_count(0, timeout=WAIT_MS)
    page.wait_for_function(
        "(n) => document.querySelectorAll('.dd-mark').length > n", arg=marks, timeout=WAIT_MS
    )
