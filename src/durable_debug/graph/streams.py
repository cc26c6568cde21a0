"""Stream modes: producers over the one sequence of events a run emits.

A run (``loop.RunLoop``) does not know about stream modes. It emits *events* as things
happen — a task starts, a task's outcome is saved, a checkpoint is saved, the run pauses, a
node writes a custom chunk — and each requested mode turns the events it cares about into the
chunks LangGraph yields for that mode:

======================  ================================================================
mode                    events it reads → what it yields
======================  ================================================================
``values``              ``values`` (the state after a step that wrote an output key, or on
                        resume), ``interrupt``
``updates``             ``task_result`` of a task that finished → ``{node: writes}``
                        (with ``"__metadata__": {"cached": True}`` for a cache hit);
                        ``interrupt`` / ``static_interrupt`` → ``{"__interrupt__": ...}``
``custom``              ``custom``: what a node passed to its ``writer``
``messages``            ``message``: ``(message, metadata)`` from a chat model in a node
``tools``               ``tool``: a tool call's start, output delta, end or error
                        (``tool_stream.py``)
``tasks``               ``task`` and ``task_result`` payloads
``checkpoints``         ``checkpoint`` payloads
``debug``               ``task``, ``task_result`` and ``checkpoint``, wrapped with type,
                        step and timestamp
``__events__``          ``callback``: what runnables nested in a node report (chat model and
                        tool start / end); internal, read by ``astream_events`` only
======================  ================================================================

``output_keys`` (a run argument) narrows ``values`` and ``updates`` as LangGraph does: one
key gives that key's value instead of a dict, a list gives a dict of those keys; a step (or
task) that wrote none of them gives no ``values`` chunk (``None`` as its ``updates``).

An event's payload is built only when some requested mode reads that event (the loop hands a
function that builds it), so a run that streams nothing builds nothing.

Every event that reports a step's result is emitted after the step's writes are saved, so a
consumer that stops reading after a chunk finds that step done when the thread resumes.
``custom``, ``messages`` and ``tools`` chunks are emitted while the node runs (they are
progress, not results): a consumer that stops on one cancels the node, which then runs again
on resume.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from durable_debug.checkpoint.names import INTERRUPT

__all__ = [
    "EVENTS_MODE",
    "EVENT_KINDS",
    "LIVE_MODES",
    "STREAM_MODES",
    "OutputKeys",
    "Producers",
    "TaskResult",
    "print_chunk",
    "print_modes",
    "select_output",
    "stream_modes",
]

STREAM_MODES = (
    "values",
    "updates",
    "custom",
    "messages",
    "tools",
    "tasks",
    "checkpoints",
    "debug",
)
"""Every stream mode, in the order their chunks are given for one event."""

EVENTS_MODE = "__events__"
"""The internal mode of ``astream_events``: nested runnables' callbacks (not a user mode)."""

LIVE_MODES = frozenset({"custom", "messages", "tools", EVENTS_MODE})
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
    "tool",
    "callback",
)
"""What a run emits (see the module docstring)."""

Produce = Callable[[Any], Iterable[Any]]

TaskResult = tuple[dict[str, Any], bool, "tuple[Any] | None", Sequence[tuple[str, Any]]]
"""A ``task_result`` event: the debug event, whether the writes are cached ones, the
functional API's return value (or None), and the task's writes of state keys."""

OutputKeys = str | Sequence[str] | None
"""A run's ``output_keys``: one state key, a list of them, or None for the whole state."""


def select_output(values: dict[str, Any], keys: OutputKeys) -> Any:
    """``values`` as ``output_keys`` shows them: one key's value, or a dict of the keys set."""
    if keys is None:
        return values
    if isinstance(keys, str):
        return values.get(keys)
    return {k: values[k] for k in keys if k in values}


def _touches(written: Collection[str], keys: OutputKeys) -> bool:
    if keys is None:
        return bool(written)
    if isinstance(keys, str):
        return keys in written
    return any(k in written for k in keys)


def _values_of(keys: OutputKeys) -> Produce:
    """The ``values`` producer: ``(state, written)`` → the state, if an output key was
    written (``written`` None: always, as on resume)."""

    def produce(event: tuple[dict[str, Any], Collection[str] | None]) -> Iterable[Any]:
        values, written = event
        if written is None or _touches(written, keys):
            yield select_output(values, keys)

    return produce


