"""Recorded calls in the widget's detail, in headless Chromium: the calls of the tasks that
saved a checkpoint, marked replayed or live after a rerun that replayed the recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from durable_debug import MemorySaver
from durable_debug.inspect.export import html_data
from durable_debug.inspect.frames import history_frame
from durable_debug.inspect.html import render_html
from durable_debug.inspect.replay import replaying
from support.replay_graphs import Agent

pytestmark = pytest.mark.browser

CFG = {"configurable": {"thread_id": "t"}}


def test_the_detail_lists_recorded_calls_with_replayed_and_live_marks(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    agent = Agent(MemorySaver())
    agent.graph.invoke({"messages": [("user", "tides")]}, CFG)
    history = history_frame(agent.graph, CFG)
    first = history[history["step"] == -1]["checkpoint_id"].iloc[0]
    agent.prompts["answer"] = "Be verbose."
    with replaying(agent.graph, CFG):
        agent.graph.invoke(None, {"configurable": {"thread_id": "t", "checkpoint_id": first}})
    history = history_frame(agent.graph, CFG)
    rerun_end = history.iloc[-1]["checkpoint_id"]  # saved by the rerun's "answer" step

    path = tmp_path / "calls.html"
    path.write_text(render_html(html_data(agent.graph, CFG), title="calls"), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-dd-rendered]", timeout=15_000)
        page.click(f'.dd-mark[data-id="{rerun_end}"]')
        page.wait_for_selector(f'.dd-detail-head[data-id="{rerun_end}"]', timeout=5_000)
        calls = page.locator(".dd-calls")
        text = calls.inner_text()
        assert "RECORDED CALLS" in text.upper()
        assert "answer" in text
        assert "#0 tool lookup" in text and "#2 chat_model CountingModel" in text
        assert "facts about tides #1" in text
        marks = calls.locator(".dd-call-mark").all_inner_texts()
        assert marks == ["replayed", "replayed", "live", "replayed"]
        live = calls.locator('.dd-call[data-index="2"] .dd-call-live')
        assert live.count() == 1
        calls.screenshot(path=str(artifacts / "recorded-calls.png"))
    finally:
        page.close()
    assert errors == []
