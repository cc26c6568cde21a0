"""A chat model's tokens in the widget while a Rerun goes, in a real JupyterLab and a real
Notebook 7 with a live kernel, driven in headless Chromium.

The notebook builds a one-node chat graph whose fake model types its answer a token at a time
and stops half way until a later cell sets ``go`` (``token_cells``). The user clicks the
checkpoint before the model's node, presses Rerun and sees the half-written answer while the
run still goes, under the topology's running node; after ``go``, the run ends, the live text
goes and the answer is in the state. Screenshots go to
``test-artifacts/live-text-<front end>-*.png``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import expect
from token_cells import ANSWER, GO, PARTIAL, SETUP, SHOW

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: a front end and a kernel on a small shared machine."""


def test_rerun_shows_the_models_tokens_before_the_run_ends(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    frontend.write_notebook(
        "tokens.ipynb", [SETUP.replace("THREAD", f"tokens-{frontend.frontend}"), SHOW, GO]
    )
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, "tokens.ipynb", timeout_ms=WAIT_MS)
        count = labserver.run_cell(page, 0)
        printed = labserver.wait_for_text(page, 0, "IDS ", count, timeout_ms=WAIT_MS)
        _input, before_agent, _after = json.loads(printed.split("IDS ", 1)[1])
        labserver.run_cell(page, 1)
        widget = page.locator(".dd-root")
        expect(widget.locator(".dd-thread")).to_contain_text("3 checkpoints", timeout=WAIT_MS)
        live = widget.locator(".dd-topology-panel .dd-live")  # under the running node
        expect(live).to_be_hidden()

        widget.locator(f'.dd-mark[data-id="{before_agent}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{before_agent}"]', timeout=WAIT_MS)
        widget.locator('[data-action="rerun"]').click()

        # The model stopped half way: what it wrote so far shows while the run goes.
        text = live.locator('.dd-live-entry[data-node="agent"] .dd-live-text')
        expect(text).to_have_text(PARTIAL, timeout=WAIT_MS)
        expect(text).to_be_in_viewport()
        expect(live.locator(".dd-live-node")).to_have_text("agent")
        expect(widget.locator(".dd-toolbar .dd-running")).to_be_visible()
        expect(widget.locator('.dd-topology-picture [data-node="agent"]')).to_have_class(
            re.compile(r"\bdd-running\b")
        )
        page.screenshot(path=str(artifacts / f"live-text-{frontend.frontend}-1-writing.png"))

        labserver.run_cell(page, 2)  # go on
        expect(widget.locator(".dd-status")).to_have_text(re.compile("done$"), timeout=WAIT_MS)
        expect(live).to_be_hidden(timeout=WAIT_MS)
        expect(widget.locator(".dd-toolbar .dd-running")).to_be_hidden()
        expect(widget.locator(".dd-state")).to_contain_text(ANSWER, timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / f"live-text-{frontend.frontend}-2-done.png"))
    finally:
        page.screenshot(path=str(artifacts / f"live-text-{frontend.frontend}-last.png"))
        page.close()
    assert labserver.widget_errors(errors) == []
