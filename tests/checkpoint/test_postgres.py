"""PostgresSaver specifics (``checkpoint/postgres.py``): connecting, the optional dependency,
event loops, schemas, the pool."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import psycopg  # the dev extra installs it; without it this module fails loudly
import pytest
from builders import chain_builder, child_checkpoint, config_for

from durable_debug.checkpoint.postgres import (
    SELECT_LATEST,
    AsyncPostgresSaver,
    DatabaseSetupError,
    PostgresSaver,
)
from support.pg_wire import WireCounter

SRC = Path(__file__).resolve().parents[2] / "src"


def test_async_alias_is_the_same_class():
    assert AsyncPostgresSaver is PostgresSaver


def test_unreachable_server_is_a_clear_error_without_the_password():
    saver = PostgresSaver("postgresql://ana:s3cret@127.0.0.1:1/app", connect_timeout=2)
    with pytest.raises(DatabaseSetupError, match="cannot connect") as info:
        saver.setup()
    assert "s3cret" not in str(info.value) and "ana:***@127.0.0.1:1/app" in str(info.value)
    assert "s3cret" not in repr(saver)
    saver.close()


def test_missing_psycopg_is_a_clear_import_error():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["psycopg"] = None  # as if the postgres extra were not installed
        sys.modules["psycopg_pool"] = None
        import durable_debug.checkpoint.postgres as pg
        from durable_debug.checkpoint.url import saver_from_url
        saver_from_url("sqlite://").close()
        try:
            pg.PostgresSaver("postgresql://localhost/app")
        except ImportError as exc:
            print(exc)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'durable-debug[postgres]'" in result.stdout


@pytest.mark.postgres
def test_tables_are_created_in_the_schema_on_the_search_path(postgres_db: str, postgres_url: str):
    with PostgresSaver.from_conn_string(postgres_db) as saver:
        schema = saver.query("SELECT current_schema()")[0][0]
        cp, versions = child_checkpoint(None, {"a": 1})
        saver.put(config_for("t"), cp, {}, versions)
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
        in_public = conn.execute("SELECT to_regclass('public.checkpoints')").fetchone()
    assert sorted(t[0] for t in tables) == [
        "checkpoint_blobs",
        "checkpoint_migrations",
        "checkpoint_writes",
        "checkpoints",
        "thread_leases",
    ]
    assert in_public == (None,)


@pytest.mark.postgres
def test_tables_of_another_program_are_refused_untouched(postgres_db: str):
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute("CREATE TABLE checkpoints (thread_id TEXT, type TEXT, checkpoint BYTEA)")
    saver = PostgresSaver(postgres_db)
    with pytest.raises(DatabaseSetupError, match="did not create"):
        saver.setup()
    saver.close()
    with psycopg.connect(postgres_db) as conn:
        assert conn.execute("SELECT to_regclass('checkpoint_migrations')").fetchone() == (None,)


@pytest.mark.postgres
async def test_sync_with_block_inside_a_running_loop(postgres_db: str):
    # A notebook cell: an event loop runs, the user writes sync code.
    with PostgresSaver.from_conn_string(postgres_db) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = saver.put(config_for("t"), cp, {}, versions)
        assert (await saver.aget_tuple(config)) is not None
        assert saver.get_tuple(config) is not None


@pytest.mark.postgres
def test_one_saver_serves_several_threads_and_loops_at_once(postgres_db: str):
    saver = PostgresSaver(postgres_db, pool_size=2)
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, {}, versions)

    async def writes(prefix: str) -> None:
        await asyncio.gather(
            *(saver.aput_writes(config, [("a", i)], f"{prefix}-{i}") for i in range(20))
        )

    errors: list[BaseException] = []

    def in_thread(prefix: str) -> None:
        try:
            asyncio.run(writes(prefix))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=in_thread, args=(p,)) for p in ("x", "y", "z")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    try:
        assert errors == []
        tup = saver.get_tuple(config)
        assert tup is not None and len(tup.pending_writes or []) == 60
    finally:
        saver.close()


async def test_a_step_is_written_in_one_statement_and_read_in_one_query(postgres_db: str):
    with WireCounter(postgres_db) as wire:
        async with PostgresSaver(wire.url, pool_size=1) as saver:
            cp, versions = child_checkpoint(None, {"a": 1, "b": 2})
            config = await saver.aput(config_for("t"), cp, {}, versions)
            wire.reset()
            cp2, versions2 = child_checkpoint(cp, {"a": 3, "c": 4})
            step = [
                ("task-1", [("a", 3), ("__error__", "first")], ""),
                (
                    "task-2",
                    [
                        ("c", 4),
                        ("b", 5),
                        ("__interrupt__", [_interrupt(1)]),
                        ("__interrupt__", [_interrupt(2)]),
                    ],
                    "",
                ),
            ]
            config2 = await saver.aput_step(config, step, cp2, {"step": 1}, versions2)
            # writes (ordinary and special), blobs and the checkpoint row: one statement
            written = (wire.statements(), wire.round_trips())
            wire.reset()
            tup = await saver.aget_tuple(config)
            latest = await saver.aget_tuple(config_for("t"))
            read = (wire.statements(), wire.round_trips())
    assert written == (1, 1)
    assert read == (2, 2)  # two reads, one query each
    # Each task's special writes (negative idx) first, as every saver orders them.
    assert tup is not None and tup.pending_writes == [
        ("task-1", "__error__", "first"),
        ("task-1", "a", 3),
        ("task-2", "__interrupt__", [_interrupt(2)]),  # the last of one key wins, as upserts do
        ("task-2", "c", 4),
        ("task-2", "b", 5),
    ]
    assert latest is not None and latest.config == config2
    assert latest.checkpoint["channel_values"] == {"a": 3, "b": 2, "c": 4}
    assert latest.pending_writes == []


async def test_every_write_shape_is_one_statement_and_one_round_trip(postgres_db: str):
    # Each combination of parts (ordinary writes, special writes, blobs, the checkpoint row) is
    # its own statement; psycopg prepares a statement on its fifth run on a connection, which
    # costs one extra round trip once.
    with WireCounter(postgres_db) as wire:
        async with PostgresSaver(wire.url, pool_size=1) as saver:
            cp, versions = child_checkpoint(None, {"a": 0})
            config = await saver.aput(config_for("t"), cp, {}, versions)
            counted: list[tuple[str, int, int]] = []
            for i in range(7):
                shapes: dict[str, Any] = {
                    "ordinary": ([("task", [("a", i)], "")], False),
                    "special": ([("task", [("__error__", f"e{i}")], "")], False),
                    "both": ([("task", [("a", i), ("__error__", f"e{i}")], "")], False),
                    "checkpoint only": ([], True),
                    "step": ([("task", [("a", i)], "")], True),
                }
                for name, (task_writes, with_checkpoint) in shapes.items():
                    wire.reset()
                    if with_checkpoint:
                        child, new = child_checkpoint(cp, {"a": i + 1})
                        await saver.aput_step(config, task_writes, child, {"step": i}, new)
                    else:
                        task_id, writes, _ = task_writes[0]
                        await saver.aput_writes(config, writes, f"{task_id}-{name}-{i}")
                    counted.append((name, wire.statements(), wire.round_trips()))
            tup = await saver.aget_tuple(config)
    assert all(statements == 1 for _, statements, _ in counted), counted
    extra = [(name, trips) for name, _, trips in counted if trips != 1]
    assert len(extra) <= len(shapes) and all(trips == 2 for _, trips in extra), counted
    # 7 of each aput_writes shape (both: two rows), and the steps' one write, kept once
    assert tup is not None and len(tup.pending_writes or []) == 7 * 4 + 1


async def test_a_graph_run_sends_one_statement_per_checkpoint(postgres_db: str):
    # A 10-node chain on a fresh thread: the thread's lease taken and given back, its latest
    # checkpoint read once, then one statement per checkpoint written.
    builder = chain_builder(10)
    with WireCounter(postgres_db) as wire:
        async with PostgresSaver(wire.url) as saver:
            graph = builder.compile(checkpointer=saver)
            await graph.ainvoke({"n": 0}, {"configurable": {"thread_id": "warm"}})
            # A run's give-back is sent without waiting for its answer; the saver's next call
            # reads it, so the warm-up's statements are all through before counting starts.
            await saver.aget_tuple({"configurable": {"thread_id": "warm"}})
            per_run = []
            for t in range(3):
                wire.reset()
                config = {"configurable": {"thread_id": f"t{t}"}}
                assert await graph.ainvoke({"n": 0}, config) == {"n": 10}
                statements = wire.statements()
                checkpoints = len([c async for c in saver.alist(config)])
                per_run.append((statements, checkpoints))
            # The lease's take and give-back went over the caller-loop connection too: the
            # separate lease connection (for renewals from the I/O loop) was never opened.
            assert saver._lease_conn is None
    assert all(checkpoints == 12 for _, checkpoints in per_run), per_run
    assert all(statements <= checkpoints + 3 for statements, checkpoints in per_run), per_run


async def test_a_runs_lease_and_its_first_read_share_one_round_trip(postgres_db: str):
    # The take of a run's lease and the read of its thread's newest checkpoint go in one
    # pipeline: a run resuming a thread waits for the server once before its first node,
    # and it resumes from the checkpoint the previous run saved last.
    builder = chain_builder(3)
    with WireCounter(postgres_db) as wire:
        async with PostgresSaver(wire.url) as saver:
            graph = builder.compile(checkpointer=saver)
            config = {"configurable": {"thread_id": "t"}}
            assert await graph.ainvoke({"n": 0}, config) == {"n": 3}
            await saver.aget_tuple(config)  # the give-back's answer read: counting starts clean
            wire.reset()
            assert await graph.ainvoke(None, config) == {"n": 3}  # nothing left to run
            # The give-back is sent without waiting; the next call reads its answer, so once
            # that call is done the proxy has counted it.
            await saver.aget_tuple(config)
            # take and read (one Sync), give-back, the read after the run
            assert wire.round_trips() == 3, wire.counts()
            assert wire.statements() == 4, wire.counts()
            assert await graph.ainvoke({"n": 5}, config) == {"n": 8}
            latest = await saver.aget_tuple(config)
            assert latest is not None and latest.checkpoint["channel_values"]["n"] == 8
            # A read outside a run (no lease taken) is a round trip of its own, as before.
            wire.reset()
            assert await saver.aget_tuple(config) is not None
            assert wire.round_trips() == 1 and wire.statements() == 1, wire.counts()


async def test_every_history_page_is_an_index_range_scan_on_a_large_table(postgres_db: str):
    async with PostgresSaver(postgres_db) as saver:
        cp, versions = child_checkpoint(None, {"n": 0})
        await saver.aput(config_for("t0"), cp, {}, versions)  # creates the tables
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute(
            """INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint)
            SELECT 't' || (i % 5), CASE WHEN i % 3 = 0 THEN 'sub' ELSE '' END,
                lpad(i::text, 12, '0'), '{}'
            FROM generate_series(1, 60000) AS i"""
        )
        conn.execute("ANALYZE checkpoints")
        after = ("000000030000", "t3", "")
        shapes = {
            "one namespace": ("t3", "", None, None),
            "one namespace, next page": ("t3", "", None, after),
            "every namespace": ("t3", None, None, None),
            "every namespace, next page": ("t3", None, None, after),
            "every namespace, before": ("t3", None, "000000040000", after),
            "every thread": (None, None, None, None),
            "every thread, next page": (None, None, None, after),
        }
        for name, (thread_id, ns, before_id, cursor) in shapes.items():
            sql, params = saver._page_query(thread_id, ns, before_id, cursor, [], 200)
            plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params))
            assert "Seq Scan" not in plan and "Sort" not in plan, (name, plan)
            assert "Index Scan Backward" in plan, (name, plan)
        # The latest checkpoint of a thread: one step back on the primary key, not an aggregate
        # over every key of the thread.
        plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + SELECT_LATEST, ("t3", "")))
        assert "Aggregate" not in plan and "Seq Scan" not in plan, plan
        assert "Limit" in plan and "Index Scan Backward using checkpoints_pkey" in plan, plan


def _interrupt(n: int) -> dict[str, object]:
    """A pending ``__interrupt__`` write's item, in the shape the row reader checks."""
    return {"id": f"interrupt-{n}", "value": n}


