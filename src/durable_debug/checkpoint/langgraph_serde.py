"""Reading values LangGraph's serializer wrote, without LangGraph and without running any code.

LangGraph stores each value as ``(type, bytes)``: ``"msgpack"`` (msgpack with its own
extension codes for objects), ``"json"``, ``"bytes"``, ``"bytearray"``, ``"null"``, and
``"pickle"`` when a user turned that fallback on. An object in msgpack names its class by
module and name, with the arguments to rebuild it; LangGraph's loader imports that module and
calls the class. This loader never does: an object becomes a plain dict of its fields tagged
with its class path under :data:`TYPE_KEY`::

    {"__type__": "langchain_core.messages.ai.AIMessage", "content": "hi", "type": "ai", ...}

so a hostile payload naming ``os.system`` is data like any other. Positional arguments land
under ``"args"``, a single argument under ``"value"``. A few standard-library value types
(``datetime``, ``date``, ``time``, ``timedelta``, ``timezone``, ``UUID``, ``Decimal``, ``set``,
``frozenset``, ``deque``, ``tuple``) are rebuilt by this module's own code from a fixed table —
the payload only selects a row of it. A numpy array becomes its dtype, shape and raw bytes;
a pickled value is never unpickled (it is shown as what it is).

Decoding goes through durable_debug's own bounded decoding, with the same
:class:`~durable_debug.checkpoint.serde.Limits` (and environment variables): a payload too
large, a container with too many items or nesting too deep ends in ``CorruptPayloadError``.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import uuid
from collections.abc import Callable
from typing import Any

import msgpack

from durable_debug.checkpoint.names import TYPE_KEY
from durable_debug.checkpoint.serde import (
    _SCALAR_HEADS,
    CorruptPayloadError,
    Limits,
    MsgpackSerializer,
    SerdeError,
    UnsupportedValueError,
    _Decoding,
    nesting_depth,
)

__all__ = ["TYPE_KEY", "WHOLE_CHECKPOINT_BYTES", "LangGraphLoader", "loads_langgraph"]


WHOLE_CHECKPOINT_BYTES = 4096
"""Up to this size a thread list decodes a LangGraph checkpoint whole (one C call); a larger
one is walked, its state skipped over undecoded (:meth:`LangGraphLoader.checkpoint_parts`)."""

# LangGraph's msgpack extension codes (its serializer's wire format).
_EXT_CONSTRUCTOR_SINGLE_ARG = 0
_EXT_CONSTRUCTOR_POS_ARGS = 1
_EXT_CONSTRUCTOR_KW_ARGS = 2
_EXT_METHOD_SINGLE_ARG = 3
_EXT_PYDANTIC_V1 = 4
_EXT_PYDANTIC_V2 = 5
_EXT_NUMPY_ARRAY = 6
_EXT_DELTA_SNAPSHOT = 7


def _tz(offset: Any, name: Any = None) -> _dt.timezone:
    delta = _as_timedelta(offset)
    return _dt.timezone(delta) if name is None else _dt.timezone(delta, str(name))


def _as_timedelta(value: Any) -> _dt.timedelta:
    if isinstance(value, _dt.timedelta):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return _dt.timedelta(days=value[0], seconds=value[1], microseconds=value[2])
    raise ValueError(f"not a timedelta: {value!r}")


def _timedelta(*args: Any) -> _dt.timedelta:
    return _as_timedelta(args[0] if len(args) == 1 else args)


# (module, name) → how this module rebuilds the value from the decoded argument(s). Only these
# stdlib value types are rebuilt; the payload picks a row, it never names what to call.
_REBUILT: dict[tuple[str, str], Callable[..., Any]] = {
    ("datetime", "datetime"): _dt.datetime.fromisoformat,
    ("datetime", "date"): _dt.date.fromisoformat,
    ("datetime", "time"): _dt.time.fromisoformat,
    ("datetime", "timedelta"): _timedelta,
    ("datetime", "timezone"): _tz,
    ("uuid", "UUID"): lambda value: uuid.UUID(str(value)),
    ("decimal", "Decimal"): lambda value: decimal.Decimal(str(value)),
    ("builtins", "set"): lambda items=(): set(items),
    ("builtins", "frozenset"): lambda items=(): frozenset(items),
    ("builtins", "tuple"): lambda items=(): tuple(items),
    ("collections", "deque"): lambda items=(): list(items),
}


class LangGraphLoader:
    """Loads ``(type, bytes)`` pairs LangGraph's serializer wrote; see the module docstring."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits.from_env()
        """The same :class:`~durable_debug.checkpoint.serde.Limits` as durable_debug's own
        serializer (and the same environment variables)."""
        self._bounds = MsgpackSerializer(limits=self.limits)  # its limit errors and hints

    def loads_typed(self, data: tuple[str, bytes | None]) -> Any:
        """The value of one stored ``(type, bytes)`` pair."""
        kind, payload = data
        if kind == "null" or payload is None:
            return None
        payload = bytes(payload)
        limits = self.limits
        if len(payload) > limits.max_bytes:
            raise CorruptPayloadError(
                f"the value holds {len(payload)} bytes, more than the limit of "
                f"{limits.max_bytes}; {limits.hint('max_bytes')} if it is genuine"
            )
        if kind in ("bytes", "bytearray"):
            return payload
        if kind == "msgpack":
            if payload and payload[0] in _SCALAR_HEADS:
                # One scalar (an error's text, a number): no extension or nesting to bound,
                # so msgpack reads it as it is; anything it refuses takes the full path.
                try:
                    return msgpack.unpackb(payload, raw=False)
                except Exception:  # reported by the full path, which says what is wrong
                    pass
            return self._msgpack(payload)
        if kind == "json":
            return self._json(payload)
        if kind == "pickle":
            return {
                TYPE_KEY: "pickle",
                "note": f"a pickled value ({len(payload)} bytes), not loaded",
            }
        raise CorruptPayloadError(
            f"values of type {kind!r} cannot be read without LangGraph (known: msgpack, json, "
            "bytes, bytearray, null, pickle)"
        )

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Refused: this loader only reads what LangGraph wrote."""
        raise UnsupportedValueError("LangGraph's values are read here, never written")

    # -- msgpack -----------------------------------------------------------------------------

    def checkpoint_parts(
        self, payload: bytes, keep: Callable[[str], bool], load: Callable[[str], bool]
    ) -> tuple[dict[str, Any], Any, Any]:
        """From a checkpoint stored as one msgpack map: ``(values, channel_versions,
        versions_seen)``, ``values`` holding only the channels whose name ``keep`` accepts,
        decoded where ``load`` accepts the name too (None otherwise). Every other value — the
        state — is skipped over by msgpack without being decoded, so a big state costs little
        more than its bytes. The two version maps are decoded as they are stored (None when
        absent): the caller checks their shape. Within the same limits as :meth:`loads_typed`.
        """
        limits = self.limits
        if len(payload) > limits.max_bytes:
            raise CorruptPayloadError(
                f"the value holds {len(payload)} bytes, more than the limit of "
                f"{limits.max_bytes}; {limits.hint('max_bytes')} if it is genuine"
            )
        if len(payload) <= WHOLE_CHECKPOINT_BYTES:
            parts = self._small_checkpoint_parts(payload, keep, load)
            if parts is not None:
                return parts
        values: dict[str, Any] = {}
        parts_of: dict[str, Any] = {"channel_versions": None, "versions_seen": None}
        reader = msgpack.Unpacker(
            raw=False,
            strict_map_key=False,
            max_buffer_size=max(len(payload), 1),  # which also bounds every declared length
            max_array_len=limits.max_items,
            max_map_len=limits.max_items,
        )
        reader.feed(payload)
        has_values = False
        try:
            for _ in range(reader.read_map_header()):
                key = reader.unpack()
                if key == "channel_values":
                    has_values = True
                    for _ in range(reader.read_map_header()):
                        channel = reader.unpack()
                        if type(channel) is not str or not keep(channel):
                            reader.skip()
                        elif load(channel):
                            start = reader.tell()
                            reader.skip()
                            values[channel] = self._msgpack(payload[start : reader.tell()])
                        else:
                            reader.skip()
                            values[channel] = None
                elif key in parts_of:
                    start = reader.tell()
                    reader.skip()
                    parts_of[key] = self._msgpack(payload[start : reader.tell()], scan=False)
                else:
                    reader.skip()
        except SerdeError:
            raise
        except Exception as exc:  # msgpack raises several unrelated types for bad input
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise CorruptPayloadError(f"not a LangGraph msgpack value ({detail})") from None
        if not has_values:
            raise CorruptPayloadError("not a LangGraph checkpoint (a map without channel_values)")
        return values, parts_of["channel_versions"], parts_of["versions_seen"]

    def _small_checkpoint_parts(
        self, payload: bytes, keep: Callable[[str], bool], load: Callable[[str], bool]
    ) -> tuple[dict[str, Any], Any, Any] | None:
        """:meth:`checkpoint_parts` of a small checkpoint, decoded whole by msgpack's C code
        in one call (quicker than walking it when there is little to skip). Extension values
        stay msgpack's inert ``ExtType`` (nothing is imported or called); None when a value
        to load is kept (a join or Send packets: walked instead, so their objects are read)."""
        limits = self.limits
        try:
            whole = msgpack.unpackb(
                payload,
                raw=False,
                strict_map_key=False,
                max_array_len=limits.max_items,
                max_map_len=limits.max_items,
            )
        except Exception as exc:  # msgpack raises several unrelated types for bad input
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise CorruptPayloadError(f"not a LangGraph msgpack value ({detail})") from None
        stored = whole.get("channel_values") if type(whole) is dict else None
        if type(stored) is not dict:
            raise CorruptPayloadError("not a LangGraph checkpoint (a map without channel_values)")
        values: dict[str, Any] = {}
        for channel in stored:
            if type(channel) is str and keep(channel):
                if load(channel):
                    return None
                values[channel] = None
        return values, whole.get("channel_versions"), whole.get("versions_seen")

    def _msgpack(self, payload: bytes, *, scan: bool = True) -> Any:
        """Decode within the limits, the way durable_debug's serializer does: nested extension
        payloads are read on the heap and counted against ``max_depth``.

        ``scan=False`` skips the final scan of how deep plain containers nest: only for a
        caller that keeps none of the value's containers (the thread list keeps only the
        trigger channels, whose values it reads one level deep)."""
        try:
            value = _LangGraphDecoding(self).top(payload)
        except SerdeError:
            raise
        except RecursionError:
            raise self._bounds._too_deep(CorruptPayloadError, "the value") from None
        except Exception as exc:  # msgpack raises several unrelated types for bad input
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise CorruptPayloadError(f"not a LangGraph msgpack value ({detail})") from None
        max_depth = self.limits.max_depth
        if scan and len(payload) > max_depth and nesting_depth(value, max_depth) > max_depth:
            raise self._bounds._too_deep(CorruptPayloadError, "the value")
        return value

    def _ext(self, dec: _Decoding, code: int, data: bytes) -> Any:
        if code == _EXT_DELTA_SNAPSHOT:
            return dec.unpack(data)
        if code == _EXT_NUMPY_ARRAY:
            dtype, shape, order, buffer = _fields(dec.unpack(data), 4, "numpy array")
            return {
                TYPE_KEY: "numpy.ndarray",
                "dtype": str(dtype),
                "shape": list(shape),
                "order": str(order),
                "data": bytes(buffer),
            }
        parts = dec.unpack(data)
        if not isinstance(parts, list) or len(parts) < 3:
            raise CorruptPayloadError(f"LangGraph extension {code} holds {type(parts).__name__}")
        module, name, argument = str(parts[0]), str(parts[1]), parts[2]
        rebuild = _REBUILT.get((module, name))
        if rebuild is not None:
            try:
                if code == _EXT_CONSTRUCTOR_POS_ARGS:
                    return rebuild(*argument)
                if code in (_EXT_CONSTRUCTOR_SINGLE_ARG, _EXT_METHOD_SINGLE_ARG):
                    return rebuild(argument)
            except (TypeError, ValueError, decimal.InvalidOperation):
                pass  # not what that type stores: keep it as a tagged dict
        tagged: dict[Any, Any] = {TYPE_KEY: f"{module}.{name}"}
        if code == _EXT_CONSTRUCTOR_POS_ARGS:
            tagged["args"] = list(argument) if isinstance(argument, list) else argument
        elif isinstance(argument, dict) and code != _EXT_CONSTRUCTOR_SINGLE_ARG:
            tagged.update((k, v) for k, v in argument.items() if k != TYPE_KEY)
        else:
            tagged["value"] = argument
        return tagged

    # -- json --------------------------------------------------------------------------------

    def _json(self, payload: bytes) -> Any:
        try:
            value = json.loads(payload)
        except (ValueError, RecursionError) as exc:
            raise CorruptPayloadError(f"not a JSON value ({exc})") from None
        return _revive(value)


class _LangGraphDecoding(_Decoding):
    """One decoding with LangGraph's extension codes instead of durable_debug's; the depth
    and size accounting of nested extension values is the serializer's own."""

    __slots__ = ("loader",)

    def __init__(self, loader: LangGraphLoader) -> None:
        super().__init__(loader._bounds)
        self.loader = loader

    def decoder(self, code: int) -> Callable[[Any, bytes], Any] | None:
        """LangGraph's extension ``code``, decoded by :meth:`LangGraphLoader._ext`."""
        if code not in _LANGGRAPH_CODES:
            return None
        return lambda dec, payload: self.loader._ext(dec, code, payload)


