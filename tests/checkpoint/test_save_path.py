"""The per-step save path's shortcuts give what the general paths give: a scalar's blob is
the bytes the general encoder writes, a config's address is what the three address helpers
return (or the error they raise), and a record split from the metadata is the record stored
through JSON. The in-memory saver stays isolated from the objects a caller keeps."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import msgpack
import pytest

from durable_debug import MemorySaver
from durable_debug.checkpoint import base
from durable_debug.checkpoint.base import (
    config_address,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
    empty_checkpoint,
    new_checkpoint_id,
)
from durable_debug.checkpoint.errors import InvalidConfigError
from durable_debug.checkpoint.records import (
    RECORD_KEY,
    JSONReady,
    split_record,
    split_stored_record,
    stored_record,
)
from durable_debug.checkpoint.serde import (
    TAG,
    Limits,
    MsgpackSerializer,
    UnsupportedValueError,
    _Encoding,
)

SCALARS = [
    None,
    True,
    False,
    0,
    -32,
    -33,
    127,
    128,
    2**63 - 1,
    -(2**63),
    2**64 - 1,
    1.5,
    float("inf"),
    "",
    "text",
    "é" * 40,
    b"raw",
    [],
    ["n1", 2, None, 1.5, b"x"],
    {},
    {"a": 1, "b": "x"},
    {1: "an int key"},
]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_a_scalar_blob_is_what_the_general_encoder_writes(value: Any) -> None:
    serde = MsgpackSerializer()
    tag, payload = serde.dumps_typed(value)
    assert tag == TAG
    assert payload == _Encoding(serde).pack(value, top=True)
    loaded = serde.loads_typed((tag, payload))
    assert loaded == value and type(loaded) is type(value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (2**64, "does not fit in 64 bits"),
        (-(2**63) - 1, "does not fit in 64 bits"),
        ("\ud800", "cannot serialize"),
        ("x" * 64, "more than the limit"),
        (["x" * 40], "more than the limit"),
        ([1, 2**64], "does not fit in 64 bits"),
    ],
    ids=["too large", "too small", "lone surrogate", "over max_bytes", "list over", "in a list"],
)
def test_a_scalar_that_cannot_be_saved_still_says_why(value: Any, message: str) -> None:
    serde = MsgpackSerializer(limits=Limits(max_bytes=32))
    with pytest.raises(UnsupportedValueError, match=message):
        serde.dumps_typed(value)


def test_a_bool_is_never_taken_for_the_int_of_the_same_value() -> None:
    serde = MsgpackSerializer()
    assert serde.loads_typed(serde.dumps_typed(True)) is True
    assert serde.loads_typed(serde.dumps_typed(1)) == 1
    assert serde.dumps_typed(True)[1] == msgpack.packb(True)
    assert serde.dumps_typed(1)[1] == msgpack.packb(1)


def _address_or_error(config: Any) -> Any:
    try:
        return (
            config_thread_id(config),
            config_checkpoint_ns(config),
            config_checkpoint_id(config),
        )
    except InvalidConfigError as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize(
    "configurable",
    [
        {"thread_id": "t"},
        {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": ""},
        {"thread_id": "t", "checkpoint_ns": "sub:1", "checkpoint_id": "abc"},
        {"thread_id": 7, "checkpoint_ns": None},
        {"thread_id": uuid.UUID(int=5)},
        {"thread_id": "fil\u00e9"},
        {"thread_id": "t", "checkpoint_ns": "a\x00b"},
        {"thread_id": "t", "checkpoint_id": ["x"]},
        {"thread_id": ""},
        {"checkpoint_ns": "x"},
        {"thread_id": True},
    ],
    ids=repr,
)
def test_config_address_is_the_three_helpers_at_once(configurable: dict[str, Any]) -> None:
    config = {"configurable": configurable}
    expected = _address_or_error(config)
    try:
        got: Any = config_address(config)
    except InvalidConfigError as exc:
        got = type(exc), str(exc)
    assert got == expected


@pytest.mark.parametrize(
    "record",
    [
        {"graph_fingerprint": "f", "parent_write_ms": 1.5},
        {"b": [1, (2, 3)], "a": {"z": None, "y": JSONReady(k=1)}},
        JSONReady(x=1),
        {"nan": float("nan"), "set": ["x"]},
        {},
    ],
    ids=["scalars", "nested", "json-ready", "nan", "empty"],
)
def test_split_stored_record_is_split_record_then_stored_record(record: dict[str, Any]) -> None:
    metadata = {"step": 1, "source": "loop", RECORD_KEY: record}
    rest, expected = split_record(metadata)
    got_rest, got = split_stored_record(metadata)
    assert got_rest == rest and RECORD_KEY in metadata
    if expected is None:
        assert got is None
    else:
        assert repr(got) == repr(stored_record(expected))
        assert got is not record


def test_a_saved_step_is_not_changed_by_what_the_caller_does_afterwards() -> None:
    saver = MemorySaver()

    async def run() -> None:
        first = empty_checkpoint()
        config = await saver.aput({"configurable": {"thread_id": "t"}}, first, {"step": -1}, {})
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"a": [1]}
        checkpoint["channel_versions"] = {"a": "1"}
        checkpoint["versions_seen"] = {"n": {"a": "1"}}
        record = {"graph_fingerprint": "f", "findings": [{"code": "c"}]}
        metadata: Any = {"step": 0, RECORD_KEY: record}
        writes = [("a", [2])]
        saved = await saver.aput_step(
            config, [("task", writes, "")], checkpoint, metadata, {"a": "1"}
        )
        assert saved == {
            "configurable": {
                "thread_id": "t",
                "checkpoint_ns": "",
                "checkpoint_id": checkpoint["id"],
            }
        }
        checkpoint["channel_values"]["a"].append(9)
        checkpoint["channel_versions"]["a"] = "2"
        checkpoint["versions_seen"]["n"]["a"] = "2"
        record["findings"].append({"code": "later"})
        metadata["step"] = 5
        writes[0][1].append(9)
        saved["configurable"]["checkpoint_id"] = "other"
        got = await saver.aget_tuple({"configurable": {"thread_id": "t"}})
        assert got is not None
        assert got.checkpoint["channel_values"] == {"a": [1]}
        assert got.checkpoint["channel_versions"] == {"a": "1"}
        assert got.checkpoint["versions_seen"] == {"n": {"a": "1"}}
        assert got.metadata == {"step": 0}
        parent = await saver.aget_tuple(config)
        assert parent is not None and parent.pending_writes == [("task", "a", [2])]
        records = await saver.aget_debug_records("t", "", [checkpoint["id"]])
        assert records == {
            ("", checkpoint["id"]): {"findings": [{"code": "c"}], "graph_fingerprint": "f"}
        }

    asyncio.run(run())


def test_a_checkpoint_id_is_a_canonical_version_6_uuid_of_the_time() -> None:
    before = time.time_ns() // 100 + base._GREGORIAN_OFFSET
    ids = [new_checkpoint_id() for _ in range(200)]
    after = time.time_ns() // 100 + base._GREGORIAN_OFFSET + len(ids)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 6 and parsed.variant == uuid.RFC_4122
        assert parsed.node == base._node
        ticks = ((parsed.int >> 80) << 12) | ((parsed.int >> 64) & 0x0FFF)
        assert before <= ticks <= after


def _step(values: dict[str, Any], seen: dict[str, dict[str, str]]) -> Any:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = {k: f"{i + 1}" for i, k in enumerate(values)}
    checkpoint["versions_seen"] = seen
    checkpoint["updated_channels"] = sorted(values)
    return checkpoint


@pytest.mark.parametrize(
    ("values", "seen", "writes", "record"),
    [
        ({"a": 1}, {}, [], None),
        ({"a": [1, 2], "b": {"k": "v"}}, {"n": {"a": "1"}, "m": {}}, [("a", [3])], {"x": 1}),
        ({}, {"n": {"a": "1", "b": "2"}}, [("a", None), ("__error__", "boom")], {"l": [1]}),
        ({"s": "text"}, {"__input__": {}}, [("s", "t"), ("s", "u")], JSONReady(k=[1])),
    ],
    ids=["plain", "nested", "special-write", "repeated-channel"],
)
def test_an_unshared_step_is_stored_as_the_copying_put_stores_it(
    values: dict[str, Any], seen: dict[str, dict[str, str]], writes: list[Any], record: Any
) -> None:
    """``put_step_unshared`` (the engine's, which changes no map it put) reads back as
    ``aput_step`` (which copies them) does: checkpoint, metadata, writes and record."""

    async def saved(unshared: bool) -> tuple[Any, ...]:
        saver = MemorySaver()
        start = _step({}, {})
        start["id"] = "1f0-first"
        first = await saver.aput({"configurable": {"thread_id": "t"}}, start, {}, {})
        checkpoint = _step(dict(values), {n: dict(v) for n, v in seen.items()})
        checkpoint["id"], checkpoint["ts"] = "1f0-step", "2026-01-01T00:00:00+00:00"
        metadata: Any = {"step": 0, "source": "loop"}
        if record is not None:
            metadata[RECORD_KEY] = record
        task_writes = [("task", list(writes), "~__pregel_pull, n")] if writes else []
        args = (first, task_writes, checkpoint, metadata, checkpoint["channel_versions"])
        if unshared:
            config = saver.put_step_unshared(*args)
        else:
            config = await saver.aput_step(*args)
        got = await saver.aget_tuple(config)
        parent = await saver.aget_tuple(first)
        assert got is not None and parent is not None
        records = await saver.aget_debug_records("t", "", [checkpoint["id"]])
        return (
            config,
            got.checkpoint,
            got.metadata,
            got.parent_config,
            parent.pending_writes,
            records,
            sorted(saver.blobs.items()),
        )

    assert asyncio.run(saved(True)) == asyncio.run(saved(False))


def test_a_split_without_copy_is_the_split_with_copy() -> None:
    for record in ({"graph_fingerprint": "f"}, {"b": [1, (2, 3)]}, {}, None):
        metadata: dict[str, Any] = {"step": 1, "source": "loop"}
        if record is not None:
            metadata[RECORD_KEY] = record
        expected = split_stored_record(dict(metadata))
        assert split_stored_record(metadata, copy=False) == expected


@pytest.mark.parametrize(
    "writes",
    [
        [("a", 1), ("b", [2]), ("a", 3)],
        [("__error__", "one"), ("a", 1), ("__error__", "two")],
        [("__interrupt__", [1]), ("__resume__", ["x"]), ("__interrupt__", [2]), ("b", None)],
        [],
    ],
    ids=["ordinary", "error-twice", "specials", "none"],
)
def test_one_tasks_writes_on_a_new_checkpoint_are_stored_as_the_general_loop_stores_them(
    writes: list[tuple[str, Any]],
) -> None:
    """A lone task's writes go in whole (``dict``); the general loop keeps an ordinary write
    once and a special one last: the same entries, in the same order."""
    saver = MemorySaver()
    serialized = saver._serialized_writes("t", "c", [("task", writes, "p")])
    saver._store_writes(("t", "", "fast"), serialized, True)
    saver._store_writes(("t", "", "loop"), serialized, False)
    fast, loop = saver.writes[("t", "", "fast")], saver.writes[("t", "", "loop")]
    assert list(fast.items()) == list(loop.items())
    again = saver._serialized_writes("t", "c", [("task", [("a", 9), ("__error__", "3")], "p")])
    saver._store_writes(("t", "", "fast"), again, True)  # on a bucket that exists: the loop
    saver._store_writes(("t", "", "loop"), again, False)
    assert list(fast.items()) == list(loop.items())
