"""State schemas: turn a TypedDict, dataclass or pydantic model into channels, and back.

Each key of the schema becomes a channel. ``Annotated[T, reducer]`` makes a reducer channel;
any other key keeps the last value written.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, get_args, get_origin

from typing_extensions import is_typeddict

from durable_debug.graph.channels import BinaryOperatorAggregate, Channel, LastValue
from durable_debug.graph.managed import managed_keys
from durable_debug.graph.types import InvalidUpdateError

__all__ = ["StateSchema"]


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
        self.managed = managed_keys(schema, self.kind)
        """Keys annotated ``RemainingSteps`` / ``IsLastStep``: values, not channels."""
        own = [k for k in _read_keys(schema, self.kind) if k.name not in self.managed]
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
        (a TypedDict, dataclass or pydantic model with annotated keys); None otherwise."""
        if not isinstance(schema, type):
            return None
        try:
            kind = _kind_of(schema)
            if not _read_keys(schema, kind):
                return None
        except Exception:  # not a schema class, or annotations that do not resolve
            return None
        return cls(schema)

    def make_channels(self) -> dict[str, Channel]:
        """A fresh channel per key."""
        channels: dict[str, Channel] = {}
        for key in self._keys:
            if key.channel is not None:
                channel = key.channel.copy()
                channel.key = key.name
                channels[key.name] = channel
            elif key.reducer is not None:
                origin = get_origin(key.typ) or key.typ
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
        if any(k not in self._own_set for k in values):
            keep = self._own_set.union(also) if self.kind == "typeddict" else self._own_set
            values = {k: v for k, v in values.items() if k in keep}
        if self.kind == "dataclass":
            return self.schema(**values)
        if self.kind == "pydantic":
            return self.schema.model_validate(dict(values))
        return dict(values)

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
        if isinstance(value, Mapping):
            updates = dict(value)
        elif self.kind != "typeddict" and isinstance(value, self.schema):
            updates = _instance_fields(value, self.kind)
        elif (kind := _instance_kind(value)) is not None:  # another schema's instance
            updates = _instance_fields(value, kind)
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


def _kind_of(schema: Any) -> str:
    if is_typeddict(schema):
        return "typeddict"
    if dataclasses.is_dataclass(schema) and isinstance(schema, type):
        return "dataclass"
    if isinstance(schema, type) and hasattr(schema, "model_fields"):
        return "pydantic"
    if isinstance(schema, type) and issubclass(schema, dict):
        return "typeddict"
    raise TypeError(
        f"StateGraph needs a TypedDict, dataclass or pydantic model as its state schema, "
        f"got {schema!r}"
    )


def _read_keys(schema: Any, kind: str) -> list[_Key]:
    if kind == "pydantic":
        keys = []
        for name, info in schema.model_fields.items():
            reducer = _reducer_in(list(info.metadata))
            keys.append(_Key(name, info.annotation, reducer, _channel_in(list(info.metadata))))
        return keys
    hints = typing.get_type_hints(schema, include_extras=True)
    names = [f.name for f in dataclasses.fields(schema)] if kind == "dataclass" else list(hints)
    keys = []
    for name in names:
        hint = hints.get(name, Any)
        base, reducer, channel = hint, None, None
        if get_origin(hint) is typing.Annotated:
            base, *meta = get_args(hint)
            reducer = _reducer_in(meta)
            channel = _channel_in(meta)
        keys.append(_Key(name, base, reducer, channel))
    return keys


def _channel_in(metadata: list[Any]) -> Channel | None:
    """A channel instance in Annotated metadata (``durable_debug.channels``), if any; a
    reducer channel's operator is the key's reducer."""
    for item in reversed(metadata):
        if isinstance(item, Channel):
            return item
    return None


def _reducer_in(metadata: list[Any]) -> Callable[[Any, Any], Any] | None:
    """The last two-argument callable in Annotated metadata is the reducer (or the
    operator of a ``BinaryOperatorAggregate`` channel given there)."""
    for item in reversed(metadata):
        if isinstance(item, BinaryOperatorAggregate):
            return item.operator
        if callable(item) and _takes_two(item):
            return item
    return None


def _takes_two(fn: Any) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True  # builtins such as operator.add have no introspectable signature
    positional = [
        p
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


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
    if kind == "pydantic":  # every field, defaults included (as LangGraph writes them)
        return {name: getattr(value, name) for name in type(value).model_fields}
    return dict(value)