_LANGGRAPH_CODES = frozenset(
    {
        _EXT_CONSTRUCTOR_SINGLE_ARG,
        _EXT_CONSTRUCTOR_POS_ARGS,
        _EXT_CONSTRUCTOR_KW_ARGS,
        _EXT_METHOD_SINGLE_ARG,
        _EXT_PYDANTIC_V1,
        _EXT_PYDANTIC_V2,
        _EXT_NUMPY_ARRAY,
        _EXT_DELTA_SNAPSHOT,
    }
)


def _fields(value: Any, count: int, what: str) -> list[Any]:
    if not isinstance(value, list) or len(value) < count:
        raise CorruptPayloadError(f"a LangGraph {what} holds {type(value).__name__}")
    return value


def _revive(value: Any) -> Any:
    """LangChain's JSON constructor form (``{"lc": 1, "type": "constructor", ...}``) tagged.

    Recursive: ``json.loads`` already refused anything nested deeper than the stack allows.
    """
    if isinstance(value, list):
        return [_revive(item) for item in value]
    if not isinstance(value, dict):
        return value
    if (
        value.get("lc") == 1
        and value.get("type") == "constructor"
        and isinstance(value.get("id"), list)
    ):
        given = value.get("kwargs")
        kwargs: dict[str, Any] = given if isinstance(given, dict) else {}
        fields = {k: _revive(v) for k, v in kwargs.items() if k != TYPE_KEY}
        return {TYPE_KEY: ".".join(map(str, value["id"])), **fields}
    return {key: _revive(item) for key, item in value.items()}


def loads_langgraph(kind: str, payload: bytes | None) -> Any:
    """Load one LangGraph ``(type, bytes)`` pair with the default limits."""
    return LangGraphLoader().loads_typed((kind, payload))
