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

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Self

from durable_debug.graph import channels as engine
from durable_debug.graph.channels import MISSING
from durable_debug.graph.types import InvalidUpdateError

__all__ = [
    "AnyValue",
    "BinaryOperatorAggregate",
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
        engine.BinaryOperatorAggregate.__init__(self, key, operator, typ)
        self.typ = typ


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
