"""SqliteSaver specifics (``checkpoint/sqlite.py``): the file, WAL, several processes."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for

from durable_debug.checkpoint.errors import StoreClosedError
from durable_debug.checkpoint.serde import CorruptPayloadError
from durable_debug.checkpoint.sqlite import AsyncSqliteSaver, DatabaseSetupError, SqliteSaver

SRC = Path(__file__).resolve().parents[2] / "src"
HERE = Path(__file__).resolve().parent


def python_env() -> dict[str, str]:
    """Environment for a child interpreter that imports durable_debug and the test builders."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints.db"


@pytest.fixture
def thread_deaths(monkeypatch: pytest.MonkeyPatch) -> list[BaseException | None]:
    """The exceptions that end a thread while the test runs (none, for a saver in good shape)."""
    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    return died


def test_async_alias_is_the_same_class():
    assert AsyncSqliteSaver is SqliteSaver


def test_file_is_created_lazily_and_runs_in_wal_mode(db_path: Path):
    saver = SqliteSaver(db_path)
    assert not db_path.exists()
    try:
        saver.setup()
        with sqlite3.connect(db_path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        assert tables == {
            "checkpoints",
            "checkpoint_blobs",
            "checkpoint_writes",
            "checkpoint_migrations",
            "thread_leases",
        }
    finally:
        saver.close()


def test_memory_database_lives_as_long_as_the_saver():
    with SqliteSaver(":memory:") as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        saver.put(config_for("t"), cp, {}, versions)
        assert saver.get_tuple(config_for("t")) is not None
    with SqliteSaver(":memory:") as fresh:
        assert fresh.get_tuple(config_for("t")) is None


def test_file_that_is_not_sqlite_is_a_clear_error_naming_it(tmp_path: Path):
    path = tmp_path / "notes.txt"
    content = b"these are my notes, not a database\n" * 200
    path.write_bytes(content)
    saver = SqliteSaver(path)
    with pytest.raises(DatabaseSetupError, match="is not a SQLite database") as info:
        saver.get_tuple(config_for("t"))
    assert str(path) in str(info.value)
    assert path.read_bytes() == content
    saver.close()


def test_missing_directory_is_a_clear_error(tmp_path: Path):
    path = tmp_path / "no" / "such" / "dir.db"
    saver = SqliteSaver(path)
    with pytest.raises(DatabaseSetupError, match="directory exists") as info:
        saver.setup()
    assert str(path) in str(info.value)
    saver.close()


def test_tables_of_another_program_are_refused_untouched(db_path: Path):
    with sqlite3.connect(db_path) as conn:  # the layout of LangGraph's SqliteSaver
        conn.execute(
            "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
            "parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB)"
        )
        conn.execute("INSERT INTO checkpoints (thread_id) VALUES ('theirs')")
    saver = SqliteSaver(db_path)
    with pytest.raises(DatabaseSetupError, match="did not create"):
        saver.setup()
    saver.close()
    with sqlite3.connect(db_path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"checkpoints"}
        assert conn.execute("SELECT thread_id FROM checkpoints").fetchall() == [("theirs",)]


def test_wrong_argument_type_is_a_clear_error():
    with pytest.raises(TypeError, match="a sqlite3.Connection or an aiosqlite.Connection, got int"):
        SqliteSaver(42)  # type: ignore[arg-type]


async def test_many_concurrent_write_transactions_on_one_connection(db_path: Path):
    async with SqliteSaver(db_path) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        await asyncio.gather(
            *(saver.aput_writes(config, [("a", i), ("b", -i)], f"task-{i}") for i in range(50))
        )
        tup = await saver.aget_tuple(config)
    assert tup is not None and len(tup.pending_writes or []) == 100
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_each_write_is_one_immediate_transaction(db_path: Path):
    async with SqliteSaver(db_path) as saver:
        statements: list[str] = []
        assert saver._conn is not None
        await saver._conn.set_trace_callback(statements.append)
        cp, versions = child_checkpoint(None, {"a": 1, "b": 2})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        await saver.aput_writes(config, [("a", 3)], "task")
        await saver._conn.set_trace_callback(None)
    words = [" ".join(sql.split()[:3]) for sql in statements]
    # Run on the caller's thread, a write asks for the lock without waiting (see below): the
    # saver's own connection has busy_timeout 0 outside a session on aiosqlite's thread, so
    # no PRAGMA is needed around it.
    assert words == [
        "BEGIN IMMEDIATE",
        "INSERT INTO checkpoint_blobs",
        "INSERT INTO checkpoint_blobs",
        "INSERT INTO checkpoints",
        "COMMIT",
        "BEGIN IMMEDIATE",
        "INSERT INTO checkpoint_writes",
        "COMMIT",
    ]


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from builders import child_checkpoint, config_for
    from durable_debug.checkpoint.sqlite import SqliteSaver

    path, thread, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    (go.parent / f"ready-{thread}").touch()  # imported: waiting for the start signal
    while not go.exists():
        time.sleep(0.005)
    saver = SqliteSaver(path)
    config, parent = config_for(thread), None
    for i in range(count):
        cp, versions = child_checkpoint(parent, {"n": i, "who": thread})
        config = saver.put(config, cp, {"source": "loop", "step": i}, versions)
        saver.put_writes(config, [("n", i + 1)], f"task-{i}")
        parent = cp
    saver.close()
    """
)


def test_two_processes_write_one_file_at_once(db_path: Path, tmp_path: Path):
    go = tmp_path / "go"
    count = 300
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path), thread, str(count), str(go)],
            env=python_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for thread in ("p1", "p2")
    ]
    ready = [tmp_path / f"ready-{thread}" for thread in ("p1", "p2")]
    while not all(r.exists() for r in ready):  # both interpreters are up and waiting
        dead = [p for p in procs if p.poll() is not None]
        assert not dead, dead[0].communicate()[1]
        time.sleep(0.01)
    go.touch()
    results = [p.communicate(timeout=240) for p in procs]
    for proc, (_out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err
    with SqliteSaver(db_path) as saver:
        for thread in ("p1", "p2"):
            history = list(saver.list(config_for(thread)))
            assert len(history) == count
            assert [t.checkpoint["channel_values"]["n"] for t in history] == list(
                range(count - 1, -1, -1)
            )
            assert all(t.pending_writes for t in history)
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM checkpoint_writes").fetchone() == (2 * count,)


def test_script_that_never_closes_its_saver_exits_and_keeps_its_data(db_path: Path):
    script = textwrap.dedent(
        """
        import sys
        from builders import child_checkpoint, config_for
        from durable_debug.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(sys.argv[1])
        cp, versions = child_checkpoint(None, {"a": 1})
        saver.put(config_for("t"), cp, {}, versions)
        print("done")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(db_path)],
        env=python_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    with SqliteSaver(db_path) as saver:
        tup = saver.get_tuple(config_for("t"))
    assert tup is not None and tup.checkpoint["channel_values"] == {"a": 1}


