"""Stream modes: producers over the one sequence of events a run emits.

A run (``loop.RunLoop``) does not know about stream modes. It emits *events* as things
happen — a task starts, a task's outcome is saved, a checkpoint is saved, the run pauses, a
node writes a custom chunk — and each requested mode turns the events it cares about into the
chunks LangGraph yields for that mode:

======================  ================================================================
mode                    events it reads → what it yields
======================  ================================================================
``values``              ``values`` (the state after a step, or on resume), ``interrupt``
``updates``             ``task_result`` of a task that finished → ``{node: writes}``
                        (with ``"__metadata__": {"cached": True}`` for a cache hit);
                        ``interrupt`` / ``static_interrupt`` → ``{"__interrupt__": ...}``
``custom``              ``custom``: what a node passed to its ``writer``
``messages``            ``message``: ``(message, metadata)`` from a chat model in a node
``tasks``               ``task`` and ``task_result`` payloads
``checkpoints``         ``checkpoint`` payloads
``debug``               ``task``, ``task_result`` and ``checkpoint``, wrapped with type,
                        step and timestamp
======================  ================================================================

An event's payload is built only when some requested mode reads that event (the loop hands a
function that builds it), so a run that streams nothing builds nothing.

Every event that reports a step's result is emitted after the step's writes are saved, so a
consumer that stops reading after a chunk finds that step done when the thread resumes.
``custom`` and ``messages`` chunks are emitted while the node runs (they are progress, not
results): a consumer that stops on one cancels the node, which then runs again on resume.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["EVENT_KINDS", "LIVE_MODES", "STREAM_MODES", "Producers", "stream_modes"]

STREAM_MODES = ("values", "updates", "custom", "messages", "tasks", "checkpoints", "debug")
"""Every stream mode, in the order their chunks are given for one event."""

LIVE_MODES = frozenset({"custom", "messages"})
"""Modes whose chunks come while a node runs (so sync nodes run in a worker thread)."""

EVENT_KINDS = (
    "values",
    "interrupt",
    "static_interrupt",
    "task",
    "task_result",
    "checkpoint",
    "custom",
    "message",
)
"""What a run emits (see the module docstring)."""

Produce = Callable[[Any], Iterable[Any]]


def _updates_of(result: tuple[dict[str, Any], bool]) -> Iterable[Any]:
    event, cached = result
    payload = event["payload"]
    if payload["error"] is None and not payload["interrupts"]:
        chunk: dict[str, Any] = {payload["name"]: payload["result"] or None}
        if cached:
            chunk["__metadata__"] = {"cached": True}
        yield chunk


_PRODUCERS: dict[str, dict[str, Produce]] = {
    "values": {
        "values": lambda values: (values,),
        "interrupt": lambda p: ({**p["values"], "__interrupt__": p["interrupts"]},),
    },
    "updates": {
        "task_result": _updates_of,
        "interrupt": lambda p: ({"__interrupt__": p["interrupts"]},),
        "static_interrupt": lambda _: ({"__interrupt__": ()},),
    },
    "custom": {"custom": lambda chunk: (chunk,)},
    "messages": {"message": lambda pair: (pair,)},
    "tasks": {
        "task": lambda event: (event["payload"],),
        "task_result": lambda result: (result[0]["payload"],),
    },
    "checkpoints": {"checkpoint": lambda event: (event["payload"],)},
    "debug": {
        "task": lambda event: (event,),
        "task_result": lambda result: (result[0],),
        "checkpoint": lambda event: (event,),
    },
}


def stream_modes(stream_mode: str | Sequence[str]) -> list[str]:
    """The requested modes as a list; raises ValueError naming an unknown one."""
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    for mode in modes:
        if mode not in _PRODUCERS:
            raise ValueError(
                f"Unknown stream_mode {mode!r}; use one of {', '.join(map(repr, STREAM_MODES))}"
            )
    return modes


class Producers:
    """The producers of the requested modes: turn one event into ``(mode, chunk)`` pairs."""

    def __init__(self, modes: Iterable[str]) -> None:
        requested = set(modes)
        self.modes = tuple(m for m in STREAM_MODES if m in requested)
        self._by_kind: dict[str, list[tuple[str, Produce]]] = {}
        for mode in self.modes:
            for kind, produce in _PRODUCERS[mode].items():
                self._by_kind.setdefault(kind, []).append((mode, produce))
        self.live = bool(requested & LIVE_MODES)
        """True when chunks must come while nodes run (``custom``, ``messages``)."""

    def wants(self, kind: str) -> bool:
        """True if a requested mode reads events of ``kind``."""
        return kind in self._by_kind

    def chunks(self, kind: str, build: Callable[[], Any]) -> list[tuple[str, Any]]:
        """The ``(mode, chunk)`` pairs one event gives; ``build()`` makes its payload."""
        producers = self._by_kind.get(kind)
        if not producers:
            return []
        payload = build()
        return [(mode, chunk) for mode, produce in producers for chunk in produce(payload)]
