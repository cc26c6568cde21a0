"""The ``counters_since_delta_snapshot`` metadata of LangGraph's ``DeltaChannel`` keys.

LangGraph saves a ``DeltaChannel`` key's writes and its whole value only now and then; each
checkpoint's metadata counts, per such key, the steps that wrote it and all steps since the
last whole save, as ``[updates, steps]`` (a key at ``[0, 0]`` is left out). A whole save
happens when the updates reach the key's ``snapshot_frequency``, the steps reach
``DELTA_MAX_STEPS``, or a step overwrote the key (``Overwrite``); the counters then start
again, as they do on a fork (a run's input, or an ``update_state``, on a checkpoint the
thread has moved past). This engine saves the whole value at every checkpoint, so the
counters change nothing here: they are kept as LangGraph keeps them, for code that reads them
(docs/engine.md, diff-delta-channel).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.names import DELTA_COUNTERS
from durable_debug.graph.channels import MISSING, overwrite_value
from durable_debug.graph.public_channels import DeltaChannel

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "DELTA_MAX_STEPS",
    "add_update_counters",
    "count_step",
    "delta_frequencies",
    "overwritten",
    "reset_counters",
]

DELTA_MAX_STEPS = 5000
"""LangGraph's default bound on the steps between two whole saves of a ``DeltaChannel`` key
(its ``DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT``)."""


def delta_frequencies(graph: CompiledStateGraph[Any, Any, Any, Any]) -> dict[str, int]:
    """The ``snapshot_frequency`` of each ``DeltaChannel`` key of ``graph`` (worked out once
    per compiled graph)."""
    found = graph.__dict__.get("_delta_frequencies")
    if found is None:
        found = {
            name: channel.snapshot_frequency
            for name, channel in graph.new_channels().items()
            if isinstance(channel, DeltaChannel)
        }
        graph.__dict__["_delta_frequencies"] = found
    return found


def count_step(
    frequencies: Mapping[str, int],
    previous: Mapping[str, Any] | None,
    updated: Collection[str],
    versions: Mapping[str, Any],
    *,
    steps: int = 1,
    whole: Collection[str] = (),
    reset: bool = True,
) -> dict[str, list[int]]:
    """The counters of a checkpoint made by ``steps`` steps (0 for a copy) after the one
    whose metadata is ``previous``: ``updated`` are the keys the step wrote, ``whole`` those
    it overwrote. ``reset=False`` (steps passed over under ``durability="exit"``) counts
    without whole saves, as LangGraph does until the run saves at exit."""
    before = dict((previous or {}).get(DELTA_COUNTERS) or {})
    counters: dict[str, list[int]] = {}
    for key in frequencies:
        updates, total = before.get(key, (0, 0))
        counters[key] = [updates + (key in updated), total + steps]
    return reset_counters(frequencies, counters, versions, whole) if reset else _nonzero(counters)


def reset_counters(
    frequencies: Mapping[str, int],
    counters: Mapping[str, list[int]],
    versions: Mapping[str, Any],
    whole: Collection[str] = (),
) -> dict[str, list[int]]:
    """``counters`` without the keys LangGraph saves whole now (a key with a version whose
    updates reached its frequency, whose steps reached the bound, or in ``whole``)."""
    kept = {
        key: value
        for key, value in counters.items()
        if not (
            key in versions
            and (key in whole or value[0] >= frequencies[key] or value[1] >= DELTA_MAX_STEPS)
        )
    }
    return _nonzero(kept)


def overwritten(frequencies: Mapping[str, int], writes: Iterable[tuple[str, Any]]) -> set[str]:
    """The ``DeltaChannel`` keys an ``Overwrite`` among ``writes`` replaces."""
    return {
        key for key, value in writes if key in frequencies and overwrite_value(value) is not MISSING
    }


def _nonzero(counters: Mapping[str, list[int]]) -> dict[str, list[int]]:
    return {key: value for key, value in counters.items() if value != [0, 0]}


def add_update_counters(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    metadata: dict[str, Any],
    previous: Mapping[str, Any] | None,
    updated: Collection[str],
    versions: Mapping[str, Any],
    *,
    steps: int = 1,
    forked: bool = False,
) -> None:
    """Put the counters of a checkpoint ``update_state`` makes into its ``metadata``: one
    step after ``previous`` (the updated checkpoint's metadata; ``steps=0`` for a copy, which
    keeps them), none on a thread with nothing saved (LangGraph saves every key whole), and
    every key with a value saved whole when ``forked`` (the updated checkpoint is not the
    thread's newest)."""
    frequencies = delta_frequencies(graph)
    if not frequencies or previous is None:
        return
    if steps == 0:
        counters = dict(previous.get(DELTA_COUNTERS) or {})
    else:
        whole = frequencies.keys() if forked else ()
        counters = count_step(frequencies, previous, updated, versions, steps=steps, whole=whole)
    if counters:
        metadata[DELTA_COUNTERS] = counters
