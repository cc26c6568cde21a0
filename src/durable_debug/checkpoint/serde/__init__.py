"""The serializer: msgpack with a closed set of extension types, and no pickle anywhere.

Loading a blob never imports a module or calls anything the blob chooses: the built-in
extension types are fixed, and a dataclass, pydantic model or Enum is rebuilt only when its
class is trusted (see :mod:`durable_debug.checkpoint.objects`); otherwise it loads as a dict of
its fields tagged with the class name. Saving those needs no registration; registering gives a
class a stable name. Namedtuples are saved and loaded only when registered:

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

Loading is bounded by :class:`Limits` — nesting depth, payload size, items in one container —
so a corrupt or hostile blob ends in :class:`CorruptPayloadError` within a fixed time and
memory, never in a crash. The same limits refuse, when saving, a value that could not be loaded
back.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import decimal
import enum
import operator
import os
import threading
import uuid
import zoneinfo
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain, compress, filterfalse, repeat
from typing import Any, TypeVar

import msgpack

from durable_debug.checkpoint import objects
from durable_debug.checkpoint.errors import DurableDebugError

__all__ = [
    "CorruptPayloadError",
    "Limits",
    "MsgpackSerializer",
    "SerdeError",
    "TypeRegistry",
    "UnsupportedValueError",
    "default_registry",
    "limits_of",
    "nesting_depth",
    "register_type",
    "with_location",
]

T = TypeVar("T", bound=type)
E = TypeVar("E", bound="SerdeError")

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
_ZONED_DATETIME = 13
_BYTEARRAY = 14
_ORDERED_DICT = 15
_NAMEDTUPLE = 16

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1

TAG = "msgpack"
"""Type tag of every blob this serializer writes."""


class SerdeError(DurableDebugError, ValueError):
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


MAX_DEPTH = 128
"""Default :attr:`Limits.max_depth`. Real states nest a few dozen levels at most; each level
of extension types costs about 1.3 KiB of C stack while loading, so 128 levels fit in a
thread with a 256 KiB stack (measured; 200 levels do not), and Python copies, compares and
prints a value this deep without reaching its recursion limit. That is on Python 3.11 and
3.12; the same 128 levels need 384 KiB on 3.10 (its calls from Python to Python take C stack
too) and 320 KiB on 3.13 (measured: 320 and 256 KiB overflow there)."""

MAX_BYTES = 256 * 1024 * 1024
"""Default :attr:`Limits.max_bytes` (256 MiB): far above a real channel value."""

MAX_ITEMS = 16 * 1024 * 1024
"""Default :attr:`Limits.max_items`: items one stored list, map, set or tuple may declare."""

_ENV = {
    "max_depth": "DURABLE_DEBUG_MAX_DEPTH",
    "max_bytes": "DURABLE_DEBUG_MAX_BYTES",
    "max_items": "DURABLE_DEBUG_MAX_ITEMS",
}
"""The environment variable that overrides each default limit."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """What loading a stored value may cost; a payload beyond any limit is corrupt.

    Pass to the serializer (``MsgpackSerializer(limits=Limits(max_bytes=2**30))``) and hand
    that serializer to the saver (``SqliteSaver(path, serde=...)``), or set the environment
    variables ``DURABLE_DEBUG_MAX_DEPTH``, ``DURABLE_DEBUG_MAX_BYTES`` and
    ``DURABLE_DEBUG_MAX_ITEMS`` before the serializer is created. Saving refuses a value
    beyond the same limits, so whatever is saved loads back.
    """

    max_depth: int = MAX_DEPTH
    """Deepest nesting of containers (list, dict, tuple, set, dataclass, model) and extension
    types together; the JSON columns of the SQL savers obey it too."""
    max_bytes: int = MAX_BYTES
    """Largest serialized value, after decompression; also the most the payloads of
    extension values nested in each other may hold together."""
    max_items: int = MAX_ITEMS
    """Most items one list, map, set or tuple may declare."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise ValueError(f"Limits.{field.name} must be a positive int, got {value!r}")

    @classmethod
    def from_env(cls) -> Limits:
        """The defaults, each overridden by its environment variable when that is set."""
        given: dict[str, int] = {}
        for name, var in _ENV.items():
            text = os.environ.get(var, "").strip()
            if not text:
                continue
            try:
                given[name] = int(text.replace("_", ""))
            except ValueError:
                raise ValueError(f"{var} must be a positive integer, got {text!r}") from None
        return cls(**given)

    def hint(self, name: str) -> str:
        """How to raise the limit ``name``, for an error message."""
        return f"raise Limits({name}=...) on the serializer or set {_ENV[name]}"


def limits_of(serde: Any) -> Limits:
    """The limits of ``serde`` (or of the serializer it wraps); the defaults if it has none."""
    for candidate in (serde, getattr(serde, "inner", None)):
        limits = getattr(candidate, "limits", None)
        if isinstance(limits, Limits):
            return limits
    return Limits.from_env()


_SCALAR_HEADS = frozenset(
    [
        *range(0x00, 0x80),  # positive fixint
        *range(0xE0, 0x100),  # negative fixint
        *range(0xA0, 0xC0),  # fixstr
        *(0xC0, 0xC2, 0xC3, 0xCA, 0xCB, 0xD9, 0xDA, 0xDB),  # nil, bools, floats, str 8/16/32
        *range(0xCC, 0xD4),  # uint and int 8 to 64
    ]
)
"""First bytes of a msgpack payload that is one scalar: :meth:`MsgpackSerializer.loads`
unpacks those without the extension hook and depth checks."""

_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})
"""Types :func:`nesting_depth` never looks into."""


def nesting_depth(value: Any, limit: int) -> int:
    """Return how deep ``value`` nests (a scalar is 0, ``[1]`` is 1), counting lists, dict
    values, tuples, sets, dataclasses and pydantic models; stop past ``limit``.

    Iterative, so any depth (a cycle too) is measured without recursion. Dict keys are not
    looked into: a key is hashable, so only tuples and frozensets nest there, and loading
    counts those as extension levels.
    """
    return _scan(value, limit)[0]


_dict_of = operator.attrgetter("__dict__")
_extra_of = operator.attrgetter("__pydantic_extra__")
_MODEL_CODES = repeat(_PYDANTIC)
"""The extension code of a model, again and again."""


def _any_extra(models: list[Any]) -> bool:
    """Whether any of ``models`` (of pydantic classes) has extra fields, or lacks its slots."""
    try:
        return any(map(_extra_of, models))
    except AttributeError:  # a model built without its pydantic slots
        return True


_LONG = 16
"""From this length on, :func:`_scan` first checks at C speed whether a sequence holds only
scalars."""


