"""Decoding limits: no stored byte crashes the interpreter,
exhausts memory or ends in anything but a :class:`CorruptPayloadError` naming where it is."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from builders import child_checkpoint, config_for, raw_connection

from durable_debug.checkpoint.compress import CompressingSerializer
from durable_debug.checkpoint.serde import (
    MAX_BYTES,
    MAX_DEPTH,
    CorruptPayloadError,
    Limits,
    MsgpackSerializer,
    UnsupportedValueError,
)
from durable_debug.checkpoint.sqlite import SqliteSaver

SRC = Path(__file__).resolve().parents[2] / "src"


def nested_ext(levels: int) -> bytes:
    """The payload of finding 1: ``[1]`` wrapped in ``levels`` extension types."""
    payload = msgpack.packb([1])
    for _ in range(levels):
        payload = msgpack.packb(msgpack.ExtType(1, payload))
    return payload


def nested_list(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver(str(tmp_path / "checkpoints.db")) as s:
        yield s


# --- finding 1: nested extension types ---------------------------------------------------------

CRASH_SCRIPT = """
import base64, json, sqlite3, sys, zlib
from typing import TypedDict
import msgpack
from durable_debug import END, START, SqliteSaver, StateGraph

class State(TypedDict):
    a: list
    b: str

payload = msgpack.packb([1])
for _ in range(200):
    payload = msgpack.packb(msgpack.ExtType(1, payload))

graph = StateGraph(State)
graph.add_node("n", lambda s: {"a": [2], "b": "x" * 400})
graph.add_edge(START, "n")
graph.add_edge("n", END)
results = {}
for case in ("blob", "zlib blob", "metadata"):
    path = sys.argv[1] + "/" + case.replace(" ", "_") + ".db"
    with SqliteSaver(path) as saver:
        app = graph.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t-" + case}}
        app.invoke({"a": [1], "b": ""}, config)
        db = sqlite3.connect(path)
        if case == "blob":
            db.execute("UPDATE checkpoint_blobs SET blob = ? WHERE channel = 'a'", (payload,))
        elif case == "zlib blob":
            db.execute(
                "UPDATE checkpoint_blobs SET type = 'msgpack+zlib', blob = ? WHERE channel = 'a'",
                (zlib.compress(payload),),
            )
        else:
            text = json.dumps({"$serde": ["msgpack", base64.b64encode(payload).decode()]})
            db.execute("UPDATE checkpoints SET metadata = ?", (text,))
        db.commit()
        db.close()
        try:
            app.get_state(config)
        except Exception as exc:
            results[case] = [type(exc).__name__, str(exc)]
        else:
            results[case] = ["no error", ""]
print(json.dumps(results))
"""


def test_nested_extension_types_are_refused_not_a_segfault(tmp_path: Path) -> None:
    # In a child process: before the limit, reading these rows killed the interpreter.
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CRASH_SCRIPT), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for case, (kind, message) in results.items():
        assert kind == "CorruptPayloadError", (case, kind, message)
        assert f"thread 't-{case}'" in message, message
        assert f"deeper than the limit of {MAX_DEPTH} levels" in message, message
    assert "channel 'a'" in results["blob"][1] and "channel 'a'" in results["zlib blob"][1]
    assert "field 'metadata'" in results["metadata"][1]


def mixed(levels: int) -> Any:
    """``levels`` containers, alternately tuples (an extension type) and lists."""
    value: Any = 1
    for level in range(levels):
        value = [value] if level % 2 else (value,)
    return value


def test_extension_levels_and_containers_count_together() -> None:
    serde = MsgpackSerializer(limits=Limits(max_depth=10))
    assert serde.loads(nested_ext(10)) == (1,)
    with pytest.raises(CorruptPayloadError, match="deeper than the limit of 10 levels"):
        serde.loads(nested_ext(11))
    written = MsgpackSerializer(limits=Limits(max_depth=100))
    assert serde.loads(written.dumps(mixed(10))) == mixed(10)
    with pytest.raises(CorruptPayloadError, match="max_depth.*DURABLE_DEBUG_MAX_DEPTH"):
        serde.loads(written.dumps(mixed(11)))


def test_a_value_too_deep_to_load_is_refused_when_saving(saver: SqliteSaver) -> None:
    serde = MsgpackSerializer()
    assert serde.loads(serde.dumps(nested_list(MAX_DEPTH))) == nested_list(MAX_DEPTH)
    with pytest.raises(UnsupportedValueError, match=f"deeper than the limit of {MAX_DEPTH}"):
        serde.dumps(nested_list(MAX_DEPTH + 1))
    tuples: Any = ()
    for _ in range(2000):  # each level is an extension type, packed by a nested call
        tuples = (tuples,)
    with pytest.raises(UnsupportedValueError, match="deeper than the limit"):
        serde.dumps(tuples)
    cp, versions = child_checkpoint(None, {"deep": nested_list(MAX_DEPTH + 1)})
    with pytest.raises(UnsupportedValueError, match="channel 'deep'.*deeper than the limit"):
        saver.put(config_for("t"), cp, {}, versions)


def test_a_blob_of_containers_nested_too_deep_names_its_channel(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"a": [1]})
    config = saver.put(config_for("t"), cp, {}, versions)
    blob = b"\x91" * (MAX_DEPTH + 1) + b"\x01"  # lists nested one level past the limit
    with raw_connection(saver) as db:
        db.execute("UPDATE checkpoint_blobs SET blob = ? WHERE channel = 'a'", (blob,))
    with pytest.raises(CorruptPayloadError, match="deeper than the limit") as info:
        saver.get_tuple(config)
    assert "thread 't'" in str(info.value) and "channel 'a'" in str(info.value)
    assert cp["id"] in str(info.value)


# --- finding 2: a zip bomb ---------------------------------------------------------------------


def bin_bomb(size: int) -> bytes:
    """A valid compressed msgpack blob: ``size`` zero bytes, streamed into zlib."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b"\xc6" + size.to_bytes(4, "big"))]
    chunk = bytes(1 << 20)
    for _ in range(size >> 20):
        parts.append(packer.compress(chunk))
    parts.append(packer.flush())
    return b"".join(parts)