async def test_writes_and_reads_run_on_the_callers_thread_and_a_scan_on_the_connection_thread(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from durable_debug.checkpoint import sqlite as sqlite_module

    calls: list[str] = []
    real = sqlite_module._on_connection_thread

    async def counted(conn: Any, fn: Any, *args: Any) -> Any:
        calls.append(getattr(fn, "__name__", repr(fn)))
        return await real(conn, fn, *args)

    async with SqliteSaver(db_path) as saver:
        cp, versions = child_checkpoint(None, {"a": 1, "b": 2})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        monkeypatch.setattr(sqlite_module, "_on_connection_thread", counted)
        cp2, versions2 = child_checkpoint(cp, {"a": 3, "c": 4})
        step = [("task-1", [("a", 3)], ""), ("task-2", [("c", 4), ("b", 5)], "")]
        config2 = await saver.aput_step(config, step, cp2, {"step": 1}, versions2)
        assert calls == []  # three writes, two blobs and the checkpoint row: no hand-off
        tup = await saver.aget_tuple(config)
        assert calls == []  # the checkpoint, its blobs and its writes: no hand-off either
        assert tup is not None and len(tup.pending_writes or []) == 3
        latest = await saver.aget_tuple(config_for("t"))
        assert latest is not None and latest.config == config2
        assert latest.checkpoint["channel_values"] == {"a": 3, "b": 2, "c": 4}
        saver.page_size = 1
        listed = [t.config async for t in saver.alist(None)]
        assert listed == [config2, config] and calls == []  # each page on the caller's thread
        # a read of unknown length (every thread, or the caller's own SQL) is one hand-off
        assert await saver.alist_threads() == ["t"]
        assert await saver.aquery("SELECT count(*) FROM checkpoints") == [(2,)]
        assert calls == ["_transact_locked", "_transact_locked"]


class _LockedOnce:
    """A sqlite3 connection whose first query on the thread that made this wrapper finds the
    file locked, as when another process recovers its WAL at that moment."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw, self.thread, self.refused = raw, threading.get_ident(), 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)

    def execute(self, sql: str, params: Any = ()) -> Any:
        here = threading.get_ident() == self.thread
        if here and not self.refused and sql.lstrip().startswith("SELECT"):
            self.refused += 1
            raise sqlite3.OperationalError("database is locked")
        return self.raw.execute(sql, params)


async def test_a_read_that_finds_the_file_locked_waits_off_the_event_loop(db_path: Path):
    async with SqliteSaver(db_path) as saver:
        config, parent = config_for("t"), None
        for i in range(3):
            cp, versions = child_checkpoint(parent, {"n": i})
            config = await saver.aput(config, cp, {"step": i}, versions)
            await saver.aput_writes(config, [("n", i + 1)], f"task-{i}")
            parent = cp
        expected = [t async for t in saver.alist(config_for("t"))]
        locked = saver._raw = _LockedOnce(saver._raw)  # type: ignore[assignment,arg-type]
        listed = [t async for t in saver.alist(config_for("t"))]
        assert locked.refused == 1  # asked on the caller's thread, then read on aiosqlite's
        assert listed == expected
        assert [t.checkpoint["channel_values"]["n"] for t in listed] == [2, 1, 0]
        # the caller's thread again once the file is free; a session on aiosqlite's thread
        # waits busy_timeout for a lock, one on the caller's thread not at all
        latest = await saver.aget_tuple(config_for("t"))
        assert latest == expected[0]
        assert (await saver.aquery("PRAGMA busy_timeout")) == [(30_000,)]
        assert locked.raw.execute("PRAGMA busy_timeout").fetchall() == [(0,)]


async def test_a_write_waits_for_another_writer_off_the_event_loop(db_path: Path):
    async with SqliteSaver(db_path, busy_timeout=60) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        other = sqlite3.connect(db_path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            cp2, versions2 = child_checkpoint(cp, {"a": 2})
            write = asyncio.ensure_future(saver.aput(config, cp2, {}, versions2))
            ticks = 0
            while ticks < 50:  # the loop keeps running while the write waits
                await asyncio.sleep(0.001)
                ticks += 1
            assert not write.done()
        finally:
            other.execute("COMMIT")
            other.close()
        await asyncio.wait_for(write, timeout=60)
        latest = await saver.aget_tuple(config_for("t"))
    assert latest is not None and latest.checkpoint["channel_values"] == {"a": 2}


def test_a_write_cancelled_on_a_loop_that_then_closes_leaves_the_saver_usable(
    db_path: Path, thread_deaths: list[BaseException | None]
):
    """A write waiting on aiosqlite's thread for another writer's lock is cancelled and its
    loop closes (its ``asyncio.run`` ends) before the lock is given back: its answer then has
    no loop to go to. aiosqlite's thread used to die of that, and every later call on the
    saver that goes to that thread (a listing query, closing the saver) waited forever."""
    saver = SqliteSaver(db_path, busy_timeout=60)
    other = sqlite3.connect(db_path, isolation_level=None)
    try:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = saver.put(config_for("t"), cp, {}, versions)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock

        async def cancel_a_waiting_write() -> None:
            cp2, versions2 = child_checkpoint(cp, {"a": 2})
            write = asyncio.ensure_future(saver.aput(config, cp2, {}, versions2))
            deadline = asyncio.get_running_loop().time() + 60
            while not saver._busy.locked():  # until it waits for the lock on aiosqlite's thread
                assert not write.done() and asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.001)
            write.cancel()

        asyncio.run(cancel_a_waiting_write())
        other.execute("COMMIT")

        async def count() -> Any:
            return await asyncio.wait_for(saver.aquery("SELECT count(*) FROM checkpoints"), 60)

        # The cancelled write still ran once the lock was free (as a cancelled aiosqlite call
        # does); the next session on aiosqlite's thread answers.
        assert asyncio.run(count()) == [(2,)]
        closing = threading.Thread(target=saver.close, daemon=True)
        closing.start()
        closing.join(timeout=60)
        assert not closing.is_alive(), "closing the saver hung"
    finally:
        other.close()
    assert thread_deaths == []


def test_a_forgotten_saver_closes_its_connection_on_the_io_loop(
    db_path: Path, thread_deaths: list[BaseException | None]
):
    """A saver dropped without close() in a cycle is collected together with its aiosqlite
    connection. aiosqlite's own finalizer then stopped the connection's thread with an answer
    to the collecting thread's event loop, here one already closed (as a test's loop is), and
    the thread died of ``Event loop is closed``; the saver now closes it on the I/O loop."""
    loop = asyncio.new_event_loop()
    try:
        saver = SqliteSaver(db_path)
        saver.setup()
        thread = saver._conn._thread  # type: ignore[union-attr]
        saver.itself = saver  # type: ignore[attr-defined]  # only the cyclic collector frees it
        asyncio.set_event_loop(loop)
        loop.close()
        del saver
        with pytest.warns(ResourceWarning, match="never closed"):
            gc.collect()
        thread.join(timeout=60)
        assert not thread.is_alive(), "the connection's thread did not stop"
    finally:
        asyncio.set_event_loop(None)
    assert thread_deaths == []
    with SqliteSaver(db_path) as again:  # the file is whole and opens again
        assert again.list_threads() == []


def test_writes_from_several_threads_and_loops_never_interleave(db_path: Path):
    count, threads = 40, 4
    with SqliteSaver(db_path) as saver:
        saver.setup()

        async def work(thread: str) -> None:
            config, parent = config_for(thread), None
            for i in range(count):
                cp, versions = child_checkpoint(parent, {"n": i})
                config = await saver.aput(config, cp, {"step": i}, versions)
                await saver.aput_writes(config, [("n", i + 1)], f"task-{i}")
                latest = await saver.aget_tuple(config_for(thread))
                assert latest is not None and latest.checkpoint["id"] == cp["id"]
                parent = cp

        errors: list[BaseException] = []

        def run(thread: str) -> None:
            try:
                asyncio.run(work(thread))
            except BaseException as exc:  # reported below
                errors.append(exc)

        workers = [threading.Thread(target=run, args=(f"w{i}",)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=240)
        assert not errors, errors
        for i in range(threads):
            history = list(saver.list(config_for(f"w{i}")))
            assert [t.checkpoint["channel_values"]["n"] for t in history] == list(
                range(count - 1, -1, -1)
            )
            assert all(len(t.pending_writes or []) == 1 for t in history)
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _counter_graph(saver: Any) -> Any:
    from typing_extensions import TypedDict

    from durable_debug import START, StateGraph

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    return builder.compile(checkpointer=saver)


def test_a_sqlite3_connection_opened_for_any_thread_is_used_and_left_open(db_path: Path):
    conn = sqlite3.connect(db_path, check_same_thread=False)  # LangGraph's documented way
    saver = SqliteSaver(conn)
    assert saver.path == str(db_path)
    graph = _counter_graph(saver)
    assert graph.invoke({"n": 1}, {"configurable": {"thread_id": "t"}}) == {"n": 2}
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values == {"n": 2}
    saver.close()
    # The connection is the caller's: still open, and it sees what the saver wrote.
    assert conn.execute("SELECT count(*) FROM checkpoints").fetchone() == (3,)
    conn.close()


def test_a_sqlite3_connection_bound_to_its_thread_still_works_for_a_file(db_path: Path):
    conn = sqlite3.connect(db_path)  # check_same_thread=True: usable on this thread only
    with SqliteSaver(conn) as saver:
        graph = _counter_graph(saver)
        assert graph.invoke({"n": 5}, {"configurable": {"thread_id": "t"}}) == {"n": 6}
    assert conn.execute("SELECT count(*) FROM checkpoints").fetchone() == (3,)
    conn.close()


def test_a_sqlite3_memory_connection_needs_check_same_thread_false():
    shared = sqlite3.connect(":memory:", check_same_thread=False)
    with SqliteSaver(shared) as saver:
        graph = _counter_graph(saver)
        assert graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}}) == {"n": 1}
    assert shared.execute("SELECT count(*) FROM checkpoints").fetchone() == (3,)
    saver = SqliteSaver(sqlite3.connect(":memory:"))
    with pytest.raises(DatabaseSetupError, match="check_same_thread=False"):
        saver.setup()
    saver.close()


async def test_every_listing_query_is_an_index_range_scan_without_a_sort(db_path: Path):
    async with SqliteSaver(db_path) as saver:
        saver.page_size = 3  # several pages, so the queries after the first are checked too
        for thread in ("a", "b"):
            for ns in ("", "sub:1"):
                config, parent = config_for(thread, ns), None
                for i in range(4):
                    cp, versions = child_checkpoint(parent, {"n": i})
                    config = await saver.aput(config, cp, {"step": i}, versions)
                    await saver.aput_writes(config, [("n", i), ("m", -i)], f"task-{i}", "~x")
                    parent = cp
        statements: list[str] = []
        assert saver._conn is not None
        await saver._conn.set_trace_callback(statements.append)
        every_ns = {"configurable": {"thread_id": "a"}}
        listed = {
            "one namespace": [t async for t in saver.alist(config_for("a"))],
            "every namespace": [t async for t in saver.alist(every_ns)],
            "every thread": [t async for t in saver.alist(None)],
            "filtered": [t async for t in saver.alist(every_ns, filter={"step": 1})],
            "before": [t async for t in saver.alist(None, before=config)],
            "limited": [t async for t in saver.alist(config_for("b"), limit=2)],
        }
        latest = await saver.aget_tuple(config_for("a"))
        pinned = await saver.aget_tuple(config)
        await saver._conn.set_trace_callback(None)
    assert {k: len(v) for k, v in listed.items()} == {
        "one namespace": 4,
        "every namespace": 8,
        "every thread": 16,
        "filtered": 2,
        "before": 15,
        "limited": 2,
    }
    assert latest is not None and pinned is not None
    assert all(len(t.pending_writes or []) == 2 for v in listed.values() for t in v)
    selects = [sql for sql in statements if sql.lstrip().startswith("SELECT")]
    kinds = {" ".join(sql.split()[:2]) for sql in selects}
    assert kinds == {"SELECT thread_id,", "SELECT b.thread_id,", "SELECT w.thread_id,"}
    # the writes of a filtered page by checkpoint, of an unfiltered one by ranges of ids
    writes = [sql for sql in selects if sql.lstrip().startswith("SELECT w.")]
    assert {"BETWEEN" in sql for sql in writes} == {True, False}
    pages = [sql for sql in selects if sql.lstrip().startswith("SELECT thread_id")]
    assert len(pages) >= 2 + 3 + 6 + 1 + 5 + 1 + 2  # each page, and the two reads
    with sqlite3.connect(db_path) as conn:
        for sql in selects:
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
            assert not any("TEMP B-TREE" in step for step in plan), (sql, plan)
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "b", "w"):
                # a full scan of a table (an ordered scan of an index, with LIMIT, is fine)
                assert f"SCAN {table}" not in plan, (sql, plan)
            assert any("USING INDEX" in s or "USING PRIMARY KEY" in s for s in plan), (sql, plan)


def test_a_tasks_writes_keep_their_order_across_task_paths(db_path: Path):
    with SqliteSaver(db_path) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = saver.put(config_for("t"), cp, {}, versions)
        saver.put_writes(config, [("a", "z-2"), ("b", "z-1")], "task-z", "~b")
        saver.put_writes(config, [("a", "y-2"), ("b", "y-1")], "task-y", "~c")
        saver.put_writes(config, [("a", "x-1")], "task-x", "~a")
        tup = saver.get_tuple(config)
        listed = next(iter(saver.list(config_for("t"))))
    expected = [
        ("task-x", "a", "x-1"),
        ("task-z", "a", "z-2"),
        ("task-z", "b", "z-1"),
        ("task-y", "a", "y-2"),
        ("task-y", "b", "y-1"),
    ]
    assert tup is not None and tup.pending_writes == expected
    assert listed.pending_writes == expected


def test_a_closed_sqlite3_connection_is_a_clear_error():
    conn = sqlite3.connect(":memory:")
    conn.close()
    with pytest.raises(ValueError, match="cannot use the given sqlite3.Connection"):
        SqliteSaver(conn)


async def test_an_aiosqlite_connection_is_used_and_left_open(db_path: Path):
    import aiosqlite

    async with aiosqlite.connect(db_path) as conn:  # LangGraph's AsyncSqliteSaver(conn)
        saver = SqliteSaver(conn)
        graph = _counter_graph(saver)
        config = {"configurable": {"thread_id": "t"}}
        assert await graph.ainvoke({"n": 1}, config) == {"n": 2}
        assert (await graph.aget_state(config)).values == {"n": 2}
        assert saver.path == str(db_path)
        await saver.aclose()
        assert await conn.execute_fetchall("SELECT count(*) FROM checkpoints") == [(3,)]


@pytest.mark.parametrize("connection", ["own", "aiosqlite"])
async def test_a_listing_stopped_early_leaves_no_read_behind(
    db_path: Path, recwarn: pytest.WarningsRecorder, connection: str
):
    """On its own connection the saver reads each page on the caller's thread when asked; on
    an aiosqlite connection it was given, it reads the next page ahead on aiosqlite's thread
    and drops it when the caller stops."""
    import aiosqlite

    async with contextlib.AsyncExitStack() as stack:
        if connection == "own":
            saver = await stack.enter_async_context(SqliteSaver(db_path))
        else:
            conn = await stack.enter_async_context(aiosqlite.connect(db_path))
            saver = await stack.enter_async_context(SqliteSaver(conn))
        saver.page_size = 2
        config, parent = config_for("t"), None
        for i in range(7):
            cp, versions = child_checkpoint(parent, {"n": i})
            config = await saver.aput(config, cp, {"step": i}, versions)
            parent = cp
        listed = [t.checkpoint["channel_values"]["n"] async for t in saver.alist(config_for("t"))]
        assert listed == [6, 5, 4, 3, 2, 1, 0]
        assert [t.metadata["step"] async for t in saver.alist(config_for("t"), limit=3)] == [
            6,
            5,
            4,
        ]
        # the third page holds a damaged row: read when asked or ahead, its error waits for
        # the caller
        with sqlite3.connect(db_path) as other:
            other.execute(
                "UPDATE checkpoints SET metadata = 'x' WHERE metadata LIKE '%\"step\":2%'"
            )
        stopped = saver.alist(config_for("t"))
        async for tup in stopped:
            if tup.metadata["step"] == 4:  # the damaged page has been asked for by now
                break
        await stopped.aclose()
        with pytest.raises(CorruptPayloadError, match="field 'metadata'"):
            [t async for t in saver.alist(config_for("t"))]
        # the saver is still usable, with no read left behind
        assert (await saver.aget_tuple(config_for("t"))) is not None
    gc.collect()
    assert not [w for w in recwarn if "never retrieved" in str(w.message)]


async def test_a_listing_leaves_the_garbage_collector_as_it_found_it(db_path: Path):
    async with SqliteSaver(db_path) as saver:
        saver.page_size = 2
        config, parent = config_for("t"), None
        for i in range(5):
            cp, versions = child_checkpoint(parent, {"n": i})
            config = await saver.aput(config, cp, {}, versions)
            parent = cp
        assert gc.isenabled()
        assert len([t async for t in saver.alist(config_for("t"))]) == 5
        assert gc.isenabled()
        gc.disable()  # the caller's choice is kept
        try:
            assert len([t async for t in saver.alist(config_for("t"))]) == 5
            assert not gc.isenabled()
        finally:
            gc.enable()


def test_closing_while_other_threads_write_leaves_a_sound_file(db_path: Path):
    saver = SqliteSaver(db_path)
    saver.setup()
    stop = threading.Event()
    started = threading.Barrier(4)
    outcomes: list[str] = []

    async def write(thread: str) -> None:
        config, parent = config_for(thread), None
        started.wait(timeout=60)
        for i in range(10_000):
            cp, versions = child_checkpoint(parent, {"n": i})
            try:
                config = await saver.aput(config, cp, {}, versions)
            except StoreClosedError:
                outcomes.append("closed")
                return
            parent = cp
            if stop.is_set():
                break
        outcomes.append("done")

    workers = [threading.Thread(target=lambda t=f"w{i}": asyncio.run(write(t))) for i in range(3)]
    for w in workers:
        w.start()
    started.wait(timeout=60)
    saver.close()  # while the three write
    stop.set()
    for w in workers:
        w.join(timeout=120)
        assert not w.is_alive()
    assert len(outcomes) == 3 and "closed" in outcomes
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_every_listing_page_has_the_writes_of_its_own_checkpoints_only(db_path: Path):
    async with SqliteSaver(db_path) as saver:
        saver.page_size = 3
        configs: dict[tuple[str, str], Any] = {}
        parents: dict[tuple[str, str], Any] = {}
        for i in range(6):  # two threads, two namespaces, their checkpoints interleaved
            for key in (("a", ""), ("b", ""), ("a", "sub:1"), ("b", "sub:1")):
                cp, versions = child_checkpoint(parents.get(key), {"n": i})
                config = configs.get(key, config_for(*key))
                configs[key] = await saver.aput(config, cp, {"step": i}, versions)
                await saver.aput_writes(configs[key], [("n", f"{key}-{i}")], f"task-{i}")
                parents[key] = cp
        listings = [
            saver.alist(None),
            saver.alist({"configurable": {"thread_id": "a"}}),
            saver.alist(config_for("b", "sub:1")),
            saver.alist(None, filter={"step": 2}),
            saver.alist(None, before=configs[("a", "")], limit=5),
        ]
        for listing in listings:
            async for tup in listing:
                alone = await saver.aget_tuple(tup.config)
                assert alone is not None
                assert tup.pending_writes == alone.pending_writes
                key = (
                    tup.config["configurable"]["thread_id"],
                    tup.config["configurable"]["checkpoint_ns"],
                )
                step = tup.metadata["step"]
                assert tup.pending_writes == [(f"task-{step}", "n", f"{key}-{step}")]
