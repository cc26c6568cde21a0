"""The thread list from one query agrees with reading every thread, on both SQLite layouts."""

from __future__ import annotations

import contextlib
import gc
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from durable_debug import Command, SqliteSaver
from durable_debug.checkpoint.errors import StoreClosedError
from durable_debug.checkpoint.langgraph_sqlite import LangGraphSqliteReader
from durable_debug.checkpoint.latest import alatest_heads
from durable_debug.cli import demo_graph
from durable_debug.inspect.listing import _athread_by_thread, athread_listing
from support.langgraph_app import build_app, run_app


def threads(config_ids: list[str]) -> list[dict[str, Any]]:
    return [{"configurable": {"thread_id": t}} for t in config_ids]


async def test_own_layout_listing_matches_reading_each_thread(tmp_path: Path) -> None:
    db = tmp_path / "own.db"
    async with SqliteSaver(str(db)) as saver:
        done, paused, failed, updated = threads(["done", "paused", "failed", "updated"])
        for cfg in (done, paused, failed):
            graph = demo_graph(saver)  # each build fails the "body" section once
            with contextlib.suppress(ConnectionError):
                await graph.ainvoke({"topic": "t"}, cfg)
        await graph.ainvoke(None, done)
        await graph.ainvoke(Command(resume="ok"), done)
        await graph.ainvoke(None, paused)
        await graph.aupdate_state(updated, {"topic": "t", "sections": ["a", "b"]}, as_node="plan")
        fast = await athread_listing(saver)
        assert await alatest_heads(saver) is not None  # the one-query path was taken
        slow = await _athread_by_thread(saver)
    assert fast == sorted(slow)
    assert [(row.thread_id, row.checkpoints, row.step, row.status) for row in fast] == [
        ("done", 6, 4, "done"),
        ("failed", 3, 1, "failed at write"),
        ("paused", 4, 2, "paused on 1 interrupt(s) at review"),
        ("updated", 1, 0, "next write, write"),
    ]


async def test_langgraph_layout_listing_matches_reading_each_thread(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

    db = tmp_path / "lg.db"
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = build_app(LangGraphSqliteSaver(conn))
    run_app(graph)  # job-1: failure, resume, answer, fork paused at review
    failing = {"configurable": {"thread_id": "job-2"}}
    with contextlib.suppress(ConnectionError):
        build_app(LangGraphSqliteSaver(conn)).invoke(
            {"messages": [{"role": "user", "content": "x"}]}, failing
        )
    conn.close()
    reader = LangGraphSqliteReader(db)
    try:
        fast = await athread_listing(reader)
        slow = await _athread_by_thread(reader)
    finally:
        reader.close()
    assert fast == sorted(slow)
    assert [(r.thread_id, r.checkpoints, r.step) for r in fast] == [
        ("job-1", 7, 3),
        ("job-2", 3, 1),
    ]
    assert fast[0].status == "paused on 1 interrupt(s) at review"
    # "b" failed; "a" and "c" ran in parallel threads and may or may not have saved first.
    assert fast[1].status.startswith("failed at research")


async def test_the_collector_is_back_on_after_a_listing_and_after_a_failed_one(
    tmp_path: Path,
) -> None:
    async with SqliteSaver(str(tmp_path / "own.db")) as saver:
        with contextlib.suppress(ConnectionError):  # the demo fails its first build
            await demo_graph(saver).ainvoke({"topic": "t"}, threads(["a"])[0])
        assert [row.thread_id for row in await athread_listing(saver)] == ["a"]
        assert gc.isenabled()
    with pytest.raises(StoreClosedError):
        await athread_listing(saver)
    assert gc.isenabled()
