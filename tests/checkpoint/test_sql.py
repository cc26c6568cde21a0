"""What both SQL savers (``checkpoint/_sql.py``) do with their database: setup, migrations,
bad rows, hostile payloads, lifecycle. Run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for, hostile_payload, raw_connection

from durable_debug.checkpoint._rows import compact_version
from durable_debug.checkpoint._sql import SqlSaver
from durable_debug.checkpoint.base import Completed
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    UnsupportedValueError,
)
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


async def test_migration_groups_the_version_maps_of_existing_rows(make_saver):
    """A database written before version maps were grouped (schema 3) is rewritten on open."""
    from durable_debug.checkpoint import postgres, sqlite

    saver = make_saver()
    migrations = sqlite.MIGRATIONS if isinstance(saver, SqliteSaver) else postgres.MIGRATIONS
    cp, _ = child_checkpoint(None, {"a": 1, "b": "two"})
    cp["versions_seen"]["other"] = {}

    def flat(versions: dict[str, str]) -> dict[str, str]:
        return {channel: compact_version(v) for channel, v in versions.items()}

    record = {k: v for k, v in cp.items() if k != "channel_values"}
    record["channel_versions"] = flat(cp["channel_versions"])
    record["versions_seen"] = {node: flat(m) for node, m in cp["versions_seen"].items()}
    serde = MsgpackSerializer()
    with raw_connection(saver) as db:
        for v, sql in enumerate(migrations[:4]):
            db.execute(sql)
            db.execute("INSERT INTO checkpoint_migrations (v) VALUES (?)", (v,))
        db.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint) "
            "VALUES ('t', '', ?, ?)",
            (cp["id"], json.dumps(record)),
        )
        for channel, value in cp["channel_values"].items():
            version = compact_version(cp["channel_versions"][channel])
            db.execute(
                "INSERT INTO checkpoint_blobs VALUES ('t', '', ?, ?, ?, ?)",
                (channel, version, *serde.dumps_typed(value)),
            )
    tup = await saver.aget_tuple(config_for("t"))
    assert tup is not None and tup.checkpoint == cp
    with raw_connection(saver) as db:
        assert db.execute("SELECT max(v) FROM checkpoint_migrations") == [(len(migrations) - 1,)]
        stored = json_column(db.execute("SELECT checkpoint FROM checkpoints")[0][0])
    grouped = {compact_version(cp["channel_versions"]["a"]): ["a", "b"]}
    assert sorted_groups(stored["channel_versions"]) == grouped
    seen = {node: sorted_groups(m) for node, m in stored["versions_seen"].items()}
    assert seen == {"node": grouped, "other": {}}


async def test_version_maps_are_stored_grouped_by_version(make_saver):
    saver = make_saver()
    cp1, v1 = child_checkpoint(None, {"a": 1, "b": 2})
    c1 = await saver.aput(config_for("t"), cp1, {}, v1)
    cp2, v2 = child_checkpoint(cp1, {"c": 3})
    await saver.aput(c1, cp2, {}, v2)
    with raw_connection(saver) as db:
        row = db.execute("SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?", (cp2["id"],))
    stored = json_column(row[0][0])
    first, second = compact_version(v1["a"]), compact_version(v2["c"])
    assert sorted_groups(stored["channel_versions"]) == {first: ["a", "b"], second: ["c"]}
    assert stored["versions_seen"] == {"node": {second: ["c"]}}


def sorted_groups(grouped: dict[str, list[str]]) -> dict[str, list[str]]:
    """A stored version map with each version's channels sorted (their order is arbitrary)."""
    return {version: sorted(channels) for version, channels in grouped.items()}


def json_column(value: Any) -> Any:
    """A JSON column as Python (psycopg decodes jsonb itself; sqlite3 returns the text)."""
    return json.loads(value) if isinstance(value, str) else value


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


async def test_big_values_are_stored_compressed_unless_turned_off(make_saver):
    text = "a value that compresses well " * 50
    writer = make_saver()
    cp, versions = child_checkpoint(None, {"big": text, "small": 1})
    config = await writer.aput(config_for("t"), cp, {}, versions)
    await writer.aput_writes(config, [("big", text)], "task")
    plain = make_saver()
    plain.compress = False
    cp2, versions2 = child_checkpoint(cp, {"big": text + "!"})
    config2 = await plain.aput(config, cp2, {}, versions2)
    with raw_connection(writer) as db:
        blobs = db.execute("SELECT channel, version, type, length(blob) FROM checkpoint_blobs")
        writes = db.execute("SELECT type, length(blob) FROM checkpoint_writes")
    raw_size = len(MsgpackSerializer().dumps(text))
    by_version = {(ch, v): (t, n) for ch, v, t, n in blobs}
    first = by_version[("big", compact_version(versions["big"]))]
    assert first[0] == "msgpack+zlib" and first[1] < raw_size // 4
    assert by_version[("big", compact_version(versions2["big"]))] == ("msgpack", raw_size + 1)
    assert by_version[("small", compact_version(versions["small"]))][0] == "msgpack"
    assert writes[0][0] == "msgpack+zlib"
    for saver in (writer, plain):  # each reads both forms
        tup = await saver.aget_tuple(config)
        assert tup is not None and tup.checkpoint["channel_values"]["big"] == text
        assert tup.pending_writes == [("task", "big", text)]
        tup2 = await saver.aget_tuple(config2)
        assert tup2 is not None and tup2.checkpoint["channel_values"]["big"] == text + "!"


async def test_corrupt_compressed_blob_raises_naming_thread_checkpoint_and_channel(make_saver):
    saver = make_saver()
    cp, versions = child_checkpoint(None, {"big": "compressible " * 100})
    config = await saver.aput(config_for("t"), cp, {}, versions)
    with raw_connection(saver) as db:
        db.execute("UPDATE checkpoint_blobs SET blob = ? WHERE channel = 'big'", (b"not zlib",))
    with pytest.raises(CorruptPayloadError, match="compressed blob is corrupt") as info:
        await saver.aget_tuple(config)
    assert "'t'" in str(info.value) and cp["id"] in str(info.value) and "'big'" in str(info.value)


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
    loaded = await saver.aget_tuple(config_for("t"))
    assert loaded is not None
    fields = {"command": f"touch {marker}", "args": [f"touch {marker}"]}
    tagged = {"__type__": name, **fields} if code != 10 else {"__type__": name, "value": fields}
    assert loaded.checkpoint["channel_values"]["b"] == tagged  # the fields, never a call
    assert [w[2] for w in loaded.pending_writes] == [tagged]
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
    loaded = await saver.aget_tuple(config_for("t"))
    assert loaded is not None  # an unknown class loads as its fields, tagged with its name
    fields = {"command": f"touch {marker}", "args": [f"touch {marker}"]}
    assert loaded.metadata == {"__type__": "os.system", **fields}
    assert not marker.exists()


async def test_malformed_pointer_map_raises_naming_thread_and_checkpoint(make_saver):
    saver = make_saver()
    configs = await put_two(saver, "t")
    checkpoint_id = configs[1]["configurable"]["checkpoint_id"]
    with raw_connection(saver) as db:
        db.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
            ('{"channel_versions": {"1.ab": 7}, "versions_seen": {}}', checkpoint_id),
        )
    with pytest.raises(CorruptPayloadError, match="channel names per version") as info:
        await saver.aget_tuple(config_for("t"))
    assert "'t'" in str(info.value) and checkpoint_id in str(info.value)


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
    cp["channel_values"]["odd"] = "x"  # with a value, so it has a blob row
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
