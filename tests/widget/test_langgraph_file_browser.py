"""The widget's standalone page in headless Chromium, for a file LangGraph's SqliteSaver wrote.

The page is built by reading the file without LangGraph or the app (``LangGraphSqliteReader``
through ``SaverView``), as ``durable-debug inspect FILE --thread T --html OUT`` does.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from durable_debug.checkpoint.langgraph_sqlite import LangGraphSqliteReader
from durable_debug.inspect import read_thread
from durable_debug.inspect.export import write_html
from durable_debug.inspect.stored import SaverView
from support.langgraph_app import CONFIG, build_app, run_app

pytestmark = pytest.mark.browser


@pytest.fixture
def page_file(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The page of thread job-1 of a LangGraph-written file, and what LangGraph reports."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "lg.db"
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = build_app(SqliteSaver(conn))
    run_app(graph)
    history = list(graph.get_state_history(CONFIG))
    conn.close()
    reader = LangGraphSqliteReader(db)
    try:
        thread = read_thread(SaverView(reader), CONFIG)  # Playwright keeps a loop running here
    finally:
        reader.close()
    page = write_html(thread, tmp_path / "job-1.html")
    ids = {
        "latest": history[0].config["configurable"]["checkpoint_id"],
        "fanned": next(
            s.config["configurable"]["checkpoint_id"]
            for s in history
            if s.next == ("research",) * 3
        ),
    }
    return page, ids


def test_a_langgraph_file_shows_its_tree_state_error_and_interrupt(browser, page_file) -> None:
    path, ids = page_file
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-dd-rendered]", timeout=15_000)
        assert page.locator(".dd-mark").count() == 7
        assert "7 checkpoints · 2 branches" in page.inner_text(".dd-thread")

        page.click(f'.dd-mark[data-id="{ids["latest"]}"]')
        page.wait_for_selector(f'.dd-detail-head[data-id="{ids["latest"]}"]', timeout=5_000)
        detail = page.locator(".dd-detail")
        # The messages read as a conversation; their raw value (with the class) a click away.
        chat = detail.locator('.dd-channel-row[data-channel="messages"]')
        assert chat.locator(".dd-message").last.inner_text() == "ASSISTANT\nresearching a, b, c"
        chat.locator(".dd-raw > summary").click()
        assert "langchain_core.messages.ai.AIMessage" in chat.inner_text()
        assert "publish?" in detail.locator(".dd-interrupts").inner_text()

        page.click(f'.dd-mark[data-id="{ids["fanned"]}"]')
        page.wait_for_selector(f'.dd-detail-head[data-id="{ids["fanned"]}"]', timeout=5_000)
        tasks = page.locator(".dd-detail .dd-tasks").inner_text()
        assert "search backend timed out on 'b'" in tasks
    finally:
        page.close()
    assert errors == []
