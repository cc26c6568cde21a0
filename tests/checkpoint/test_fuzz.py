"""Fuzzing the serializer and the row decoders: random bytes and structured mutations
of valid payloads always end in a value or a :class:`CorruptPayloadError` — never a crash, a
hang, another exception or memory beyond the limits.

A bounded number of examples runs with the suite; ``scripts/fuzz.sh`` runs many more and
prints the examples tried, the crashes and the peak memory.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import resource
import zlib
import zoneinfo
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durable_debug.checkpoint._rows import (
    ParsedCheckpoint,
    checkpoint_record,
    decode_json,
    encode_json,
    parse_checkpoint_row,
    to_tuple,
)
from durable_debug.checkpoint.base import empty_checkpoint
from durable_debug.checkpoint.compress import CompressingSerializer
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    TypeRegistry,
)

EXAMPLES = int(os.environ.get("DURABLE_DEBUG_FUZZ_EXAMPLES", "60"))
"""Examples per test; ``scripts/fuzz.sh`` raises it."""

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # speed is not what this checks
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SERDE = MsgpackSerializer(TypeRegistry())
BLOBS = CompressingSerializer(SERDE)
TRIED: Counter[str] = Counter()
"""Examples run per target, for the report of ``scripts/fuzz.sh``."""


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    """Write what was tried, and the peak memory, where ``scripts/fuzz.sh`` asked."""
    yield
    path = os.environ.get("DURABLE_DEBUG_FUZZ_REPORT")
    if path:
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with open(path, "w") as out:
            json.dump({"examples": dict(TRIED), "peak_rss_kib": peak_kib}, out)


def outcome(target: str, load: Callable[[], Any]) -> Any:
    """Run ``load``: a value or a CorruptPayloadError pass, anything else fails the test."""
    TRIED[target] += 1
    try:
        return load()
    except CorruptPayloadError:
        return None


# --- values and payloads ------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.binary(max_size=20),
    st.datetimes(
        timezones=st.sampled_from([None, dt.timezone.utc, zoneinfo.ZoneInfo("Asia/Tokyo")])
    ),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.uuids(),
    st.timedeltas(),
)
hashables = st.one_of(st.integers(-100, 100), st.text(max_size=5))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(st.text(max_size=5), inner, max_size=5),
        st.sets(hashables, max_size=5),
        st.binary(max_size=10).map(bytearray),
    ),
    max_leaves=30,
)

HEADERS = [0x91, 0x81, 0xDC, 0xDD, 0xDE, 0xDF, 0xC4, 0xC6, 0xC7, 0xC9, 0xD4, 0xD8, 0xD9, 0xDB, 0xC1]
"""msgpack type bytes a mutation plants: containers, bins, exts, strings, the unused 0xc1."""


@st.composite
def mutated(draw: st.DrawFn, payload: bytes) -> bytes:
    """``payload`` changed the way corruption or an attacker would change it."""
    data = bytearray(payload)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["flip", "header", "insert", "delete", "cut", "length", "wrap"])
        )
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "header" and data:
            data[at] = draw(st.sampled_from(HEADERS))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif kind == "cut":
            del data[at:]
        elif kind == "length":  # a huge declared length in front of little data
            data[at:at] = bytes([draw(st.sampled_from([0xC6, 0xDB, 0xDD, 0xDF, 0xC9]))]) + (
                draw(st.integers(0, 2**32 - 1)).to_bytes(4, "big")
            )
        else:  # extension types and arrays wrapped around the payload, maybe past the limit
            wrapped = bytes(data)
            for _ in range(draw(st.integers(1, 300))):
                code = draw(st.sampled_from([1, 2, 3, 10, 11, 13, 15, 16]))
                wrapped = msgpack.packb(msgpack.ExtType(code, wrapped))
            data = bytearray(b"\x91" * draw(st.integers(0, 200)) + wrapped)
    return bytes(data)


@st.composite
def valid_then_mutated(draw: st.DrawFn) -> bytes:
    return draw(mutated(SERDE.dumps(draw(values))))


# --- the serializer -----------------------------------------------------------------------------


@FUZZ
@given(values)
def test_valid_values_round_trip(value: Any) -> None:
    TRIED["round trip"] += 1
    assert SERDE.loads(SERDE.dumps(value)) == value


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(data: bytes) -> None:
    outcome("serializer: random bytes", lambda: SERDE.loads(data))
    outcome("serializer: random bytes, zlib", lambda: BLOBS.loads_typed(("msgpack+zlib", data)))


@FUZZ
@given(valid_then_mutated())
def test_mutated_payloads(data: bytes) -> None:
    outcome("serializer: mutated", lambda: SERDE.loads(data))
    packed = zlib.compress(data)
    outcome("serializer: mutated, zlib", lambda: BLOBS.loads_typed(("msgpack+zlib", packed)))


@FUZZ
@given(st.binary(min_size=1, max_size=64), st.integers(1, 4096))
def test_mutated_compressed_streams(data: bytes, repeat: int) -> None:
    packed = bytearray(zlib.compress(msgpack.packb(data * repeat)))
    packed[len(packed) // 2] ^= 0x55
    outcome("zlib: corrupted stream", lambda: BLOBS.loads_typed(("msgpack+zlib", bytes(packed))))


# --- the row decoders ---------------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=10)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> str:
    chars = list(text)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(chars)))
        kind = draw(st.sampled_from(["insert", "delete", "deep", "serde"]))
        if kind == "insert":
            chars[at:at] = draw(st.text(alphabet='[]{}",:$0123serdemsgpack\\', max_size=6))
        elif kind == "delete":
            del chars[at : at + draw(st.integers(1, 6))]
        elif kind == "deep":
            depth = draw(st.integers(1, 5000))
            chars[at:at] = "[" * depth + "]" * depth
        else:
            payload = base64.b64encode(draw(valid_then_mutated())).decode()
            chars[at:at] = json.dumps({"$serde": ["msgpack", payload]})
    return "".join(chars)


@FUZZ
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_json_random_text(text: str | bytes) -> None:
    outcome("decode_json: random text", lambda: decode_json(text, SERDE))


@FUZZ
@given(st.data())
def test_json_mutated(data: st.DataObject) -> None:
    text = encode_json(data.draw(json_values), SERDE)
    broken = data.draw(mutated_text(text))
    outcome("decode_json: mutated", lambda: decode_json(broken, SERDE))


def a_row() -> tuple[str, str, str, None, str, str]:
    checkpoint = empty_checkpoint()
    checkpoint["channel_versions"] = {"a": "00000000000000000000000000000001.5", "b": "x"}
    checkpoint["versions_seen"] = {"n": {"a": "00000000000000000000000000000001.5"}}
    record = checkpoint_record("t", checkpoint, SERDE)
    metadata = encode_json({"source": "loop", "step": 1, "when": dt.date(2026, 1, 1)}, SERDE)
    return ("t", "", checkpoint["id"], None, record, metadata)


ROW = a_row()


@FUZZ
@given(st.data())
def test_checkpoint_rows(data: st.DataObject) -> None:
    column = data.draw(st.sampled_from([4, 5]))
    row = list(ROW)
    row[column] = data.draw(mutated_text(row[column]))
    outcome("parse_checkpoint_row", lambda: parse_checkpoint_row(row, SERDE))


@FUZZ
@given(st.data())
def test_to_tuple(data: st.DataObject) -> None:
    parsed: ParsedCheckpoint = parse_checkpoint_row(ROW, SERDE)
    blobs = {}
    for version, channels in parsed.pointers.items():
        for channel in channels:  # every blob present: only its bytes are broken
            tag = data.draw(st.sampled_from(["msgpack", "msgpack+zlib", "empty", "pickle"]))
            payload = data.draw(st.one_of(valid_then_mutated(), st.binary(max_size=100)))
            if tag == "msgpack+zlib" and data.draw(st.booleans()):
                payload = zlib.compress(payload)
            blobs[("t", "", channel, version)] = (tag, payload)
    writes = [("task", "c", "msgpack", data.draw(valid_then_mutated()))]
    outcome("to_tuple", lambda: to_tuple(parsed, blobs, writes, BLOBS))
