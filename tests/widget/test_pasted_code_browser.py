"""A LangGraph app on LangGraph's own sync ``SqliteSaver``, debugged in JupyterLab and in
Notebook 7 with a live kernel, in headless Chromium, as a person would:

- a 2 MB string in the state is "shown in part"; **Show all** brings it a page at a time
  (the page never holds the whole value), **Show more** the next page;
- shift-click diffs the checkpoint before the change with the one after it: the changed line of
  the long string shows with its context, not two walls of text;
- an edit is forked and the fork rerun from the widget; the code its Code panel shows is then
  pasted into a new cell of the same notebook and run there: it runs without an error (sync
  calls, since the saver has no async methods) and adds checkpoints to the same file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: a front end, a kernel and LangGraph on a small shared machine."""

PAGE_CHARS = 100_000
"""Characters one "Show all" page holds (the widget's page size)."""

SETUP = """\
import json, sqlite3
from typing_extensions import TypedDict
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from durable_debug import TimeTravel

def doc(changed=None):
    lines = [f"line {i}: " + "x" * 60 for i in range(30_000)]  # about 2 MB
    if changed is not None:
        lines[changed] = f"line {changed}: CHANGED"
    return "\\n".join(lines)

class State(TypedDict, total=False):
    topic: str
    doc: str
    notes: list

def research(state):
    return {"notes": [f"notes on {state['topic']}"]}

def revise(state):
    return {"doc": doc(changed=20_000)}

conn = sqlite3.connect("app.sqlite", check_same_thread=False)
app = (StateGraph(State).add_node("research", research).add_node("revise", revise)
       .add_edge(START, "research").add_edge("research", "revise").add_edge("revise", END)
       .compile(checkpointer=SqliteSaver(conn)))
cfg = {"configurable": {"thread_id": "big-1"}}
app.invoke({"topic": "tides", "doc": doc(), "notes": []}, cfg)
ids = [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(cfg)][::-1]
print("IDS " + json.dumps(ids))
"""

SHOW = "TimeTravel(app, cfg)"

PASTE_HERE = "# the widget's code is pasted here"

COUNT = """\
print("COUNT", len(list(app.get_state_history(cfg))))
"""


def count_of(labserver: ModuleType, page: Any, index: int) -> int:
    """Run the counting cell and read the number of checkpoints it printed."""
    before = labserver.run_cell(page, index)
    page.wait_for_function(
        "([i, n]) => { const c = window.jupyterapp.shell.currentWidget.content.widgets[i];"
        " return (c.model.executionCount || 0) > n && c.model.outputs.length > 0; }",
        arg=[index, before],
        timeout=WAIT_MS,
    )
    text = labserver.cell_text(page, index)
    match = re.search(r"COUNT (\d+)", text)
    assert match, text
    return int(match.group(1))


def test_big_values_page_diff_by_line_and_the_code_shown_runs_pasted(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    frontend.write_notebook("pasted.ipynb", [SETUP, SHOW, PASTE_HERE, COUNT])
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    shot = f"pasted-{frontend.frontend}"
    try:
        labserver.open_notebook(page, frontend, "pasted.ipynb", timeout_ms=WAIT_MS)
        for index in (0, 1):
            labserver.run_cell(page, index)
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 4", timeout=WAIT_MS
        )
        setup_output = labserver.cell_text(page, 0)
        assert "IDS " in setup_output, setup_output
        _, _, after_research, after_revise = json.loads(setup_output.split("IDS ", 1)[1])
        widget = page.locator(".dd-root")

        # The 2 MB string is shown in part; Show all brings one page, Show more the next.
        widget.locator(f'.dd-mark[data-id="{after_revise}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_revise}"]', timeout=WAIT_MS)
        row = widget.locator('.dd-channel-row[data-channel="doc"]')
        row.locator('[data-action="show-all"]').click()
        status = row.locator(".dd-page-status")
        expect(status).to_contain_text(f"{PAGE_CHARS:,} of ", timeout=WAIT_MS)
        total = int(status.inner_text().split(" of ", 1)[1].split()[0].replace(",", ""))
        assert total > 1_900_000, total
        assert row.locator(".dd-page").count() == 1
        shown = page.evaluate(
            "() => document.querySelector('.dd-channel-row[data-channel=\"doc\"]')"
            ".textContent.length"
        )
        assert shown < 2 * PAGE_CHARS, shown  # one page in the page, not the whole value
        row.locator(".dd-show-more").click()
        expect(status).to_contain_text(f"{2 * PAGE_CHARS:,} of ", timeout=WAIT_MS)
        assert row.locator(".dd-page").count() == 2
        page.screenshot(path=str(artifacts / f"{shot}-1-pages.png"))

        # Shift-click diff: the one changed line of the long string, with its context.
        widget.locator(f'.dd-mark[data-id="{after_research}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_research}"]', timeout=WAIT_MS)
        widget.locator(f'.dd-mark[data-id="{after_revise}"]').click(modifiers=["Shift"])
        line_diff = page.locator('.dd-diff-table tr[data-path="doc"] .dd-line-diff')
        expect(line_diff).to_contain_text("+line 20000: CHANGED", timeout=WAIT_MS)
        expect(line_diff).to_contain_text("-line 20000: " + "x" * 60)
        assert len(line_diff.inner_text()) < 5_000  # a window around the change, not the text
        page.screenshot(path=str(artifacts / f"{shot}-2-diff.png"))

        # Fork an edit and rerun it from the widget: the code shown is sync.
        widget.locator(f'.dd-mark[data-id="{after_research}"]').click()
        page.wait_for_selector(f'.dd-detail-head[data-id="{after_research}"]', timeout=WAIT_MS)
        widget.locator('.dd-channel-row[data-channel="topic"] [data-action="edit"]').click()
        widget.locator('textarea.dd-editor[data-channel="topic"]').fill('"reefs"')
        widget.locator('[data-action="fork"]').click()
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length === 5", timeout=WAIT_MS
        )
        code = widget.locator(".dd-code")
        expect(code).to_contain_text("app.update_state(", timeout=WAIT_MS)
        widget.locator('[data-action="rerun"]').click()
        expect(code).to_contain_text("app.invoke(None", timeout=WAIT_MS)
        expect(widget.locator(".dd-status")).to_have_text(re.compile("done$"), timeout=WAIT_MS)
        texts = widget.locator(".dd-code-text").all_inner_texts()
        pasted = "\n".join(texts)
        assert "await" not in pasted and ".aupdate_state(" not in pasted, pasted
        assert "app.update_state(" in pasted and "app.invoke(None" in pasted, pasted
        page.screenshot(path=str(artifacts / f"{shot}-3-code.png"))

        # Pasted into a cell of the same notebook, the code runs and adds checkpoints.
        before = count_of(labserver, page, 3)
        page.evaluate(
            """([i, source]) => {
              const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
              cell.model.sharedModel.setSource(source);
            }""",
            [2, pasted],
        )
        ran = labserver.run_cell(page, 2)
        page.wait_for_function(
            "([i, n]) => (window.jupyterapp.shell.currentWidget.content.widgets[i]"
            ".model.executionCount || 0) > n",
            arg=[2, ran],
            timeout=WAIT_MS,
        )
        failures = [o for o in labserver.outputs(page, 2) if o.get("output_type") == "error"]
        assert failures == [], failures
        after = count_of(labserver, page, 3)
        assert after > before, (before, after)
        page.screenshot(path=str(artifacts / f"{shot}-4-pasted.png"))
    finally:
        page.close()
    assert labserver.widget_errors(errors) == []
