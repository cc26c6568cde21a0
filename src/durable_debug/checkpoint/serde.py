"""The serializer: msgpack with a closed set of extension types, and no pickle anywhere.

Loading a blob never imports a module or calls anything the blob chooses: the built-in
extension types are fixed, and a dataclass, pydantic model or Enum is rebuilt only when its
class is trusted (see :mod:`durable_debug.checkpoint.objects`); otherwise it loads as a dict of
its fields tagged with the class name. Saving needs no registration; registering gives a class
a stable name:

    from durable_debug import register_type

    @register_type
    @dataclass
    class Ticket:
        id: int
        title: str

    serde = MsgpackSerializer()
    serde.loads_typed(serde.dumps_typed(Ticket(1, "x")))   # Ticket(id=1, title='x')

Errors are :class:`SerdeError` subclasses; :func:`with_location` adds the thread, checkpoint,
channel or node they concern, so a user reads *where* a value could not be saved or loaded.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import enum
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import msgpack

from durable_debug.checkpoint import objects

__all__ = [
    "CorruptPayloadError",
    "MsgpackSerializer",
    "SerdeError",
    "TypeRegistry",
    "UnsupportedValueError",
    "default_registry",
    "register_type",
    "with_location",
]

T = TypeVar("T", bound=type)

# Extension codes. The set is closed: a code not listed here is a corrupt payload.
_TUPLE = 1
_SET = 2
_FROZENSET = 3
_DATETIME = 4
_DATE = 5
_TIME = 6
_TIMEDELTA = 7
_UUID = 8
_DECIMAL = 9
_ENUM = 10
_DATACLASS = 11
_PYDANTIC = 12

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1

TAG = "msgpack"
"""Type tag of every blob this serializer writes."""


class SerdeError(ValueError):
    """A value could not be saved, or a stored blob could not be loaded."""

    def __init__(self, message: str, location: dict[str, str] | None = None) -> None:
        self.message = message
        self.location = dict(location or {})
        super().__init__(self._text())

    def _text(self) -> str:
        if not self.location:
            return self.message
        where = ", ".join(f"{key} {value!r}" for key, value in self.location.items())
        return f"{where}: {self.message}"

    def located(self, **where: str) -> SerdeError:
        """Return a copy of this error that also says where it happened."""
        location = {k: v for k, v in where.items() if v is not None}
        location.update(self.location)  # the innermost location wins
        return type(self)(self.message, location)


class UnsupportedValueError(SerdeError, TypeError):
    """A value has a type the serializer does not know, so it cannot be saved."""


class CorruptPayloadError(SerdeError):
    """A stored blob is malformed, or names a type that is not registered."""


@contextmanager
def with_location(**where: str | None) -> Iterator[None]:
    """Re-raise any :class:`SerdeError` from the block with ``where`` (thread, checkpoint,
    channel, node…) added to its message."""
    try:
        yield
    except SerdeError as exc:
        raise exc.located(**{k: v for k, v in where.items() if v is not None}) from None


class TypeRegistry:
    """The user types a serializer may save and load, each under a fixed name."""

    def __init__(self) -> None:
        self._by_name: dict[str, type] = {}
        self._by_type: dict[type, str] = {}

    def register(self, cls: T, name: str | None = None) -> T:
        """Allow ``cls`` (a dataclass, pydantic model or Enum) to be saved and loaded.

        ``name`` defaults to ``module.QualName``; pass a stable name if the class may move.
        Usable as a decorator. Registering the same class twice is harmless.
        """
        if not isinstance(cls, type):
            raise TypeError(f"register_type expects a class, got {cls!r}")
        if not (dataclasses.is_dataclass(cls) or issubclass(cls, enum.Enum) or _is_pydantic(cls)):
            raise TypeError(
                f"{cls.__qualname__} is not a dataclass, pydantic model or Enum; only those "
                "can be registered (convert other values to dicts or lists before saving)"
            )
        key = name or f"{cls.__module__}.{cls.__qualname__}"
        existing = self._by_name.get(key)
        if existing is not None and existing is not cls:
            raise ValueError(
                f"the name {key!r} is already registered for another class; "
                "pass register_type(cls, name=...) with a distinct name"
            )
        self._by_name[key] = cls
        self._by_type[cls] = key
        return cls

    def name_of(self, cls: type) -> str | None:
        """Return the registered name of ``cls``, or None."""
        return self._by_type.get(cls)

    def lookup(self, name: str) -> type | None:
        """Return the class registered under ``name``, or None."""
        return self._by_name.get(name)


default_registry = TypeRegistry()
"""The registry every serializer uses unless given its own."""


def register_type(cls: T | None = None, *, name: str | None = None) -> Any:
    """Register a dataclass, pydantic model or Enum so checkpoints can hold it.

    Works as ``register_type(Ticket)``, ``@register_type`` and ``@register_type(name="t")``.
    """
    if cls is None:
        return lambda c: default_registry.register(c, name)
    return default_registry.register(cls, name)


def _is_pydantic(cls: type) -> bool:
    return hasattr(cls, "model_validate") and hasattr(cls, "model_fields")


def _type_name(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


class MsgpackSerializer:
    """Serializer for channel values and writes: ``dumps_typed`` / ``loads_typed``."""

    def __init__(self, registry: TypeRegistry | None = None) -> None:
        self.registry = registry or default_registry

    # -- saving ------------------------------------------------------------------------------

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj``; raise :class:`UnsupportedValueError` if it cannot be saved."""
        try:
            return TAG, msgpack.packb(
                obj, default=self._encode, use_bin_type=True, strict_types=True
            )
        except SerdeError:
            raise
        except OverflowError:
            raise UnsupportedValueError(
                "an integer does not fit in 64 bits; store it as a string"
            ) from None
        except (TypeError, ValueError) as exc:
            raise UnsupportedValueError(f"cannot serialize the value: {exc}") from None

    def dumps(self, obj: Any) -> bytes:
        """Serialize ``obj`` to bytes (the payload of :meth:`dumps_typed`)."""
        return self.dumps_typed(obj)[1]

    def _encode(self, obj: Any) -> Any:
        ext = msgpack.ExtType
        pack = self._packb
        cls = type(obj)
        if cls in objects.PYDANTIC_CLASSES:  # the common case of chat states: messages
            return ext(_PYDANTIC, pack([self._registered(obj), objects.model_fields(obj)]))
        if cls is tuple:
            return ext(_TUPLE, pack(list(obj)))
        if isinstance(obj, enum.Enum):
            name = self._registered(obj)
            return ext(_ENUM, pack([name, obj.value]))
        if isinstance(obj, int):  # an int subclass that is not an Enum
            return int(obj)
        if isinstance(obj, dict):
            return dict(obj)
        if isinstance(obj, list):
            return list(obj)
        if isinstance(obj, str):
            return str(obj)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, set) and not isinstance(obj, frozenset):
            return ext(_SET, pack(_sorted_if_possible(obj)))
        if isinstance(obj, frozenset):
            return ext(_FROZENSET, pack(_sorted_if_possible(obj)))
        if isinstance(obj, tuple):  # namedtuples and tuple subclasses lose their class
            return ext(_TUPLE, pack(list(obj)))
        if isinstance(obj, _dt.datetime):
            return ext(_DATETIME, obj.isoformat().encode())
        if isinstance(obj, _dt.date):
            return ext(_DATE, obj.isoformat().encode())
        if isinstance(obj, _dt.time):
            return ext(_TIME, obj.isoformat().encode())
        if isinstance(obj, _dt.timedelta):
            return ext(_TIMEDELTA, pack([obj.days, obj.seconds, obj.microseconds]))
        if isinstance(obj, uuid.UUID):
            return ext(_UUID, obj.bytes)
        if isinstance(obj, decimal.Decimal):
            return ext(_DECIMAL, str(obj).encode())
        if isinstance(obj, (bytearray, memoryview)):
            return bytes(obj)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            name = self._registered(obj)
            fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
            return ext(_DATACLASS, pack([name, fields]))
        if _is_pydantic(cls):
            objects.PYDANTIC_CLASSES.add(cls)
            return ext(_PYDANTIC, pack([self._registered(obj), objects.model_fields(obj)]))
        raise UnsupportedValueError(
            f"a value of type {_type_name(obj)} cannot be saved in a checkpoint; save plain "
            "data (dict, list, str, int, float, bool, None, bytes, datetime, UUID, Decimal, "
            "set, tuple) or register the class with durable_debug.register_type if it is a "
            "dataclass, pydantic model or Enum"
        )

    def _packb(self, obj: Any) -> bytes:
        return msgpack.packb(obj, default=self._encode, use_bin_type=True, strict_types=True)

    def _registered(self, obj: Any) -> str:
        return objects.name_for_saving(self.registry, type(obj))

    # -- loading -----------------------------------------------------------------------------

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize a ``(tag, bytes)`` pair; raise :class:`CorruptPayloadError` if invalid."""
        try:
            tag, payload = data
        except (TypeError, ValueError):
            raise CorruptPayloadError(f"expected a (tag, bytes) pair, got {data!r:.80}") from None
        if tag != TAG:
            raise CorruptPayloadError(f"unknown blob type tag {tag!r}; expected {TAG!r}")
        return self.loads(payload)

    def loads(self, payload: bytes) -> Any:
        """Deserialize bytes written by :meth:`dumps`."""
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise CorruptPayloadError(f"blob payload must be bytes, got {type(payload).__name__}")
        try:
            return msgpack.unpackb(
                payload, ext_hook=self._decode, raw=False, strict_map_key=False, use_list=True
            )
        except SerdeError:
            raise
        except Exception as exc:  # msgpack raises several unrelated types for bad input
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise CorruptPayloadError(f"the blob is not valid serialized data ({detail})") from None

    def _unpackb(self, payload: bytes) -> Any:
        return msgpack.unpackb(
            payload, ext_hook=self._decode, raw=False, strict_map_key=False, use_list=True
        )

    def _decode(self, code: int, payload: bytes) -> Any:
        decoder = _DECODERS.get(code)
        if decoder is None:
            raise CorruptPayloadError(f"the blob uses unknown extension type {code}")
        return decoder(self, payload)

    def _user_type(self, name: Any, expect: Callable[[type], bool], kind: str) -> type | None:
        """The class to rebuild a stored object with; None: load it as a tagged dict."""
        if not isinstance(name, str):
            raise CorruptPayloadError(f"the blob holds a {kind} whose name is {name!r:.120}")
        return objects.class_for_loading(self.registry, name, expect)


def _sorted_if_possible(items: Any) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:
        return list(items)


def _decode_enum(serde: MsgpackSerializer, payload: bytes) -> Any:
    name, value = serde._unpackb(payload)
    cls = serde._user_type(name, lambda c: issubclass(c, enum.Enum), "Enum")
    if cls is None:
        return objects.unloaded(name, value, enum_value=True)
    return cls(value)


def _decode_dataclass(serde: MsgpackSerializer, payload: bytes) -> Any:
    name, fields = serde._unpackb(payload)
    cls = serde._user_type(name, dataclasses.is_dataclass, "dataclass")
    if not isinstance(fields, dict):
        raise CorruptPayloadError(f"the fields of dataclass {name!r} are not a map")
    if cls is None:
        return objects.unloaded(name, fields)
    init = {f.name for f in dataclasses.fields(cls) if f.init}
    obj = cls(**{k: v for k, v in fields.items() if k in init})
    for key, value in fields.items():
        if key not in init:
            object.__setattr__(obj, key, value)
    return obj


def _decode_pydantic(serde: MsgpackSerializer, payload: bytes) -> Any:
    name, fields = serde._unpackb(payload)
    cls = serde._user_type(name, _is_pydantic, "pydantic model")
    if cls is None:
        return objects.unloaded(name, fields)
    # Fields as saved, without running validators: no code of the class runs on load.
    return cls.model_construct(**fields)  # type: ignore[attr-defined]


def _decode_text(convert: Callable[[str], Any]) -> Callable[[MsgpackSerializer, bytes], Any]:
    def decode(serde: MsgpackSerializer, payload: bytes) -> Any:
        return convert(payload.decode())

    return decode


def _decode_timedelta(serde: MsgpackSerializer, payload: bytes) -> Any:
    days, seconds, micros = serde._unpackb(payload)
    return _dt.timedelta(days=days, seconds=seconds, microseconds=micros)


_DECODERS: dict[int, Callable[[MsgpackSerializer, bytes], Any]] = {
    _TUPLE: lambda s, p: tuple(s._unpackb(p)),
    _SET: lambda s, p: set(s._unpackb(p)),
    _FROZENSET: lambda s, p: frozenset(s._unpackb(p)),
    _DATETIME: _decode_text(_dt.datetime.fromisoformat),
    _DATE: _decode_text(_dt.date.fromisoformat),
    _TIME: _decode_text(_dt.time.fromisoformat),
    _TIMEDELTA: _decode_timedelta,
    _UUID: lambda s, p: uuid.UUID(bytes=bytes(p)),
    _DECIMAL: _decode_text(decimal.Decimal),
    _ENUM: _decode_enum,
    _DATACLASS: _decode_dataclass,
    _PYDANTIC: _decode_pydantic,
}
