"""LangGraph's public channel classes, usable as a state key's channel:

    class State(TypedDict):
        events: Annotated[list, Topic(str, accumulate=True)]   # every write, kept
        scratch: Annotated[str, EphemeralValue(str)]            # cleared after one step
        total: Annotated[int, BinaryOperatorAggregate(int, operator.add)]

Each is the engine's channel of that kind (``graph/channels.py``) with LangGraph's constructor
(the value type first; the key is the state key it is given to) and LangGraph's public
methods: ``get()`` (raises :class:`EmptyChannelError` when empty), ``update(values)``,
``is_available()``, ``checkpoint()``, ``from_checkpoint(value)``, ``copy()``, ``consume()``,
``finish()``, ``ValueType`` / ``UpdateType``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Annotated, Any, get_args, get_origin

from typing_extensions import Self

from durable_debug.graph import channels as engine
from durable_debug.graph.channels import MISSING, concrete_collection, overwrite_value
from durable_debug.graph.types import InvalidUpdateError

__all__ = [
    "AnyValue",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EmptyChannelError",
    "EphemeralValue",
    "LastValue",
    "NamedBarrierValue",
    "Topic",
    "UntrackedValue",
]


class EmptyChannelError(Exception):
    """Raised by ``get()`` on a channel that holds no value (LangGraph's error)."""


class _Public(engine.Channel):
    """LangGraph's channel API over an engine channel; ``typ`` is the value type (a slot of
    each concrete class: two bases with slots of their own cannot be combined)."""

    __slots__ = ()
    typ: Any

    def __init__(self, typ: Any = Any, key: str = "") -> None:
        super().__init__(key)
        self.typ = typ

    def copy(self) -> Self:
        new = super().copy()
        new.typ = self.typ
        return new

    @property
    def ValueType(self) -> Any:
        """The type of the value the channel holds."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of one write."""
        return self.typ

    def get(self) -> Any:
        """The channel's value; raises :class:`EmptyChannelError` when it holds none."""
        if not self.is_available():
            raise EmptyChannelError()
        return self.value

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A new channel like this one holding what :meth:`checkpoint` returned."""
        new = self.copy()
        new.value = MISSING
        if checkpoint is not MISSING:
            new.restore(checkpoint)
        return new


class LastValue(_Public, engine.LastValue):
    """Keeps the last value written; two writes in one step are an error."""

    __slots__ = ("typ",)


class AnyValue(_Public, engine.Channel):
    """Keeps the last value written, several writes in a step allowed (assumed equal); a step
    that writes nothing clears it, as in LangGraph."""

    __slots__ = ("typ",)
    ephemeral = True

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True


class EphemeralValue(_Public, engine.EphemeralValue):
    """Holds the value written in one step until the next; with ``guard`` (the default), two
    writes in one step are an error."""

    __slots__ = ("guard", "typ")

    def __init__(self, typ: Any = Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard

    def copy(self) -> Self:
        new = super().copy()
        new.guard = self.guard
        return new

    def update(self, values: Sequence[Any]) -> bool:
        if self.guard and len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': EphemeralValue(guard=True) can receive only one value "
                "per step. Use guard=False if you want to store any one of multiple values."
            )
        return super().update(values)


class UntrackedValue(_Public, engine.Channel):
    """Keeps the last value written during a run but is never saved in a checkpoint."""

    __slots__ = ("guard", "typ")

    def __init__(self, typ: Any = Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard

    def copy(self) -> Self:
        new = super().copy()
        new.guard = self.guard
        return new

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if self.guard and len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one value "
                "per step. Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True

    untracked = True
    """Its writes are not saved either (``RunLoop`` leaves them out of a task's writes)."""

    def checkpoint(self) -> Any:
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A new empty channel like this one: nothing of it is ever saved."""
        return super().from_checkpoint(MISSING)


class Topic(_Public, engine.Channel):
    """Collects the values written (a list written adds its items): those of the last step
    that wrote any, or with ``accumulate=True`` every value ever written."""

    __slots__ = ("accumulate", "typ")

    def __init__(self, typ: Any = Any, accumulate: bool = False, key: str = "") -> None:
        super().__init__(typ, key)
        self.accumulate = accumulate
        self.value = []

    def copy(self) -> Self:
        new = super().copy()
        new.accumulate = self.accumulate
        return new

    @property
    def ValueType(self) -> Any:
        """``Sequence[typ]``: the channel holds the values written, as LangGraph's does."""
        return Sequence[self.typ]  # type: ignore[name-defined]  # a type made at run time

    @property
    def UpdateType(self) -> Any:
        """``typ | list[typ]``: a write is one value or a list of them, as in LangGraph."""
        return self.typ | list[self.typ]  # type: ignore[name-defined]  # a type made at run time

    @property
    def ephemeral(self) -> bool:  # type: ignore[override]  # the base's attribute is a property here: it follows accumulate
        """Without ``accumulate`` the values last one step."""
        return not self.accumulate

    def is_available(self) -> bool:
        return bool(self.value)

    def update(self, values: Sequence[Any]) -> bool:
        before = list(self.value) if self.value is not MISSING else []
        kept = list(before) if self.accumulate else []
        for value in values:
            kept.extend(value if isinstance(value, list) else [value])
        self.value = kept
        return kept != before

    def checkpoint(self) -> Any:
        return list(self.value) if self.value else MISSING

    def restore(self, value: Any) -> None:
        self.value = list(value)


class BinaryOperatorAggregate(_Public, engine.BinaryOperatorAggregate):
    """Folds every write into the value with ``operator`` (a reducer key)."""

    __slots__ = ("typ",)

    def __init__(self, typ: Any, operator: Callable[[Any, Any], Any], key: str = "") -> None:
        # Starts from the type's empty value, as LangGraph's: a generic (``list[int]``) or an
        # abstract collection (``Sequence[str]``: a list) too.
        base = get_args(typ)[0] if get_origin(typ) is Annotated else typ
        origin = get_origin(base) or base
        engine.BinaryOperatorAggregate.__init__(self, key, operator, concrete_collection(origin))
        self.typ = typ

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A new channel like this one holding what :meth:`checkpoint` returned; from
        nothing saved, a fresh one (the type's empty value), as LangGraph's."""
        if checkpoint is MISSING:
            return type(self)(self.typ, self.operator, self.key)
        return super().from_checkpoint(checkpoint)


class NamedBarrierValue(_Public, engine.NamedBarrierValue):
    """Available once each of ``names`` has written to it; reset when a node reads it."""

    __slots__ = ("typ",)

    def __init__(self, typ: Any, names: set[Any], key: str = "") -> None:
        engine.NamedBarrierValue.__init__(self, key, list(names))
        self.typ = typ

    def get(self) -> Any:
        if not self.is_available():
            raise EmptyChannelError()
        return None


class DeltaChannel(_Public, engine.Channel):
    """A reducer key whose reducer takes the value and the whole batch of a step's writes:
    ``reducer(value, [write, ...]) -> value`` (LangGraph's beta ``DeltaChannel``). ``typ``
    (default: the state key's annotation, else ``list``) gives the empty value it starts
    from. An ``Overwrite`` write replaces the value (one per step).

    LangGraph saves only the writes of such a key and rebuilds its value by replaying them
    (``snapshot_frequency`` sets how often it saves the whole value); this engine saves the
    whole value at every checkpoint, so a thread reads the same values and
    ``snapshot_frequency`` is accepted and checked but changes nothing.
    """

    __slots__ = ("inferred", "reducer", "snapshot_frequency", "typ")

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any],
        typ: Any = None,
        *,
        snapshot_frequency: int = 100,
    ) -> None:
        if snapshot_frequency <= 0:
            raise ValueError(f"snapshot_frequency must be a positive int, got {snapshot_frequency}")
        super().__init__(Any)
        self.reducer = reducer
        self.snapshot_frequency = snapshot_frequency
        self.inferred = typ is None
        self._set_type(list if typ is None else typ)

    def _set_type(self, typ: Any) -> None:
        origin = get_origin(typ) or typ
        self.typ = concrete_collection(origin)
        self.value = self._empty()

    def _empty(self) -> Any:
        try:
            return self.typ()
        except Exception:  # a type without an empty value: the key starts unset
            return MISSING

    def for_annotation(self, typ: Any) -> None:
        if self.inferred:
            self._set_type(typ)

    def copy(self) -> Self:
        new = super().copy()
        new.reducer = self.reducer
        new.snapshot_frequency = self.snapshot_frequency
        new.inferred = self.inferred
        return new

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeltaChannel)
            and self.snapshot_frequency == other.snapshot_frequency
            and self.reducer == other.reducer
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable, as an __eq__ without __hash__ makes it

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        replaced = [v for v in (overwrite_value(w) for w in values) if v is not MISSING]
        if len(replaced) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': Can receive only one Overwrite value per super-step."
            )
        if replaced:
            self.value = self._empty() if replaced[0] is None else copy.copy(replaced[0])
            return True
        base = self._empty() if self.value is MISSING else self.value
        self.value = self.reducer(base, list(values))
        return True

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A new channel like this one holding ``checkpoint`` (its empty value for None)."""
        new = self.copy()
        new.value = self._empty() if checkpoint is MISSING or checkpoint is None else checkpoint
        return new

    def replay_writes(self, writes: Sequence[tuple[str, str, Any]]) -> None:
        """Apply saved ``(task_id, channel, value)`` writes, oldest first, in one reducer
        call (from the last ``Overwrite`` among them, if any)."""
        values = [value for _, _, value in writes]
        base, start = self.value, 0
        for index, value in enumerate(values):
            replaced = overwrite_value(value)
            if replaced is not MISSING:
                base = self._empty() if replaced is None else copy.copy(replaced)
                start = index + 1
        rest = values[start:]
        self.value = self.reducer(base, rest) if rest else base
