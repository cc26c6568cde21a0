"""TimeTravel in a real Notebook 7 with a live kernel, driven in headless Chromium.

Notebook 7 is a JupyterLab application with its own shell and pages, so the widget must render
there too. The test starts Notebook 7 (token-less, free local port, temp dir), opens a notebook
at ``/notebooks/<name>`` that builds a small graph and shows ``TimeTravel``, and runs it; then
waits for the DAG (one mark per checkpoint the setup cell printed), clicks a checkpoint (the
state panel shows its values), edits a value and presses Fork, then Rerun, and reads the saver
back from a later cell of the same kernel. Screenshots go to ``test-artifacts/notebook7-*.png``.
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
"""Generous waits on conditions: Notebook 7 and a kernel on a small shared machine."""


def count_marks(count: int) -> str:
    return f"() => document.querySelectorAll('.dd-root .dd-mark').length === {count}"


def test_render_select_fork_and_rerun_in_notebook7(
    browser: Any, notebook7: Any, labserver: ModuleType, artifacts: Path
) -> None:
    notebook7.write_notebook("timetravel.ipynb", cells("nb7-1"))
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, notebook7, "timetravel.ipynb", timeout_ms=WAIT_MS)
        assert page.url.startswith(f"{notebook7.url}/notebooks/"), page.url
        assert page.locator("#main-panel .jp-NotebookPanel").count() == 1  # Notebook 7's shell
        labserver.run_all(page)

        # The DAG renders: one mark per checkpoint of the thread, as the kernel listed them.
        setup_output = labserver.wait_for_text(page, 0, "IDS ", timeout_ms=WAIT_MS)
        ids = json.loads(setup_output.split("IDS ", 1)[1])
        input_id, step0, after_a, after_b = ids
        page.wait_for_function(count_marks(len(ids)), timeout=WAIT_MS)
        widget = page.locator(".dd-root")
        assert widget.count() == 1
        marks = widget.locator(".dd-mark")
        assert sorted(marks.evaluate_all("ms => ms.map(m => m.dataset.id)")) == sorted(ids)
        expect(widget.locator(".dd-thread")).to_contain_text(f"{len(ids)} checkpoints · 1 branch")
        widget.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "notebook7-1-dag.png"))

        # Click the checkpoint after node a: its state shows in the detail panel.
        widget.locator(f'.dd-mark[data-id="{after_a}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_a}"]', timeout=WAIT_MS)
        expect(widget.locator(".dd-state")).to_contain_text('"a ran"', timeout=WAIT_MS)
        state = widget.locator(".dd-state").inner_text()
        assert '"A"' in state and '"a ran"' in state, state
        assert "b saw" not in state and "A+B" not in state, state

        # Keys typed in the widget stay there: the notebook's shortcuts never fire,
        # arrow keys walk the DAG.
        labserver.check_keys_stay_in_widget(page, widget, after_a, step0, WAIT_MS)
        widget.locator(".dd-state").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "notebook7-2-selected.png"))

        # Edit the value and fork: a new branch, selected, with the edited value.
        widget.locator('.dd-channel-row[data-channel="value"] [data-action="edit"]').click()
        widget.locator('textarea.dd-editor[data-channel="value"]').fill('"edited"')
        widget.locator('[data-action="fork"]').click()
        page.wait_for_function(count_marks(len(ids) + 1), timeout=WAIT_MS)
        page.wait_for_function(
            "(old) => { const h = document.querySelector('.dd-root .dd-detail-head');"
            " return h && h.dataset.id !== old; }",
            arg=after_a,
            timeout=WAIT_MS,
        )
        head = widget.locator(".dd-detail-head")
        fork_id = head.get_attribute("data-id")
        assert fork_id not in ids
        expect(widget.locator(".dd-state")).to_contain_text('"edited"', timeout=WAIT_MS)
        expect(widget.locator(".dd-thread")).to_contain_text("2 branches", timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / "notebook7-3-forked.png"))

        # Rerun from the fork: b runs on the new branch, in the kernel, without a cell.
        widget.locator('[data-action="rerun"]').click()
        page.wait_for_function(count_marks(len(ids) + 2), timeout=WAIT_MS)
        expect(widget.locator(".dd-status")).to_have_text(re.compile("done$"), timeout=WAIT_MS)
        expect(widget.locator(".dd-running")).to_be_hidden(timeout=WAIT_MS)
        expect(widget.locator(".dd-state")).to_contain_text('"b saw edited"', timeout=WAIT_MS)
        rerun_id = head.get_attribute("data-id")
        assert rerun_id not in (*ids, fork_id)
        state = widget.locator(".dd-state").inner_text()
        assert '"edited+B"' in state, state
        page.screenshot(path=str(artifacts / "notebook7-4-rerun.png"))

        # The saver, read by the same kernel: the fork and the rerun's checkpoint after it.
        before = labserver.run_cell(page, 2)
        report_text = labserver.wait_for_text(page, 2, "REPORT ", after=before, timeout_ms=WAIT_MS)
        rows = {row["id"]: row for row in json.loads(report_text.split("REPORT ", 1)[1])}
        assert len(rows) == len(ids) + 2
        assert rows[fork_id]["parent"] == after_a and rows[fork_id]["source"] == "update"
        assert rows[fork_id]["values"] == {"value": "edited", "log": ["a ran"]}
        assert rows[rerun_id]["parent"] == fork_id
        assert rows[rerun_id]["values"] == {
            "value": "edited+B",
            "log": ["a ran", "b saw edited"],
        }
        assert rows[after_b]["values"]["value"] == "A+B"  # the first branch is untouched
        assert {input_id, step0} <= rows.keys()
    finally:
        page.screenshot(path=str(artifacts / "notebook7-last.png"))
        page.close()
    assert labserver.widget_errors(errors) == []
