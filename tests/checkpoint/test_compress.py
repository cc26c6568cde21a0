"""Blob compression (``checkpoint/compress.py``): only what gains from it, read back either way."""

from __future__ import annotations

import os
import zlib

import pytest

from durable_debug.checkpoint.compress import MIN_BYTES, CompressingSerializer
from durable_debug.checkpoint.serde import CorruptPayloadError, MsgpackSerializer

TEXT = "the quick brown fox jumps over the lazy dog " * 40


def test_a_compressible_value_is_stored_smaller_and_read_back() -> None:
    serde = CompressingSerializer(MsgpackSerializer())
    tag, payload = serde.dumps_typed(TEXT)
    assert tag == "msgpack+zlib"
    assert len(payload) < len(MsgpackSerializer().dumps(TEXT)) // 2
    assert serde.loads_typed((tag, payload)) == TEXT


@pytest.mark.parametrize(
    "value",
    [42, "short text", "x" * (MIN_BYTES - 10), os.urandom(4096)],
    ids=["int", "short", "under-the-threshold", "random-bytes"],
)
def test_small_or_incompressible_values_are_stored_as_they_are(value: object) -> None:
    serde = CompressingSerializer(MsgpackSerializer())
    assert serde.dumps_typed(value) == MsgpackSerializer().dumps_typed(value)


def test_disabled_compression_still_reads_compressed_blobs() -> None:
    compressed = CompressingSerializer(MsgpackSerializer()).dumps_typed(TEXT)
    plain = CompressingSerializer(MsgpackSerializer(), enabled=False)
    assert plain.dumps_typed(TEXT) == MsgpackSerializer().dumps_typed(TEXT)
    assert plain.loads_typed(compressed) == TEXT


def test_a_corrupt_compressed_blob_is_a_clear_error() -> None:
    serde = CompressingSerializer(MsgpackSerializer())
    with pytest.raises(CorruptPayloadError, match="compressed blob is corrupt"):
        serde.loads_typed(("msgpack+zlib", b"not zlib at all"))
    with pytest.raises(CorruptPayloadError, match="unknown blob type tag 'other'"):
        serde.loads_typed(("other+zlib", zlib.compress(b"\xc0")))
