"""The graph-version, failure, health and prune queries of docs/production.md run on SQLite
and PostgreSQL stores and show what the doc says."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, Command, SqliteSaver, StateGraph, interrupt
from durable_debug.inspect import prune

DOC = Path(__file__).resolve().parents[2] / "docs" / "production.md"


NAMES = ("versions", "failures", "latency", "waiting", "largest", "prune-blobs")


def documented_queries() -> dict[tuple[str, str], str]:
    text = DOC.read_text()
    found = re.findall(r"<!-- query: (\S+) (\S+) -->\s*```sql\n(.*?)```", text, re.DOTALL)
    return {(name, dialect): sql for name, dialect, sql in found if name in NAMES}


class S(TypedDict, total=False):
    n: int
    answer: str


def _graph(saver: Any, *, extra: bool = False, fail: list[Exception] | None = None) -> Any:
    def work(state: S) -> S:
        if fail:
            raise fail.pop(0)
        return {"n": state.get("n", 0) + 1}

    def ask(state: S) -> S:
        return {"answer": interrupt("ok?")}

    builder = StateGraph(S)
    builder.add_node("work", work)
    builder.add_node("ask", ask)
    builder.add_edge(START, "work")
    if extra:
        builder.add_node("more", work)
        builder.add_edge("work", "more")
        builder.add_edge("more", "ask")
    else:
        builder.add_edge("work", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """(dialect, saver) holding three threads: one waiting on an interrupt, one whose graph
    changed (allowed), one that failed twice with the same error."""
    if request.param == "sqlite":
        saver: Any = SqliteSaver(str(tmp_path / "prod.db"))
    else:
        from durable_debug.checkpoint.postgres import PostgresSaver

        saver = PostgresSaver(request.getfixturevalue("postgres_db"))
    _graph(saver).invoke({"n": 0}, {"configurable": {"thread_id": "waits"}})
    moved = {"configurable": {"thread_id": "moved", "allow_graph_change": True}}
    _graph(saver).invoke({"n": 0}, moved)
    _graph(saver, extra=True).invoke(Command(resume="yes"), moved)
    flaky = _graph(saver, fail=[ValueError("no"), ValueError("no")])
    for run in ({"n": 0}, None):
        with pytest.raises(ValueError):
            flaky.invoke(run, {"configurable": {"thread_id": "flaky"}})
    yield request.param, saver
    saver.close()


def _raw(store: tuple[str, Any], sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    dialect, saver = store
    if dialect == "sqlite":
        with sqlite3.connect(saver.path) as conn:
            rows = conn.execute(sql, params or {}).fetchall()
        conn.close()
        return rows
    import psycopg

    with psycopg.connect(saver.conn_string) as conn:
        return list(conn.execute(sql, params or {}).fetchall())


def _rows(store: tuple[str, Any], name: str, params: Any = None) -> list[tuple[Any, ...]]:
    return _raw(store, documented_queries()[(name, store[0])], params)


def test_the_doc_has_every_query_for_both_databases() -> None:
    assert set(documented_queries()) == {(n, d) for n in NAMES for d in ("sqlite", "postgres")}


def test_versions_failures_latency_waiting_and_largest(store: tuple[str, Any]) -> None:
    versions = _rows(store, "versions")
    assert [row[0] for row in versions].count("moved") == 2  # the graph changed there
    assert [row[0] for row in versions].count("waits") == 1
    failures = _rows(store, "failures")
    assert {(row[0], row[3]) for row in failures} == {
        ("flaky", "__error__"),
        ("flaky", "__failures__"),
    }
    samples, mean_ms, max_ms = _rows(store, "latency")[0]
    assert samples > 0 and 0 <= mean_ms <= max_ms
    waiting = _rows(store, "waiting")
    assert [row[0] for row in waiting] == ["waits"]  # "moved" was answered, "flaky" failed
    largest = _rows(store, "largest")
    assert {row[0] for row in largest} == {"waits", "moved", "flaky"}


def test_the_prune_query_names_the_blobs_prune_deletes(store: tuple[str, Any]) -> None:
    _, saver = store
    preview = prune(saver, keep_last=1, thread_ids=["moved"], dry_run=True)
    ids = json.dumps(list(preview["checkpoint_id"]))
    named = _rows(store, "prune-blobs", {"thread": "moved", "ids": ids})
    count = "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'moved'"
    before = _raw(store, count)[0][0]
    prune(saver, keep_last=1, thread_ids=["moved"])
    assert named and before - _raw(store, count)[0][0] == len(named)
