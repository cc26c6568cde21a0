"""The first view of a big thread in the live widget, in JupyterLab and in Notebook 7 (headless
Chromium, a real kernel): the main run's latest checkpoint selected and in view, its label at
11 px or more, its path from the root highlighted, although forks made later hold the thread's
newest checkpoints.

The notebook builds the thread in its kernel on our ``SqliteSaver`` file, 5,000 checkpoints in
all: one long run of a looping graph, then five forks from along it (an ``aupdate_state``, then
the graph runs on from there), 20 checkpoints each; then it shows ``TimeTravel(g, cfg)``, whose
data reaches the page over the comm. The test reads the saved file itself to know which
checkpoint is the main run's latest (the newest one no fork wrote) and which is the newest of
all (a fork's), and looks at the page as a person would, at a laptop's window size
(``first_view.check_first_view``, shared with the standalone export's test).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from first_view import check_first_view

from durable_debug import SqliteSaver

pytestmark = pytest.mark.browser

WAIT_MS = 180_000
"""Generous waits on conditions: a front end, a kernel writing 5,000 checkpoints and the page
drawing them, on a small shared machine."""

CHECKPOINTS = 5_000
FORKS = 5
FORK_LENGTH = 20
STORE = "big.db"
THREAD = "big-thread"
MAIN = CHECKPOINTS - FORKS * FORK_LENGTH

BUILD = f"""\
from typing_extensions import TypedDict
from durable_debug import END, START, SqliteSaver, StateGraph, TimeTravel

class State(TypedDict):
    n: int
    limit: int
    note: str

async def step(state):
    return {{"n": state["n"] + 1}}

def more(state):
    return "step" if state["n"] < state["limit"] else END

g = (StateGraph(State).add_node("step", step).add_edge(START, "step")
     .add_conditional_edges("step", more, ["step", END])
     .compile(checkpointer=SqliteSaver({STORE!r})))
cfg = {{"configurable": {{"thread_id": {THREAD!r}}}}}
main = {MAIN}                             # the main run: its input, START, the steps
await g.ainvoke({{"n": 0, "limit": main - 2, "note": ""}}, {{**cfg, "recursion_limit": main}})
history = [s async for s in g.aget_state_history(cfg)][::-1]
for k in range({FORKS}):                   # later, forks from along it hold the newest ones
    at = history[(k + 1) * len(history) // {FORKS + 1}]
    limit = at.values["n"] + {FORK_LENGTH - 1}
    fork = {{"note": f"fork {{k}}", "limit": limit}}
    fork = await g.aupdate_state(at.config, fork, as_node="step")
    await g.ainvoke(None, fork)                # then steps on to the limit
print("BUILT", len([s async for s in g.aget_state_history(cfg)]))
"""

SHOW = "TimeTravel(g, cfg)"


def read_saved_thread(store: Path) -> tuple[list[str], str]:
    """Read the saved thread: the main run's latest checkpoint (the newest one no fork wrote)
    followed by the checkpoints leading to it back to the root, and the newest checkpoint."""
    with SqliteSaver(str(store)) as saver:
        saved = list(saver.list({"configurable": {"thread_id": THREAD}}))  # newest first
    assert len(saved) == CHECKPOINTS
    parent = {
        t.config["configurable"]["checkpoint_id"]: (t.parent_config or {})
        .get("configurable", {})
        .get("checkpoint_id")
        for t in saved
    }
    forked = [str(t.checkpoint["channel_values"].get("note", "")).startswith("fork") for t in saved]
    assert forked[0], "a fork holds the newest checkpoint"
    main = next(t for t, f in zip(saved, forked, strict=True) if not f)
    ancestry = [main.config["configurable"]["checkpoint_id"]]
    while parent[ancestry[-1]] is not None:
        ancestry.append(parent[ancestry[-1]])
    return ancestry, saved[0].config["configurable"]["checkpoint_id"]


def test_a_big_thread_opens_on_the_main_runs_latest_checkpoint_in_the_live_widget(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    frontend.write_notebook("big.ipynb", [BUILD, SHOW])
    shot = f"first-view-live-{frontend.frontend}"
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, "big.ipynb", timeout_ms=WAIT_MS)
        labserver.run_all(page)
        printed = labserver.wait_for_text(page, 0, "BUILT ", timeout_ms=WAIT_MS)
        assert f"BUILT {CHECKPOINTS}" in printed, printed
        ancestry, newest = read_saved_thread(frontend.root / STORE)
        main = ancestry[0]
        assert newest != main
        # The widget's DAG, scrolled to as a person scrolls to a cell's output.
        page.wait_for_selector(".dd-root .dd-mark", timeout=WAIT_MS)
        page.locator(".dd-root .dd-dag-scroll").scroll_into_view_if_needed(timeout=WAIT_MS)
        seen = check_first_view(page, main, newest, WAIT_MS)
        # What is highlighted is its own history: its parent in view, and every on-path mark
        # one of the checkpoints the saved thread says lead to it.
        assert ancestry[1] in seen["onPath"], (ancestry[:3], seen)
        assert set(seen["onPathAnywhere"]) <= set(ancestry), (ancestry[:3], seen)
    finally:
        page.screenshot(path=str(artifacts / f"{shot}.png"))
        page.close()
    assert labserver.widget_errors(errors) == []
