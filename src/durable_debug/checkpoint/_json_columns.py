"""The JSON columns of the checkpoint tables: ``checkpoints.checkpoint`` and
``checkpoints.metadata`` in SQLite and PostgreSQL, and the same texts in Redis' hashes.

JSON-native values (str, int, float, bool, None, lists, dicts with str keys) are stored as they
are; any other value (a tuple, a datetime, a registered dataclass) is stored as
``{"$serde": [tag, base64]}`` so it loads back exactly:

    text = encode_json({"step": 3, "at": (1, 2)}, serde)  # '{"step":3,"at":{"$serde":[…]}}'
    decode_json(text, serde)                             # {"step": 3, "at": (1, 2)}

Both directions refuse a value nesting deeper than the serializer's
:attr:`~durable_debug.checkpoint.serde.Limits.max_depth`, and the encoder refuses text a column
cannot keep (a NUL character, a lone surrogate). What a row holds besides these texts, and how
the version maps inside the checkpoint text are laid out, is :mod:`durable_debug.checkpoint._rows`.
"""

from __future__ import annotations

import base64
import functools
import json
import math
from collections.abc import Callable
from typing import Any

from durable_debug.checkpoint.base import SerializerProtocol
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    UnsupportedValueError,
    limits_of,
    nesting_depth,
)

__all__ = ["WRAPPED", "decode_json", "dumps_plain", "encode_json", "plain_depth", "storable"]

WRAPPED = "$serde"
"""The key of a wrapped value: ``{"$serde": [tag, base64]}``."""
_WRAPPED_BYTES = WRAPPED.encode()


