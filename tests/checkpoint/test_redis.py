"""RedisSaver specifics (``checkpoint/redis.py`` and ``checkpoint/_redis_layout.py``): the key
layout that docs/storage.md documents, ttl, bad and hostile values, the optional dependency,
the saver's lifecycle, listing many threads."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import multiprocessing
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis  # the dev extra installs it; without it this module fails loudly
from builders import (
    chain_builder,
    child_checkpoint,
    config_for,
    hostile_payload,
    redis_thread_keys,
)

from durable_debug.checkpoint._redis_layout import blob_field, pack_value
from durable_debug.checkpoint._rows import compact_version
from durable_debug.checkpoint.base import Completed
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.redis import AsyncRedisSaver, DatabaseSetupError, RedisSaver
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    UnsupportedValueError,
)

SRC = Path(__file__).resolve().parents[2] / "src"
DOC = Path(__file__).resolve().parents[2] / "docs" / "storage.md"
SERDE = MsgpackSerializer()


@pytest.fixture
def saver(redis_db: str) -> Iterator[RedisSaver]:
    s = RedisSaver(redis_db)
    yield s
    s.close()


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    """A plain redis-py client on the same server: what a user's redis-cli sees."""
    c = redis.Redis.from_url(redis_url)
    yield c
    c.close()


async def put_two(saver: Any, thread_id: str, ns: str = "") -> list[dict]:
    """Two checkpoints (a=1, b="two"; then a=2) and one pending write on the second."""
    cp1, v1 = child_checkpoint(None, {"a": 1, "b": "two"})
    c1 = await saver.aput(config_for(thread_id, ns), cp1, {"source": "input", "step": -1}, v1)
    cp2, v2 = child_checkpoint(cp1, {"a": 2})
    c2 = await saver.aput(c1, cp2, {"source": "loop", "step": 0}, v2)
    await saver.aput_writes(c2, [("a", 3)], "task")
    return [c1, c2]


def cid(config: dict) -> str:
    return config["configurable"]["checkpoint_id"]


async def pointers_of(saver: RedisSaver, config: dict) -> dict[str, str]:
    """The pointer map of a stored checkpoint, versions as stored (without zero padding)."""
    tup = await saver.aget_tuple(config)
    assert tup is not None
    return {ch: compact_version(v) for ch, v in tup.checkpoint["channel_versions"].items()}


def grouped(pointers: dict[str, str]) -> dict[str, list[str]]:
    """A pointer map as stored in the JSON: version → its channels, sorted."""
    out: dict[str, list[str]] = {}
    for channel, version in sorted(pointers.items()):
        out.setdefault(version, []).append(channel)
    return out


def stored_map(record: dict[str, Any]) -> dict[str, list[str]]:
    """The stored pointer map of a checkpoint record, each version's channels sorted."""
    return {version: sorted(chs) for version, chs in record["channel_versions"].items()}


def dump(client: redis.Redis, prefix: str) -> dict[str, Any]:
    """Every key under ``prefix`` with its content and whether it expires."""
    out: dict[str, Any] = {}
    for key in client.scan_iter(match=f"{prefix}:*"):
        kind = client.type(key).decode()
        reader = {
            "string": client.get,
            "hash": client.hgetall,
            "zset": lambda k: client.zrange(k, 0, -1, withscores=True),
            "set": lambda k: sorted(client.smembers(k)),
        }[kind]
        out[key.decode()] = (kind, reader(key), client.pttl(key) > 0)
    return out


def packed(header: list[str], value: Any) -> bytes:
    return json.dumps(header, separators=(",", ":")).encode() + b"\n" + SERDE.dumps(value)


# --- the optional dependency, connecting -------------------------------------------------------


def test_async_alias_is_the_same_class():
    assert AsyncRedisSaver is RedisSaver


def test_missing_redis_package_is_a_clear_import_error():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["redis"] = None  # as if the redis extra were not installed
        import durable_debug.checkpoint.redis as module
        from durable_debug.checkpoint.url import saver_from_url
        saver_from_url("sqlite://").close()
        for make in (lambda: module.RedisSaver("redis://localhost/0"),
                     lambda: saver_from_url("redis://localhost/0")):
            try:
                make()
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
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    assert all("pip install 'durable-debug[redis]'" in line for line in lines)


