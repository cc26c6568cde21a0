"""State schemas: turn a TypedDict, dataclass, pydantic model or annotated class into
channels, and back.

Each key of the schema becomes a channel. ``Annotated[T, reducer]`` makes a reducer channel;
any other key keeps the last value written. A schema without annotations (``Annotated[list,
operator.add]``, ``list[str]``, ``int``, ``dict``) is one value, held in the channel
:data:`ROOT`: nodes receive that value and return its update, as in LangGraph.

    class State(TypedDict):
        value: str
        log: Annotated[list, operator.add]

    schema = StateSchema(State)
    schema.keys              # ('value', 'log')
    schema.make_channels()   # {'value': LastValue, 'log': BinaryOperatorAggregate}
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, get_args, get_origin

from typing_extensions import is_typeddict

from durable_debug.graph.channels import (
    BinaryOperatorAggregate,
    Channel,
    LastValue,
    concrete_collection,
)
from durable_debug.graph.managed import ManagedValue, managed_keys, without_required
from durable_debug.graph.types import InvalidUpdateError

__all__ = ["ROOT", "StateSchema"]

ROOT = "__root__"
"""The channel of a state schema that is one value rather than keys (LangGraph's name)."""


class _Key(typing.NamedTuple):
    name: str
    typ: Any
    reducer: Callable[[Any, Any], Any] | None
    channel: Channel | None = None
    """A channel given in the annotation (``Annotated[list, Topic(str)]``), copied per graph."""


class StateSchema:
    """What a state schema declares: its keys, their reducers, and how nodes receive it."""

    def __init__(self, schema: Any, extra: Sequence[StateSchema] = ()) -> None:
        self.schema = schema
        self.kind = _kind_of(schema)
        declared = schema
        if self.kind == "typeddict" and (root := _root_annotation(schema)) is not None:
            # A TypedDict whose one key is ``__root__``: one value, as LangGraph reads it.
            self.kind, declared = "root", root
        self.managed = managed_keys(declared, self.kind)
        """Keys annotated ``RemainingSteps`` / ``IsLastStep``: values, not channels."""
        own = [k for k in _read_keys(declared, self.kind) if k.name not in self.managed]
        self.own_keys: tuple[str, ...] = tuple(k.name for k in own)
        """The keys ``schema`` itself declares (what a node reading it receives)."""
        self._own_set = frozenset(self.own_keys)
        self._keys = list(own)
        for other in extra:  # more channels: input / output / node input schemas
            for key in other._keys:
                if key.name not in {k.name for k in self._keys}:
                    self._keys.append(key)
        self.keys: tuple[str, ...] = tuple(k.name for k in self._keys)
        """Every channel: the keys of ``schema``, then those only ``extra`` schemas declare."""
        self.key_set = frozenset(self.keys)

    @classmethod
    def of(cls, schema: Any) -> StateSchema | None:
        """The schema a node's first parameter annotation declares, if it is a state class
        (a TypedDict, dataclass, pydantic model or class with annotated keys); None
        otherwise."""
        if not isinstance(schema, type):
            return None
        try:
            kind = _kind_of(schema)
            if kind == "root" or not _read_keys(schema, kind):
                return None
        except Exception:  # not a schema class, or annotations that do not resolve
            return None
        return cls(schema)

    def own_key_types(self) -> list[tuple[str, Any]]:
        """``(key, type)`` of each key ``schema`` itself declares (reducer keys: the type
        inside ``Annotated``)."""
        return [(k.name, k.typ) for k in self._keys if k.name in self._own_set]

    @property
    def is_root(self) -> bool:
        """True when the state is one value (the channel :data:`ROOT`), not keys."""
        return self.kind == "root"

    def shown(self, values: Mapping[str, Any]) -> Any:
        """State values as a user sees them: the value itself for a one-value state."""
        return values.get(ROOT) if self.kind == "root" else values

    def make_channels(self) -> dict[str, Channel]:
        """A fresh channel per key."""
        channels: dict[str, Channel] = {}
        for key in self._keys:
            if key.channel is not None:
                channel = key.channel.copy()
                channel.key = key.name
                channel.for_annotation(key.typ)
                channels[key.name] = channel
            elif key.reducer is not None:
                origin = without_required(get_origin(key.typ) or key.typ)
                # An abstract collection starts from its concrete empty value, as LangGraph's.
                origin = concrete_collection(origin)
                channels[key.name] = BinaryOperatorAggregate(key.name, key.reducer, origin)
            else:
                channels[key.name] = LastValue(key.name)
        return channels

    def reducers(self) -> dict[str, Callable[[Any, Any], Any]]:
        """Each key that has a reducer, with that reducer."""
        return {k.name: k.reducer for k in self._keys if k.reducer is not None}

    def to_input(self, values: Mapping[str, Any], also: Iterable[str] = ()) -> Any:
        """Build what a node receives from the current channel values: the keys this schema
        declares (and, for a dict state, the keys ``also`` names)."""
        if self.kind == "root":
            return values.get(ROOT)
        if not self._own_set.issuperset(values):  # (a key of another schema among them)
            keep = self._own_set.union(also) if self.kind in _DICT_KINDS else self._own_set
            values = {k: v for k, v in values.items() if k in keep}
        if self.kind == "dataclass":
            return self.schema(**values)
        if self.kind == "pydantic":
            return self.schema.model_validate(dict(values))
        return dict(values)

    def take_input(self, values: dict[str, Any]) -> Any:
        """:meth:`to_input` of ``values``, a new dict the caller hands over (nobody else
        holds it): that dict itself where ``to_input`` would return a copy of it."""
        if self.kind in _DICT_KINDS and self._own_set.issuperset(values):
            return values
        return self.to_input(values)

    def plain_updates(self, value: Any) -> dict[str, Any] | None:
        """What :meth:`updates_from` makes of the common return value, a plain dict of this
        schema's keys (none of them managed), found without its checks; None for anything
        else, which needs them."""
        plain = type(value) is dict and not self.managed and self.kind != "root"
        return dict(value) if plain and self.key_set.issuperset(value) else None

    def updates_from(
        self,
        value: Any,
        *,
        where: str,
        on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
    ) -> dict[str, Any]:
        """Turn a node's return value (or a run's input) into ``{key: value}`` writes.

        ``where`` names the node (or "the input") in errors. A key the schema lacks raises
        :class:`InvalidUpdateError`, unless ``on_unknown`` is given: then the key is dropped,
        as LangGraph drops it, and ``on_unknown(key, what_happened, error)`` is called for it
        (it may raise ``error``, the one raised without it).
        """
        if value is None:
            return {}
        if self.kind == "root":
            return {ROOT: value}
        plain = self.plain_updates(value)
        if plain is not None:
            return plain
        if isinstance(value, Mapping):
            updates = dict(value)
        elif self.kind not in _DICT_KINDS and isinstance(value, self.schema):
            updates = _instance_fields(value, self.kind)
        elif (kind := _instance_kind(value)) is not None:  # another schema's instance
            updates = _instance_fields(value, kind)
        elif _annotated_keys(type(value)):
            # An instance of an annotated class: its attributes named like state keys (as
            # LangGraph reads one).
            updates = {k: getattr(value, k) for k in self.keys if hasattr(value, k)}
        else:
            raise InvalidUpdateError(
                f"{where} returned {type(value).__name__} {value!r:.80}, but a node must "
                f"return a dict of state keys ({', '.join(self.keys)}), None, or a Command"
            )
        if self.managed:  # the engine's values, not the node's to write (LangGraph drops them)
            updates = {k: v for k, v in updates.items() if k not in self.managed}
        unknown = [k for k in updates if k not in self.key_set]
        for key in unknown:
            lacks = (
                f"{where} wrote key {key!r}, which the state schema "
                f"{getattr(self.schema, '__name__', self.schema)!s} does not have "
                f"(its keys: {', '.join(self.keys)})"
            )
            error = InvalidUpdateError(
                f"{lacks}. Add the key to the schema or stop writing it; LangGraph would drop "
                "this write silently."
            )
            if on_unknown is None:
                raise error
            on_unknown(key, f"{lacks}: the write was dropped, as LangGraph drops it.", error)
        if unknown:
            updates = {k: v for k, v in updates.items() if k in self.key_set}
        return updates


_DICT_KINDS = frozenset({"typeddict", "class"})
"""Schema kinds whose nodes receive the state as a dict."""


def _kind_of(schema: Any) -> str:
    """``typeddict``, ``dataclass``, ``pydantic``, ``class`` (a class with annotations: nodes
    receive a dict of its keys) or ``root`` (no annotations: the state is one value), as
    LangGraph tells them apart."""
    if is_typeddict(schema):
        return "typeddict"
    if dataclasses.is_dataclass(schema) and isinstance(schema, type):
        return "dataclass"
    if isinstance(schema, type) and hasattr(schema, "model_fields"):
        return "pydantic"
    if not hasattr(schema, "__annotations__"):
        if not isinstance(schema, type) and not get_args(schema):
            warnings.warn(
                f"Invalid state_schema: {schema!r}. Expected a type or Annotated[type, "
                "reducer]; the state is taken to be that one value.",
                stacklevel=4,
            )
        return "root"
    if isinstance(schema, type):
        return "class"
    raise TypeError(
        "StateGraph needs a TypedDict, dataclass, pydantic model, annotated class or a type "
        f"(such as Annotated[list, operator.add]) as its state schema, got {schema!r}"
    )


def _root_annotation(schema: Any) -> Any:
    """The annotation of a TypedDict's ``__root__`` key when it is its only key, else None."""
    try:
        hints = typing.get_type_hints(schema, include_extras=True)
    except Exception:  # annotations that do not resolve: read as a TypedDict
        return None
    return hints[ROOT] if list(hints) == [ROOT] else None


def _annotated_keys(cls: type) -> list[str]:
    """The annotated names of ``cls`` and its bases (none for builtins)."""
    keys: list[str] = []
    for base in reversed(cls.__mro__):
        annotations = inspect.get_annotations(base)
        if isinstance(annotations, Mapping):
            keys.extend(k for k in annotations if k not in keys)
    return keys


def _read_keys(schema: Any, kind: str) -> list[_Key]:
    if kind == "root":
        if get_origin(schema) is typing.Annotated:
            base, *meta = get_args(schema)
            return [_Key(ROOT, base, _reducer_in(meta))]
        return [_Key(ROOT, schema, None)]
    if kind == "pydantic":
        keys = []
        for name, info in schema.model_fields.items():
            reducer = _reducer_in(list(info.metadata), name)
            channel = _channel_in(list(info.metadata), info.annotation)
            keys.append(_Key(name, info.annotation, reducer, channel))
        return keys
    hints = typing.get_type_hints(schema, include_extras=True)
    if kind == "dataclass":
        names = [f.name for f in dataclasses.fields(schema)]
    else:
        names = [name for name in hints if name != "__slots__"]
    keys = []
    for name in names:
        hint = without_required(hints.get(name, Any))
        base, reducer, channel = hint, None, None
        if get_origin(hint) is typing.Annotated:
            base, *meta = get_args(hint)
            reducer = _reducer_in(meta, name)
            channel = _channel_in(meta, base)
        keys.append(_Key(name, base, reducer, channel))
    return keys


def _channel_in(metadata: list[Any], typ: Any = Any) -> Channel | None:
    """A channel in Annotated metadata (``durable_debug.channels``), if any: an instance, or
    a public channel class, made for the key's type as LangGraph makes it
    (``Annotated[str, UntrackedValue]``); a reducer channel's operator is the key's reducer."""
    for item in reversed(metadata):
        if isinstance(item, Channel):
            return item
        if _is_channel_class(item):
            made: Channel = item(get_origin(typ) or typ)
            return made
    return None


def _is_channel_class(item: Any) -> bool:
    """A public channel class (one with LangGraph's ``ValueType``), given uninstantiated."""
    return isinstance(item, type) and issubclass(item, Channel) and hasattr(item, "ValueType")


def _reducer_in(metadata: list[Any], key: str = ROOT) -> Callable[[Any, Any], Any] | None:
    """The reducer of a key annotated ``Annotated[T, *metadata]``, read as LangGraph reads
    it: a ``BinaryOperatorAggregate`` channel given there brings its operator; any other
    channel (an instance or a channel class) or a managed value means no reducer; else the
    last item, when it is callable, is the reducer and must take exactly two positional
    arguments (``(a, b) -> c``): anything else is refused with LangGraph's ValueError, naming
    the key. An item before the last (``Annotated[list, operator.add, "note"]``) is not a
    reducer, in LangGraph either."""
    for item in reversed(metadata):
        if isinstance(item, BinaryOperatorAggregate):
            return item.operator
    if not metadata or any(_is_channel_or_managed(item) for item in metadata):
        return None
    last = metadata[-1]
    if not callable(last):
        return None
    try:
        sig = inspect.signature(last)
    except (TypeError, ValueError):
        return typing.cast(Callable[[Any, Any], Any], last)  # a builtin without a signature
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if sum(p.kind in positional for p in sig.parameters.values()) != 2:
        raise ValueError(
            f"Invalid reducer signature. Expected (a, b) -> c. Got {sig} (the reducer "
            f"{getattr(last, '__name__', last)!r} of state key {key!r}: a reducer takes the "
            "current value and the update, and returns the new value)"
        )
    return typing.cast(Callable[[Any, Any], Any], last)


def _is_channel_or_managed(item: Any) -> bool:
    """A channel (an instance or a public channel class) or a managed value's class."""
    if isinstance(item, Channel) or _is_channel_class(item):
        return True
    return isinstance(item, type) and issubclass(item, ManagedValue)


def _instance_kind(value: Any) -> str | None:
    if isinstance(value, type):
        return None
    if dataclasses.is_dataclass(value):
        return "dataclass"
    if hasattr(type(value), "model_fields") and hasattr(value, "model_fields_set"):
        return "pydantic"
    return None


def _instance_fields(value: Any, kind: str) -> dict[str, Any]:
    if kind == "dataclass":
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if kind == "pydantic":
        # Every field, defaults included, except one left None that defaults to None and was
        # not set: LangGraph writes no update for it.
        fields, given = type(value).model_fields, value.model_fields_set
        return {
            name: v
            for name, field in fields.items()
            if (v := getattr(value, name)) is not None or field.default is not None or name in given
        }
    return dict(value)
