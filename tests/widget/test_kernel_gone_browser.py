"""After a kernel restart the widget says at once, and plainly, that its kernel is gone and
what to do, in JupyterLab and in Notebook 7: not only at the next click."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from live_cells import cells
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: a front end and a kernel on a small shared machine."""

GONE = (
    "The kernel was restarted: this widget is no longer connected to it, so what it shows may "
    "be out of date and its buttons do nothing. Re-run the cells that build the graph and show "
    "this widget."
)


def test_a_kernel_restart_is_said_at_once_and_stays_said(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    frontend.write_notebook("gone.ipynb", cells("gone-1"))
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, "gone.ipynb")
        labserver.run_all(page)
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 4", timeout=WAIT_MS
        )
        widget = page.locator(".dd-root")
        message = widget.locator(".dd-error")
        expect(message).to_be_hidden()

        # Kernel > Restart Kernel…, confirmed in the dialog, as a user does it.
        page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
        page.locator(".jp-Dialog .jp-mod-accept").click(timeout=WAIT_MS)
        expect(message).to_have_text(GONE, timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / f"kernel-gone-{frontend.frontend}.png"))

        # A click afterwards changes nothing of it: the one message, no other error beside it.
        widget.locator(".dd-mark").first.click()
        expect(message).to_have_text(GONE)
    finally:
        page.close()
    assert labserver.widget_errors(errors) == []