async def test_a_cancelled_write_leaves_the_saver_usable(postgres_db: str):
    # A step's write waiting on a lock is cancelled (a timeout around the run): the statement
    # is cancelled on the server, nothing of it is kept, and the next calls work.
    async with PostgresSaver(postgres_db) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        with psycopg.connect(postgres_db) as blocker:
            blocker.execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
            child, new = child_checkpoint(cp, {"a": 2})
            task = asyncio.ensure_future(saver.aput(config, child, {}, new))
            await _blocked_on_a_lock(postgres_db, "INSERT INTO checkpoints")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            blocker.rollback()
        assert [c.config for c in await _alist(saver, config_for("t"))] == [config]
        child, new = child_checkpoint(cp, {"a": 3})
        config3 = await saver.aput(config, child, {}, new)
        latest = await saver.aget_tuple(config_for("t"))
        assert latest is not None and latest.config == config3
        assert latest.checkpoint["channel_values"] == {"a": 3}


async def test_a_cancelled_first_read_leaves_the_saver_usable(postgres_db: str):
    # A saver's first read of a shape prepares and runs its query in one pipeline; cancelled
    # while the server waits on a lock, it leaves no half-read connection behind, and the
    # next reads (the first one's statement prepared again) work.
    async with PostgresSaver(postgres_db) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        with psycopg.connect(postgres_db) as blocker:
            blocker.execute("LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
            task = asyncio.ensure_future(saver.aget_tuple(config_for("t")))
            await _blocked_on_a_lock(postgres_db, "FROM checkpoints")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            blocker.rollback()
        for _ in range(2):
            latest = await saver.aget_tuple(config_for("t"))
            assert latest is not None and latest.config == config
            assert latest.checkpoint["channel_values"] == {"a": 1}


async def test_a_failing_query_through_libpq_raises_the_servers_error(postgres_db: str):
    # checkpoint/_libpq.py: an error answered to the pipelined prepare-and-run is psycopg's
    # exception for its SQLSTATE, the statement is not remembered as prepared, and the
    # connection is idle (out of pipeline mode) for the next query.
    from durable_debug.checkpoint._libpq import fetch

    async with await psycopg.AsyncConnection.connect(postgres_db, autocommit=True) as conn:
        for _ in range(2):
            with pytest.raises(psycopg.errors.UndefinedColumn, match="nope"):
                await fetch(conn, "SELECT nope FROM (SELECT %s::text AS x) AS t", ("a",))
            assert conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        for value in ("first", "second"):  # prepared and run, then run prepared
            result = await fetch(conn, "SELECT %s::text, 7::int4, NULL::bytea", (value,))
            assert [result.get_value(0, c) for c in range(3)] == [
                value.encode(),
                (7).to_bytes(4, "big"),
                None,
            ]
        cur = await conn.execute("SELECT 1")  # psycopg's own calls still work on it
        assert await cur.fetchall() == [(1,)]


async def _blocked_on_a_lock(url: str, statement: str) -> None:
    """Return once a statement containing ``statement`` waits on a lock on the server (a
    condition, not a time: fails after 60 s of never seeing it)."""
    with psycopg.connect(url, autocommit=True) as watcher:
        deadline = asyncio.get_running_loop().time() + 60
        while not watcher.execute(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            (f"%{statement}%",),
        ).fetchall():
            assert asyncio.get_running_loop().time() < deadline, f"{statement!r} never blocked"
            await asyncio.sleep(0.02)


async def _alist(saver: PostgresSaver, config: Any) -> list[Any]:
    return [tup async for tup in saver.alist(config)]
