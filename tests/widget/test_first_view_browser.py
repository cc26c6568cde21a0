"""The first view of a big thread in headless Chromium: the main run's latest checkpoint,
selected and in view, at a zoom where the marks' labels read at 11 px or more, with its
path from the root highlighted, although forks made later hold newer checkpoints.

The pages are standalone exports of synthetic threads (``large_export``): 5,000 checkpoints
with 5 forks, and 50,000 with 50, opened over ``file://`` at a laptop's window size. What a
person sees is read by ``first_view.check_first_view``, as in the live widget's test
(test_first_view_live_browser.py, JupyterLab and Notebook 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from first_view import check_first_view

from durable_debug.inspect.html import render_html

pytestmark = pytest.mark.browser

# Generous: the big page holds 50,000 checkpoints and the suite runs on a loaded machine.
WAIT_MS = 120_000


def main_head(nodes: list[dict[str, Any]]) -> str:
    """The main run's latest checkpoint: from the oldest root, the oldest child every time."""
    children: dict[str | None, list[str]] = {}
    for node in nodes:
        children.setdefault(node["parent"], []).append(node["id"])
    at = min(children[None])
    while at in children:
        at = min(children[at])
    return at


@pytest.mark.parametrize(("checkpoints", "forks"), [(5_000, 5), (50_000, 50)])
def test_a_big_thread_opens_on_the_main_runs_latest_checkpoint_readably(
    browser: Any,
    widget_fixtures: Any,
    tmp_path: Path,
    artifacts: Path,
    checkpoints: int,
    forks: int,
) -> None:
    data = widget_fixtures.large_export(checkpoints, forks=forks)
    nodes = data["dag"]["nodes"]
    main = main_head(nodes)
    newest = next(node["id"] for node in nodes if node["is_latest"])
    assert newest != main  # a fork holds the newest checkpoint
    path = tmp_path / "big.html"
    path.write_text(render_html(data, title="first view"), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(path.as_uri(), timeout=WAIT_MS)
        page.wait_for_selector("html[data-dd-rendered]", timeout=WAIT_MS)
        check_first_view(page, main, newest, WAIT_MS)
        page.screenshot(path=str(artifacts / f"first-view-{checkpoints}.png"))
    finally:
        page.close()
    assert errors == [], errors
