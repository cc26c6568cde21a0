"""update_state: updates as a node, forks from old checkpoints, copies, and bad updates."""

from __future__ import annotations

import pytest
from graph_support import LogState, cfg, checkpoint_count

from durable_debug import START, DurableDebugWarning, InvalidUpdateError, MemorySaver, StateGraph
from durable_debug._sync import run_sync
from durable_debug.checkpoint.records import aread_record
from durable_debug.graph.version import graph_version
from durable_debug.inspect import findings


def build(saver: MemorySaver, **compile_kw: object):  # type: ignore[no-untyped-def]
    return (
        StateGraph(LogState)
        .add_node("a", lambda s: {"value": "A", "log": ["a"]})
        .add_node("b", lambda s: {"value": "B", "log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver, **compile_kw)  # type: ignore[arg-type]
    )


def step_config(g, thread: str, step: int) -> dict:  # type: ignore[no-untyped-def]
    return next(s.config for s in g.get_state_history(cfg(thread)) if s.metadata["step"] == step)


def test_update_defaults_to_the_node_that_ran_last_and_reschedules_its_edges(
    saver: MemorySaver,
) -> None:
    g = build(saver, interrupt_before=["b"])
    g.invoke({"value": "", "log": []}, cfg("t"))
    new = g.update_state(cfg("t"), {"value": "edited"})
    snap = g.get_state(new)
    assert snap.metadata == {"source": "update", "step": 2, "parents": {}}  # as LangGraph's
    record = run_sync(aread_record(saver, "t", "", snap.config["configurable"]["checkpoint_id"]))
    assert record == {"as_node": "a", "graph_fingerprint": graph_version(g)}
    assert snap.next == ("b",)
    assert g.invoke(None, cfg("t")) == {"value": "B", "log": ["a", "b"]}


def test_update_as_a_node_without_successors_clears_what_was_scheduled(saver: MemorySaver) -> None:
    g = build(saver, interrupt_before=["b"])
    g.invoke({"value": "", "log": []}, cfg("t"))
    new = g.update_state(cfg("t"), {"value": "skip b"}, as_node="b")
    assert g.get_state(new).next == ()


def test_update_on_an_old_checkpoint_forks_and_leaves_the_branch_alone(saver: MemorySaver) -> None:
    g = build(saver)
    g.invoke({"value": "", "log": []}, cfg("t"))
    before = [(s.config, s.values) for s in g.get_state_history(cfg("t"))]
    target = step_config(g, "t", 1)
    fork = g.update_state(target, {"value": "FORKED"})
    g.invoke(None, fork)
    after = {s.config["configurable"]["checkpoint_id"]: s for s in g.get_state_history(cfg("t"))}
    for config, values in before:
        assert after[config["configurable"]["checkpoint_id"]].values == values
    fork_snap = after[fork["configurable"]["checkpoint_id"]]
    assert fork_snap.parent_config == target
    assert g.get_state(cfg("t")).values == {"value": "B", "log": ["a", "b"]}
    assert g.get_state(cfg("t")).metadata["step"] == 3


def test_update_on_a_fresh_thread_acts_as_input(saver: MemorySaver) -> None:
    g = build(saver)
    new = g.update_state(cfg("fresh"), {"value": "seed", "log": []})
    snap = g.get_state(new)
    assert (snap.metadata["step"], snap.next, snap.parent_config) == (0, ("a",), None)
    assert g.invoke(None, cfg("fresh"))["log"] == ["a", "b"]


def test_copy_makes_a_sibling_fork_that_shares_every_blob(saver: MemorySaver) -> None:
    g = build(saver)
    g.invoke({"value": "", "log": []}, cfg("t"))
    target = step_config(g, "t", 1)
    blobs_before = len(saver.blobs)
    copy = g.update_state(target, None, as_node="__copy__")
    snap = g.get_state(copy)
    assert snap.metadata["source"] == "fork"
    assert snap.parent_config == g.get_state(target).parent_config
    assert snap.values == g.get_state(target).values
    assert len(saver.blobs) == blobs_before


def test_ambiguous_or_unknown_as_node_is_an_error_and_writes_nothing(saver: MemorySaver) -> None:
    g = (
        StateGraph(LogState)
        .add_node("x", lambda s: {"log": ["x"]})
        .add_node("y", lambda s: {"log": ["y"]})
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile(checkpointer=saver)
    )
    g.invoke({"value": "", "log": []}, cfg("t"))
    count = checkpoint_count(saver)
    with pytest.raises(InvalidUpdateError, match="nodes x, y ran last together; pass as_node"):
        g.update_state(cfg("t"), {"value": "?"})
    with pytest.raises(InvalidUpdateError, match="as_node='zz'.*no such node"):
        g.update_state(cfg("t"), {"value": "?"}, as_node="zz")
    strict = g.builder.compile(checkpointer=saver, strict=True)
    with pytest.raises(InvalidUpdateError, match="wrote key 'nope'"):
        strict.update_state(cfg("t"), {"nope": 1}, as_node="x")
    assert checkpoint_count(saver) == count
    # as LangGraph: the unknown key is dropped and the update saved, with a finding
    with pytest.warns(DurableDebugWarning, match="wrote key 'nope'"):
        new = g.update_state(cfg("t"), {"nope": 1, "value": "!"}, as_node="x")
    assert checkpoint_count(saver) == count + 1
    assert g.get_state(new).values["value"] == "!"
    found = findings(g, cfg("t"))
    assert [(f.code, f.node, f.key) for f in found[new["configurable"]["checkpoint_id"]]] == [
        ("unknown-key", "x", "nope")
    ]


def test_update_with_a_value_the_serializer_refuses_writes_nothing(saver: MemorySaver) -> None:
    from durable_debug.checkpoint.serde import UnsupportedValueError

    g = build(saver)
    g.invoke({"value": "", "log": []}, cfg("t"))
    count, blobs = checkpoint_count(saver), len(saver.blobs)
    with pytest.raises(
        UnsupportedValueError, match="channel 'value'.*builtins.object cannot be saved"
    ):
        g.update_state(cfg("t"), {"value": object()})
    assert (checkpoint_count(saver), len(saver.blobs)) == (count, blobs)


def test_bulk_update_state_names_a_malformed_update() -> None:
    from typing_extensions import TypedDict

    from durable_debug import StateUpdate

    class S(TypedDict):
        v: str

    graph = StateGraph(S).add_node("a", lambda s: {}).add_edge(START, "a")
    app = graph.compile(checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "b"}}
    with pytest.raises(TypeError, match=r"superstep 1 holds \{'v': 'x'\}; each update is"):
        app.bulk_update_state(cfg, [[StateUpdate({"v": "a"}, START)], [{"v": "x"}]])
    with pytest.raises(
        ValueError, match="No updates provided: bulk_update_state.s superstep 0 is empty"
    ):
        app.bulk_update_state(cfg, [[]])