def test_a_zip_bomb_stops_at_the_size_limit_in_bounded_memory(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"big": "compressible " * 100})
    config = saver.put(config_for("t"), cp, {}, versions)
    bomb = bin_bomb(2 * MAX_BYTES)  # 512 KiB stored, 512 MiB unpacked
    with raw_connection(saver) as db:
        db.execute("UPDATE checkpoint_blobs SET blob = ? WHERE channel = 'big'", (bomb,))
    tracemalloc.start()
    try:
        with pytest.raises(CorruptPayloadError, match="expands to more than") as info:
            saver.get_tuple(config)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "thread 't'" in str(info.value) and "channel 'big'" in str(info.value)
    assert f"{MAX_BYTES} bytes" in str(info.value)
    assert peak < MAX_BYTES * 1.25, f"peak {peak} bytes"


def test_the_size_limit_is_configurable_and_applies_to_plain_blobs_too() -> None:
    small = Limits(max_bytes=1000)
    serde = CompressingSerializer(MsgpackSerializer(limits=small))
    data = "x" * 5000
    packed = CompressingSerializer(MsgpackSerializer()).dumps_typed(data)
    assert MsgpackSerializer().loads_typed(("msgpack", msgpack.packb(data))) == data
    with pytest.raises(CorruptPayloadError, match="expands to more than 1000 bytes"):
        serde.loads_typed(packed)
    with pytest.raises(CorruptPayloadError, match="5003 bytes, more than the limit of 1000"):
        serde.loads_typed(("msgpack", msgpack.packb(data)))
    with pytest.raises(UnsupportedValueError, match="more than the limit of 1000"):
        serde.dumps_typed(data)
    with pytest.raises(CorruptPayloadError, match="truncated"):
        CompressingSerializer(MsgpackSerializer()).loads_typed(("msgpack+zlib", packed[1][:-5]))


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DURABLE_DEBUG_MAX_DEPTH", "3")
    monkeypatch.setenv("DURABLE_DEBUG_MAX_BYTES", "1_000")
    assert MsgpackSerializer().limits == Limits(max_depth=3, max_bytes=1000)
    with pytest.raises(CorruptPayloadError, match="deeper than the limit of 3"):
        MsgpackSerializer().loads(msgpack.packb(nested_list(4)))
    monkeypatch.setenv("DURABLE_DEBUG_MAX_DEPTH", "deep")
    with pytest.raises(ValueError, match="DURABLE_DEBUG_MAX_DEPTH must be a positive integer"):
        MsgpackSerializer()
    with pytest.raises(ValueError, match="max_items must be a positive int"):
        Limits(max_items=0)


def test_declared_lengths_beyond_the_data_or_the_limit_are_refused() -> None:
    serde = MsgpackSerializer(limits=Limits(max_items=10))
    with pytest.raises(CorruptPayloadError, match="not valid serialized data"):
        serde.loads(b"\xdd\xff\xff\xff\xff")  # an array of 4 billion items in 5 bytes
    with pytest.raises(CorruptPayloadError, match="not valid serialized data"):
        serde.loads(msgpack.packb(list(range(11))))
    assert serde.loads(msgpack.packb(list(range(10)))) == list(range(10))


