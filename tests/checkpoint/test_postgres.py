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
