"""What both SQL savers (``checkpoint/_sql.py``) do with their database: setup, migrations,
bad rows, hostile payloads, lifecycle. Run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import gc
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for, hostile_payload, raw_connection

from durable_debug.checkpoint._sql import SqlSaver
from durable_debug.checkpoint.base import Completed
from durable_debug.checkpoint.serde import CorruptPayloadError, UnsupportedValueError
from durable_debug.checkpoint.sqlite import MIGRATIONS, DatabaseSetupError, SqliteSaver


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A factory of savers on one database (a SQLite file or a fresh PostgreSQL schema)."""
    made: list[SqlSaver] = []
    if request.param == "sqlite":
        target = str(tmp_path / "checkpoints.db")
        cls: Any = SqliteSaver
    else:
        from durable_debug.checkpoint.postgres import PostgresSaver

        target = request.getfixturevalue("postgres_db")
        cls = PostgresSaver

    def make() -> Any:
        saver = cls(target)
        made.append(saver)
        return saver

    yield make
    for saver in made:
        saver.close()


async def put_two(saver: Any, thread_id: str) -> list[dict]:
    cp1, v1 = child_checkpoint(None, {"a": 1, "b": "two"})
    c1 = await saver.aput(config_for(thread_id), cp1, {"source": "input", "step": -1}, v1)
    cp2, v2 = child_checkpoint(cp1, {"a": 2})
    c2 = await saver.aput(c1, cp2, {"source": "loop", "step": 0}, v2)
    await saver.aput_writes(c2, [("a", 3)], "task")
    return [c1, c2]


# --- setup and migrations ----------------------------------------------------------------------


async def test_setup_is_idempotent_with_and_without_await(make_saver):
    saver = make_saver()
    assert isinstance(saver.setup(), Completed)
    await saver.setup()
    saver.setup()
    await make_saver().setup()
    with raw_connection(saver) as db:
        assert db.execute("SELECT v FROM checkpoint_migrations ORDER BY v") == [
            (v,) for v in range(len(MIGRATIONS))
        ]


async def test_first_use_runs_setup(make_saver):
    saver = make_saver()
    assert await saver.aget_tuple(config_for("t")) is None
    with raw_connection(saver) as db:
        assert db.execute("SELECT count(*) FROM checkpoints") == [(0,)]


async def test_several_savers_set_up_one_database_at_once(make_saver):
    savers = [make_saver() for _ in range(4)]
    await asyncio.gather(*(s.asetup() for s in savers))
    configs = await asyncio.gather(*(put_two(s, f"t{i}") for i, s in enumerate(savers)))
    assert len(configs) == 4
    assert sorted(await savers[0].alist_threads()) == ["t0", "t1", "t2", "t3"]


async def test_schema_from_a_newer_version_is_refused_and_left_untouched(make_saver):
    await put_two(make_saver(), "t")
    with raw_connection(make_saver()) as db:
        db.execute("INSERT INTO checkpoint_migrations (v) VALUES (?)", (99,))
        before = db.dump()
    newer = make_saver()
    with pytest.raises(DatabaseSetupError, match="newer durable_debug") as info:
        await newer.aget_tuple(config_for("t"))
    assert "99" in str(info.value)
    with raw_connection(newer) as db:
        assert db.dump() == before


# --- bad rows ----------------------------------------------------------------------------------


async def test_corrupt_blob_raises_naming_thread_checkpoint_and_channel(make_saver):
    saver = make_saver()
    configs = await put_two(saver, "t")
    await put_two(saver, "other")
    with raw_connection(saver) as db:
        db.execute(
            "UPDATE checkpoint_blobs SET blob = ? WHERE thread_id = 't' AND channel = 'b'",
            (b"\xc1\xff garbage",),
        )
        before = db.dump()
    checkpoint_id = configs[1]["configurable"]["checkpoint_id"]
    with pytest.raises(CorruptPayloadError) as info:
        await saver.aget_tuple(config_for("t"))
    message = str(info.value)
    assert "'t'" in message and checkpoint_id in message and "'b'" in message
    with pytest.raises(CorruptPayloadError):
        [t async for t in saver.alist(config_for("t"))]
    other = await saver.aget_tuple(config_for("other"))
    assert other is not None and other.checkpoint["channel_values"] == {"a": 2, "b": "two"}
    with raw_connection(saver) as db:
        assert db.dump() == before


@pytest.mark.parametrize(
    ("code", "name"),
    [(11, "os.system"), (12, "subprocess.getoutput"), (10, "builtins.eval"), (11, "posix.system")],
)
async def test_hostile_blob_executes_nothing(make_saver, tmp_path: Path, code: int, name: str):
    saver = make_saver()
    await put_two(saver, "t")
    marker = tmp_path / "pwned"
    with raw_connection(saver) as db:
        db.execute(
            "UPDATE checkpoint_blobs SET blob = ? WHERE channel = 'b'",
            (hostile_payload(code, name, marker),),
        )
        db.execute("UPDATE checkpoint_writes SET blob = ?", (hostile_payload(code, name, marker),))
        before = db.dump()
    with pytest.raises(CorruptPayloadError, match="not registered") as info:
        await saver.aget_tuple(config_for("t"))
    assert name in str(info.value) and "'b'" in str(info.value)
    assert not marker.exists()
    with raw_connection(saver) as db:
        assert db.dump() == before


