"""The SQL in docs/production.md runs on a real SQLite store and shows what the doc says."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, Command, SqliteSaver, StateGraph, interrupt
from durable_debug.inspect import prune

DOC = Path(__file__).resolve().parents[2] / "docs" / "production.md"


def queries() -> dict[str, str]:
    found = re.findall(r"<!-- query: (\S+) -->\s*```sql\n(.*?)```", DOC.read_text(), re.DOTALL)
    return dict(found)


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


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "prod.db"
    saver = SqliteSaver(str(db))
    _graph(saver).invoke({"n": 0}, {"configurable": {"thread_id": "waits"}})
    moved = {"configurable": {"thread_id": "moved", "allow_graph_change": True}}
    _graph(saver).invoke({"n": 0}, moved)
    _graph(saver, extra=True).invoke(Command(resume="yes"), moved)
    flaky = _graph(saver, fail=[ValueError("no"), ValueError("no")])
    for run in ({"n": 0}, None):
        with pytest.raises(ValueError):
            flaky.invoke(run, {"configurable": {"thread_id": "flaky"}})
    saver.close()
    return db


def _rows(db: Path, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(sql, params).fetchall()
    conn.close()
    return rows


def test_the_doc_has_every_query() -> None:
    assert set(queries()) == {
        "versions",
        "failures",
        "latency",
        "waiting",
        "largest",
        "prune-blobs",
    }


def test_versions_failures_latency_waiting_and_largest(store: Path) -> None:
    sql = queries()
    versions = _rows(store, sql["versions"])
    assert [row[0] for row in versions].count("moved") == 2  # the graph changed there
    assert [row[0] for row in versions].count("waits") == 1
    failures = _rows(store, sql["failures"])
    assert {(row[0], row[3]) for row in failures} == {
        ("flaky", "__error__"),
        ("flaky", "__failures__"),
    }
    samples, mean_ms, max_ms = _rows(store, sql["latency"])[0]
    assert samples > 0 and 0 <= mean_ms <= max_ms
    waiting = _rows(store, sql["waiting"])
    assert [row[0] for row in waiting] == ["waits"]  # "moved" was answered, "flaky" failed
    largest = _rows(store, sql["largest"])
    assert {row[0] for row in largest} == {"waits", "moved", "flaky"}


def test_the_prune_query_names_the_blobs_prune_deletes(store: Path) -> None:
    preview = prune(SqliteSaver(str(store)), keep_last=1, thread_ids=["moved"], dry_run=True)
    ids = json.dumps(list(preview["checkpoint_id"]))
    named = _rows(store, queries()["prune-blobs"], {"thread": "moved", "ids": ids})
    count = "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'moved'"
    before = _rows(store, count)[0][0]
    saver = SqliteSaver(str(store))
    prune(saver, keep_last=1, thread_ids=["moved"])
    saver.close()
    assert named and before - _rows(store, count)[0][0] == len(named)
