"""Channels: where the state lives between steps, one per state key (plus internal triggers).

A channel receives the writes of one step all at once (``update``), so it decides what two
parallel writes mean: a plain key refuses them, a reducer key folds them in order.

    ch = BinaryOperatorAggregate("log", operator.add, list)
    ch.update([["a"], ["b"]])
    ch.get()          # ['a', 'b']
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Self

from durable_debug.checkpoint.names import OVERWRITE
from durable_debug.graph.types import InvalidUpdateError, Overwrite

__all__ = [
    "MISSING",
    "BinaryOperatorAggregate",
    "Channel",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Sentinel for "this channel holds no value"."""


def overwrite_value(write: Any) -> Any:
    """The value an :class:`Overwrite` write (or its dict form ``{"__overwrite__": v}``)
    replaces a reducer key with; MISSING for an ordinary write."""
    if isinstance(write, Overwrite):
        return write.value
    if isinstance(write, dict) and len(write) == 1 and OVERWRITE in write:
        return write[OVERWRITE]
    return MISSING


class Channel:
    """Base class. ``value`` is MISSING when the channel is empty."""

    __slots__ = ("key", "value")

    ephemeral = False
    """True for channels whose value lasts one step (triggers)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.value: Any = MISSING

    def copy(self) -> Self:
        """A copy holding the same value (values are shared, not deep-copied).

        A subclass with slots of its own extends this to copy them too.
        """
        new = object.__new__(type(self))
        new.key = self.key
        new.value = self.value
        return new

    def is_available(self) -> bool:
        """True when the channel holds a value a node can read or be triggered by."""
        return self.value is not MISSING

    def get(self) -> Any:
        """The current value (MISSING if none)."""
        return self.value

    def update(self, values: Sequence[Any]) -> bool:
        """Apply one step's writes; return True if the channel changed."""
        raise NotImplementedError

    def consume(self) -> bool:
        """Called when a node triggered by this channel ran; True if that changed it."""
        return False

    def finish(self) -> bool:
        """Called when the run has no task left; True if the channel became available (the
        triggers of deferred nodes)."""
        return False

    def checkpoint(self) -> Any:
        """The value to store in a checkpoint (MISSING: store nothing)."""
        return self.value

    def restore(self, value: Any) -> None:
        """Load the value stored by :meth:`checkpoint`."""
        self.value = value

    def for_annotation(self, typ: Any) -> None:
        """Told the type of the state key it is given to (``Annotated[typ, channel]``); a
        channel that takes its value type from there (``DeltaChannel``) sets it."""


class LastValue(Channel):
    """A plain state key: keeps the last value; two writes in one step are an error."""

    __slots__ = ()

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': Can receive only one value per step. "
                "Use an Annotated key to handle multiple values."
            )
        self.value = values[0]
        return True


CONCRETE_COLLECTIONS: dict[Any, type] = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}
"""The concrete type a reducer channel typed with an abstract collection starts empty as
(``Annotated[Sequence[str], operator.add]`` starts from ``[]``), as LangGraph's does."""


def concrete_collection(origin: Any) -> Any:
    """``origin`` (a type's origin), or the concrete type of an abstract collection
    (:data:`CONCRETE_COLLECTIONS`)."""
    return CONCRETE_COLLECTIONS.get(origin, origin)


class BinaryOperatorAggregate(Channel):
    """A reducer key (``Annotated[T, fn]``): folds every write into the value with ``fn``."""

    __slots__ = ("operator",)

    def __init__(self, key: str, operator: Callable[[Any, Any], Any], typ: Any = None) -> None:
        super().__init__(key)
        self.operator = operator
        # Like LangGraph, start a list/dict/set/int reducer from its empty value.
        if isinstance(typ, type):
            try:
                self.value = typ()
            except Exception:
                self.value = MISSING

    def copy(self) -> Self:
        new = super().copy()
        new.operator = self.operator
        return new

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        value = self.value
        overwritten = False
        for item in values:
            replacement = overwrite_value(item)
            if replacement is not MISSING:
                if overwritten:
                    raise InvalidUpdateError(
                        f"At key '{self.key}': Can receive only one Overwrite value per super-step."
                    )
                value, overwritten = replacement, True
            elif not overwritten:  # after an Overwrite, the step's other writes are dropped
                value = item if value is MISSING else self.operator(value, item)
        self.value = value
        return True