def encode_json(value: Any, serde: SerializerProtocol) -> str:
    """Encode ``value`` as compact JSON, wrapping values JSON cannot hold exactly.

    A value nesting deeper than :func:`decode_json` reads back is refused.
    """
    limit = limits_of(serde).max_depth
    depth = plain_depth(value, limit)
    if depth is not None:
        # Nothing to wrap: the C encoder writes the value as it is, and its depth is known.
        if depth > limit:
            text = ""
        else:
            return dumps_plain(value)
    else:
        try:
            text = json.dumps(_to_json(value, serde), separators=(",", ":"), ensure_ascii=False)
        except RecursionError:
            text = ""
    if not text or (len(text) > limit and nesting_depth(value, limit) > limit):
        limits = limits_of(serde)
        raise UnsupportedValueError(
            f"the value nests deeper than the limit of {limit} levels; {limits.hint('max_depth')}"
        )
    return text


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` for a value known to be
    plain JSON of bounded depth: the C encoder made once, not once per call (about 3 µs of
    each checkpoint record); ``json.dumps`` itself where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:
        return functools.partial(json.dumps, separators=(",", ":"), ensure_ascii=False)
    encode = make(None, _refuse, quote, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


dumps_plain = _compact_encoder()
"""``json.dumps`` of a value :func:`plain_depth` has checked, written compactly (no spaces,
non-ASCII kept)."""


def decode_json(text: str | bytes, serde: SerializerProtocol, max_depth: int | None = None) -> Any:
    """Decode what :func:`encode_json` produced; a malformed text, or one nesting deeper than
    the serializer's :attr:`~durable_debug.checkpoint.serde.Limits.max_depth`, is a
    CorruptPayloadError. ``max_depth``, when given, is that limit, looked up once by a caller
    decoding many texts."""
    try:
        wrapped = WRAPPED in text if isinstance(text, str) else _WRAPPED_BYTES in text
        if not wrapped:
            # Nothing to unwrap (encode_json never escapes the marker's characters), so the
            # C decoder can skip the per-object hook; a text encode_json wrote has no
            # surrounding whitespace, so its scanner reads it whole without json.loads' layers.
            end = -1
            if isinstance(text, str):
                try:
                    value, end = _scan(text, 0)
                except StopIteration:  # no value at the start: json.loads says what is wrong
                    end = -1
            if end != len(text):
                value = json.loads(text)
        else:
            value = json.loads(text, object_hook=lambda obj: _from_json(obj, serde))
    except CorruptPayloadError:
        raise
    except RecursionError:
        raise _too_deep(serde) from None
    except (ValueError, TypeError) as exc:
        raise CorruptPayloadError(f"the stored JSON is malformed ({exc})") from None
    limit = limits_of(serde).max_depth if max_depth is None else max_depth
    # Each level of nesting takes at least one character, and without wrapped values an
    # opening bracket: a text with few of them cannot be too deep.
    if (
        len(text) > limit
        and (wrapped or _brackets(text) > limit)
        and nesting_depth(value, limit) > limit
    ):
        raise _too_deep(serde)
    return value


_scan: Callable[[str, int], tuple[Any, int]] = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, not declared by typeshed
"""The C scanner of ``json.loads``: a value and where it ends."""


def _brackets(text: str | bytes) -> int:
    """How many ``[`` and ``{`` ``text`` holds (inside strings too): at least the nesting
    depth of the JSON it encodes."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


_PLAIN_SCALARS = frozenset({type(None), bool, int})
"""Types :func:`_to_json` keeps as they are without looking at them."""


def plain_depth(value: Any, limit: int) -> int | None:
    """The nesting depth of ``value`` if :func:`_to_json` would keep it as it is (lists, dicts
    with string keys, and scalars JSON holds exactly); None if something needs wrapping.

    Level by level, with the checks of a level's strings done at once, so the common record
    (version maps of short names) costs a few C calls per container. Stops past ``limit``.
    """
    if type(value) is not dict and type(value) is not list:
        return None
    plain = _PLAIN_SCALARS
    only_str = frozenset((str,)).issuperset
    level: list[Any] = [value]
    depth = 0
    strings: list[str] = []
    while level:
        if depth > limit:
            return depth
        below: list[Any] = []
        for obj in level:
            cls = type(obj)
            if cls is dict:
                if not only_str(map(type, obj)) or WRAPPED in obj:
                    return None
                strings.extend(obj)
                items: Any = obj.values()
            elif cls is list:
                items = obj
            else:
                return None
            for item in items:
                kind = type(item)
                if kind is str:
                    strings.append(item)
                elif kind is dict or kind is list:
                    below.append(item)
                elif kind is float:
                    if not math.isfinite(item):
                        return None
                elif kind not in plain:
                    return None
        depth += 1
        level = below
    return depth if storable("".join(strings)) else None


def _too_deep(serde: SerializerProtocol) -> CorruptPayloadError:
    limits = limits_of(serde)
    return CorruptPayloadError(
        f"the stored JSON nests deeper than the limit of {limits.max_depth} levels; "
        f"{limits.hint('max_depth')} if it is genuine"
    )


def _to_json(value: Any, serde: SerializerProtocol) -> Any:
    cls = type(value)
    if value is None or cls is bool or cls is int:
        return value
    if cls is str and storable(value):
        return value
    if cls is float and math.isfinite(value):
        return value
    if cls is list:
        return [_to_json(item, serde) for item in value]
    if (
        cls is dict
        and WRAPPED not in value
        and all(type(key) is str and storable(key) for key in value)
    ):
        return {key: _to_json(item, serde) for key, item in value.items()}
    tag, payload = serde.dumps_typed(value)
    return {WRAPPED: [tag, base64.b64encode(payload).decode("ascii")]}


def storable(text: str) -> bool:
    """Whether a JSON column can hold ``text`` as it is: PostgreSQL's jsonb cannot hold NUL,
    and no UTF-8 column can hold a lone surrogate (the serializer then refuses the value,
    naming where it is, instead of the driver failing mid-write)."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _from_json(obj: dict[str, Any], serde: SerializerProtocol) -> Any:
    if len(obj) != 1 or WRAPPED not in obj:
        return obj
    wrapped = obj[WRAPPED]
    if not (
        isinstance(wrapped, list) and len(wrapped) == 2 and all(isinstance(p, str) for p in wrapped)
    ):
        raise CorruptPayloadError(f"a {WRAPPED!r} value must be [tag, base64], got {wrapped!r:.80}")
    try:
        payload = base64.b64decode(wrapped[1], validate=True)
    except ValueError:
        raise CorruptPayloadError(f"a {WRAPPED!r} value holds invalid base64") from None
    return serde.loads_typed((wrapped[0], payload))
