"""Notebook 12 as shipped, Run All in JupyterLab and in Notebook 7: the widget shows the app's
thread.

The notebook closes the app's SQLite connection in a later cell; with Run All that cell runs
before the widget's first read reaches the kernel. The widget reads on a connection of its own,
so it shows the thread all the same, keeps answering clicks after the close, and sees the fork
a later cell wrote.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "12_debug_your_langgraph_app.ipynb"
WAIT_MS = 240_000
"""Generous waits on conditions: a front end, a kernel and LangGraph on a small shared machine."""


def test_notebook_12_run_all_shows_its_thread(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    shutil.copy(NOTEBOOK, frontend.root / NOTEBOOK.name)
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, NOTEBOOK.name, timeout_ms=WAIT_MS)
        cells = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
        labserver.run_all(page)
        # Every cell ran, the one closing the app's connection included.
        page.wait_for_function(
            """(last) => {
              const cell = window.jupyterapp.shell.currentWidget.content.widgets[last];
              return (cell.model.executionCount || 0) > 0;
            }""",
            arg=cells - 1,
            timeout=WAIT_MS,
        )
        widget = page.locator(".dd-root")
        thread = widget.locator(".dd-thread")
        expect(thread).to_contain_text("job-1", timeout=WAIT_MS)
        # The first read shows the thread; the fork written by a later cell shows once the
        # widget looks again (its periodic watch, or Refresh).
        widget.locator('[data-action="refresh"]').click()
        expect(thread).to_contain_text("8 checkpoints · 2 branches", timeout=WAIT_MS)
        expect(widget.locator(".dd-error")).to_be_hidden()
        page.screenshot(path=str(artifacts / f"notebook12-run-all-{frontend.frontend}.png"))

        # A click after the app closed its connection still reads the checkpoint.
        widget.locator(".dd-mark").last.click()
        page.wait_for_selector(".dd-root .dd-detail-head", timeout=WAIT_MS)
        expect(widget.locator(".dd-state")).to_contain_text(
            re.compile("notes on (a|b)"), timeout=WAIT_MS
        )
        expect(widget.locator(".dd-error")).to_be_hidden()
        assert "closed database" not in widget.inner_text()
    finally:
        page.close()
    assert labserver.widget_errors(errors) == []