def _updates_of(keys: OutputKeys) -> Produce:
    """The ``updates`` producer: a finished task → ``{node: its writes of output keys}``."""

    def produce(result: TaskResult) -> Iterable[Any]:
        event, cached, value, writes = result
        payload = event["payload"]
        if payload["error"] is None and not payload["interrupts"]:
            chunk: dict[str, Any] = {payload["name"]: _update(writes, keys)}
            if value is not None:  # a functional-API task: its return value
                chunk = {payload["name"]: value[0]}
            if cached:
                chunk["__metadata__"] = {"cached": True}
            yield chunk

    return produce


def _update(writes: Sequence[tuple[str, Any]], keys: OutputKeys) -> Any:
    """What a task's ``updates`` chunk shows of its state writes, as LangGraph shows it: one
    key's value (several values: their list), or a dict of the keys written (a key written
    more than once: a list of one-key dicts, one per write); None when nothing is shown."""
    if isinstance(keys, str):
        values = [v for ch, v in writes if ch == keys]
        return values[0] if len(values) == 1 else (values or None)
    shown = [(ch, v) for ch, v in writes if keys is None or ch in keys]
    if not shown:
        return None
    channels = [ch for ch, _ in shown]
    if len(set(channels)) < len(channels):
        return [{ch: v} for ch, v in shown]
    return dict(shown)


_PRODUCERS: dict[str, dict[str, Produce]] = {
    "values": {
        "values": _values_of(None),
        "interrupt": lambda p: ({**_as_dict(p["values"]), INTERRUPT: p["interrupts"]},),
    },
    "updates": {
        "task_result": _updates_of(None),
        "interrupt": lambda p: ({INTERRUPT: p["interrupts"]},),
        "static_interrupt": lambda _: ({INTERRUPT: ()},),
    },
    "custom": {"custom": lambda chunk: (chunk,)},
    "messages": {"message": lambda pair: (pair,)},
    "tools": {"tool": lambda payload: (payload,)},
    # A cached result (a cache hit, or writes saved by an earlier run) is not a task result.
    "tasks": {
        "task": lambda event: (event["payload"],),
        "task_result": lambda result: () if result[1] else (result[0]["payload"],),
    },
    "checkpoints": {"checkpoint": lambda event: (event["payload"],)},
    "debug": {
        "task": lambda event: (event,),
        "task_result": lambda result: () if result[1] else (result[0],),
        "checkpoint": lambda event: (event,),
    },
    EVENTS_MODE: {"callback": lambda event: (event,)},
}


def _as_dict(values: Any) -> Mapping[str, Any]:
    """A state as the ``values`` chunk of an interrupt extends it (an entrypoint's return
    value that is not a dict is left out, as in LangGraph)."""
    return values if isinstance(values, Mapping) else {}


def stream_modes(stream_mode: str | Sequence[str]) -> list[str]:
    """The requested modes as a list; raises ValueError naming an unknown one."""
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    for mode in modes:
        if mode not in _PRODUCERS:
            raise ValueError(
                f"Unknown stream_mode {mode!r}; use one of {', '.join(map(repr, STREAM_MODES))}"
            )
    return modes


def print_modes(print_mode: str | Sequence[str] | None) -> tuple[frozenset[str], list[str]]:
    """The ``print_mode`` modes to print, and the ones that name no stream mode (LangGraph
    prints nothing for those; the run reports them as findings)."""
    modes = [print_mode] if isinstance(print_mode, str) else list(print_mode or ())
    known = frozenset(m for m in modes if m in _PRODUCERS)
    return known, [m for m in modes if m not in _PRODUCERS]


def print_chunk(mode: str, chunk: Any) -> None:
    """Print one chunk of a ``print_mode`` mode to stdout: the mode in bold, then the chunk."""
    print(f"\033[1m[{mode}]\033[0m {chunk!r}")


class Producers:
    """The producers of the requested modes: turn one event into ``(mode, chunk)`` pairs."""

    def __init__(self, modes: Iterable[str], output_keys: OutputKeys = None) -> None:
        requested = set(modes)
        self.modes = (
            tuple(m for m in (*STREAM_MODES, EVENTS_MODE) if m in requested) if requested else ()
        )  # (a plain invoke streams none)
        self._by_kind: dict[str, list[tuple[str, Produce]]] = {}
        narrowed: dict[str, Produce] = {}
        if output_keys is not None:
            narrowed = {"values": _values_of(output_keys), "task_result": _updates_of(output_keys)}
        for mode in self.modes:
            for kind, produce in _PRODUCERS[mode].items():
                if mode in ("values", "updates"):
                    produce = narrowed.get(kind, produce)
                self._by_kind.setdefault(kind, []).append((mode, produce))
        paused = self._by_kind.get("interrupt")
        if paused:  # LangGraph gives an interrupt's ``updates`` chunk before its ``values``
            paused.sort(key=lambda pair: pair[0] != "updates")
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