# --- finding 4: JSON nested 100,000 deep -------------------------------------------------------


@pytest.mark.parametrize("column", ["checkpoint", "metadata"])
def test_deeply_nested_json_names_thread_and_checkpoint(saver: SqliteSaver, column: str) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, {"source": "input"}, versions)
    deep = "[" * 100_000 + "]" * 100_000
    text = (
        json.dumps({"source": "input", "step": -1})[:-1] + f', "x": {deep}}}'
        if column == "metadata"
        else f'{{"channel_versions": {{}}, "versions_seen": {{}}, "x": {deep}}}'
    )
    with raw_connection(saver) as db:
        db.execute(f"UPDATE checkpoints SET {column} = ?", (text,))
    with pytest.raises(CorruptPayloadError, match="JSON nests deeper than the limit") as info:
        saver.get_tuple(config)
    assert f"thread 't', checkpoint '{cp['id']}', field '{column}'" in str(info.value)


def test_json_just_past_the_depth_limit_is_refused(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, {"deep": nested_list(MAX_DEPTH - 1)}, versions)
    tup = saver.get_tuple(config)
    assert tup is not None and tup.metadata["deep"] == nested_list(MAX_DEPTH - 1)
    cp2, versions2 = child_checkpoint(cp, {"a": 2})
    with pytest.raises(UnsupportedValueError, match="field 'metadata'.*deeper than the limit"):
        saver.put(config, cp2, {"deep": nested_list(MAX_DEPTH)}, versions2)
    wrapped = base64.b64encode(msgpack.packb(nested_list(MAX_DEPTH + 1))).decode()
    with raw_connection(saver) as db:
        db.execute(
            "UPDATE checkpoints SET metadata = ?", (f'{{"$serde": ["msgpack", "{wrapped}"]}}',)
        )
    with pytest.raises(CorruptPayloadError, match="field 'metadata'.*deeper than the limit"):
        saver.get_tuple(config)


def test_the_storage_doc_lists_every_limit_with_its_default() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "storage.md").read_text()
    table = doc.split("<!-- limits -->", 1)[1].strip().split("\n\n", 1)[0]
    rows = {
        cells[0].strip("` "): (cells[1], cells[3].strip("` "))
        for line in table.splitlines()[2:]
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    defaults = Limits()
    assert set(rows) == {f.name for f in dataclasses.fields(Limits)}
    for name, (default, variable) in rows.items():
        assert default.split()[0] == str(getattr(defaults, name)), name
        assert variable == f"DURABLE_DEBUG_{name.upper()}"


def test_extension_payloads_nested_in_each_other_count_together_against_the_size() -> None:
    # Each open extension level holds a copy of its payload while it loads: without a bound on
    # their sum, a 256 MiB payload wrapped 128 times would need 32 GiB.
    serde = MsgpackSerializer(limits=Limits(max_bytes=1000))
    one = (b"x" * 600,)
    assert serde.loads(serde.dumps(one)) == one
    with pytest.raises(UnsupportedValueError, match=r"nested in each other hold 12\d\d bytes"):
        serde.dumps((one,))  # refused when saving, because loading would refuse it:
    nested = MsgpackSerializer(limits=Limits(max_bytes=10_000)).dumps((one,))
    with pytest.raises(CorruptPayloadError, match="nested in each other hold more than 1000"):
        serde.loads(nested)


SMALL_STACK_SCRIPT = """
import threading, msgpack
from durable_debug.checkpoint.serde import MAX_DEPTH, CorruptPayloadError, MsgpackSerializer

def nested(levels):
    payload = msgpack.packb([1])
    for _ in range(levels):
        payload = msgpack.packb(msgpack.ExtType(1, payload))
    return payload

results = []
def load():
    serde = MsgpackSerializer()
    results.append(serde.loads(nested(MAX_DEPTH)))
    try:
        serde.loads(nested(MAX_DEPTH + 1))
    except CorruptPayloadError as exc:
        results.append(str(exc))

threading.stack_size(STACK_KIB * 1024)
thread = threading.Thread(target=load)
thread.start()
thread.join()
print(results)
"""


def test_the_deepest_allowed_payload_loads_in_a_thread_with_a_small_stack() -> None:
    # The stack MAX_DEPTH's docstring promises for this Python (3.10 and 3.13 need more).
    stack_kib = {(3, 10): 384, (3, 13): 320}.get(sys.version_info[:2], 256)
    script = textwrap.dedent(SMALL_STACK_SCRIPT).replace("STACK_KIB", str(stack_kib))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.startswith("[(1,), 'the blob nests deeper than the limit of 128 levels")
