"""The compiled graph's read API: get_state, history, streams."""

from __future__ import annotations

import operator
import threading
from typing import Annotated

import pytest
from graph_support import LogState, cfg
from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, Send, StateGraph
from durable_debug._sync import run_sync
from durable_debug.checkpoint.records import aread_record
from durable_debug.graph.channels import MISSING
from durable_debug.graph.version import graph_version


def chain(saver: MemorySaver):  # type: ignore[no-untyped-def]
    return (
        StateGraph(LogState)
        .add_node("a", lambda s: {"value": "A", "log": ["a"]})
        .add_node("b", lambda s: {"value": "B", "log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


def test_get_state_has_every_field(saver: MemorySaver) -> None:
    g = chain(saver)
    g.invoke({"value": "", "log": []}, cfg("t"))
    snap = g.get_state(cfg("t"))
    assert snap.values == {"value": "B", "log": ["a", "b"]}
    assert snap.next == ()
    assert snap.config["configurable"]["thread_id"] == "t"
    # LangGraph's metadata exactly; the debugger's own keys are in the debug record
    assert snap.metadata == {"source": "loop", "step": 2, "parents": {}}
    record = run_sync(aread_record(saver, "t", "", snap.config["configurable"]["checkpoint_id"]))
    assert record is not None
    assert record.pop("parent_write_ms") >= 0  # how long saving step 1 took
    assert record == {"graph_fingerprint": graph_version(g)}
    assert snap.created_at and snap.created_at.endswith("+00:00")
    assert snap.parent_config is not None
    assert snap.tasks == () and snap.interrupts == ()
    empty = g.get_state(cfg("nobody"))
    assert (empty.values, empty.next, empty.metadata) == ({}, (), None)


def test_history_filter_before_and_limit(saver: MemorySaver) -> None:
    g = chain(saver)
    g.invoke({"value": "", "log": []}, cfg("t"))
    steps = [s.metadata["step"] for s in g.get_state_history(cfg("t"))]
    assert steps == [2, 1, 0, -1]
    assert [s.metadata["step"] for s in g.get_state_history(cfg("t"), limit=2)] == [2, 1]
    assert [
        s.metadata["step"] for s in g.get_state_history(cfg("t"), filter={"source": "input"})
    ] == [-1]
    middle = next(s for s in g.get_state_history(cfg("t")) if s.metadata["step"] == 1)
    assert [s.metadata["step"] for s in g.get_state_history(cfg("t"), before=middle.config)] == [
        0,
        -1,
    ]


def test_history_tasks_show_results_of_finished_tasks(saver: MemorySaver) -> None:
    g = chain(saver)
    g.invoke({"value": "", "log": []}, cfg("t"))
    step1 = next(s for s in g.get_state_history(cfg("t")) if s.metadata["step"] == 1)
    assert [(t.name, t.result) for t in step1.tasks] == [("b", {"value": "B", "log": ["b"]})]


class Fan(TypedDict):
    items: list
    done: Annotated[list, operator.add]


def fan_graph(saver: MemorySaver):  # type: ignore[no-untyped-def]
    return (
        StateGraph(Fan)
        .add_node("w", lambda s: {"done": [s["i"]]})
        .add_conditional_edges(START, lambda s: [Send("w", {"i": i}) for i in s["items"]])
        .compile(checkpointer=saver)
    )


async def test_stream_modes(saver: MemorySaver) -> None:
    g = fan_graph(saver)
    values = [v async for v in g.astream({"items": [1, 2]}, cfg("v"), stream_mode="values")]
    assert values == [{"items": [1, 2], "done": []}, {"items": [1, 2], "done": [1, 2]}]
    updates = [u async for u in g.astream({"items": [1, 2]}, cfg("u"), stream_mode="updates")]
    assert sorted(updates, key=str) == [{"w": {"done": [1]}}, {"w": {"done": [2]}}]
    both = [e async for e in g.astream({"items": [1]}, cfg("m"), stream_mode=["values", "updates"])]
    assert [mode for mode, _ in both] == ["values", "updates", "values"]
    debug = [e async for e in g.astream({"items": [1]}, cfg("d"), stream_mode="debug")]
    assert [(e["type"], e["step"]) for e in debug] == [
        ("checkpoint", -1),
        ("checkpoint", 0),
        ("task", 1),
        ("task_result", 1),
        ("checkpoint", 1),
    ]
    assert debug[-1]["payload"]["parent_config"] == debug[1]["payload"]["config"]


def test_unknown_stream_mode_is_refused(saver: MemorySaver) -> None:
    import pytest

    with pytest.raises(ValueError, match="Unknown stream_mode 'bogus'"):
        list(fan_graph(saver).stream({"items": []}, cfg("x"), stream_mode="bogus"))


def test_snapshots_leave_the_graphs_empty_channels_empty(saver: MemorySaver) -> None:
    """Snapshots read shared empty channels; previewing pending writes must not change them."""
    a_done = threading.Event()

    def a(state: LogState) -> dict[str, str]:
        a_done.set()
        return {"value": "A"}

    def b(state: LogState) -> dict[str, float]:
        # Fails once a has finished, so a's write is saved beside b's error (a sibling still
        # running when b fails would be cancelled, on a loaded machine at random).
        assert a_done.wait(timeout=120), "node a never ran"
        return {"value": 1 / 0}

    g = (
        StateGraph(LogState)
        .add_node("a", a)
        .add_node("b", b)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(checkpointer=saver)
    )
    with pytest.raises(ZeroDivisionError):
        g.invoke({"log": []}, cfg("t"))  # "value" never held a value before a's write
    assert g.get_state(cfg("t")).values == {"value": "A", "log": []}  # a's write previewed
    assert next(s.values for s in g.get_state_history(cfg("t"))) == {"log": []}
    assert all(ch.get() in (MISSING, []) for ch in g.new_channels().values())
    a_done.clear()
    with pytest.raises(ZeroDivisionError):
        g.invoke({"log": ["again"]}, cfg("u"))
    assert g.get_state(cfg("u")).values == {"value": "A", "log": ["again"]}
    assert next(s.values for s in g.get_state_history(cfg("u"))) == {"log": ["again"]}
