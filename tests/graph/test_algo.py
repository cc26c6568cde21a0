"""Ids, versions and blob de-duplication: the bookkeeping the debugger shows."""

from __future__ import annotations

import dataclasses
import operator
import re
import time
from typing import Annotated, Any

import pytest
from graph_support import cfg
from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.checkpoint.base import new_checkpoint_id, next_version, version_counter
from durable_debug.checkpoint.serde import CorruptPayloadError
from durable_debug.graph.algo import compact_start_writes, expand_start_writes
from durable_debug.graph.nodes import INPUT_KEYS

VERSION = re.compile(r"^\d{32}\.[0-9a-f]{16}$")


def test_checkpoint_ids_sort_by_creation_time() -> None:
    ids = []
    for _ in range(200):
        ids.append(new_checkpoint_id())
        if len(ids) % 50 == 0:
            time.sleep(0.001)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_versions_are_zero_padded_counters_with_a_branch_suffix() -> None:
    v1 = next_version(None, "ckpt-a")
    v2 = next_version(v1, "ckpt-b")
    assert VERSION.match(v1) and VERSION.match(v2)
    assert (version_counter(v1), version_counter(v2)) == (1, 2)
    # two forks of one parent write the same counter with different suffixes
    assert next_version(v1, "fork-1") != next_version(v1, "fork-2")
    assert next_version(v1, "fork-1") > v1


class Wide(TypedDict):
    fields: dict
    counter: int
    untouched: str


def test_an_unchanged_value_is_stored_once(saver: MemorySaver) -> None:
    def bump(state: Wide) -> dict[str, Any]:
        return {"counter": state["counter"] + 1}

    g = (
        StateGraph(Wide)
        .add_node("bump", bump)
        .add_edge(START, "bump")
        .add_conditional_edges("bump", lambda s: "bump" if s["counter"] < 30 else "__end__")
        .compile(checkpointer=saver)
    )
    g.invoke({"fields": {"k": "x" * 1000}, "counter": 0, "untouched": "u"}, cfg("w"))
    history = list(g.get_state_history(cfg("w")))
    assert len(history) == 32
    versions = {
        s.config["configurable"]["checkpoint_id"]: saver.get_tuple(s.config).checkpoint[  # type: ignore[union-attr]
            "channel_versions"
        ]
        for s in history
    }
    field_blobs = [k for k in saver.blobs if k[2] == "fields"]
    counter_blobs = [k for k in saver.blobs if k[2] == "counter"]
    assert (
        len(field_blobs) == 1
        and len({v["fields"] for v in versions.values() if "fields" in v}) == 1
    )
    assert len(counter_blobs) == 31  # the input value, then one per bump


def test_task_ids_are_deterministic_for_a_checkpoint(saver: MemorySaver) -> None:
    class S(TypedDict):
        x: int

    g = (
        StateGraph(S)
        .add_node("n", lambda s: {"x": 1})
        .add_edge(START, "n")
        .compile(checkpointer=saver)
    )
    g.invoke({"x": 0}, cfg("t"))
    step0 = next(s for s in g.get_state_history(cfg("t")) if s.metadata["step"] == 0)
    again = g.get_state(step0.config)
    assert [t.id for t in step0.tasks] == [t.id for t in again.tasks]
    # the pending write saved when the task ran carries the same id
    writes = saver.get_tuple(step0.config).pending_writes  # type: ignore[union-attr]
    assert {w[0] for w in writes} == {step0.tasks[0].id}


class Pair(TypedDict):
    a: int
    b: list


def test_the_run_input_is_saved_once_and_shown_as_the_start_tasks_writes(
    saver: MemorySaver,
) -> None:
    g = (
        StateGraph(Pair)
        .add_node("n", lambda s: {"a": s["a"] + 1})
        .add_edge(START, "n")
        .compile(checkpointer=saver)
    )
    g.invoke({"a": 1, "b": ["x"]}, cfg("t"))
    first = list(g.get_state_history(cfg("t")))[-1]
    assert [(t.name, t.result) for t in first.tasks] == [(START, {"a": 1, "b": ["x"]})]
    # The saver holds the input once, in the checkpoint's __start__ channel; START's saved
    # writes name the keys they take from it, next to its edge writes.
    saved = saver.get_tuple(first.config)
    assert saved is not None and saved.checkpoint["channel_values"][START] == {"a": 1, "b": ["x"]}
    start_id = first.tasks[0].id
    assert saved.pending_writes == [
        (start_id, INPUT_KEYS, ["a", "b"]),
        (start_id, "branch:to:n", None),
    ]
    assert expand_start_writes(saved.pending_writes, saved.checkpoint) == [
        (start_id, "a", 1),
        (start_id, "b", ["x"]),
        (start_id, "branch:to:n", None),
    ]


