"""Managed values: state keys the engine fills in instead of a channel.

    class State(TypedDict):
        messages: Annotated[list, add_messages]
        remaining_steps: RemainingSteps      # steps left before GraphRecursionError
        is_last_step: IsLastStep             # True in the last step the limit allows

A node (and a conditional edge) reading such a key gets the value for the step it runs in, so
a loop can end cleanly (route to END when ``remaining_steps`` is low) instead of hitting the
recursion limit. The key has no channel: it is not saved, not in ``get_state().values`` and
not in a run's output, and a node writing it writes nothing (as in LangGraph).

With ``recursion_limit`` N, a step s of a run that started at step -1 (a fresh input) has
``N - s`` steps remaining; ``is_last_step`` is True when that is 1.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Annotated, Any, get_args, get_origin

from typing_extensions import NotRequired, Required

__all__ = [
    "IsLastStep",
    "IsLastStepManager",
    "ManagedValue",
    "RemainingSteps",
    "RemainingStepsManager",
    "managed_keys",
    "managed_values",
    "without_required",
]


class ManagedValue:
    """Marks a state key whose value the engine computes for each step (a subclass says how)."""

    @staticmethod
    def value(step: int, stop: int) -> Any:
        """The key's value in step ``step`` of a run whose last allowed step is ``stop - 1``."""
        raise NotImplementedError


class RemainingStepsManager(ManagedValue):
    """``RemainingSteps``: how many steps the recursion limit still allows, this one included."""

    @staticmethod
    def value(step: int, stop: int) -> int:
        return stop - step


class IsLastStepManager(ManagedValue):
    """``IsLastStep``: True in the last step the recursion limit allows."""

    @staticmethod
    def value(step: int, stop: int) -> bool:
        return step == stop - 1


RemainingSteps = Annotated[int, RemainingStepsManager]
"""A state key's annotation: the steps left before the recursion limit."""
IsLastStep = Annotated[bool, IsLastStepManager]
"""A state key's annotation: True in the last step before the recursion limit."""

_REQUIRED_FORMS = {
    form
    for form in (
        Required,
        NotRequired,
        getattr(typing, "Required", None),  # Python 3.11 and later
        getattr(typing, "NotRequired", None),
    )
    if form is not None
}


def without_required(hint: Any) -> Any:
    """``hint`` without a ``Required[...]`` / ``NotRequired[...]`` wrapper (TypedDict keys)."""
    while get_origin(hint) in _REQUIRED_FORMS:
        hint = get_args(hint)[0]
    return hint


def _manager_of(hint: Any) -> type[ManagedValue] | None:
    hint = without_required(hint)
    if get_origin(hint) is Annotated:
        for item in get_args(hint)[1:]:
            if isinstance(item, type) and issubclass(item, ManagedValue):
                return item
    return None


def managed_keys(schema: Any, kind: str) -> dict[str, type[ManagedValue]]:
    """The keys of a state schema annotated with a managed value, with its manager."""
    found: dict[str, type[ManagedValue]] = {}
    if kind == "root":  # the state is one value: it has no keys
        return found
    if kind == "pydantic":
        for name, info in schema.model_fields.items():
            for item in info.metadata:
                if isinstance(item, type) and issubclass(item, ManagedValue):
                    found[name] = item
        return found
    hints = typing.get_type_hints(schema, include_extras=True)
    names = [f.name for f in dataclasses.fields(schema)] if kind == "dataclass" else list(hints)
    for name in names:
        manager = _manager_of(hints.get(name))
        if manager is not None:
            found[name] = manager
    return found


def managed_values(
    managed: Mapping[str, type[ManagedValue]], step: int, stop: int
) -> dict[str, Any]:
    """Each managed key's value in step ``step`` (``stop``: the first step the limit refuses)."""
    return {key: manager.value(step, stop) for key, manager in managed.items()}
