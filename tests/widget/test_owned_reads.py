"""The widget owns what it reads: it goes on reading a LangGraph app's SQLite file after a later
cell closes the app's own connection, and says plainly what happened, and what to do, when the
store it needs is closed or gone."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TypedDict

from test_timetravel import FrontEnd, open_widget, until

from durable_debug import StateGraph, TimeTravel
from durable_debug.checkpoint.sqlite import SqliteSaver as OurSqliteSaver
from support.langgraph_app import CONFIG, build_app, run_app


class One(TypedDict):
    x: int


def langgraph_app(path: Path) -> tuple[object, sqlite3.Connection]:
    """The LangGraph app on LangGraph's sync SqliteSaver over the user's own connection."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    app = build_app(SqliteSaver(conn))
    run_app(app)
    return app, conn


async def test_closing_the_apps_connection_after_the_widget_leaves_it_working(tmp_path):
    app, conn = langgraph_app(tmp_path / "app.db")
    expected = [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(CONFIG)]
    widget, front = await open_widget(app, CONFIG)
    conn.close()  # a later cell: "the app is done with its file"

    await front.result("refresh")
    assert sorted(n["id"] for n in widget.dag["nodes"]) == sorted(expected)
    detail = await front.select(expected[0])
    assert "publish?" in str(detail)
    assert widget._error == ""


async def test_a_connection_closed_before_the_first_read_does_not_kill_the_widget(tmp_path):
    # Run All: the cell that closes the connection runs before the widget's first read.
    app, conn = langgraph_app(tmp_path / "app.db")
    count = len(list(app.get_state_history(CONFIG)))
    widget = TimeTravel(app, CONFIG)
    conn.close()
    await widget.aready()
    assert len(widget.dag["nodes"]) == count
    assert widget._error == ""


async def test_a_fork_after_the_app_closed_its_store_says_what_happened_and_what_to_do(tmp_path):
    app, conn = langgraph_app(tmp_path / "app.db")
    widget, front = await open_widget(app, CONFIG)
    latest = widget.dag["nodes"][-1]["id"]
    conn.close()
    error = await front.error(
        "fork", checkpoint_id=latest, edits={"topics": '["z"]'}, as_node="chat"
    )
    assert "the store is closed or gone" in error
    assert "Re-run the cell that opens the store" in error
    assert "Cannot operate on a closed database" in error  # the driver's own words, too


async def test_a_store_closed_before_the_widget_reads_is_named_with_what_to_do(tmp_path):
    builder = StateGraph(One)
    builder.add_node("a", lambda state: {"x": 1})
    builder.set_entry_point("a")
    saver = OurSqliteSaver(str(tmp_path / "ours.db"))
    graph = builder.compile(checkpointer=saver)
    await graph.ainvoke({"x": 0}, CONFIG)
    await saver.aclose()
    widget = TimeTravel(graph, CONFIG)
    front = FrontEnd(widget)
    await until(lambda: widget._error != "", "the widget's error")
    assert widget._error.startswith("Cannot read thread 'job-1': the store is closed or gone")
    assert "Re-run the cell that opens the store and builds the app" in widget._error
    assert front.sent  # the error reached the front end
