"""Run one scenario on durable_debug and on LangGraph and compare what a user would see.

A scenario is a function ``scenario(api, trace)`` (sync or async). It builds its graph from
``api`` — the same names for either library — runs it, and hands what it observes to
``trace``: run results, snapshots, histories, streams. Nodes count their own executions with
``trace.ran(name)``. Every observation is normalized on the way in, so the two traces compare
with ``==``:

    async def chain(api, trace):
        g = api.StateGraph(State).add_node("a", ...).compile(checkpointer=api.MemorySaver())
        await trace.run("first", g.ainvoke({"value": ""}, cfg))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    await acheck_parity(chain)

Ids differ in value between the libraries by design, so every interrupt, task and checkpoint
id is replaced by a label in order of first appearance (``i0``, ``t3``, ``c5``): equal labels
mean "the same id", distinct labels "distinct ids", in either library. Timestamps are dropped.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import pprint
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import pytest

import durable_debug

__all__ = [
    "Api",
    "Trace",
    "acheck_parity",
    "aobserve",
    "check_parity",
    "durable_api",
    "langgraph_api",
    "multiset",
    "observe",
]


@dataclasses.dataclass(frozen=True)
class Api:
    """The names a scenario builds and runs graphs with, taken from one library."""

    name: str
    """"durable_debug" or "langgraph"."""
    StateGraph: Any
    START: str
    END: str
    MemorySaver: Any
    Send: Any
    Command: Any
    interrupt: Callable[[Any], Any]
    Interrupt: Any
    RetryPolicy: Any
    InvalidUpdateError: type[Exception]
    GraphRecursionError: type[Exception]


def durable_api() -> Api:
    """The scenario names from durable_debug."""
    dd = durable_debug
    return Api(
        "durable_debug",
        dd.StateGraph,
        dd.START,
        dd.END,
        dd.MemorySaver,
        dd.Send,
        dd.Command,
        dd.interrupt,
        dd.Interrupt,
        dd.RetryPolicy,
        dd.InvalidUpdateError,
        dd.GraphRecursionError,
    )


def langgraph_api() -> Api:
    """The scenario names from LangGraph (the dev extra installs it).

    Without LangGraph the calling test fails under CI (``CI`` set) and is skipped elsewhere,
    with a message saying how to install it.
    """
    try:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.errors import GraphRecursionError, InvalidUpdateError
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Command, Interrupt, RetryPolicy, Send, interrupt
    except ImportError as exc:
        message = (
            f"LangGraph is not importable ({exc}); the parity tests compare against it. "
            "Install the dev extra: pip install -e '.[dev]'"
        )
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return Api(
        "langgraph",
        StateGraph,
        START,
        END,
        InMemorySaver,
        Send,
        Command,
        interrupt,
        Interrupt,
        RetryPolicy,
        InvalidUpdateError,
        GraphRecursionError,
    )


Scenario = Callable[[Api, "Trace"], Any]


def check_parity(scenario: Scenario) -> dict[str, Any]:
    """Run a synchronous scenario on both libraries; assert the traces are equal.

    Returns durable_debug's trace so a test can add its own assertions on it.
    """
    reference = langgraph_api()
    ours = observe(scenario, durable_api())
    theirs = observe(scenario, reference)
    _assert_same(ours, theirs)
    return ours


async def acheck_parity(scenario: Scenario, *, api: Api | None = None) -> dict[str, Any]:
    """Async twin of :func:`check_parity` for scenarios that are coroutine functions.

    ``api``: the durable_debug names to run it with (default :func:`durable_api`), e.g. with
    another saver as ``MemorySaver``.
    """
    reference = langgraph_api()
    ours = await aobserve(scenario, api or durable_api())
    theirs = await aobserve(scenario, reference)
    _assert_same(ours, theirs)
    return ours


def observe(scenario: Scenario, api: Api) -> dict[str, Any]:
    """Run a synchronous scenario on ``api`` and return its normalized trace."""
    trace = Trace(api)
    scenario(api, trace)
    return trace.finish()


async def aobserve(scenario: Scenario, api: Api) -> dict[str, Any]:
    """Run a scenario (sync or async) on ``api`` and return its normalized trace."""
    trace = Trace(api)
    result = scenario(api, trace)
    if inspect.isawaitable(result):
        await result
    return trace.finish()


class Trace:
    """What one scenario observed on one library, normalized for comparison."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.observations: dict[str, Any] = {}
        self.executions: dict[str, int] = {}
        """Node name → how many times the node function started."""
        self._labels: dict[tuple[str, str], str] = {}

    # -- recording ---------------------------------------------------------------------------

    def ran(self, node: str) -> None:
        """Count one execution of ``node`` (called by the node function itself)."""
        self.executions[node] = self.executions.get(node, 0) + 1

    def note(self, label: str, value: Any) -> Any:
        """Record any value (normalized); return it unchanged."""
        self._put(label, self.normalize(value))
        return value

    async def run(self, label: str, awaitable: Awaitable[Any], *, message: bool = True) -> Any:
        """Await a run and record its result, or the exception it raised (then return None).

        With ``message=False`` only the exception's type is recorded.
        """
        try:
            result = await awaitable
        except Exception as exc:
            self._put(label, self._raised(exc, message))
            return None
        return self.note(label, result)

    def call(
        self, label: str, fn: Callable[..., Any], *args: Any, message: bool = True, **kwargs: Any
    ) -> Any:
        """Sync twin of :meth:`run`: call ``fn(*args, **kwargs)`` and record the outcome."""
        try:
            result = fn(*args, **kwargs)
            if inspect.isgenerator(result):
                result = list(result)
        except Exception as exc:
            self._put(label, self._raised(exc, message))
            return None
        return self.note(label, result)

    def state(self, label: str, snapshot: Any) -> Any:
        """Record a ``get_state`` snapshot; return it."""
        entry = self._snapshot(snapshot)
        entry["checkpoint"] = self.checkpoint_label(snapshot.config)
        entry["parent"] = self.checkpoint_label(snapshot.parent_config)
        self._put(label, entry)
        return snapshot

    def history(self, label: str, snapshots: Iterable[Any]) -> list[Any]:
        """Record a ``get_state_history`` listing (newest first); return it as a list.

        Each checkpoint's parent is given as its position in this listing and its step, and
        the listing must be ordered newest first by checkpoint id (ids sort by time).
        """
        snapshots = list(snapshots)
        position = {_checkpoint_id(s.config): i for i, s in enumerate(snapshots)}
        entries = []
        for snap in snapshots:
            entry = self._snapshot(snap)
            entry["checkpoint"] = self.checkpoint_label(snap.config)
            parent_id = _checkpoint_id(snap.parent_config)
            if parent_id is None:
                entry["parent"] = None
            elif parent_id in position:
                parent = snapshots[position[parent_id]]
                entry["parent"] = {"position": position[parent_id], "step": parent.metadata["step"]}
            else:
                entry["parent"] = {"outside listing": self.checkpoint_label(snap.parent_config)}
            entries.append(entry)
        ids = [_checkpoint_id(s.config) for s in snapshots]
        self._put(label, {"newest first": ids == sorted(ids, reverse=True), "checkpoints": entries})
        return snapshots

    # -- normalizing -------------------------------------------------------------------------

    def label(self, kind: str, raw_id: str) -> str:
        """Stable label of an id: ``i``/``t``/``c`` plus its order of first appearance."""
        key = (kind, str(raw_id))
        if key not in self._labels:
            count = sum(1 for k, _ in self._labels if k == kind)
            self._labels[key] = f"{kind}{count}"
        return self._labels[key]

    def namespace(self, ns: str) -> str:
        """A checkpoint namespace (``node:task_id|...``) with its task ids labelled."""
        parts = []
        for part in ns.split("|") if ns else ():
            node, _, task = part.partition(":")
            parts.append(f"{node}:{self.label('t', task)}" if task else node)
        return "|".join(parts)

    def checkpoint_label(self, config: Mapping[str, Any] | None) -> str | None:
        """Label of the checkpoint a config points to (None when it points to none)."""
        checkpoint_id = _checkpoint_id(config)
        return None if checkpoint_id is None else self.label("c", checkpoint_id)

    def normalize(self, value: Any) -> Any:
        """A comparable form of ``value``: ids labelled, library classes as plain data."""
        api = self.api
        if isinstance(value, api.Interrupt):
            return {"Interrupt": self.normalize(value.value), "id": self.label("i", value.id)}
        if isinstance(value, api.Send):
            return {"Send": value.node, "arg": self.normalize(value.arg)}
        if isinstance(value, BaseException):
            return self._raised(value, True)
        if isinstance(value, Mapping):
            if _is_config(value):
                return {"config of": self.checkpoint_label(value)}
            return {k: self.normalize(v) for k, v in value.items()}
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # StateSnapshot, PregelTask
            return {type(value).__name__: self.normalize(value._asdict())}
        if isinstance(value, (list, tuple)):
            return type(value)(self.normalize(v) for v in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return {type(value).__name__: self.normalize(fields)}
        if hasattr(value, "model_dump") and not isinstance(value, type):
            return {type(value).__name__: self.normalize(value.model_dump())}
        return value

    def finish(self) -> dict[str, Any]:
        """The whole trace: every observation, then the execution counters."""
        return {**self.observations, "executions": dict(sorted(self.executions.items()))}

    def _snapshot(self, snap: Any) -> dict[str, Any]:
        metadata = dict(snap.metadata or {})  # as LangGraph's: the debugger's keys are elsewhere
        if metadata.get("parents"):  # a subgraph's checkpoint: namespace → checkpoint id
            metadata["parents"] = {
                self.namespace(ns): self.label("c", cid) for ns, cid in metadata["parents"].items()
            }
        return {
            "step": metadata.pop("step", None),
            "source": metadata.pop("source", None),
            "metadata": self.normalize(metadata),
            "next": tuple(snap.next),
            "values": self.normalize(snap.values),
            "tasks": [self._task(t) for t in snap.tasks],
            "interrupts": [self.normalize(i) for i in snap.interrupts],
        }

    def _task(self, task: Any) -> dict[str, Any]:
        error = task.error
        if isinstance(error, BaseException):
            error = repr(error)
        return {
            "id": self.label("t", task.id),
            "name": task.name,
            "error": error,
            "interrupts": [self.normalize(i) for i in task.interrupts],
            "result": self.normalize(task.result),
        }

    def _raised(self, exc: BaseException, message: bool) -> dict[str, Any]:
        raised: dict[str, Any] = {"raised": type(exc).__name__}
        if message:
            # LangGraph appends a troubleshooting link on a second line; the first line is
            # the message itself.
            raised["message"] = str(exc).splitlines()[0] if str(exc) else ""
        return raised

    def _put(self, label: str, value: Any) -> None:
        if label in self.observations:
            raise ValueError(f"Trace label {label!r} used twice in one scenario")
        self.observations[label] = value


def multiset(items: Iterable[Any]) -> list[str]:
    """Items as a sorted list of their reprs: for streams whose order is completion order."""
    return sorted(repr(item) for item in items)


def _checkpoint_id(config: Mapping[str, Any] | None) -> str | None:
    if not config:
        return None
    return (config.get("configurable") or {}).get("checkpoint_id")


def _is_config(value: Mapping[str, Any]) -> bool:
    configurable = value.get("configurable")
    return isinstance(configurable, Mapping) and "thread_id" in configurable


def _assert_same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Fail listing every place where the traces differ, as a path into the trace."""
    if ours == theirs:
        return
    found = list(_differences(ours, theirs, ""))
    lines = [f"durable_debug and LangGraph differ in {len(found)} place(s):"]
    lines += found[:40]
    if len(found) > 40:
        lines.append(f"... and {len(found) - 40} more")
    pytest.fail("\n".join(lines), pytrace=False)


def _differences(ours: Any, theirs: Any, path: str) -> Iterable[str]:
    """Paths where ``ours`` and ``theirs`` differ, with both values."""
    if isinstance(ours, Mapping) and isinstance(theirs, Mapping):
        for key in dict.fromkeys([*ours, *theirs]):
            where = f"{path}[{key!r}]" if path else repr(key)
            if key not in theirs:
                yield f"{where}: only durable_debug has it: {_short(ours[key])}"
            elif key not in ours:
                yield f"{where}: only langgraph has it: {_short(theirs[key])}"
            else:
                yield from _differences(ours[key], theirs[key], where)
    elif (
        isinstance(ours, (list, tuple))
        and isinstance(theirs, (list, tuple))
        and type(ours) is type(theirs)
        and len(ours) == len(theirs)
    ):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            yield from _differences(a, b, f"{path}[{i}]")
    elif _is_listing(ours) and _is_listing(theirs):
        # Histories of different lengths: show both as one line per checkpoint.
        yield (
            f"{path}: {len(ours)} vs {len(theirs)} checkpoints (step source next ← parent)\n"
            f"    durable_debug: {_outline(ours)}\n    langgraph:     {_outline(theirs)}"
        )
    elif ours != theirs:
        yield f"{path}:\n    durable_debug: {_short(ours)}\n    langgraph:     {_short(theirs)}"


def _is_listing(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(c, Mapping) and {"step", "source", "next", "parent"} <= set(c) for c in value
    )


def _outline(checkpoints: list[Mapping[str, Any]]) -> str:
    """One short line per checkpoint of a recorded history listing."""
    lines = []
    for c in checkpoints:
        parent = c["parent"]
        if isinstance(parent, Mapping) and "position" in parent:
            parent = f"#{parent['position']}"
        lines.append(f"{c['step']} {c['source']} {c['next']} ← {parent}")
    return "\n" + "\n".join(f"        #{i}: {line}" for i, line in enumerate(lines))


def _short(value: Any) -> str:
    text = pprint.pformat(value, width=200, compact=True)
    return text if len(text) <= 600 else text[:600] + " ..."