def _scan(value: Any, limit: int) -> tuple[int, type | None]:
    """:func:`nesting_depth`, and the type of a buffer (bytearray, memoryview) found inside."""
    if (
        type(value) is list
        and len(value) >= _LONG  # a few messages are walked as quickly
        and limit >= 3
        and type(value[0]) in objects.PYDANTIC_CLASSES
    ):
        found = _scan_models(value, limit)
        if found is not None:
            return found
    return _walk(value, limit)


_SCALARS_OR_EMPTY = _SCALARS | {list, dict, tuple}
"""Scalars, and the containers :func:`_walk` counts as one more level with nothing to walk
when empty."""


def _scan_models(items: list[Any], limit: int) -> tuple[int, type | None] | None:
    """:func:`_scan` of a list of pydantic models saved before (a chat's messages), taking
    their fields a level at a time at C speed: the scalars and the empty lists, dicts and
    tuples are told apart without a Python step per field, and only what is left (metadata,
    tool calls, content blocks) is walked. The same result as :func:`_walk`; None when a
    model is of another class, has extra fields, or holds an empty value of another kind
    (the walk then looks at each)."""
    if not objects.PYDANTIC_CLASSES.issuperset(map(type, items)) or _any_extra(items):
        return None
    values = list(chain.from_iterable(map(_values_of, map(_dict_of, items))))
    scalars = _SCALARS
    kinds = set(map(type, values))
    if kinds <= scalars:
        return 2, None  # the list, its models, nothing below
    full = list(filter(None, values))
    if scalars.issuperset(map(type, full)):
        # Nothing nests below the models but empty containers, which count one level more
        # (an empty set, an empty bytearray…: the walk says what they count for).
        return (3, None) if kinds <= _SCALARS_OR_EMPTY else None
    if not _SCALARS_OR_EMPTY.issuperset(map(type, filterfalse(None, values))):
        return None
    rest = list(compress(full, map(operator.not_, map(scalars.__contains__, map(type, full)))))
    # The list and its models are two levels; the rest is walked as one level below.
    depth, buffer = _walk(tuple({id(v): v for v in rest}.values()), limit - 1)
    return depth + 1, buffer


_values_of = dict.values


def _walk(value: Any, limit: int) -> tuple[int, type | None]:
    """:func:`_scan` level by level, a Python step per value."""
    scalars = _SCALARS
    only_scalars = scalars.issuperset
    models = objects.PYDANTIC_CLASSES
    level: Iterable[Any] = (value,)
    depth = 0
    buffer: type | None = None
    while depth <= limit:
        below: dict[int, Any] = {}  # by id: a value shared within a level is walked once
        found = False
        empty = False
        """Whether an empty list, dict or tuple is below: one more level, with nothing in it
        to walk (a chat message holds several)."""
        for obj in level:
            cls = type(obj)
            seq: Any
            if cls is dict or cls is list or cls is tuple:
                seq = obj.values() if cls is dict else obj
            elif cls in models:  # a model class saved before (chat messages)
                seq = obj.__dict__.values()  # _model_values, inline (once per message)
                extra = getattr(obj, "__pydantic_extra__", None)
                if extra:
                    seq = [*seq, *extra.values()]
            elif isinstance(obj, dict):
                seq = obj.values()
            elif isinstance(obj, (list, tuple, set, frozenset)):
                seq = obj
            elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
                seq = [getattr(obj, f.name, None) for f in dataclasses.fields(obj)]
            elif _is_pydantic(cls):
                seq = _model_values(obj)
            else:
                if cls is bytearray or cls is memoryview:
                    buffer = cls if buffer in (None, bytearray) else buffer
                continue
            found = True
            if len(seq) >= _LONG and only_scalars(map(type, seq)):
                continue
            for item in seq:
                kind = type(item)
                if kind in scalars:
                    continue
                if (kind is list or kind is dict or kind is tuple) and not item:
                    empty = True
                else:
                    below[id(item)] = item
        if not found:
            break
        depth += 1
        if not below:
            if empty:
                depth += 1
            break
        level = below.values()
    return depth, buffer


def _model_values(obj: Any) -> list[Any]:
    """The values a pydantic model is saved with (:func:`objects.model_fields`), extra fields
    included."""
    values = list(getattr(obj, "__dict__", {}).values())
    extra = getattr(obj, "__pydantic_extra__", None)
    if extra:
        values += extra.values()
    return values


class TypeRegistry:
    """The user types a serializer may save and load, each under a fixed name."""

    def __init__(self) -> None:
        self._by_name: dict[str, type] = {}
        self._by_type: dict[type, str] = {}

    def register(self, cls: T, name: str | None = None) -> T:
        """Allow ``cls`` (a dataclass, pydantic model or Enum) to be saved and loaded.

        ``name`` defaults to ``module.QualName``; pass a stable name if the class may move.
        Usable as a decorator. Registering the same class twice is harmless, and so is
        registering a class defined again under the same module and qualified name (a
        re-run notebook cell): the newest definition is the one loading builds. A different
        class under a name already taken is a ``ValueError``.
        """
        if not isinstance(cls, type):
            raise TypeError(f"register_type expects a class, got {cls!r}")
        if not (
            dataclasses.is_dataclass(cls)
            or issubclass(cls, enum.Enum)
            or _is_pydantic(cls)
            or _is_namedtuple(cls)
        ):
            raise TypeError(
                f"{cls.__qualname__} is not a dataclass, pydantic model, Enum or namedtuple; "
                "only those can be registered (convert other values to dicts or lists before "
                "saving)"
            )
        key = name or f"{cls.__module__}.{cls.__qualname__}"
        existing = self._by_name.get(key)
        if existing is not None and existing is not cls and not _redefined(existing, cls):
            raise ValueError(
                f"the name {key!r} is already registered for another class, "
                f"{existing.__module__}.{existing.__qualname__}; pass "
                "register_type(cls, name=...) with a distinct name"
            )
        # A class defined again (a re-run notebook cell) takes the name over: values load as the
        # newest class, and values of the old one still save under the name.
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


def _redefined(old: type, new: type) -> bool:
    """Whether ``new`` is ``old`` defined again: same module and qualified name."""
    return (old.__module__, old.__qualname__) == (new.__module__, new.__qualname__)


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_make")


def _unsupported_zone(obj: _dt.datetime | _dt.time) -> UnsupportedValueError:
    return UnsupportedValueError(
        f"a {type(obj).__name__} with the time zone {obj.tzinfo!r:.80} cannot be saved exactly; "
        "use a zoneinfo.ZoneInfo zone (a datetime keeps it) or datetime.timezone, "
        "or convert the value to UTC"
    )


