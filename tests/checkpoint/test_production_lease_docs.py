"""The lease and once queries of docs/production.md run and show what the doc says."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest

from durable_debug import Command, StateGraph, interrupt, once
from durable_debug._sync import run_sync
from durable_debug.checkpoint.url import saver_from_url

DOC = Path(__file__).resolve().parents[2] / "docs" / "production.md"
NAMES = ("leases-held", "once-results", "abandoned-threads")


def documented_queries() -> dict[tuple[str, str], str]:
    text = DOC.read_text()
    found = re.findall(r"<!-- query: (\S+) (\S+) -->\s*```sql\n(.*?)```", text, re.DOTALL)
    return {(name, dialect): sql for name, dialect, sql in found if name in NAMES}


def test_each_query_is_documented_for_both_databases() -> None:
    assert set(documented_queries()) == {(n, d) for n in NAMES for d in ("sqlite", "postgres")}


class Order(TypedDict):
    receipt: str
    ok: str


def charge_graph(saver: Any) -> Any:
    def charge(state: Order) -> dict[str, Any]:
        receipt = once(lambda: "receipt-1")
        return {"receipt": receipt, "ok": interrupt("ok?")}

    return (
        StateGraph(Order)
        .add_node("charge", charge)
        .add_edge("__start__", "charge")
        .compile(checkpointer=saver)
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "sqlite":
        return "sqlite", f"sqlite:///{tmp_path / 'p.db'}"
    return "postgres", request.getfixturevalue("postgres_db")


def run(dialect: str, url: str, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    if dialect == "sqlite":
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return list(conn.execute(sql, params))
    import psycopg

    with psycopg.connect(url) as conn:
        return list(conn.execute(sql, params).fetchall())


def test_the_documented_queries_show_holders_once_results_and_dead_runs(
    store: tuple[str, str],
) -> None:
    dialect, url = store
    queries = {name: sql for (name, d), sql in documented_queries().items() if d == dialect}
    with saver_from_url(url) as saver:
        graph = charge_graph(saver)
        config = {"configurable": {"thread_id": "order-9"}}
        graph.invoke({"receipt": "", "ok": ""}, config)
        # Given back when it ended: on PostgreSQL the give-back is sent as the run returns
        # and another connection sees the row gone once the server ran it (docs/production).
        deadline = time.monotonic() + 30
        while run(dialect, url, queries["leases-held"], {}):
            assert time.monotonic() < deadline, "the finished run's lease was never given back"
            time.sleep(0.01)

        once_rows = run(dialect, url, queries["once-results"], {"thread_id": "order-9"})
        assert len(once_rows) == 1 and once_rows[0][2] == "msgpack"

        # A run that died holding the thread: its lease row stays, and expires.
        run_sync(saver._lease_acquire("order-9", "dead-token", "gone:1", 0.2))
        held = run(dialect, url, queries["leases-held"], {})
        assert [row[:2] for row in held] == [("order-9", "gone:1")]
        deadline = time.monotonic() + 30
        while not run(dialect, url, queries["abandoned-threads"], {}):
            assert time.monotonic() < deadline, "the dead lease never expired"
            time.sleep(0.02)
        abandoned = run(dialect, url, queries["abandoned-threads"], {})
        assert [row[:2] for row in abandoned] == [("order-9", "gone:1")]
        assert saver.list_abandoned_threads() == ["order-9"]
        assert graph.invoke(Command(resume="yes"), config, wait=0) == {
            "receipt": "receipt-1",
            "ok": "yes",
        }
        assert run(dialect, url, queries["abandoned-threads"], {}) == []