@dataclasses.dataclass
class Ticket:
    a: int
    b: list


def test_start_writes_are_compacted_only_where_they_are_the_inputs_values() -> None:
    ticket = Ticket(1, ["x"])
    writes = [("a", ticket.a), ("b", ticket.b), ("branch:to:n", None)]
    assert compact_start_writes(ticket, writes) == [
        (INPUT_KEYS, ["a", "b"]),
        ("branch:to:n", None),
    ]
    # an equal list that is not the input's own value is saved as it is
    copied = [("a", ticket.a), ("b", ["x"])]
    assert compact_start_writes(ticket, copied) == [(INPUT_KEYS, ["a"]), ("b", ["x"])]
    assert compact_start_writes({"a": 1}, [("branch:to:n", None)]) == [("branch:to:n", None)]
    checkpoint = {"id": "c1", "channel_values": {START: ticket}}
    expanded = expand_start_writes([("t", INPUT_KEYS, ["a", "b"])], checkpoint)  # type: ignore[arg-type]
    assert expanded == [("t", "a", 1), ("t", "b", ["x"])]


def test_start_writes_without_their_input_are_a_clear_error() -> None:
    checkpoint = {"id": "c1", "channel_values": {}}
    with pytest.raises(CorruptPayloadError, match="checkpoint c1 holds no input with that key"):
        expand_start_writes([("t", INPUT_KEYS, ["a"])], checkpoint)  # type: ignore[arg-type]


class _Fan(TypedDict):
    items: list[int]
    log: Annotated[list[str], operator.add]


def _fan_graph(saver: MemorySaver) -> Any:
    """A join (a barrier channel whose version moves before it holds a value), a deferred
    node, Send tasks and an interrupt before a node."""
    from durable_debug import Send

    def node(name: str) -> Any:
        return lambda state: {"log": [name]}

    builder = StateGraph(_Fan)
    for name in ("a", "b", "b2", "c", "d", "e"):
        builder.add_node(name, node(name), defer=name == "e")
    builder.add_node("work", lambda arg: {"log": [f"work{arg}"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge("b", "b2")
    builder.add_edge(["b2", "c"], "d")
    builder.add_edge("d", "e")
    builder.add_conditional_edges("c", lambda state: [Send("work", i) for i in state["items"]])
    return builder.compile(checkpointer=saver, interrupt_before=["d"])


class _LookedUp(dict):  # type: ignore[type-arg]
    """A versions_seen that records which nodes' maps are read."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.looked_up: list[str] = []

    def get(self, node: Any, default: Any = None) -> Any:
        self.looked_up.append(node)
        return super().get(node, default)


def test_a_step_checks_a_trigger_for_a_value_before_its_versions(saver: MemorySaver) -> None:
    """``prepare_tasks`` looks up a node's versions_seen only for a trigger that holds a value;
    the tasks are those of both conditions, checked in the other order, at every checkpoint."""
    from durable_debug.graph.algo import prepare_tasks

    graph = _fan_graph(saver)
    config = cfg("fan")
    graph.invoke({"items": [1, 2], "log": []}, config)
    graph.invoke(None, config)
    checked = 0
    for saved in saver.list(config):
        checkpoint = saved.checkpoint
        channels = graph.read_channels(checkpoint["channel_values"])
        versions, seen_by = checkpoint["channel_versions"], checkpoint["versions_seen"]
        expected = [
            (name, tuple(ch for ch in graph.nodes[name].triggers if ch in wanted))
            for name in graph.node_order
            if (
                wanted := {
                    ch
                    for ch in graph.nodes[name].triggers
                    if versions.get(ch, "") > seen_by.get(name, {}).get(ch, "")
                    and channels[ch].is_available()
                }
            )
        ]
        seen = _LookedUp(seen_by)
        step = int(saved.metadata["step"])
        tasks = prepare_tasks(graph, {**checkpoint, "versions_seen": seen}, channels, step)
        assert [(t.name, t.triggers) for t in tasks if t.triggers] == expected
        with_value = [
            n
            for n in graph.node_order
            if any(channels[ch].is_available() for ch in graph.nodes[n].triggers)
        ]
        assert seen.looked_up == with_value
        checked += 1
    assert checked == 7  # input, START, a, (b, c), (Sends, b2), d (interrupted before), e
