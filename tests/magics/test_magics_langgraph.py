"""%%graph on an unmodified LangGraph app with LangGraph's sync SqliteSaver."""

from __future__ import annotations

from pathlib import Path

from test_magics_shell import EXTENSION, run


def app_cell(db: Path) -> str:
    return (
        "import sqlite3\n"
        "from langgraph.checkpoint.sqlite import SqliteSaver\n"
        "from langgraph.types import Command\n"
        "from support.langgraph_app import CONFIG, FIRST_INPUT, build_app\n"
        f"conn = sqlite3.connect({str(db)!r}, check_same_thread=False)\n"
        "g = build_app(SqliteSaver(conn))\n"
    )


def test_graph_cell_shows_the_widget_of_a_sync_sqlite_langgraph_app(ip, tmp_path):
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(app_cell(tmp_path / "lg.db"))
    _, printed = run(
        ip,
        "%%graph\n"
        "try:\n"
        "    g.invoke(FIRST_INPUT, CONFIG)\n"
        "except ConnectionError:\n"
        "    pass\n"
        "g.invoke(None, CONFIG)\n",
    )
    assert "No compiled graph" not in printed and "cannot show" not in printed
    assert "research" in printed  # the counts
    assert "TimeTravel thread 'job-1'" in printed
    ip.run_cell("table = %checkpoints job-1")
    assert len(ip.user_ns["table"]) == 4
    assert ip.user_ns["table"]["errors"].sum() == 1


def test_graph_cell_says_why_a_saver_cannot_be_read(ip, tmp_path):
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(app_cell(tmp_path / "lg.db"))
    _, printed = run(
        ip,
        "%%graph\n"
        "try:\n"
        "    g.invoke(FIRST_INPUT, CONFIG)\n"
        "except ConnectionError:\n"
        "    pass\n"
        "conn.close()\n",
    )
    assert "cannot show thread 'job-1'" in printed
    assert "ProgrammingError" in printed and "closed database" in printed
