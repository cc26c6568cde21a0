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
from builders import child_checkpoint, config_for

from durable_debug.checkpoint.postgres import AsyncPostgresSaver, DatabaseSetupError, PostgresSaver

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


class _Statements:
    """Counts the statements a saver sends, from libpq's protocol trace of its one pooled
    connection: every simple Query message and every Bind (one per extended-protocol
    execution, including BEGIN and COMMIT)."""

    def __init__(self, saver: PostgresSaver, path: Path) -> None:
        self.saver, self.path = saver, path
        self.file = open(path, "w")  # noqa: SIM115 - closed by stop()

    async def _with_connection(self, fn: Any) -> None:
        from durable_debug.checkpoint._io import on_io_loop

        async def run() -> None:
            pool = self.saver._pool
            assert pool is not None
            async with pool.connection() as conn:
                fn(conn.pgconn)

        await on_io_loop(run())

    async def start(self) -> None:
        await self._with_connection(lambda pgconn: pgconn.trace(self.file.fileno()))

    async def stop(self) -> list[str]:
        await self._with_connection(lambda pgconn: pgconn.untrace())
        self.file.close()
        kinds = []
        for line in self.path.read_text().splitlines():
            fields = line.split("\t")  # [timestamp,] direction, length, message type, …
            if "F" in fields[:2]:  # sent by the client
                start = fields.index("F")
                kinds.append(fields[start + 2] if len(fields) > start + 2 else "")
        return [kind for kind in kinds if kind in ("Query", "Bind")]


async def test_a_step_is_written_in_one_statement_and_read_in_one_query(
    postgres_db: str, tmp_path: Path
):
    async with PostgresSaver(postgres_db, pool_size=1) as saver:
        cp, versions = child_checkpoint(None, {"a": 1, "b": 2})
        config = await saver.aput(config_for("t"), cp, {}, versions)
        counter = _Statements(saver, tmp_path / "trace.txt")
        await counter.start()
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
        written = await counter.stop()
        counter = _Statements(saver, tmp_path / "trace2.txt")
        await counter.start()
        tup = await saver.aget_tuple(config)
        latest = await saver.aget_tuple(config_for("t"))
        read = await counter.stop()
    assert written == ["Bind"]  # writes, blobs and the checkpoint row: one statement
    assert read == ["Bind", "Bind"]  # two reads, one query each
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


def _interrupt(n: int) -> dict[str, object]:
    """A pending ``__interrupt__`` write's item, in the shape the row reader checks."""
    return {"id": f"interrupt-{n}", "value": n}
