"""Keyboard in JupyterLab and Notebook 7: j/k walk the DAG and Enter opens the selected
checkpoint's detail, the help popover lists the shortcuts, and Escape gives the keyboard back
to the notebook (a following `b` adds a cell)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from live_cells import cells
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: a front end and a kernel on a small shared machine."""


def test_j_k_enter_help_and_escape_back_to_the_notebook(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    frontend.write_notebook("keys.ipynb", cells("keys-1"))
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, "keys.ipynb", timeout_ms=WAIT_MS)
        labserver.run_all(page)
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 4", timeout=WAIT_MS
        )
        setup = labserver.wait_for_text(page, 0, "IDS ", timeout_ms=WAIT_MS)
        _, step0, after_a, after_b = json.loads(setup.split("IDS ", 1)[1])
        count = "() => window.jupyterapp.shell.currentWidget.content.widgets.length"
        before = page.evaluate(count)
        widget = page.locator(".dd-root")

        # j/k move along the DAG like the arrows; Enter puts the keyboard on the detail.
        widget.locator(f'.dd-mark[data-id="{after_a}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_a}"]', timeout=WAIT_MS)
        page.keyboard.press("j")
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_b}"]', timeout=WAIT_MS)
        page.keyboard.press("k")
        page.keyboard.press("k")
        page.wait_for_selector(f'.dd-detail-head[data-id="{step0}"]', timeout=WAIT_MS)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => { const a = document.activeElement;"
            " return Boolean(a && a.closest && a.closest('.dd-detail')); }",
            timeout=WAIT_MS,
        )
        assert page.evaluate(count) == before  # none of it reached the notebook

        # "?" opens the help; Escape closes it and leaves the keyboard in the widget.
        widget.locator(".dd-mark").first.click()
        page.keyboard.press("?")
        expect(widget.locator(".dd-help")).to_be_visible(timeout=WAIT_MS)
        expect(widget.locator(".dd-help")).to_contain_text("j / k")
        expect(widget.locator(".dd-help")).to_contain_text("Enter")
        page.keyboard.press("Escape")
        expect(widget.locator(".dd-help")).to_be_hidden()
        page.keyboard.press("b")  # still the widget's: no cell added
        assert page.evaluate(count) == before

        # Escape again: the notebook has the keyboard, so `b` adds a cell below.
        page.keyboard.press("Escape")
        page.keyboard.press("b")
        page.wait_for_function(f"() => ({count})() === {before + 1}", timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / f"keys-escape-{frontend.frontend}.png"))
    finally:
        page.close()
    assert labserver.widget_errors(errors) == []