class EphemeralValue(Channel):
    """Holds a value for one step only: used for the run input and for edge triggers."""

    __slots__ = ()

    ephemeral = True

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = self._kept(values)
        return True

    def _kept(self, values: Sequence[Any]) -> Any:
        """What the channel holds after a step that wrote ``values``."""
        return values[-1]


class Topic(EphemeralValue):
    """Collects the Send packets written in one step (cleared before the next step's)."""

    __slots__ = ()

    def _kept(self, values: Sequence[Any]) -> Any:
        return list(values)


class NamedBarrierValue(Channel):
    """A join: available once every named source has written to it; reset when consumed."""

    __slots__ = ("names",)

    def __init__(self, key: str, names: Sequence[str]) -> None:
        super().__init__(key)
        self.names = frozenset(names)

    def copy(self) -> Self:
        new = super().copy()
        new.names = self.names
        return new

    def is_available(self) -> bool:
        return self.value is not MISSING and set(self.value) >= self.names

    def get(self) -> Any:
        return None if self.is_available() else MISSING

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        seen = set(self.value) if self.value is not MISSING else set()
        unknown = [v for v in values if v not in self.names]
        if unknown:
            raise InvalidUpdateError(
                f"At key '{self.key}': {unknown[0]!r} is not one of the joined nodes "
                f"{sorted(self.names)}"
            )
        before = len(seen)
        seen.update(values)
        self.value = sorted(seen)
        return len(seen) != before

    def consume(self) -> bool:
        if self.is_available():
            self.value = MISSING
            return True
        return False


class LastValueAfterFinish(Channel):
    """The trigger of a deferred node (``add_node(..., defer=True)``): holds the last value
    written, but is available only once the run has nothing else to do (:meth:`finish`)."""

    __slots__ = ("finished",)

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.finished = False

    def copy(self) -> Self:
        new = super().copy()
        new.finished = self.finished
        return new

    def is_available(self) -> bool:
        return self.value is not MISSING and self.finished

    def get(self) -> Any:
        return self.value if self.finished else MISSING

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        self.value, self.finished = values[-1], False
        return True

    def finish(self) -> bool:
        if self.finished or self.value is MISSING:
            return False
        self.finished = True
        return True

    def consume(self) -> bool:
        if not self.finished:
            return False
        self.value, self.finished = MISSING, False
        return True

    def checkpoint(self) -> Any:
        return MISSING if self.value is MISSING else [self.value, self.finished]

    def restore(self, value: Any) -> None:
        self.value, self.finished = _after_finish(self.key, value)


class NamedBarrierValueAfterFinish(NamedBarrierValue):
    """The join into a deferred node: complete once every source wrote, available only once
    the run has nothing else to do."""

    __slots__ = ("finished",)

    def __init__(self, key: str, names: Sequence[str]) -> None:
        super().__init__(key, names)
        self.finished = False

    def copy(self) -> Self:
        new = super().copy()
        new.finished = self.finished
        return new

    def is_available(self) -> bool:
        return self.finished and super().is_available()

    def finish(self) -> bool:
        if self.finished or not super().is_available():
            return False
        self.finished = True
        return True

    def consume(self) -> bool:
        if not self.finished:
            return False
        self.value, self.finished = MISSING, False
        return True

    def checkpoint(self) -> Any:
        return MISSING if self.value is MISSING else [self.value, self.finished]

    def restore(self, value: Any) -> None:
        self.value, self.finished = _after_finish(self.key, value)


def _after_finish(key: str, stored: Any) -> tuple[Any, bool]:
    if not (isinstance(stored, (list, tuple)) and len(stored) == 2):
        raise InvalidUpdateError(
            f"Channel {key!r}: a deferred node's trigger must be stored as [value, finished], "
            f"found {stored!r:.80}"
        )
    return stored[0], bool(stored[1])
