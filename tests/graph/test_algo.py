"""Ids, versions and blob de-duplication: the bookkeeping the debugger shows."""

from __future__ import annotations

import re
import time
from typing import Any

from graph_support import cfg
from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.checkpoint.base import new_checkpoint_id, next_version, version_counter

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
