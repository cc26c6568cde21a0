"""Inspecting a store never changes it: the file's bytes and modification time stay, no journal
mode switch, no migration, no ``-wal`` / ``-shm`` left beside it; writes through the read-only
saver are refused; a file from an older schema is refused, not upgraded."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from durable_debug import Command, SqliteSaver
from durable_debug.checkpoint._schema import DatabaseSetupError
from durable_debug.checkpoint.langgraph_layout import ReadOnlyStoreError
from durable_debug.checkpoint.readonly import ReadOnlySqliteSaver
from durable_debug.checkpoint.sqlite import OLDEST_READABLE
from durable_debug.cli import demo_graph, main
from durable_debug.inspect import ahistory_frame
from durable_debug.inspect.stored import SaverView


def state_of(directory: Path, db: Path) -> tuple[list[str], str, int]:
    """What must not change: the directory's file names, the file's bytes and mtime."""
    names = sorted(p.name for p in directory.iterdir())
    return names, hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns


def own_store(directory: Path) -> Path:
    """A durable_debug SQLite store (WAL mode, as the saver leaves it): a finished thread and
    one paused on an interrupt."""
    directory.mkdir()
    db = directory / "app.db"
    with SqliteSaver(str(db)) as saver:
        for thread in ("done", "paused"):
            cfg = {"configurable": {"thread_id": thread}}
            graph = demo_graph(saver)  # each build fails the "body" section once
            with contextlib.suppress(ConnectionError):
                graph.invoke({"topic": "t"}, cfg)
        graph.invoke(None, cfg)  # "paused" runs on to its interrupt
        done = {"configurable": {"thread_id": "done"}}
        graph.invoke(None, done)
        graph.invoke(Command(resume="ok"), done)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    return db


def inspect_everything(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every reading command on ``db``, and SaverView over the read-only saver."""
    for argv in (
        ["inspect", str(db)],
        ["inspect", f"sqlite:///{db}"],
        ["inspect", str(db), "--thread", "done", "--html", str(tmp_path / "done.html")],
        ["health", str(db)],
    ):
        assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    saver = ReadOnlySqliteSaver(db)
    try:
        assert len(history(saver, "paused")) > 1
    finally:
        saver.close()


def history(saver: Any, thread: str) -> Any:
    """The thread's history frame, read through a SaverView."""
    cfg = {"configurable": {"thread_id": thread}}
    return asyncio.run(ahistory_frame(SaverView(saver), cfg))


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_inspecting_our_layout_leaves_the_file_and_its_directory_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], journal: str
) -> None:
    """In WAL mode (as the saver leaves a file) and in rollback-journal mode (a copy, a file
    another tool last wrote): the mode is not switched either."""
    db = own_store(tmp_path / "store")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA journal_mode = {journal}")
    before = state_of(db.parent, db)
    assert before[0] == ["app.db"]  # the saver removed its -wal and -shm when it closed
    inspect_everything(db, tmp_path, capsys)
    assert state_of(db.parent, db) == before


def test_inspecting_while_the_app_holds_the_file_open_leaves_its_files_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer has the file open (its -wal holds a checkpoint not yet in the file): the
    reader sees that checkpoint and moves nothing into the file."""
    db = own_store(tmp_path / "store")
    app = sqlite3.connect(db)
    try:
        app.execute("PRAGMA wal_autocheckpoint = 0")  # the new rows stay in the -wal
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            columns = [row[1] for row in app.execute(f"PRAGMA table_info({table})")]
            rest = ", ".join(c for c in columns if c != "thread_id")
            app.execute(
                f"INSERT INTO {table} (thread_id, {rest}) "
                f"SELECT 'copy', {rest} FROM {table} WHERE thread_id = 'done'"
            )
        app.commit()
        names, digest, mtime = state_of(db.parent, db)
        assert names == ["app.db", "app.db-shm", "app.db-wal"]
        wal = (db.parent / "app.db-wal").read_bytes()
        assert main(["inspect", str(db)]) == 0
        assert " copy " in capsys.readouterr().out  # read from the app's -wal
        inspect_everything(db, tmp_path, capsys)
        assert state_of(db.parent, db) == (names, digest, mtime)
        assert (db.parent / "app.db-wal").read_bytes() == wal
    finally:
        app.close()


def test_writes_through_the_read_only_saver_are_refused(tmp_path: Path) -> None:
    db = own_store(tmp_path / "store")
    before = state_of(db.parent, db)
    saver = ReadOnlySqliteSaver(db)
    try:
        graph = demo_graph(saver)
        with pytest.raises(ReadOnlyStoreError, match="open read-only here"):
            graph.invoke({"topic": "t"}, {"configurable": {"thread_id": "new"}})
        with pytest.raises(ReadOnlyStoreError):
            saver.delete_thread("done")
        assert [t for t in saver.list_threads()] == ["done", "paused"]
    finally:
        saver.close()
    assert state_of(db.parent, db) == before


def test_a_store_from_an_older_schema_is_refused_not_upgraded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = own_store(tmp_path / "store")
    with sqlite3.connect(db) as conn:  # as if the versions from OLDEST_READABLE on were not
        conn.execute("DELETE FROM checkpoint_migrations WHERE v >= ?", (OLDEST_READABLE,))
    before = state_of(db.parent, db)
    code = main(["inspect", str(db)])
    err = capsys.readouterr().err
    assert code == 2
    assert "written by an older durable_debug" in err and "SqliteSaver(path)" in err
    with pytest.raises(DatabaseSetupError, match="older durable_debug"), ReadOnlySqliteSaver(db):
        pass
    assert state_of(db.parent, db) == before


def test_inspecting_a_langgraph_file_leaves_it_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

    from support.langgraph_app import build_app, run_app

    directory = tmp_path / "store"
    directory.mkdir()
    db = directory / "lg.db"
    conn = sqlite3.connect(db, check_same_thread=False)
    run_app(build_app(LangGraphSqliteSaver(conn)))
    conn.close()
    before = state_of(directory, db)
    assert before[0] == ["lg.db"]
    for argv in (["inspect", str(db)], ["inspect", str(db), "--thread", "job-1"]):
        assert main(argv) == 0, capsys.readouterr().err
    assert state_of(directory, db) == before
