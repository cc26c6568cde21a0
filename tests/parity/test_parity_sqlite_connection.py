"""``SqliteSaver(sqlite3.connect(path))``, LangGraph's documented way to open a SQLite
checkpointer, on both libraries: the same code, imported from each library's
``checkpoint.sqlite`` module, runs two turns and a resume on a connection it opened itself and
leaves the same history; the connection stays the caller's (still open afterwards)."""

from __future__ import annotations

import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity, durable_api, observe
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def sqlite_saver_class(api: Api) -> Any:
    """``SqliteSaver`` from the library's ``checkpoint.sqlite`` module."""
    if api.name == "langgraph":
        from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

        return LangGraphSqliteSaver
    from durable_debug.checkpoint.sqlite import SqliteSaver

    return SqliteSaver


def _scenario(tmp_path: Path, connect: Any) -> Any:
    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            return {"log": [f"asked {api.interrupt('go on?')}"]}

        builder = api.StateGraph(State).add_node("first", lambda s: {"log": ["first"]})
        builder.add_node("ask", ask).add_edge(api.START, "first").add_edge("first", "ask")
        conn = connect(str(tmp_path / f"{api.name}.db"))
        g = builder.compile(checkpointer=sqlite_saver_class(api)(conn))
        cfg = {"configurable": {"thread_id": "conn"}}
        trace.call("first turn", g.invoke, {"log": []}, cfg)
        trace.call("resumed", g.invoke, api.Command(resume="yes"), cfg)
        trace.history("history", g.get_state_history(cfg))
        trace.note("connection still open", conn.execute("select 1").fetchone() == (1,))
        conn.close()

    return scenario


def test_a_saver_on_a_connection_the_caller_opened(tmp_path: Path):
    def connect(path: str) -> sqlite3.Connection:  # as LangGraph's docs open it
        return sqlite3.connect(path, check_same_thread=False)

    ours = check_parity(_scenario(tmp_path, connect))
    assert ours["resumed"]["log"] == ["first", "asked yes"]
    assert ours["connection still open"] is True


def test_a_default_connection_works_too(tmp_path: Path):
    """``sqlite3.connect(path)`` without ``check_same_thread=False``: LangGraph's saver raises
    ``ProgrammingError`` on its first write from its worker thread; durable_debug's runs."""
    trace = observe(_scenario(tmp_path, sqlite3.connect), durable_api())
    assert trace["resumed"]["log"] == ["first", "asked yes"]
    assert [c["step"] for c in trace["history"]["checkpoints"]] == [2, 1, 0, -1]
