"""TimeTravel in a real JupyterLab and a real Notebook 7 with a live kernel, in headless Chromium.

The test starts the front end (token-less, free local port, temp dir), opens a notebook that builds
a small graph, runs it once and shows ``TimeTravel``; then, as a person would: waits for the
DAG, clicks a checkpoint (the state panel shows its values), types an invalid edit (refused,
nothing written), edits a value and presses Fork, then Rerun. The new branch must appear in the
page and in the saver, which a later cell of the same kernel reads back. Screenshots go to
``test-artifacts/fork-lab-*.png`` and ``test-artifacts/fork-notebook-*.png``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from live_cells import cells
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: JupyterLab and a kernel on a small shared machine."""


def test_click_edit_fork_and_rerun(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    frontend.write_notebook("timetravel.ipynb", cells(f"{frontend.frontend}-1"))
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, "timetravel.ipynb", timeout_ms=WAIT_MS)
        # Each front end's own shell: JupyterLab's tree of panels, Notebook 7's single page.
        if frontend.frontend == "notebook":
            assert page.url.startswith(f"{frontend.url}/notebooks/"), page.url
            assert page.locator("#main-panel .jp-NotebookPanel").count() == 1
        else:
            assert page.url.startswith(f"{frontend.url}/lab/tree/"), page.url
        labserver.run_all(page)
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 4", timeout=WAIT_MS
        )
        setup_output = labserver.cell_text(page, 0)
        assert "IDS " in setup_output, setup_output
        input_id, step0, after_a, after_b = json.loads(setup_output.split("IDS ", 1)[1])
        widget = page.locator(".dd-root")
        expect(widget.locator(".dd-thread")).to_contain_text("4 checkpoints · 1 branch")
        page.screenshot(path=str(artifacts / f"fork-{frontend.frontend}-1-dag.png"))

        # The store's health: asked of the kernel, drawn as text.
        widget.locator(".dd-health-button").click()
        size = widget.locator('.dd-health [data-health="size"] td')
        expect(size.nth(1)).to_have_text("4", timeout=WAIT_MS)  # checkpoints of the one thread
        expect(size.nth(0)).to_have_text("1")
        page.screenshot(path=str(artifacts / f"fork-{frontend.frontend}-1b-health.png"))
        widget.locator('.dd-health [data-health-action="close"]').click()
        expect(widget.locator(".dd-health")).to_be_hidden()

        # Click the checkpoint after node a: its state shows in the detail panel.
        widget.locator(f'.dd-mark[data-id="{after_a}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_a}"]', timeout=WAIT_MS)
        expect(widget.locator(".dd-state")).to_contain_text('"a ran"', timeout=WAIT_MS)
        state = widget.locator(".dd-state").inner_text()
        assert '"A"' in state and "b saw" not in state
        page.screenshot(path=str(artifacts / f"fork-{frontend.frontend}-2-selected.png"))

        # Keys typed in the widget stay there: the notebook's shortcuts never fire,
        # arrow keys walk the DAG.
        labserver.check_keys_stay_in_widget(page, widget, after_a, step0, WAIT_MS)

        # A value that is not JSON is refused next to the Fork button; nothing is written.
        widget.locator('.dd-channel-row[data-channel="value"] [data-action="edit"]').click()
        editor = widget.locator('textarea.dd-editor[data-channel="value"]')
        editor.fill("edited without quotes")
        widget.locator('[data-action="fork"]').click()
        refusal = widget.locator(".dd-fork-error")
        expect(refusal).to_contain_text("Channel 'value' is not valid JSON", timeout=WAIT_MS)
        assert widget.locator(".dd-mark").count() == 4

        # A valid edit forks: a new branch, selected, with the edited value.
        editor.fill('"edited"')
        widget.locator('[data-action="fork"]').click()
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 5", timeout=WAIT_MS
        )
        head = widget.locator(".dd-detail-head")
        page.wait_for_function(
            f"() => {{ const h = document.querySelector('.dd-detail-head');"
            f" return h && h.dataset.id !== {json.dumps(after_a)}; }}",
            timeout=WAIT_MS,
        )
        fork_id = head.get_attribute("data-id")
        assert fork_id not in (input_id, step0, after_a, after_b)
        expect(widget.locator(".dd-state")).to_contain_text('"edited"', timeout=WAIT_MS)
        expect(widget.locator(".dd-thread")).to_contain_text("5 checkpoints · 2 branches")
        expect(widget.locator(".dd-code")).to_contain_text("aupdate_state(", timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / f"fork-{frontend.frontend}-3-forked.png"))

        # Rerun from the fork: b runs on the new branch, in the kernel, without a cell.
        widget.locator('[data-action="rerun"]').click()
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 6", timeout=WAIT_MS
        )
        expect(widget.locator(".dd-status")).to_have_text(re.compile("done$"), timeout=WAIT_MS)
        expect(widget.locator(".dd-running")).to_be_hidden(timeout=WAIT_MS)
        expect(widget.locator(".dd-state")).to_contain_text('"b saw edited"', timeout=WAIT_MS)
        rerun_id = head.get_attribute("data-id")
        assert rerun_id not in (fork_id, after_b)
        assert '"edited+B"' in widget.locator(".dd-state").inner_text()
        expect(widget.locator(".dd-code")).to_contain_text("ainvoke(None", timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / f"fork-{frontend.frontend}-4-rerun.png"))

        # The saver, read by the same kernel: one fork of after_a, one checkpoint after it.
        count = labserver.run_cell(page, 2)
        page.wait_for_function(
            "([i, n]) => { const c = window.jupyterapp.shell.currentWidget.content.widgets[i];"
            " return (c.model.executionCount || 0) > n && c.model.outputs.length > 0; }",
            arg=[2, count],
            timeout=WAIT_MS,
        )
        report_text = labserver.cell_text(page, 2)
        assert "REPORT " in report_text, report_text
        rows = {row["id"]: row for row in json.loads(report_text.split("REPORT ", 1)[1])}
        assert len(rows) == 6
        assert rows[fork_id]["parent"] == after_a and rows[fork_id]["source"] == "update"
        assert rows[fork_id]["values"] == {"value": "edited", "log": ["a ran"]}
        assert rows[rerun_id]["parent"] == fork_id and rows[rerun_id]["source"] == "loop"
        assert rows[rerun_id]["values"] == {
            "value": "edited+B",
            "log": ["a ran", "b saw edited"],
        }
        assert rows[after_b]["values"]["value"] == "A+B"  # the first branch is untouched
    finally:
        page.screenshot(path=str(artifacts / f"fork-{frontend.frontend}-last.png"))
        page.close()
    assert labserver.widget_errors(errors) == []