def test_unreachable_server_is_a_clear_error_without_the_password():
    saver = RedisSaver("redis://:s3cret@127.0.0.1:1/0", connect_timeout=2)
    with pytest.raises(DatabaseSetupError, match="cannot use the Redis server") as info:
        saver.setup()
    assert "s3cret" not in str(info.value) and ":***@127.0.0.1:1/0" in str(info.value)
    assert "s3cret" not in repr(saver)
    saver.close()


def test_wrong_argument_type_and_scheme_are_clear_errors():
    with pytest.raises(TypeError, match="redis:// URL"):
        RedisSaver(redis.Redis())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a Redis URL"):
        RedisSaver("http://localhost:6379")


# --- the key layout ----------------------------------------------------------------------------


def documented_keys() -> dict[str, str]:
    """The Redis key table of docs/storage.md: key pattern → type."""
    table = DOC.read_text().split("<!-- redis-keys -->", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (\w+) \|", table, re.MULTILINE)
    return dict(rows)


def pattern(documented: str, prefix: str) -> re.Pattern[str]:
    """A regex for a documented key name: ``P`` the prefix, ``{T}``/``{N}`` one name part."""
    parts = re.split(r"(\{[TN]\})", documented.removeprefix("P"))
    body = "".join("[^:]*" if p in ("{T}", "{N}") else re.escape(p) for p in parts)
    return re.compile(re.escape(prefix) + body)


@pytest.mark.redis
async def test_keys_are_laid_out_as_documented(saver: RedisSaver, client: redis.Redis):
    configs = await put_two(saver, "job:1")
    await put_two(saver, "job:1", ns="sub:1")
    await put_two(saver, "other")
    c1, c2 = (cid(c) for c in configs)
    await saver.aset_debug_record("job:1", "", c2, {"findings": []})  # the debug hash
    documented = documented_keys()
    assert len(documented) == 11

    actual = {k.decode(): client.type(k).decode() for k in client.scan_iter(f"{saver.prefix}:*")}
    patterns = {doc: pattern(doc, saver.prefix) for doc in documented}
    used = set()
    for key, kind in actual.items():
        matches = [doc for doc, regex in patterns.items() if regex.fullmatch(key)]
        assert len(matches) == 1, (key, matches)
        assert documented[matches[0]] == kind, key
        used.add(matches[0])
    assert used == set(documented)  # every documented key exists

    p = f"{saver.prefix}:thread:job%3A1:"  # ":" in an id is written %3A
    assert client.get(f"{saver.prefix}:schema_version") == b"2"
    threads = client.zrange(f"{saver.prefix}:threads", 0, -1, withscores=True)
    assert sorted(threads) == [(b"job:1", float("inf")), (b"other", float("inf"))]
    assert client.smembers(p + "namespaces") == {b"", b"sub%3A1"}
    assert client.zrange(p + ":checkpoints", 0, -1, withscores=True) == [
        (c1.encode(), 0.0),
        (c2.encode(), 0.0),
    ]
    pointers = await pointers_of(saver, configs[1])
    record = json.loads(client.hget(p + ":checkpoint", c2))
    assert stored_map(record) == grouped(pointers) and "channel_values" not in record
    assert json.loads(client.hget(p + ":metadata", c2)) == {"source": "loop", "step": 0}
    assert json.loads(client.hget(p + ":debug", c2)) == {"findings": []}
    assert client.hgetall(p + ":parent") == {c2.encode(): c1.encode()}
    blobs = client.hgetall(p + ":blobs")
    first = await pointers_of(saver, configs[0])
    assert {f.decode() for f in blobs} == {
        f"a:{first['a']}",
        f"a:{pointers['a']}",
        f"b:{pointers['b']}",
    }
    assert blobs[f"b:{pointers['b']}".encode()] == packed(["msgpack"], "two")
    assert client.zrange(p + ":writes", 0, -1) == [f"{c2}:task:0".encode()]
    assert client.hgetall(p + ":write") == {
        f"{c2}:task:0".encode(): packed(["msgpack", "a", ""], 3)
    }


@pytest.mark.redis
async def test_records_stored_before_version_maps_were_grouped_are_read(
    saver: RedisSaver, client: redis.Redis
):
    configs = await put_two(saver, "t")
    before = await saver.aget_tuple(configs[1])
    assert before is not None
    key = f"{saver.prefix}:thread:t::checkpoint"
    record = json.loads(client.hget(key, cid(configs[1])))
    flat = {ch: compact_version(v) for ch, v in before.checkpoint["channel_versions"].items()}
    record["channel_versions"] = flat
    record["versions_seen"] = {
        node: {ch: compact_version(v) for ch, v in seen.items()}
        for node, seen in before.checkpoint["versions_seen"].items()
    }
    client.hset(key, cid(configs[1]), json.dumps(record))
    assert await saver.aget_tuple(configs[1]) == before


@pytest.mark.redis
async def test_a_blob_is_written_once(saver: RedisSaver, client: redis.Redis):
    configs = await put_two(saver, "t")
    tup = await saver.aget_tuple(configs[1])
    assert tup is not None
    # A buggy caller re-announces version of "b" with another value: the stored blob stays.
    again = dict(tup.checkpoint, id="ffffffff-0000-6000-8000-000000000000")
    again["channel_values"] = {"a": 2, "b": "changed"}
    await saver.aput(configs[1], again, {}, {"b": tup.checkpoint["channel_versions"]["b"]})  # type: ignore[arg-type]
    field = f"b:{(await pointers_of(saver, configs[1]))['b']}"
    assert client.hget(f"{saver.prefix}:thread:t::blobs", field) == packed(["msgpack"], "two")
    latest = await saver.aget_tuple(config_for("t"))
    assert latest is not None and latest.checkpoint["channel_values"]["b"] == "two"


@pytest.mark.redis
async def test_ids_with_colons_never_share_keys(saver: RedisSaver):
    places = [("a:b", ""), ("a", "b"), ("a", "b:"), ("a%3Ab", "")]
    configs = {}
    for n, (thread, ns) in enumerate(places):
        cp, versions = child_checkpoint(None, {"who": n})
        configs[n] = await saver.aput(config_for(thread, ns), cp, {"step": n}, versions)
    for n, (thread, ns) in enumerate(places):
        tup = await saver.aget_tuple(config_for(thread, ns))
        assert tup is not None and tup.config == configs[n]
        assert tup.checkpoint["channel_values"] == {"who": n}
    listed = [t.config async for t in saver.alist({"configurable": {"thread_id": "a"}})]
    assert sorted(map(cid, listed)) == sorted([cid(configs[1]), cid(configs[2])])
    await saver.adelete_thread("a")
    assert await saver.alist_threads() == ["a:b", "a%3Ab"]


@pytest.mark.redis
async def test_redis_cli_commands_of_the_docs_show_the_thread(saver: RedisSaver, redis_url: str):
    from servers import services_required

    cli = shutil.which("redis-cli")
    if cli is None:
        message = "redis-cli not found: install Debian's redis-tools (or redis-server)"
        if services_required():
            pytest.fail(message)
        pytest.skip(message)
    configs = await put_two(saver, "job-1")
    pointers = await pointers_of(saver, configs[1])
    blob_fields = {f"{ch}:{v}" for ch, v in pointers.items()}
    blob_fields.add(f"a:{(await pointers_of(saver, configs[0]))['a']}")
    block = DOC.read_text().split("<!-- redis-cli: thread -->", 1)[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    keys = {key for key, *_ in redis_thread_keys(saver)} | {
        f"{saver.prefix}:thread:job-1:namespaces"
    }
    expected = {
        ("ZRANGE", "threads"): ["job-1", "inf"],
        ("--scan", "*"): sorted(keys),
        ("SMEMBERS", "namespaces"): [""],
        ("ZRANGE", "checkpoints"): [cid(configs[0]), cid(configs[1])],
        ("HGET", "metadata"): [json.dumps({"source": "loop", "step": 0}, separators=(",", ":"))],
        ("HGET", "parent"): [cid(configs[0])],
        ("HKEYS", "blobs"): sorted(blob_fields),
        ("HSTRLEN", "blobs"): [str(len(packed(["msgpack"], "two")))],
        ("ZRANGE", "writes"): [f"{cid(configs[1])}:task:0"],
        ("PTTL", "checkpoints"): ["-1"],
    }
    seen = set()
    for line in block.strip().splitlines():
        args = shlex.split(line.replace("durable_debug:", f"{saver.prefix}:"), comments=True)
        args = [
            {"CHECKPOINT_ID": cid(configs[1]), "BLOB_FIELD": f"b:{pointers['b']}"}.get(a, a)
            for a in args[1:]
        ]
        key = args[2] if args[0] == "--scan" else args[1]
        what = (args[0], key.rsplit(":", 1)[1])
        out = subprocess.run(
            [cli, "-u", redis_url, *args], capture_output=True, text=True, timeout=30, check=True
        ).stdout.splitlines()
        seen.add(what)
        if what == ("HGET", "checkpoint"):
            assert stored_map(json.loads(out[0])) == grouped(pointers), line
        elif what in (("--scan", "*"), ("HKEYS", "blobs")):
            assert sorted(out) == sorted(expected[what]), line
        else:
            assert out == expected[what], line
    assert seen == {*expected, ("HGET", "checkpoint")}  # every documented command was run


@pytest.mark.redis
async def test_the_docs_shell_loop_prints_each_checkpoints_step_and_source(
    saver: RedisSaver, redis_url: str, tmp_path: Path
):
    """docs/storage.md's ``for id in …`` loop, run by bash with the ``redis-cli`` it names
    pointed at the test server."""
    from servers import services_required

    tools = {name: shutil.which(name) for name in ("redis-cli", "jq")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        message = f"{', '.join(missing)} not found: install Debian's redis-tools and jq"
        if services_required():
            pytest.fail(message)
        pytest.skip(message)
    await put_two(saver, "job-1")
    block = DOC.read_text().split("<!-- redis-cli: steps -->", 1)[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    wrapper = tmp_path / "redis-cli"
    wrapper.write_text(
        f'#!/bin/sh\nexec {shlex.quote(str(tools["redis-cli"]))} -u {shlex.quote(redis_url)} "$@"\n'
    )
    wrapper.chmod(0o755)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.replace("durable_debug:", f"{saver.prefix}:")],
        env={**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    steps = ['{"step":-1,"source":"input"}', '{"step":0,"source":"loop"}']
    assert proc.stdout.splitlines() == steps


# --- ttl ---------------------------------------------------------------------------------------


def thread_keys(client: redis.Redis, saver: RedisSaver, thread_id: str) -> list[bytes]:
    """Every key of a thread (whose id needs no escaping), as docs/storage.md names them."""
    return list(client.scan_iter(match=f"{saver.prefix}:thread:{thread_id}:*"))


@pytest.mark.redis
async def test_ttl_sets_every_key_of_the_thread_to_expire(redis_db: str, client: redis.Redis):
    async with RedisSaver.from_conn_string(f"{redis_db}&ttl=600") as saver:
        assert saver.ttl == 600
        await put_two(saver, "short")
        await put_two(saver, "short", ns="sub")
        keys = thread_keys(client, saver, "short")
        assert len(keys) == 1 + 2 * 7
        assert all(0 < client.pttl(k) <= 600_000 for k in keys)
        assert client.pttl(f"{saver.prefix}:schema_version") == -1
        assert client.pttl(f"{saver.prefix}:threads") == -1
        seconds, micros = client.time()
        deadline = client.zscore(f"{saver.prefix}:threads", "short")
        assert 0 < deadline - (seconds * 1000 + micros // 1000) <= 600_000


@pytest.mark.redis
async def test_each_write_extends_every_key_of_the_thread(redis_db: str, client: redis.Redis):
    async with RedisSaver(redis_db, ttl=600) as saver:
        configs = await put_two(saver, "t")
        for key in thread_keys(client, saver, "t"):
            client.pexpire(key, 5_000)  # as if the thread were old
        await saver.aput_writes(configs[0], [("b", "late")], "late-task")
        assert all(client.pttl(k) > 5_000 for k in thread_keys(client, saver, "t"))
        for key in thread_keys(client, saver, "t"):
            client.pexpire(key, 5_000)
        tup = await saver.aget_tuple(configs[1])
        assert tup is not None
        cp, versions = child_checkpoint(tup.checkpoint, {"a": 9})
        await saver.aput(configs[1], cp, {"source": "loop", "step": 1}, versions)
        assert all(client.pttl(k) > 5_000 for k in thread_keys(client, saver, "t"))


@pytest.mark.redis
async def test_thread_disappears_when_its_ttl_passes(redis_db: str, client: redis.Redis):
    async with RedisSaver(redis_db, ttl=1) as short, RedisSaver(redis_db) as kept:
        await put_two(short, "short")
        await put_two(kept, "kept")
        keys = thread_keys(client, short, "short")
        deadline = time.monotonic() + 30
        while client.exists(*keys) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert client.exists(*keys) == 0
        assert await short.aget_tuple(config_for("short")) is None
        assert await short.alist_threads() == ["kept"]
        assert [t.config["configurable"]["thread_id"] async for t in short.alist(None)] == [
            "kept",
            "kept",
        ]
        assert client.zscore(f"{short.prefix}:threads", "short") is not None
        await put_two(kept, "kept-2")  # any write drops expired threads from P:threads
        assert client.zscore(f"{short.prefix}:threads", "short") is None


@pytest.mark.redis
async def test_writing_without_ttl_makes_a_thread_permanent(redis_db: str, client: redis.Redis):
    async with RedisSaver(redis_db, ttl=600) as short, RedisSaver(redis_db) as forever:
        configs = await put_two(short, "t")
        await forever.aput_writes(configs[1], [("b", "x")], "other-task")
        assert all(client.pttl(k) == -1 for k in thread_keys(client, forever, "t"))
        assert client.zscore(f"{forever.prefix}:threads", "t") == float("inf")


# --- bad values --------------------------------------------------------------------------------


@pytest.mark.redis
@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (b"\xc1\xff garbage without a header", "header line"),
        (b'["msgpack"]\n\xc1\xff garbage', "not valid serialized data"),
        (b'["gzip"]\n\x00', "unknown blob type tag 'gzip'"),
    ],
)
async def test_corrupt_blob_raises_naming_thread_checkpoint_and_channel(
    saver: RedisSaver, client: redis.Redis, stored: bytes, message: str
):
    configs = await put_two(saver, "t")
    await put_two(saver, "other")
    blobs = f"{saver.prefix}:thread:t::blobs"
    (field,) = [f for f in client.hkeys(blobs) if f.startswith(b"b:")]
    client.hset(blobs, field, stored)
    before = dump(client, saver.prefix)
    with pytest.raises(CorruptPayloadError, match=message) as info:
        await saver.aget_tuple(config_for("t"))
    text = str(info.value)
    assert "thread 't'" in text and cid(configs[1]) in text and "channel 'b'" in text
    with pytest.raises(CorruptPayloadError, match=message):
        [t async for t in saver.alist(config_for("t"))]
    other = await saver.aget_tuple(config_for("other"))
    assert other is not None and other.checkpoint["channel_values"] == {"a": 2, "b": "two"}
    assert dump(client, saver.prefix) == before


@pytest.mark.redis
async def test_corrupt_write_raises_naming_thread_checkpoint_and_write(
    saver: RedisSaver, client: redis.Redis
):
    configs = await put_two(saver, "t")
    field = f"{cid(configs[1])}:task:0"
    client.hset(f"{saver.prefix}:thread:t::write", field, b"no header here")
    with pytest.raises(CorruptPayloadError, match="header line") as info:
        await saver.aget_tuple(config_for("t"))
    assert f"write '{field}'" in str(info.value) and cid(configs[1]) in str(info.value)


@pytest.mark.redis
@pytest.mark.parametrize(
    ("code", "name"),
    [(11, "os.system"), (12, "subprocess.getoutput"), (10, "builtins.eval"), (11, "posix.system")],
)
async def test_hostile_blob_and_write_execute_nothing(
    saver: RedisSaver, client: redis.Redis, tmp_path: Path, code: int, name: str
):
    configs = await put_two(saver, "t")
    marker = tmp_path / "pwned"
    hostile = hostile_payload(code, name, marker)
    blobs = f"{saver.prefix}:thread:t::blobs"
    (field,) = [f for f in client.hkeys(blobs) if f.startswith(b"b:")]
    client.hset(blobs, field, b'["msgpack"]\n' + hostile)
    write = f"{cid(configs[1])}:task:0"
    client.hset(f"{saver.prefix}:thread:t::write", write, b'["msgpack","a",""]\n' + hostile)
    before = dump(client, saver.prefix)
    loaded = await saver.aget_tuple(config_for("t"))
    assert loaded is not None
    fields = {"command": f"touch {marker}", "args": [f"touch {marker}"]}
    tagged = {"__type__": name, **fields} if code != 10 else {"__type__": name, "value": fields}
    assert loaded.checkpoint["channel_values"]["b"] == tagged  # the fields, never a call
    assert [w[2] for w in loaded.pending_writes] == [tagged]
    client.hset(blobs, field, packed(["msgpack"], "two"))
    assert not marker.exists()
    before[blobs] = ("hash", client.hgetall(blobs), False)
    assert dump(client, saver.prefix) == before


@pytest.mark.redis
async def test_hostile_metadata_executes_nothing(
    saver: RedisSaver, client: redis.Redis, tmp_path: Path
):
    configs = await put_two(saver, "t")
    marker = tmp_path / "pwned"
    payload = base64.b64encode(hostile_payload(11, "os.system", marker)).decode()
    client.hset(
        f"{saver.prefix}:thread:t::metadata",
        cid(configs[1]),
        f'{{"$serde": ["msgpack", "{payload}"]}}',
    )
    loaded = await saver.aget_tuple(config_for("t"))
    assert loaded is not None  # an unknown class loads as its fields, tagged with its name
    fields = {"command": f"touch {marker}", "args": [f"touch {marker}"]}
    assert loaded.metadata == {"__type__": "os.system", **fields}
    assert not marker.exists()


@pytest.mark.redis
async def test_unsupported_value_writes_nothing(saver: RedisSaver, client: redis.Redis):
    configs = await put_two(saver, "t")
    before = dump(client, saver.prefix)
    latest = await saver.aget_tuple(configs[1])
    assert latest is not None
    cp, versions = child_checkpoint(latest.checkpoint, {"a": 5, "lock": asyncio.Lock()})
    with pytest.raises(UnsupportedValueError, match="'lock'"):
        await saver.aput(configs[1], cp, {"source": "loop", "step": 1}, versions)
    cp, versions = child_checkpoint(latest.checkpoint, {"a": 5})
    with pytest.raises(UnsupportedValueError, match="metadata"):
        await saver.aput(configs[1], cp, {"source": "loop", "step": 1, "x": object()}, versions)
    with pytest.raises(UnsupportedValueError, match="'a'"):
        await saver.aput_writes(configs[1], [("b", "fine"), ("a", object())], "task-2")
    assert dump(client, saver.prefix) == before


@pytest.mark.redis
async def test_key_of_another_program_stops_a_write_before_anything_is_written(
    saver: RedisSaver, client: redis.Redis
):
    await saver.asetup()
    theirs = f"{saver.prefix}:thread:t::blobs"
    client.set(theirs, "not ours")
    before = dump(client, saver.prefix)
    cp, versions = child_checkpoint(None, {"a": 1})
    with pytest.raises(DatabaseSetupError, match="another program") as info:
        await saver.aput(config_for("t"), cp, {}, versions)
    assert theirs in str(info.value) and "holds a string" in str(info.value)
    assert dump(client, saver.prefix) == before


@pytest.mark.redis
def test_store_of_a_newer_version_or_another_program_is_refused(redis_db: str, client: redis.Redis):
    saver = RedisSaver(redis_db)
    key = f"{saver.prefix}:schema_version"
    client.set(key, 99)
    with pytest.raises(DatabaseSetupError, match="newer durable_debug"):
        saver.setup()
    client.delete(key)
    client.hset(key, "v", "1")
    with pytest.raises(DatabaseSetupError, match="another program"):
        RedisSaver(redis_db).setup()
    assert list(client.scan_iter(match=f"{saver.prefix}:*")) == [key.encode()]


@pytest.mark.redis
async def test_keys_of_layout_1_are_read_as_they_are_and_marked_2(
    redis_db: str, client: redis.Redis
):
    # Layout 1 stored an empty channel in channel_versions with a blobs field of type empty;
    # a saver of layout 2 reads such a checkpoint as it is and records 2, so an older
    # durable_debug (which would miss the empty channels of newer checkpoints) refuses them.
    async with RedisSaver(redis_db) as first:
        cp, versions = child_checkpoint(None, {"a": 1, "scratch": "tmp"})
        config = await first.aput(config_for("t"), cp, {}, versions)
        child, new = child_checkpoint(cp, {"a": 2}, cleared=("scratch",))
        config2 = await first.aput(config, child, {}, new)
        expected = await first.aget_tuple(config2)
    prefix = first.prefix
    record_key = f"{prefix}:thread:t::checkpoint"
    record = json.loads(client.hget(record_key, config2["configurable"]["checkpoint_id"]))
    (version, channels), *_ = record.pop("empty_versions").items()
    assert channels == ["scratch"]
    record["channel_versions"].setdefault(version, []).extend(channels)
    client.hset(record_key, config2["configurable"]["checkpoint_id"], json.dumps(record))
    client.hset(
        f"{prefix}:thread:t::blobs", blob_field("scratch", version), pack_value(["empty"], b"")
    )
    client.set(f"{prefix}:schema_version", 1)
    async with RedisSaver(redis_db) as saver:
        assert await saver.aget_tuple(config2) == expected
    assert client.get(f"{prefix}:schema_version") == b"2"


@pytest.mark.redis
async def test_scripts_are_loaded_again_when_the_server_forgot_them(
    saver: RedisSaver, client: redis.Redis
):
    configs = await put_two(saver, "t")
    client.script_flush()  # as after a restart of the server
    assert (await saver.aget_tuple(configs[1])) is not None
    client.script_flush()
    await saver.aput_writes(configs[1], [("b", "again")], "task-2")
    assert len((await saver.aget_tuple(configs[1])).pending_writes or []) == 2  # type: ignore[union-attr]


# --- listing -----------------------------------------------------------------------------------


@pytest.mark.redis
async def test_listing_many_threads_gives_what_memory_saver_gives(saver: RedisSaver):
    saver.page_size = 3  # type: ignore[misc]  # many reads per listing
    memory = MemorySaver()
    tie, tie_versions = child_checkpoint(None, {"n": -1})
    for target in (saver, memory):  # the same checkpoint id in two threads
        for thread in ("tie-a", "tie-b"):
            await target.aput(config_for(thread), tie, {"source": "input"}, tie_versions)
    for t in range(12):
        parents: dict[str, Any] = {}
        configs = {"": config_for(f"t{t}"), "sub": config_for(f"t{t}", "sub")}
        for step in range(1 + (t * 5) % 8):
            ns = "sub" if step % 3 == 2 else ""
            cp, versions = child_checkpoint(parents.get(ns), {"n": step})
            meta = {"source": "loop" if step else "input", "step": step}
            for target in (saver, memory):
                new = await target.aput(configs[ns], cp, meta, versions)  # type: ignore[arg-type]
            configs[ns], parents[ns] = new, cp

    async def both(config: Any, **kwargs: Any) -> list[Any]:
        ours = [t.config async for t in saver.alist(config, **kwargs)]
        reference = [t.config async for t in memory.alist(config, **kwargs)]
        assert ours == reference, kwargs
        return ours

    every = await both(None)
    assert len(every) == 2 + sum(1 + (t * 5) % 8 for t in range(12))
    await both(None, limit=5)
    await both(None, before=every[7])
    await both(None, before=every[7], limit=4, filter={"source": "loop"})
    await both(None, filter={"step": 4})
    await both({"configurable": {"thread_id": "t7"}})
    await both(config_for("t7", "sub"), limit=1)
    assert await saver.alist_threads() == await memory.alist_threads()


# --- lifecycle ---------------------------------------------------------------------------------


@pytest.mark.redis
async def test_setup_works_with_and_without_await(saver: RedisSaver):
    assert isinstance(saver.setup(), Completed)
    await saver.setup()
    await saver.asetup()
    assert await saver.alist_threads() == []


@pytest.mark.redis
async def test_sync_with_block_inside_a_running_loop(redis_db: str):
    asyncio.get_running_loop()  # as in a notebook cell: a loop runs, the user writes sync code
    with RedisSaver.from_conn_string(redis_db) as saver:
        cp, versions = child_checkpoint(None, {"a": 1})
        config = saver.put(config_for("t"), cp, {}, versions)
        saver.put_writes(config, [("a", 2)], "task")
        assert saver.get_tuple(config).pending_writes == [("task", "a", 2)]  # type: ignore[union-attr]
        assert (await saver.aget_tuple(config)) is not None
        assert [t.config for t in saver.list(config_for("t"))] == [config]
        assert saver.list_threads() == ["t"]


@pytest.mark.redis
async def test_async_with_opens_and_closes(redis_db: str):
    async with RedisSaver.from_conn_string(redis_db) as saver:
        await put_two(saver, "t")
    with pytest.raises(RuntimeError, match="closed"):
        await saver.aget_tuple(config_for("t"))
    async with RedisSaver.from_conn_string(redis_db) as again:
        assert (await again.aget_tuple(config_for("t"))) is not None


@pytest.mark.redis
def test_with_opens_and_closes(redis_db: str):
    with RedisSaver.from_conn_string(redis_db) as saver:
        asyncio.run(put_two(saver, "t"))
        assert saver.get_tuple(config_for("t")) is not None
    with pytest.raises(RuntimeError, match="closed"):
        saver.get_tuple(config_for("t"))


@pytest.mark.redis
def test_saver_never_closed_warns(redis_db: str):
    saver = RedisSaver(redis_db)
    saver.setup()
    with pytest.warns(ResourceWarning, match="never closed"):
        del saver
        gc.collect()


def _forked_child(saver: Any) -> None:
    """Runs in a forked process: read the parent's checkpoint, add one of its own."""
    tup = saver.get_tuple(config_for("t"))
    assert tup is not None and tup.checkpoint["channel_values"] == {"a": 2, "b": "two"}
    cp, versions = child_checkpoint(tup.checkpoint, {"a": "from the child"})
    saver.put(tup.config, cp, {"source": "loop", "step": 1}, versions)
    saver.close()


@pytest.mark.redis
def test_forked_process_reconnects_instead_of_hanging(saver: RedisSaver):
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


@pytest.mark.redis
async def test_a_checkpoint_read_while_its_thread_is_deleted_is_whole_or_absent(redis_db: str):
    values = {f"field{i}": f"value {i}" for i in range(5)}
    async with RedisSaver(redis_db) as reader, RedisSaver(redis_db) as churner:
        stop = asyncio.Event()

        async def churn() -> None:  # recreate and delete the thread, again and again
            while not stop.is_set():
                cp, versions = child_checkpoint(None, values)
                await churner.aput(config_for("t"), cp, {"source": "input"}, versions)
                await churner.adelete_thread("t")

        task = asyncio.create_task(churn())
        seen = {"whole": 0, "absent": 0}
        try:
            for _ in range(400):
                tup = await reader.aget_tuple(config_for("t"))
                if tup is None:
                    seen["absent"] += 1
                else:
                    assert tup.checkpoint["channel_values"] == values
                    seen["whole"] += 1
        finally:
            stop.set()
            await task
        assert seen["whole"] and seen["absent"]  # both sides of the race were exercised


async def test_a_step_is_one_script_call_and_get_state_another(
    saver: RedisSaver, client: redis.Redis
):
    configs = await put_two(saver, "t")
    parent = await saver.aget_tuple(configs[1])
    assert parent is not None
    sent: list[str] = []
    conn = saver._client
    assert conn is not None
    real = conn.execute_command

    async def counted(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]))
        return await real(*args, **kwargs)

    conn.execute_command = counted  # type: ignore[method-assign]
    client.config_resetstat()
    cp3, v3 = child_checkpoint(parent.checkpoint, {"a": 4, "c": "new"})
    step = [
        ("task-1", [("a", 4), ("__error__", "boom")], ""),
        ("task-2", [("c", "new")], ""),
    ]
    c3 = await saver.aput_step(configs[1], step, cp3, {"source": "loop", "step": 1}, v3)
    assert sent == ["EVALSHA"]
    sent.clear()
    latest = await saver.aget_tuple(config_for("t"))
    assert sent == ["EVALSHA"]
    sent.clear()
    written_on = await saver.aget_tuple(configs[1])
    assert sent == ["EVALSHA"]
    stats = client.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] == 3  # one script per write and per read
    assert latest is not None and latest.config == c3
    assert latest.checkpoint["channel_values"] == {"a": 4, "b": "two", "c": "new"}
    assert written_on is not None and written_on.pending_writes == [
        ("task", "a", 3),
        ("task-1", "__error__", "boom"),
        ("task-1", "a", 4),
        ("task-2", "c", "new"),
    ]