async def test_hostile_metadata_executes_nothing(make_saver, tmp_path: Path):
    saver = make_saver()
    configs = await put_two(saver, "t")
    marker = tmp_path / "pwned"
    payload = base64.b64encode(hostile_payload(11, "os.system", marker)).decode()
    with raw_connection(saver) as db:
        db.execute(
            "UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?",
            (
                f'{{"$serde": ["msgpack", "{payload}"]}}',
                configs[1]["configurable"]["checkpoint_id"],
            ),
        )
    with pytest.raises(CorruptPayloadError, match="metadata") as info:
        await saver.aget_tuple(config_for("t"))
    assert "os.system" in str(info.value)
    assert not marker.exists()


async def test_unsupported_value_leaves_every_row_untouched(make_saver):
    saver = make_saver()
    configs = await put_two(saver, "t")
    with raw_connection(saver) as db:
        before = db.dump()
    latest = await saver.aget_tuple(configs[1])
    cp, versions = child_checkpoint(latest.checkpoint, {"a": 5, "lock": asyncio.Lock()})
    with pytest.raises(UnsupportedValueError, match="'lock'"):
        await saver.aput(configs[1], cp, {"source": "loop", "step": 1}, versions)
    cp, versions = child_checkpoint(latest.checkpoint, {"a": 5})
    with pytest.raises(UnsupportedValueError, match="metadata"):
        await saver.aput(configs[1], cp, {"source": "loop", "step": 1, "x": object()}, versions)
    with pytest.raises(UnsupportedValueError, match="'a'"):
        await saver.aput_writes(configs[1], [("b", "fine"), ("a", object())], "task-2")
    with raw_connection(saver) as db:
        assert db.dump() == before


async def test_versions_are_stored_without_padding_and_restored(make_saver):
    saver = make_saver()
    cp, versions = child_checkpoint(None, {"a": 1})
    cp["channel_versions"]["odd"] = versions["odd"] = "v7"  # a version in another format
    config = await saver.aput(config_for("t"), cp, {}, versions)
    with raw_connection(saver) as db:
        stored = dict(db.execute("SELECT channel, version FROM checkpoint_blobs"))
    assert stored == {"a": "1." + versions["a"].split(".")[1], "odd": "!v7"}
    tup = await saver.aget_tuple(config)
    assert tup is not None and tup.checkpoint["channel_versions"] == cp["channel_versions"]
    assert tup.checkpoint["versions_seen"] == cp["versions_seen"]


# --- lifecycle ---------------------------------------------------------------------------------


async def test_async_with_opens_and_closes(make_saver):
    target = make_saver()
    async with type(target).from_conn_string(_target(target)) as saver:
        await put_two(saver, "t")
    with pytest.raises(RuntimeError, match="closed"):
        await saver.aget_tuple(config_for("t"))
    async with type(target).from_conn_string(_target(target)) as again:
        assert (await again.aget_tuple(config_for("t"))) is not None


def test_with_opens_and_closes(make_saver):
    target = make_saver()
    with type(target).from_conn_string(_target(target)) as saver:
        asyncio.run(put_two(saver, "t"))
        assert saver.get_tuple(config_for("t")) is not None
    with pytest.raises(RuntimeError, match="closed"):
        saver.get_tuple(config_for("t"))


def test_saver_never_closed_warns(make_saver):
    saver = type(make_saver())(_target(make_saver()))
    saver.setup()
    with pytest.warns(ResourceWarning, match="never closed"):
        del saver
        gc.collect()


def _target(saver: Any) -> str:
    return saver.path if isinstance(saver, SqliteSaver) else saver.conn_string


def _forked_child(saver: Any) -> None:
    """Runs in a forked process: read the parent's checkpoint, add one of its own."""
    tup = saver.get_tuple(config_for("t"))
    assert tup is not None and tup.checkpoint["channel_values"] == {"a": 2, "b": "two"}
    cp, versions = child_checkpoint(tup.checkpoint, {"a": "from the child"})
    saver.put(tup.config, cp, {"source": "loop", "step": 1}, versions)
    saver.close()


def test_forked_process_reconnects_instead_of_hanging(make_saver):
    saver = make_saver()
    asyncio.run(put_two(saver, "t"))  # the parent's connection is open
    child = multiprocessing.get_context("fork").Process(target=_forked_child, args=(saver,))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung on the saver it inherited")
    assert child.exitcode == 0
    tup = saver.get_tuple(config_for("t"))
    assert tup is not None and tup.checkpoint["channel_values"]["a"] == "from the child"
