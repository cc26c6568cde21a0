"""Blob compression for the SQL savers: zlib for values big enough to gain from it.

The SQL savers store every channel value and pending write as the serializer's ``(type,
bytes)``. With compression on (the default), a payload of at least :data:`MIN_BYTES` that
zlib shrinks by at least an eighth is stored compressed, its type followed by ``+zlib``
(``msgpack+zlib``). Everything else — small values, and data that does not compress, such as
random bytes or images that are compressed already — is stored as it is. Reading accepts both
forms whatever the setting, so a database may mix them.

    serde = CompressingSerializer(MsgpackSerializer())
    serde.dumps_typed("a long text " * 100)   # ('msgpack+zlib', b'x\\x01...')
    serde.dumps_typed(42)                     # ('msgpack', b'*')
"""

from __future__ import annotations

import zlib
from typing import Any

from durable_debug.checkpoint.base import SerializerProtocol
from durable_debug.checkpoint.serde import CorruptPayloadError

__all__ = ["COMPRESSED", "MIN_BYTES", "CompressingSerializer"]

COMPRESSED = "+zlib"
"""Suffix of the type of a compressed blob."""

MIN_BYTES = 256
"""Payloads smaller than this are never compressed: the saving would be a few bytes."""

_LEVEL = 1
"""zlib's fastest level: writing a checkpoint stays cheap, and reading costs the same."""


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
        tag, payload = data
        if tag.endswith(COMPRESSED):
            try:
                payload = zlib.decompress(payload)
            except (zlib.error, TypeError) as exc:
                raise CorruptPayloadError(f"the compressed blob is corrupt ({exc})") from None
            tag = tag[: -len(COMPRESSED)]
        return self.inner.loads_typed((tag, payload))