async def test_a_graph_run_sends_one_command_per_checkpoint(saver: RedisSaver, client: redis.Redis):
    # A 10-node chain on a fresh thread, seen by the server (MONITOR, which also shows the
    # commands scripts run, marked "lua"): its latest checkpoint read once, then one command —
    # a script call — per checkpoint; besides, the thread's lease taken (SET NX, SADD) and given
    # back (a script).
    graph = chain_builder(10).compile(checkpointer=saver)
    await graph.ainvoke({"n": 0}, {"configurable": {"thread_id": "warm"}})

    with client.monitor() as monitor:
        events = monitor.listen()

        def until(marker: str) -> list[dict[str, Any]]:
            """The commands the server ran before ``ECHO marker``, which is sent now."""
            client.echo(marker)
            seen = []
            for event in events:
                if event["command"] == f"ECHO {marker}":
                    return seen
                seen.append(event)
            raise AssertionError("MONITOR ended")

        until("start")
        per_run = []
        for t in range(3):
            config = {"configurable": {"thread_id": f"t{t}"}}
            assert await graph.ainvoke({"n": 0}, config) == {"n": 10}
            sent = [e["command"].split()[0] for e in until(f"run-{t}") if e["client_type"] != "lua"]
            checkpoints = len([c async for c in saver.alist(config)])
            until(f"listed-{t}")
            per_run.append((len(sent), checkpoints, sent))
    assert all(checkpoints == 12 for _, checkpoints, _ in per_run), per_run
    for _, checkpoints, sent in per_run:
        assert sent.count("EVALSHA") == checkpoints + 1, sent  # the steps, the one read
        assert len(sent) <= checkpoints + 4, sent  # and the lease
