"""``durable-debug inspect`` on what LangGraph's own savers wrote: a SQLite file, a schema."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import msgpack
import pytest

from durable_debug.inspect.dag import dag_from_wire
from support.langgraph_app import THREAD, build_app, run_app
from test_cli import Logged, embedded_data, run_cli


@pytest.fixture
def lg_db(tmp_path: Path) -> Path:
    """A file the LangGraph app wrote with LangGraph's sync SqliteSaver, closed."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "lg.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    run_app(build_app(SqliteSaver(conn)))
    conn.close()
    return path


def assert_one_failed_step(out: str, error_writes: int) -> None:
    """The tree marks one checkpoint, the fan-out's, with as many failed tasks as the store
    holds error writes: the research of "b", and, when the machine is slow, each sibling
    LangGraph cancelled because of it (LangGraph saves a ``CancelledError`` write for those)."""
    assert re.findall(r"✗ (\d+) failed", out) == [str(error_writes)]
    assert 1 <= error_writes <= 3


def test_inspect_lists_and_shows_a_langgraph_sqlite_file(lg_db, tmp_path, capsys):
    before = lg_db.read_bytes()
    code, out, err = run_cli(capsys, "inspect", str(lg_db))
    assert code == 0, err
    assert re.search(r"job-1\s+7\s+3\s+paused on 1 interrupt\(s\) at review", out)
    html = tmp_path / "job.html"
    code, out, err = run_cli(capsys, "inspect", str(lg_db), "--thread", THREAD, "--html", str(html))
    assert code == 0, err
    assert "thread 'job-1': 7 checkpoints, 2 branches" in out
    with sqlite3.connect(lg_db) as conn:
        errors = conn.execute("SELECT count(*) FROM writes WHERE channel = '__error__'").fetchone()
    conn.close()
    assert_one_failed_step(out, errors[0])
    assert "⏸ 1 interrupt" in out
    assert "branch 1, forked from step 1" in out
    data = embedded_data(html)
    assert len(dag_from_wire(data["dag"])["nodes"]) == 7
    code, out, _ = run_cli(capsys, "inspect", f"sqlite:///{lg_db}", "--thread", THREAD)
    assert code == 0 and "2 branches" in out
    assert lg_db.read_bytes() == before  # read, never written


def test_a_mistyped_sqlite_url_is_an_error_not_a_new_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "inspect", "sqlite:///typo.db")
    assert (code, out) == (2, "")
    assert err == "durable-debug: error: no such file: sqlite:///typo.db\n"
    assert not (tmp_path / "typo.db").exists()


def test_a_hostile_payload_in_the_file_is_listed_as_data(lg_db, tmp_path, capsys):
    marker = tmp_path / "pwned"
    payload = msgpack.packb(
        msgpack.ExtType(0, msgpack.packb(["os", "system", f"touch {marker}"])), use_bin_type=True
    )
    with sqlite3.connect(lg_db) as conn:
        conn.execute(
            "UPDATE writes SET type = 'msgpack', value = ? WHERE channel = 'notes'", (payload,)
        )
    html = tmp_path / "t.html"
    code, _, err = run_cli(capsys, "inspect", str(lg_db), "--thread", THREAD, "--html", str(html))
    assert code == 0, err
    assert "os.system" in html.read_text()
    assert not marker.exists()


def test_a_broken_latest_checkpoint_is_marked_in_the_listing(lg_db, capsys):
    with sqlite3.connect(lg_db) as conn:
        conn.execute(
            "INSERT INTO checkpoints VALUES ('job-2', '', '1f0', NULL, 'msgpack', x'c1', '{}')"
        )
    code, out, err = run_cli(capsys, "inspect", str(lg_db))
    assert code == 2  # a broken thread is an error, after the listing of every thread
    assert err == "durable-debug: error: 1 of 2 threads could not be read (marked broken above)\n"
    assert re.search(r"job-1\s+7\s+3\s+paused", out)
    assert re.search(
        r"job-2\s+1\s+broken: thread 'job-2', checkpoint '1f0'.*not a LangGraph msgpack value",
        out,
    )


def test_inspect_reads_langgraph_postgres_schema(postgres_db: str, capsys: Any) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_db) as saver:
        saver.setup()
        run_app(build_app(saver))
    code, out, err = run_cli(capsys, "inspect", postgres_db)
    assert code == 0, err
    assert re.search(r"job-1\s+7\s+3\s+paused on 1 interrupt\(s\) at review", out)
    code, out, err = run_cli(capsys, "inspect", postgres_db, "--thread", THREAD)
    assert code == 0, err
    assert "thread 'job-1': 7 checkpoints, 2 branches" in out
    import psycopg

    with psycopg.connect(postgres_db) as conn:
        errors = conn.execute(
            "SELECT count(*) FROM checkpoint_writes WHERE channel = '__error__'"
        ).fetchone()
    assert errors is not None
    assert_one_failed_step(out, errors[0])


def test_an_empty_postgres_schema_has_no_threads_and_gets_no_tables(
    postgres_db: str, capsys: Any
) -> None:
    import psycopg

    code, out, err = run_cli(capsys, "inspect", postgres_db)
    assert (code, out) == (0, "no threads in this store\n"), err
    with psycopg.connect(postgres_db) as conn:
        assert conn.execute("SELECT to_regclass('checkpoints')").fetchone() == (None,)


def test_inspect_shows_the_subgraph_of_a_langgraph_app(tmp_path, capsys):
    """A LangGraph app whose node is a compiled graph that interrupts: the file its own
    SqliteSaver wrote shows the subgraph's tree under the thread's, read without LangGraph's
    classes and without writing the file."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import START, StateGraph
    from langgraph.types import Command, interrupt

    def ask(state: Any) -> dict:
        return {"log": [interrupt("ok?")]}

    path = tmp_path / "nested.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    inner = StateGraph(Logged).add_node("ask", ask).add_edge(START, "ask").compile()
    app = StateGraph(Logged).add_node("sub", inner).add_edge(START, "sub")
    app = app.compile(checkpointer=SqliteSaver(conn))
    cfg = {"configurable": {"thread_id": "lg-nested"}}
    app.invoke({"log": []}, cfg)
    app.invoke(Command(resume="yes"), cfg)
    conn.close()
    before = path.read_bytes()

    code, out, err = run_cli(capsys, "inspect", str(path), "--thread", "lg-nested")
    assert code == 0, err
    head, _, nested = out.partition("└─ subgraph 'sub' (task ")
    assert "thread 'lg-nested': 3 checkpoints, 1 branch" in head
    assert "wrote ask" in nested and "next ask" in nested
    assert path.read_bytes() == before
