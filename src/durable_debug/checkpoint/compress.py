"""Blob compression for the SQL savers: zlib for values big enough to gain from it.

The SQL savers store every channel value and pending write as the serializer's ``(type,
bytes)``. With compression on (the default), a payload of at least :data:`MIN_BYTES` that
zlib shrinks by at least an eighth is stored compressed, its type followed by ``+zlib``
(``msgpack+zlib``). Everything else — small values, and data that does not compress, such as
random bytes or images that are compressed already — is stored as it is. Reading accepts both
forms whatever the setting, so a database may mix them.

Decompression is streamed and stops past the serializer's :attr:`Limits.max_bytes
<durable_debug.checkpoint.serde.Limits.max_bytes>`: a small blob that would expand to gigabytes
is refused as corrupt after using no more memory than that limit.

    serde = CompressingSerializer(MsgpackSerializer())
    serde.dumps_typed("a long text " * 100)   # ('msgpack+zlib', b'x\\x01...')
    serde.dumps_typed(42)                     # ('msgpack', b'*')
"""

from __future__ import annotations

import zlib
from typing import Any, cast

from durable_debug.checkpoint.base import SerializerProtocol
from durable_debug.checkpoint.serde import CorruptPayloadError, limits_of

__all__ = ["COMPRESSED", "MIN_BYTES", "CompressingSerializer"]

COMPRESSED = "+zlib"
"""Suffix of the type of a compressed blob."""

MIN_BYTES = 256
"""Payloads smaller than this are never compressed: the saving would be a few bytes."""

_LEVEL = 1
"""zlib's fastest level: writing a checkpoint stays cheap, and reading costs the same."""


_CHUNK = 1 << 20
"""Bytes decompressed per step."""


class CompressingSerializer:
    """Wraps a serializer: compresses what it writes (when ``enabled``), decompresses what
    it reads."""

    def __init__(self, inner: SerializerProtocol, *, enabled: bool = True) -> None:
        self.inner = inner
        self.enabled = enabled

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` with the inner serializer, compressed when that pays."""
        tag, payload = self.inner.dumps_typed(obj)
        if self.enabled and len(payload) >= MIN_BYTES:
            packed = zlib.compress(payload, _LEVEL)
            if len(packed) <= len(payload) - len(payload) // 8:
                return tag + COMPRESSED, packed
        return tag, payload

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize a ``(type, bytes)`` pair, decompressing it first if it is compressed."""
        try:
            tag, payload = data
        except (TypeError, ValueError):
            raise CorruptPayloadError(f"expected a (tag, bytes) pair, got {data!r:.80}") from None
        if isinstance(tag, str) and tag.endswith(COMPRESSED):
            # The serializer reads any buffer; copying to bytes would double the peak memory.
            payload = cast(bytes, self._decompress(payload))
            tag = tag[: -len(COMPRESSED)]
        return self.inner.loads_typed((tag, payload))

    def _decompress(self, payload: bytes) -> bytes | bytearray:
        # In chunks into one growing buffer: memory stays near the output's size even when the
        # stream is cut at the limit (one call with max_length would hold it twice).
        limit = limits_of(self.inner).max_bytes
        stream = zlib.decompressobj()
        try:
            first = stream.decompress(payload, min(_CHUNK, limit + 1))
        except (zlib.error, TypeError) as exc:
            raise CorruptPayloadError(f"the compressed blob is corrupt ({exc})") from None
        if stream.eof and len(first) <= limit:
            return first  # the whole value in one chunk (most blobs): no copy into a buffer
        out = bytearray(first)
        pending: bytes = stream.unconsumed_tail
        if not first and not pending:  # the input ended before the stream did
            raise CorruptPayloadError("the compressed blob is corrupt (it is truncated)")
        try:
            while not stream.eof and len(out) <= limit:
                chunk = stream.decompress(pending, min(_CHUNK, limit + 1 - len(out)))
                pending = stream.unconsumed_tail
                if not chunk and not pending:
                    break  # the input ended before the stream did
                out += chunk
        except (zlib.error, TypeError) as exc:
            raise CorruptPayloadError(f"the compressed blob is corrupt ({exc})") from None
        if len(out) > limit:
            raise CorruptPayloadError(
                f"the compressed blob expands to more than {limit} bytes; "
                f"{limits_of(self.inner).hint('max_bytes')} if it is genuine"
            )
        if not stream.eof:
            raise CorruptPayloadError("the compressed blob is corrupt (it is truncated)")
        return out