def _dataclass_fields(obj: Any) -> dict[str, Any]:
    """The fields a dataclass instance is saved with. A field still holding its default when
    that default is a bare ``object()`` (a sentinel meaning "not given", as ``Command.resume``
    has) is left out: a sentinel is no data, and loading gets it back from the constructor's
    default."""
    fields = {}
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if value is field.default and type(value) is object and field.init:
            continue
        fields[field.name] = value
    return fields


def _is_pydantic(cls: type) -> bool:
    return hasattr(cls, "model_validate") and hasattr(cls, "model_fields")


def _type_name(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


class MsgpackSerializer:
    """Serializer for channel values and writes: ``dumps_typed`` / ``loads_typed``."""

    def __init__(
        self, registry: TypeRegistry | None = None, *, limits: Limits | None = None
    ) -> None:
        self.registry = registry or default_registry
        self.limits = limits or Limits.from_env()
        """What loading (and so saving) a value may cost; see :class:`Limits`."""
        self._packed: dict[int, tuple[bytes, bytes, int]] = {}
        """The last few long message lists saved (see :data:`_PACKED`), by their blob's size:
        the blob, the models' payloads joined as one msgpack array, and the depth
        :func:`_scan` found, so that loading one of these blobs back unpacks it in one
        msgpack call."""

    # -- saving ------------------------------------------------------------------------------

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj``; raise :class:`UnsupportedValueError` if it cannot be saved, or
        could not be loaded back within :attr:`limits`."""
        limits = self.limits
        cls = type(obj)
        if cls in _SCALARS:  # nothing to look into: packed at once (see _plain_blob)
            if obj is None:
                return _NONE_BLOB
            if cls is int and -33 < obj < 128:  # one byte each, made once
                return _FIXINT_BLOBS[obj]
            blob = _plain_blob(obj, limits.max_bytes)
            if blob is not None:
                return blob
            depth, buffer = 0, None
        elif (cls is list or cls is dict) and _SCALARS.issuperset(
            map(type, obj.values() if cls is dict else obj)
        ):  # one level of scalars (a list of names, a dict of counts): what _scan finds
            # (_plain_blob, inline: a step's lists of names and counts come here)
            try:
                payload = (getattr(_plain, "packer", None) or _plain_packer()).pack(obj)
            except (TypeError, ValueError, OverflowError):  # it resets itself on errors
                pass
            else:
                if len(payload) > _KEEP_BUFFER:
                    del _plain.packer
                if len(payload) <= limits.max_bytes:
                    return TAG, payload
            depth, buffer = 1, None
        else:
            depth, buffer = _scan(obj, limits.max_depth)
        if depth > limits.max_depth:
            raise self._too_deep(UnsupportedValueError, "the value")
        if buffer is memoryview:
            raise UnsupportedValueError(
                "a memoryview cannot be saved in a checkpoint; convert it with bytes(...)"
            )
        # msgpack writes a bytearray as bytes without asking: mark them first (rarely needed).
        marked = _mark_buffers(obj) if buffer is not None else obj
        rows: bytes | None = None  # a long message list's models, joined (see _remember)
        try:
            payload = None
            if buffer is None:  # plain data first (see _plain_packer), inline: the common case
                packer = getattr(_plain, "packer", None) or _plain_packer()
                try:
                    if type(obj) is list and obj and type(obj[0]) in objects.PYDANTIC_CLASSES:
                        payload, rows = self._pack_models(obj, packer)  # a chat's messages
                    else:
                        payload = packer.pack(obj)  # no hook: nothing can call back into it
                except (TypeError, ValueError, OverflowError):  # it resets itself on errors
                    payload = None
                else:
                    if len(payload) > _KEEP_BUFFER:
                        del _plain.packer
            if payload is None:
                payload = _Encoding(self).pack(marked, top=True)
        except SerdeError:
            raise
        except OverflowError:
            raise UnsupportedValueError(
                "an integer does not fit in 64 bits; store it as a string"
            ) from None
        except RecursionError:
            raise self._too_deep(UnsupportedValueError, "the value") from None
        except (TypeError, ValueError) as exc:
            raise UnsupportedValueError(f"cannot serialize the value: {exc}") from None
        if len(payload) > limits.max_bytes:
            raise UnsupportedValueError(
                f"the value takes {len(payload)} bytes serialized, more than the limit of "
                f"{limits.max_bytes} that loading enforces; {limits.hint('max_bytes')}"
            )
        if rows is not None and len(payload) <= _KEEP_BUFFER:
            self._remember(payload, rows, depth)
        return TAG, payload

    def _remember(self, payload: bytes, rows: bytes, depth: int) -> None:
        """Keep ``payload`` (a long message list just saved) with its models' payloads joined
        (``rows``) and its depth, for :meth:`_Decoding.model_list`: the last :data:`_PACKED`
        of them. Found again by the size and then the bytes themselves (compared, not hashed:
        a blob read back from a database is found too, and the same bytes always load as the
        same value); a later blob of the same size takes the place of the earlier."""
        packed = self._packed
        size = len(payload)
        packed.pop(size, None)
        packed[size] = (payload, rows, depth)
        try:
            while len(packed) > _PACKED:
                del packed[next(iter(packed))]
        except (KeyError, RuntimeError, StopIteration):  # another thread evicted it first
            pass

    def _pack_models(self, items: list[Any], packer: msgpack.Packer) -> tuple[bytes, bytes | None]:
        """A list of pydantic models (a chat's messages) whose fields are plain data, packed
        without the extension hook: each model as the extension value the general way makes
        (the same bytes), its payload packed by ``packer`` too. Raises TypeError when an item
        is not a model saved before or a field is not plain data (the caller then packs the
        list the general way). No extension value is nested in another here, so the whole
        payload's size bounds each one's (checked by the caller). Also returns, for a list
        of :data:`_LONG` models or more, their payloads joined as one msgpack array (what
        :meth:`_Decoding.model_list` unpacks), else None."""
        models = objects.PYDANTIC_CLASSES
        pack: Callable[[Any], bytes] = packer.pack
        names: dict[type, str] = {}
        classes = set(map(type, items))
        if models.issuperset(classes) and not _any_extra(items):
            # Each step over the whole list at C speed (no Python call per message).
            for cls in classes:
                names[cls] = objects.name_for_saving(self.registry, cls)
            named = map(names.__getitem__, map(type, items))
            payloads = list(map(pack, map(list, zip(named, map(_dict_of, items), strict=True))))
            codes = zip(_MODEL_CODES, payloads, strict=False)  # the codes never end
            whole = pack(list(map(_new_ext, repeat(msgpack.ExtType), codes)))
            if len(payloads) < _LONG:
                return whole, None
            return whole, _ARRAY32 + len(payloads).to_bytes(4, "big") + b"".join(payloads)
        values = []
        for item in items:
            cls = type(item)
            name = names.get(cls)
            if name is None:
                if cls not in models:
                    raise TypeError(f"{cls.__qualname__} is not a model saved before")
                name = names[cls] = self._registered(item)
            fields = item.__dict__
            extra = getattr(item, "__pydantic_extra__", None)
            payload = pack([name, {**fields, **extra} if extra else fields])
            values.append(_new_ext(msgpack.ExtType, (_PYDANTIC, payload)))
        return pack(values), None

    def _too_deep(self, error: type[E], what: str) -> E:
        limits = self.limits
        return error(
            f"{what} nests deeper than the limit of {limits.max_depth} levels; "
            f"{limits.hint('max_depth')}"
        )

    def dumps(self, obj: Any) -> bytes:
        """Serialize ``obj`` to bytes (the payload of :meth:`dumps_typed`)."""
        return self.dumps_typed(obj)[1]

    def _encode(self, obj: Any, enc: _Encoding) -> Any:
        ext = enc.ext
        pack = enc.pack
        cls = type(obj)  # a model class saved before was packed by _Encoding.encode
        if cls is tuple:
            return ext(_TUPLE, pack(list(obj)))
        if isinstance(obj, enum.Enum):
            name = self._registered(obj)
            return ext(_ENUM, pack([name, obj.value]))
        if cls.__module__ == "numpy":  # scalars subclass float or int; keeping them needs numpy
            raise UnsupportedValueError(
                f"a value of type {_type_name(obj)} cannot be saved in a checkpoint: loading "
                "it back as numpy would need numpy imported by the loader; convert it first "
                "(x.item() for a scalar, x.tolist() for an array)"
            )
        if isinstance(obj, int):  # an int subclass that is not an Enum
            return int(obj)
        if cls is collections.OrderedDict:
            return ext(_ORDERED_DICT, pack(dict(obj)))
        if isinstance(obj, dict):
            return dict(obj)
        if isinstance(obj, list):
            return list(obj)
        if isinstance(obj, str):
            return str(obj)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, set):
            return ext(_SET, pack(_sorted_if_possible(obj)))
        if isinstance(obj, frozenset):
            return ext(_FROZENSET, pack(_sorted_if_possible(obj)))
        if isinstance(obj, tuple):
            if _is_namedtuple(cls):
                name = self._registered(obj, "namedtuple", "or convert it with tuple(...)")
                return ext(_NAMEDTUPLE, pack([name, list(obj)]))
            return ext(_TUPLE, pack(list(obj)))  # other tuple subclasses save as tuples
        if isinstance(obj, _dt.datetime):
            zone = obj.tzinfo
            if zone is None or type(zone) is _dt.timezone:
                return ext(_DATETIME, obj.isoformat().encode())
            if type(zone) is zoneinfo.ZoneInfo and zone.key:
                wall = obj.replace(tzinfo=None).isoformat()
                return ext(_ZONED_DATETIME, pack([wall, zone.key, obj.fold]))
            raise _unsupported_zone(obj)
        if isinstance(obj, _dt.date):
            return ext(_DATE, obj.isoformat().encode())
        if isinstance(obj, _dt.time):
            if obj.tzinfo is not None and type(obj.tzinfo) is not _dt.timezone:
                raise _unsupported_zone(obj)
            return ext(_TIME, obj.isoformat().encode())
        if isinstance(obj, _dt.timedelta):
            return ext(_TIMEDELTA, pack([obj.days, obj.seconds, obj.microseconds]))
        if isinstance(obj, uuid.UUID):
            return ext(_UUID, obj.bytes)
        if isinstance(obj, decimal.Decimal):
            return ext(_DECIMAL, str(obj).encode())
        if cls is _Buffer:
            return ext(_BYTEARRAY, bytes(obj))
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            name = self._registered(obj)
            return ext(_DATACLASS, pack([name, _dataclass_fields(obj)]))
        if _is_pydantic(cls):
            objects.PYDANTIC_CLASSES.add(cls)
            return ext(_PYDANTIC, pack([self._registered(obj), objects.model_fields(obj)]))
        raise UnsupportedValueError(
            f"a value of type {_type_name(obj)} cannot be saved in a checkpoint; save plain "
            "data (dict, list, str, int, float, bool, None, bytes, bytearray, datetime, UUID, "
            "Decimal, set, tuple, OrderedDict) or register the class with "
            "durable_debug.register_type if it is a dataclass, pydantic model, Enum or "
            "namedtuple" + ("; convert a memoryview with bytes(...)" if cls is memoryview else "")
        )

    def _registered(self, obj: Any, kind: str = "", instead: str = "") -> str:
        """The name ``obj``'s class is saved under (see :mod:`.objects`); a namedtuple's class
        must be registered."""
        if kind != "namedtuple":
            return objects.name_for_saving(self.registry, type(obj))
        name = self.registry.name_of(type(obj))
        if name is None:
            raise UnsupportedValueError(
                f"the {kind} {_type_name(obj)} is not registered, so its values cannot be "
                f"saved; call durable_debug.register_type({type(obj).__qualname__}) once "
                "before running the graph (in every process that loads these checkpoints)"
                + (f" {instead}" if instead else "")
            )
        return name

    # -- loading -----------------------------------------------------------------------------

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize a ``(tag, bytes)`` pair; raise :class:`CorruptPayloadError` if invalid."""
        try:
            tag, payload = data
        except (TypeError, ValueError):
            raise CorruptPayloadError(f"expected a (tag, bytes) pair, got {data!r:.80}") from None
        if tag != TAG:
            return self._loads_other(tag, payload)
        return self.loads(payload)

    def _loads_other(self, tag: Any, payload: Any) -> Any:
        """A blob ``JsonPlusSerializer`` wrote under one of LangGraph's other tags: None and raw
        bytes load as they are; a pickle is refused (loading it would run code)."""
        if tag == "null":
            return None
        if tag in ("bytes", "bytearray") and isinstance(payload, (bytes, bytearray, memoryview)):
            return bytes(payload) if tag == "bytes" else bytearray(payload)
        if tag == "pickle":
            raise CorruptPayloadError(
                "the blob is a pickle, which loading it would run; read this thread with "
                "a saver given serde=JsonPlusSerializer(pickle_fallback=True) "
                "(durable_debug.checkpoint.serde.jsonplus) if you trust whoever wrote it"
            )
        raise CorruptPayloadError(f"unknown blob type tag {tag!r}; expected {TAG!r}")

    def loads(self, payload: bytes) -> Any:
        """Deserialize bytes written by :meth:`dumps`, within :attr:`limits`."""
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise CorruptPayloadError(f"blob payload must be bytes, got {type(payload).__name__}")
        limits = self.limits
        size = len(payload)
        if size and payload[0] in _SCALAR_HEADS and size <= limits.max_bytes:
            # One scalar (a number, a string, None, a bool): nothing to nest or extend, so
            # msgpack reads it as it is; anything it refuses takes the full path for its error.
            try:
                return msgpack.unpackb(payload, raw=False)
            except Exception:  # reported by the full path below, which says what is wrong
                pass
        if size > limits.max_bytes:
            raise CorruptPayloadError(
                f"the blob holds {size} bytes, more than the limit of {limits.max_bytes}; "
                f"{limits.hint('max_bytes')} if it is genuine"
            )
        decoding = _Decoding(self)
        try:
            value = decoding.top(payload)
        except SerdeError:
            raise
        except RecursionError:
            raise self._too_deep(CorruptPayloadError, "the blob") from None
        except Exception as exc:  # msgpack raises several unrelated types for bad input
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise CorruptPayloadError(f"the blob is not valid serialized data ({detail})") from None
        # Each level of nesting takes at least one byte: a short payload cannot be too deep.
        if (
            size > limits.max_depth
            and type(value) not in _SCALARS
            and not decoding.bounds_depth(value)
            and nesting_depth(value, limits.max_depth) > limits.max_depth
        ):
            raise self._too_deep(CorruptPayloadError, "the blob")
        return value

    def _user_type(self, name: Any, expect: Callable[[type], bool], kind: str) -> type | None:
        """The class to rebuild a stored object with; None: load it as a tagged dict."""
        if not isinstance(name, str):
            raise CorruptPayloadError(f"the blob holds a {kind} whose name is {name!r:.120}")
        return objects.class_for_loading(self.registry, name, expect)


_plain = threading.local()
"""Per thread, a packer without the extension hook (:func:`_plain_packer`)."""

_NONE_BLOB = (TAG, msgpack.packb(None))
"""The blob of None (a channel without a value, a trigger's write)."""
_FIXINT_BLOBS = {i: (TAG, msgpack.packb(i)) for i in range(-32, 128)}
"""The blobs of the ints msgpack writes in one byte (counters, step numbers)."""

_KEEP_BUFFER = 1 << 20
"""A packer keeps its buffer as large as its largest value: past this many bytes,
:meth:`MsgpackSerializer.dumps_typed` drops it rather than hold the memory."""


def _plain_blob(obj: Any, max_bytes: int) -> tuple[str, bytes] | None:
    """The blob of a scalar (str, int, float, bool, bytes), or of a list or dict of them,
    packed by this thread's plain packer as :meth:`MsgpackSerializer.dumps_typed` makes it;
    None when it cannot be packed so or is larger than ``max_bytes`` (the general path then
    says why)."""
    packer = getattr(_plain, "packer", None) or _plain_packer()
    try:
        payload: bytes = packer.pack(obj)
    except (TypeError, ValueError, OverflowError):  # it resets itself on errors
        return None
    size = len(payload)
    if size > _KEEP_BUFFER:
        del _plain.packer
    if size > max_bytes:
        return None
    return TAG, payload


def _plain_packer() -> msgpack.Packer:
    """This thread's packer without the extension hook, for :meth:`MsgpackSerializer.dumps`:
    a value of plain data only (dicts, lists, str, int in 64 bits, float, bool, None, bytes —
    those exact types, no bytearray) needs no hook, and the same bytes come out quicker; at
    anything else (a tuple, a model, a subclass…) it stops, and the value is packed the general
    way."""
    packer = _plain.packer = msgpack.Packer(
        use_bin_type=True, strict_types=True, buf_size=_BUF_SIZE
    )
    return packer


class _Buffer(bytes):
    """A bytearray's contents, marked so the encoder (not msgpack) writes it."""


def _mark_buffers(obj: Any) -> Any:
    """``obj`` with every bytearray inside replaced by a :class:`_Buffer`.

    Rebuilds the containers on the way (lists, dicts, tuples, namedtuples, OrderedDicts), and a
    dataclass or model as a copy; called only after :func:`_scan` bounded the depth.
    """
    cls = type(obj)
    if cls is bytearray:
        return _Buffer(obj)
    if cls in _SCALARS:
        return obj
    if isinstance(obj, dict):
        marked = {_mark_buffers(k): _mark_buffers(v) for k, v in obj.items()}
        return collections.OrderedDict(marked) if cls is collections.OrderedDict else marked
    if isinstance(obj, list):
        return [_mark_buffers(item) for item in obj]
    if isinstance(obj, tuple):
        items = [_mark_buffers(item) for item in obj]
        return cls._make(items) if _is_namedtuple(cls) else tuple(items)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        copy = object.__new__(cls)
        for f in dataclasses.fields(obj):
            object.__setattr__(copy, f.name, _mark_buffers(getattr(obj, f.name)))
        return copy
    if _is_pydantic(cls):
        return obj.model_construct(**{k: _mark_buffers(v) for k, v in dict(obj).items()})
    return obj


def _sorted_if_possible(items: Any) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:
        return list(items)


class _Encoding:
    """One :meth:`MsgpackSerializer.dumps_typed` call. Measures the chains of extension
    payloads nested in each other the way :class:`_Decoding` will count them when loading,
    so that whatever is saved loads back."""

    __slots__ = ("below", "last", "names", "packers", "serde")

    def __init__(self, serde: MsgpackSerializer) -> None:
        self.serde = serde
        self.below: list[int] = []
        """Per payload being packed: the longest chain of extension payloads inside it."""
        self.last = 0
        """That chain for the payload :meth:`pack` returned last, for :meth:`ext`."""
        self.packers: list[msgpack.Packer] = []
        """One packer per level of extension payloads being packed (a packer cannot pack
        again while it is packing), made on first use and reused for this call's values."""
        self.names: dict[type, str] = {}
        """The name each pydantic model class is saved under, looked up once per call."""

    def encode(self, obj: Any) -> Any:
        """msgpack's ``default``."""
        cls = type(obj)
        if cls in objects.PYDANTIC_CLASSES:  # the common case of chat states: messages
            name = self.names.get(cls)
            if name is None:
                name = self.names[cls] = self.serde._registered(obj)
            fields = obj.__dict__  # objects.model_fields, inline (once per message)
            extra = getattr(obj, "__pydantic_extra__", None)
            return self.ext(_PYDANTIC, self.pack([name, {**fields, **extra} if extra else fields]))
        return self.serde._encode(obj, self)

    def pack(self, obj: Any, *, top: bool = False) -> bytes:
        """Pack the whole value (``top``), or the payload of an extension type."""
        below = self.below
        if not top:
            below.append(0)
        level = len(below)
        packers = self.packers
        try:
            if level < len(packers):
                packer = packers[level]
            else:  # a new level (a packer resets itself after each value, even a failed one)
                packer = msgpack.Packer(
                    default=self.encode, use_bin_type=True, strict_types=True, buf_size=_BUF_SIZE
                )
                packers.append(packer)
            packed: bytes = packer.pack(obj)
            return packed
        finally:
            if top:  # each packer's default refers back to this object: break the cycle
                packers.clear()
            else:
                self.last = below.pop()

    def ext(self, code: int, payload: bytes) -> msgpack.ExtType:
        """The extension value ``code`` around ``payload`` (just packed, or plain bytes)."""
        chain = len(payload) + self.last
        self.last = 0
        limits = self.serde.limits
        if chain > limits.max_bytes:
            raise UnsupportedValueError(
                "extension values (tuples, sets, dataclasses…) nested in each other hold "
                f"{chain} bytes together, more than the limit of {limits.max_bytes} that "
                f"loading enforces; {limits.hint('max_bytes')}"
            )
        if self.below:
            self.below[-1] = max(self.below[-1], chain)
        # ExtType's own constructor checks its arguments in Python; these are known good (a
        # code of the closed set, bytes).
        return _new_ext(msgpack.ExtType, (code, payload))


_PACKED = 4
"""How many long message lists a serializer keeps after saving them (see
:meth:`MsgpackSerializer._remember`): a chat thread's next turn loads the one its last step
saved."""

_ARRAY32 = b"\xdd"
"""The first byte of a msgpack array 32 (its length follows in four bytes)."""

_BUF_SIZE = 1 << 14
"""The first buffer of an encoding's packers (they grow as needed). With msgpack's default,
256 KiB, and two packers alive at once (an extension value inside the value), every call grew
and shrank the C heap (three ``brk`` calls, fresh pages to fault in; measured: 14 µs to save
a tuple of two ints, 3 µs with this size)."""

_new_ext = tuple.__new__
"""Makes a :class:`msgpack.ExtType` (a named tuple) without its argument checks."""


_CONTAINER_HEADS = bytes([*range(0x80, 0xA0), 0xDC, 0xDD, 0xDE, 0xDF])
"""First bytes of a msgpack map or array (fixmap, fixarray, array 16/32, map 16/32)."""
_NOT_CONTAINER_HEADS = bytes(b for b in range(256) if b not in _CONTAINER_HEADS)
"""Every other byte: what ``bytes.translate`` deletes to count the bytes that may be headers."""

_STACK_LEVELS = 1
"""Extension levels unpacked by :func:`msgpack.unpackb`, which keeps about 40 KiB of state on
the C stack per call (measured: five such frames overflow a 256 KiB thread stack). One level
covers most real values (a tuple or datetime in a list) and leaves room for ``max_depth``
levels of :class:`msgpack.Unpacker` below it."""


class _Decoding:
    """One :meth:`MsgpackSerializer.loads` call: counts extension levels against the limit.

    An extension payload (a tuple, a dataclass…) is itself msgpack, unpacked from inside the
    outer unpacking. Past the first :data:`_STACK_LEVELS` levels, payloads are read by a
    :class:`msgpack.Unpacker`, whose state lives on the heap rather than on the C stack, and no
    deeper than ``max_depth`` levels: a payload nesting extensions hundreds deep is refused
    instead of overflowing the stack.
    """

    __slots__ = (
        "depth",
        "held",
        "known",
        "limits",
        "models",
        "serde",
        "shallow",
        "table",
        "widest",
    )

    def __init__(self, serde: MsgpackSerializer) -> None:
        self.serde = serde
        self.limits = serde.limits
        self.depth = 0
        self.held = 0
        self.models: dict[str, tuple[type, _ModelPlan | None] | None] = {}
        """Stored model name → its class to rebuild (and how), looked up once per call."""
        self.table = _DECODERS if type(self).decoder is _Decoding.decoder else None
        """The decoders by extension code, unless a subclass chooses them (:meth:`decoder`)."""
        self.shallow = 0
        """How many models were decoded outside any extension value (a chat's messages)."""
        self.widest = 0
        """The most container headers any of those models' payloads may hold (see
        :meth:`bounds_depth`)."""
        self.known = False
        """Whether the blob is one this serializer saved lately, whose depth :func:`_scan`
        found within the limit then (see :meth:`model_list`)."""

    def _lengths(self, size: int) -> dict[str, int]:
        # msgpack already refuses a declared length beyond the bytes it was given; only a
        # payload long enough to declare more items than the limit needs to say so.
        if size <= self.limits.max_items:
            return {}
        items = self.limits.max_items
        return {"max_array_len": items, "max_map_len": min(items, size // 2)}

    def top(self, payload: bytes) -> Any:
        """Unpack a whole blob (or, on the C stack, one short extension payload)."""
        if len(payload) <= self.limits.max_items:  # see _lengths (raw=False, use_list=True)
            if self.table is not None and _starts_model_list(payload):
                models = self.model_list(payload)
                if models is not None:
                    return models
            return msgpack.unpackb(payload, ext_hook=self.ext, strict_map_key=False)
        return msgpack.unpackb(
            payload,
            ext_hook=self.ext,
            raw=False,
            strict_map_key=False,
            use_list=True,
            **self._lengths(len(payload)),
        )

    def unpack(self, payload: bytes) -> Any:
        """Unpack the payload of an extension type: exactly one value."""
        size = len(payload)
        if self.depth <= _STACK_LEVELS and size <= self.limits.max_items:
            # The common case, quicker; msgpack bounds declared lengths by the size itself
            # (as top() unpacks it; raw=False and use_list=True are msgpack's defaults).
            return msgpack.unpackb(payload, ext_hook=self.ext, strict_map_key=False)
        unpacker = msgpack.Unpacker(
            ext_hook=self.ext,
            raw=False,
            strict_map_key=False,
            use_list=True,
            max_buffer_size=max(size, 1),  # which also bounds every declared length
            **self._lengths(size),
        )
        unpacker.feed(payload)
        value = unpacker.unpack()
        if unpacker.tell() != size:
            raise CorruptPayloadError("an extension value has extra bytes after its data")
        return value

    def model_list(self, payload: bytes) -> list[Any] | None:
        """The whole blob ``payload`` (at most ``max_items`` bytes) decoded as a list of pydantic
        models (a chat's messages) in two msgpack calls rather than one per model: the first
        collects each model's payload, the second unpacks them all joined as one array. The
        same values, limits and errors as the general way (:meth:`ext` on each model); None
        when the blob is not a list of models with plain fields only, or is malformed, so that
        the general way decodes it (and says what is wrong). A blob this serializer saved
        lately is unpacked from its models' payloads kept then (see
        :meth:`MsgpackSerializer._remember`) in one msgpack call."""
        kept = self.serde._packed.get(len(payload)) if type(payload) is bytes else None
        if kept is not None and kept[0] == payload and kept[2] <= self.limits.max_depth:
            rows = msgpack.unpackb(kept[1], ext_hook=_not_models, strict_map_key=False)
            self.shallow = len(rows)
            self.known = True
            return self.models_from(rows)
        payloads: list[bytes] = []
        keep = payloads.append

        def collect(code: int, data: bytes) -> None:
            if code != _PYDANTIC:
                raise _NotModels
            keep(data)

        try:
            items = msgpack.unpackb(payload, ext_hook=collect, strict_map_key=False)
            count = len(payloads)
            # Every item None, and as many as the models collected: each item is a model.
            if type(items) is not list or len(items) != count or any(items):
                return None
            not_heads = _NOT_CONTAINER_HEADS
            widest = max([len(data.translate(None, not_heads)) for data in payloads])
            if widest > self.limits.max_depth:
                return None
            joined = _ARRAY32 + count.to_bytes(4, "big") + b"".join(payloads)
            rows = msgpack.unpackb(joined, ext_hook=_not_models, strict_map_key=False)
        except Exception:  # an extension value inside a model, or a malformed blob
            return None
        self.shallow = count
        self.widest = widest
        return self.models_from(rows)

    def models_from(self, rows: Iterable[Any]) -> list[Any]:
        """Each ``[name, fields]`` of ``rows`` as the pydantic model stored under ``name``
        with ``fields``, built as :func:`_build_model` builds it (a tagged dict when the class
        is not rebuilt); ``fields`` become the models' own."""
        models = self.models
        values: list[Any] = []
        add = values.append
        for name, fields in rows:
            found = models.get(name) if type(name) is str else None
            if found is None:
                found = self.model(name)
            if found is not None:
                cls: Any = found[0]
                plan = found[1]
                if plan is not None and type(fields) is dict and list(fields) == plan[0]:
                    # _build_model's common case, inline (once per message).
                    model = cls.__new__(cls)
                    _set_attribute(model, "__dict__", fields)
                    _set_attribute(model, "__pydantic_fields_set__", set(fields))
                    _set_attribute(model, "__pydantic_extra__", {} if plan[1] else None)
                    _set_attribute(model, "__pydantic_private__", None)
                    add(model)
                    continue
            add(_build_model(self, name, fields))
        return values

    def bounds_depth(self, value: Any) -> bool:
        """Whether ``value`` (the whole blob, decoded) is known to nest no deeper than the
        limit without walking it: a list of models, each decoded here outside any extension
        value, whose payloads each hold at most ``max_depth`` bytes that may be a container's
        header. Every level the walk counts (a list, dict, tuple, set, dataclass or model) is
        written with at least one such header, distinct for each level of a chain, and a
        model's payload starts with two (its name and fields, its fields' map) that no field
        value holds: so a model nests at most one level less than its payload's count, and
        the list one level more."""
        return (
            type(value) is list
            and self.shallow == len(value)
            and (self.known or self.widest <= self.limits.max_depth)
            and objects.PYDANTIC_CLASSES.issuperset(map(type, value))
        )

    def ext(self, code: int, payload: bytes) -> Any:
        """msgpack's ``ext_hook``: decode one extension value of the closed set."""
        table = self.table
        if code == _PYDANTIC and not self.depth and table is not None:
            headers = len(payload.translate(None, _NOT_CONTAINER_HEADS))
            if headers > self.widest:
                self.widest = headers
            self.shallow += 1
            # The checks below, inline, for the common case (a chat's message).
            limits = self.limits
            size = len(payload)
            if limits.max_depth and size <= limits.max_items and size <= limits.max_bytes:
                self.depth = 1
                self.held = size
                try:
                    name, fields = msgpack.unpackb(payload, ext_hook=self.ext, strict_map_key=False)
                    return _build_model(self, name, fields)
                finally:
                    self.depth = 0
                    self.held = 0
        decoder = table.get(code) if table is not None else self.decoder(code)
        if decoder is None:
            raise CorruptPayloadError(f"the blob uses unknown extension type {code}")
        if self.depth >= self.limits.max_depth:
            raise self.serde._too_deep(CorruptPayloadError, "the blob")
        # Each open level holds a copy of its payload: bound their sum, not just each one.
        size = len(payload)
        if self.held + size > self.limits.max_bytes:
            raise CorruptPayloadError(
                "extension values nested in each other hold more than "
                f"{self.limits.max_bytes} bytes together; {self.limits.hint('max_bytes')} "
                "if it is genuine"
            )
        self.depth += 1
        self.held += size
        try:
            return decoder(self, payload)
        finally:
            self.depth -= 1
            self.held -= size

    def decoder(self, code: int) -> Callable[[Any, bytes], Any] | None:
        """The decoder of extension ``code``, None for a code outside the closed set (a
        subclass reads another format's closed set within the same limits)."""
        return _DECODERS.get(code)

    def user_type(self, name: Any, expect: Callable[[type], bool], kind: str) -> type | None:
        """The class ``name`` to rebuild a ``kind`` with; None: load it as a tagged dict."""
        return self.serde._user_type(name, expect, kind)

    def model(self, name: Any) -> tuple[type, _ModelPlan | None] | None:
        """The pydantic model class stored as ``name`` and how to rebuild it (see
        :func:`_model_plan`); None: load it as a tagged dict."""
        if type(name) is str:
            found = self.models.get(name, _UNKNOWN)
            if found is not _UNKNOWN:
                return found  # type: ignore[return-value]  # anything but the _UNKNOWN sentinel is a model of self.models
        cls = self.user_type(name, _is_pydantic, "pydantic model")
        found = None if cls is None else (cls, _model_plan(cls))
        self.models[name] = found
        return found


class _NotModels(Exception):
    """Raised inside :meth:`_Decoding.model_list` when the blob is not what it decodes."""


def _not_models(code: int, data: bytes) -> Any:
    """The ``ext_hook`` of :meth:`_Decoding.model_list`'s second call: model fields holding an
    extension value are decoded the general way."""
    raise _NotModels


_EXT_CODE_AT = {0xC7: 2, 0xC8: 3, 0xC9: 5}
"""How far past the first byte of a msgpack ext 8/16/32 value its extension code is."""


def _starts_model_list(payload: bytes) -> bool:
    """Whether ``payload`` is a msgpack array whose first item is a pydantic model (ext 8, 16 or
    32 with the model code): what :meth:`_Decoding.model_list` may decode."""
    head = payload[0] if payload else 0
    if 0x91 <= head <= 0x9F:
        at = 1
    elif head == 0xDC or head == 0xDD:
        at = 3 if head == 0xDC else 5
    else:
        return False
    if len(payload) <= at + 5:
        return False
    code_at = _EXT_CODE_AT.get(payload[at])
    return code_at is not None and payload[at + code_at] == _PYDANTIC


def _decode_enum(dec: _Decoding, payload: bytes) -> Any:
    name, value = dec.unpack(payload)
    cls = dec.user_type(name, lambda c: issubclass(c, enum.Enum), "Enum")
    if cls is None:
        return objects.unloaded(name, value, enum_value=True)
    return cls(value)


def _decode_dataclass(dec: _Decoding, payload: bytes) -> Any:
    name, fields = dec.unpack(payload)
    cls = dec.user_type(name, dataclasses.is_dataclass, "dataclass")
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


def _decode_pydantic(dec: _Decoding, payload: bytes) -> Any:
    name, fields = dec.unpack(payload)
    return _build_model(dec, name, fields)


def _build_model(dec: _Decoding, name: Any, fields: Any) -> Any:
    """The pydantic model stored as ``name`` with ``fields`` (see :func:`_decode_pydantic`)."""
    found = dec.model(name)
    if found is None:
        return objects.unloaded(name, fields)
    cls: Any = found[0]
    plan = found[1]
    if plan is not None and type(fields) is dict and list(fields) == plan[0]:
        # Exactly the class's fields, in their order (as saved from a model): what
        # model_construct would build, without its per-field work.
        model = cls.__new__(cls)
        _set_attribute(model, "__dict__", fields)
        _set_attribute(model, "__pydantic_fields_set__", set(fields))
        _set_attribute(model, "__pydantic_extra__", {} if plan[1] else None)
        _set_attribute(model, "__pydantic_private__", None)
        return model
    # Fields as saved, without running validators: no code of the class runs on load.
    return cls.model_construct(**fields)


_ModelPlan = tuple[list[str], bool]
"""A model class's field names in order, and whether it keeps extra fields."""

_UNKNOWN = object()
_set_attribute = object.__setattr__


def _model_plan(cls: Any) -> _ModelPlan | None:
    """How :func:`_decode_pydantic` may rebuild ``cls`` without ``model_construct``: for a
    plain pydantic v2 model (no field aliases, no ``model_post_init`` or private attributes,
    not a root model, neither ``model_construct`` nor ``__new__`` overridden), given exactly
    its fields in order, ``model_construct`` only sets the instance's four slots. None for any
    other class, which ``model_construct`` rebuilds."""
    try:
        from pydantic import BaseModel

        fields = cls.__pydantic_fields__
        if (
            not issubclass(cls, BaseModel)
            or cls.__new__ is not object.__new__
            or getattr(cls.model_construct, "__func__", None)
            is not BaseModel.model_construct.__func__  # type: ignore[attr-defined]  # typed as a function by pydantic, a bound classmethod at run time
            or cls.__pydantic_post_init__
            or cls.__pydantic_root_model__
            or type(fields) is not dict
            or any(f.alias is not None or f.validation_alias is not None for f in fields.values())
        ):
            return None
        return list(fields), cls.model_config.get("extra") == "allow"
    except Exception:  # not the pydantic this was written for: the general way
        return None


def _decode_text(convert: Callable[[str], Any]) -> Callable[[_Decoding, bytes], Any]:
    def decode(dec: _Decoding, payload: bytes) -> Any:
        return convert(payload.decode())

    return decode


def _decode_zoned(dec: _Decoding, payload: bytes) -> Any:
    wall, key, fold = dec.unpack(payload)
    if not (isinstance(wall, str) and isinstance(key, str) and fold in (0, 1)):
        raise CorruptPayloadError("a datetime with a time zone is malformed")
    try:
        zone = zoneinfo.ZoneInfo(key)  # reads the zone's data file; imports and calls nothing
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise CorruptPayloadError(
            f"the blob holds a datetime in the time zone {key!r:.80}, which this machine does "
            "not know (install the tzdata package)"
        ) from None
    return _dt.datetime.fromisoformat(wall).replace(tzinfo=zone, fold=fold)


def _decode_ordered_dict(dec: _Decoding, payload: bytes) -> Any:
    items = dec.unpack(payload)
    if type(items) is not dict:
        raise CorruptPayloadError("an OrderedDict is not stored as a map")
    return collections.OrderedDict(items)


def _decode_namedtuple(dec: _Decoding, payload: bytes) -> Any:
    name, values = dec.unpack(payload)
    cls: Any = dec.user_type(name, _is_namedtuple, "namedtuple")
    if cls is None:
        raise CorruptPayloadError(
            f"the blob holds a namedtuple named {name!r:.120} that is not registered in this "
            "process; if it is your class, call durable_debug.register_type on it before "
            "loading (nothing was imported)"
        )
    if not (isinstance(values, list) and len(values) == len(cls._fields)):
        raise CorruptPayloadError(f"the namedtuple {name!r} has {len(cls._fields)} fields")
    return cls._make(values)


def _decode_timedelta(dec: _Decoding, payload: bytes) -> Any:
    days, seconds, micros = dec.unpack(payload)
    return _dt.timedelta(days=days, seconds=seconds, microseconds=micros)


_DECODERS: dict[int, Callable[[_Decoding, bytes], Any]] = {
    _TUPLE: lambda d, p: tuple(d.unpack(p)),
    _SET: lambda d, p: set(d.unpack(p)),
    _FROZENSET: lambda d, p: frozenset(d.unpack(p)),
    _DATETIME: _decode_text(_dt.datetime.fromisoformat),
    _DATE: _decode_text(_dt.date.fromisoformat),
    _TIME: _decode_text(_dt.time.fromisoformat),
    _TIMEDELTA: _decode_timedelta,
    _UUID: lambda d, p: uuid.UUID(bytes=bytes(p)),
    _DECIMAL: _decode_text(decimal.Decimal),
    _ENUM: _decode_enum,
    _DATACLASS: _decode_dataclass,
    _PYDANTIC: _decode_pydantic,
    _ZONED_DATETIME: _decode_zoned,
    _BYTEARRAY: lambda d, p: bytearray(p),
    _ORDERED_DICT: _decode_ordered_dict,
    _NAMEDTUPLE: _decode_namedtuple,
}
