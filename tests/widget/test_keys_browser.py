"""Keyboard in JupyterLab: Escape gives the keyboard back to the notebook (a following `b`
adds a cell), and the help popover lists the shortcuts."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from live_cells import cells
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: JupyterLab and a kernel on a small shared machine."""


def test_escape_returns_to_the_notebook_and_b_adds_a_cell(
    browser: Any, lab: Any, labserver: ModuleType, artifacts: Path
) -> None:
    lab.write_notebook("keys.ipynb", cells("keys-1"))
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        labserver.open_notebook(page, lab, "keys.ipynb", timeout_ms=WAIT_MS)
        labserver.run_all(page)
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 4", timeout=WAIT_MS
        )
        count = "() => window.jupyterapp.shell.currentWidget.content.widgets.length"
        before = page.evaluate(count)
        widget = page.locator(".dd-root")

        # "?" opens the help; Escape closes it and leaves the keyboard in the widget.
        widget.locator(".dd-mark").first.click()
        page.keyboard.press("?")
        expect(widget.locator(".dd-help")).to_be_visible(timeout=WAIT_MS)
        expect(widget.locator(".dd-help")).to_contain_text("j / k")
        page.keyboard.press("Escape")
        expect(widget.locator(".dd-help")).to_be_hidden()
        page.keyboard.press("b")  # still the widget's: no cell added
        assert page.evaluate(count) == before

        # Escape again: the notebook has the keyboard, so `b` adds a cell below.
        page.keyboard.press("Escape")
        page.keyboard.press("b")
        page.wait_for_function(f"() => ({count})() === {before + 1}", timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / "keys-escape.png"))
    finally:
        page.close()
    assert errors == []
