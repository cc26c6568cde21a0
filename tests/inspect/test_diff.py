"""diff: per-channel changes between any two checkpoints, nested values compared by structure."""

from __future__ import annotations

import pytest

from durable_debug.inspect import adiff, adiff_frame, changes, diff_data, diff_values
from durable_debug.inspect.diff import path_changes


async def test_diff_between_consecutive_checkpoints(seed):
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    by_step = {s.metadata["step"]: s async for s in g.aget_state_history(cfg)}
    entries = await adiff(by_step[1], by_step[2])  # snapshots: no graph needed
    assert [(e["channel"], e["change"], e["old"], e["new"]) for e in entries] == [
        ("value", "changed", "A", "B"),
        ("log", "changed", ["ran A"], ["ran A", "ran B"]),
    ]
    assert entries[1]["changes"] == [
        {"path": "log[1]", "change": "added", "old": None, "new": "ran B"}
    ]
    # The input checkpoint has no value yet: value is added at step 0.
    first = await adiff(by_step[-1].config, by_step[0].config, graph=g)
    assert [(e["channel"], e["change"]) for e in first] == [("value", "added")]


async def test_diff_across_branches_by_id(seed):
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    original = (await g.aget_state(cfg)).config["configurable"]["checkpoint_id"]
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    fork = await g.aupdate_state(target.config, {"value": "FORKED"})
    await g.ainvoke(None, fork)
    forked_end = (await g.aget_state(cfg)).config["configurable"]["checkpoint_id"]
    assert await adiff(original, forked_end, graph=g, config=cfg) == []  # b overwrote FORKED
    frame = await adiff_frame(original, fork["configurable"]["checkpoint_id"][:30], g, cfg)
    assert frame.to_dict("records") == [
        {"channel": "value", "change": "changed", "old": "B", "new": "FORKED"},
        {"channel": "log", "change": "changed", "old": ["ran A", "ran B"], "new": ["ran A"]},
    ]


async def test_nested_reducer_values_diff_by_path(seed):
    """Notebook 05: the fan-out's merged dict and collected list, path by path."""
    ns = seed("fanout")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"items": ["x", "y", "z"], "merged": {}, "collected": []}, cfg)
    history = [s async for s in g.aget_state_history(cfg)]
    before, after = history[1], history[0]
    assert after.values["collected"] == ["x", "y", "z"]
    paths = changes(before, after)
    assert [(c["path"], c["change"], c["new"]) for c in paths] == [
        ("merged.x", "added", "done"),
        ("merged.y", "added", "done"),
        ("merged.z", "added", "done"),
        ("collected[0]", "added", "x"),
        ("collected[1]", "added", "y"),
        ("collected[2]", "added", "z"),
    ]


def test_structural_comparison_of_plain_values():
    old = {"same": {"a": [1, {"b": 2}]}, "gone": 1, "flag": 1, "tup": (1, 2), "deep": {"k": [1, 2]}}
    new = {
        "same": {"a": [1, {"b": 2}]},
        "flag": True,
        "tup": [1, 2],
        "deep": {"k": [1, 3]},
        "new": 0,
    }
    entries = diff_values(old, new)
    assert [(e["channel"], e["change"]) for e in entries] == [
        ("gone", "removed"),
        ("flag", "changed"),  # 1 → True is a change even though 1 == True
        ("tup", "changed"),  # a tuple became a list
        ("deep", "changed"),
        ("new", "added"),
    ]
    assert path_changes(old["deep"], new["deep"], "deep") == [
        {"path": "deep.k[1]", "change": "changed", "old": 2, "new": 3}
    ]
    assert path_changes({"a key": 1, 3: 1}, {"a key": 2, 3: 2}, "m") == [
        {"path": "m['a key']", "change": "changed", "old": 1, "new": 2},
        {"path": "m[3]", "change": "changed", "old": 1, "new": 2},
    ]


def test_values_whose_equality_is_odd_do_not_break_the_diff():
    class Weird:
        def __eq__(self, other):
            raise RuntimeError("no")

        def __repr__(self):
            return "Weird()"

    class Elementwise:  # like a numpy array: == gives something with .all()
        def __init__(self, items):
            self.items = items

        def __eq__(self, other):
            return Elementwise([a == b for a, b in zip(self.items, other.items, strict=True)])

        def all(self):
            return all(self.items)

    assert diff_values({"w": Weird()}, {"w": Weird()}) == []
    assert diff_values({"e": Elementwise([1, 2])}, {"e": Elementwise([1, 2])}) == []
    assert len(diff_values({"e": Elementwise([1, 2])}, {"e": Elementwise([1, 3])})) == 1


async def test_ids_without_a_graph_say_what_is_missing(seed):
    with pytest.raises(ValueError, match="needs the graph"):
        await adiff("1f0", "1f1")
    ns = seed("accumulate")
    with pytest.raises(ValueError, match="needs config= naming its thread"):
        await adiff("1f0", "1f1", graph=ns["g"])


def test_diff_data_is_json_ready():
    import datetime as dt

    entries = diff_values({"when": dt.date(2024, 1, 1)}, {"when": dt.date(2024, 1, 2)})
    assert diff_data(entries) == [
        {
            "channel": "when",
            "change": "changed",
            "old": "2024-01-01",
            "new": "2024-01-02",
            "changes": [
                {"path": "when", "change": "changed", "old": "2024-01-01", "new": "2024-01-02"}
            ],
        }
    ]
