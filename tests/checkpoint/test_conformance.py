"""One saver conformance suite, run against every saver.

Each test pins a behaviour of the saver protocol (``checkpoint/base.py``) that a user or the
engine relies on; MemorySaver is the reference the durable savers must match.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for, count_rows

from durable_debug.checkpoint.base import (
    ERROR,
    INTERRUPT,
    NULL_TASK_ID,
    RESUME,
    BaseCheckpointSaver,
    CheckpointNotFoundError,
)
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.serde import UnsupportedValueError, register_type
from support.savers import SAVER_KINDS, open_saver


@register_type(name="tests.conformance.Ticket")
@dataclasses.dataclass
class Ticket:
    id: int
    tags: list[str]


@pytest.fixture(params=[*SAVER_KINDS, "sqlite-memory"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver]:
    """Every saver, and SQLite on ``:memory:`` besides."""
    with open_saver(request.param, request, tmp_path) as opened:
        yield opened


async def put_chain(
    saver: BaseCheckpointSaver, thread_id: str, steps: list[dict[str, Any]], ns: str = ""
) -> list[dict]:
    """Put one checkpoint per entry of ``steps`` (each the channel updates); return configs."""
    config = config_for(thread_id, ns)
    parent = None
    configs = []
    for step, updates in enumerate(steps, start=-1):
        cp, new_versions = child_checkpoint(parent, updates)
        source = "input" if step == -1 else "loop"
        config = await saver.aput(config, cp, {"source": source, "step": step}, new_versions)
        configs.append(config)
        parent = cp
    return configs


def ids(configs: list[dict]) -> list[str]:
    return [c["configurable"]["checkpoint_id"] for c in configs]


# --- put / get ---------------------------------------------------------------------------------


async def test_put_then_get_returns_values_metadata_and_parent(saver: BaseCheckpointSaver):
    cp1, v1 = child_checkpoint(None, {"query": "weather?", "log": ["start"]})
    c1 = await saver.aput(config_for("t"), cp1, {"source": "input", "step": -1}, v1)
    cp2, v2 = child_checkpoint(cp1, {"log": ["start", "search"]})
    c2 = await saver.aput(c1, cp2, {"source": "loop", "step": 0, "user": "ana"}, v2)

    assert c2 == config_for("t", "", cp2["id"])
    tup = await saver.aget_tuple(config_for("t"))
    assert tup is not None
    assert tup.config == c2
    assert tup.checkpoint == cp2
    assert tup.checkpoint["channel_values"] == {"query": "weather?", "log": ["start", "search"]}
    assert tup.metadata == {"source": "loop", "step": 0, "user": "ana"}
    assert tup.parent_config == c1
    assert tup.pending_writes == []
    first = await saver.aget_tuple(c1)
    assert first is not None and first.checkpoint == cp1 and first.parent_config is None


async def test_latest_and_pinned_checkpoint(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0}, {"n": 1}, {"n": 2}])
    latest = await saver.aget_tuple(config_for("t"))
    pinned = await saver.aget_tuple(configs[1])
    assert latest is not None and latest.config == configs[2]
    assert latest.checkpoint["channel_values"] == {"n": 2}
    assert pinned is not None and pinned.config == configs[1]
    assert pinned.checkpoint["channel_values"] == {"n": 1}


async def test_unknown_checkpoint_id_raises_naming_it(saver: BaseCheckpointSaver):
    await put_chain(saver, "t", [{"n": 0}])
    missing = str(uuid.uuid4())
    with pytest.raises(CheckpointNotFoundError, match=missing) as info:
        await saver.aget_tuple(config_for("t", "", missing))
    assert "'t'" in str(info.value)


async def test_empty_thread_has_no_checkpoint(saver: BaseCheckpointSaver):
    assert await saver.aget_tuple(config_for("nobody")) is None
    assert [t async for t in saver.alist(config_for("nobody"))] == []


async def test_config_without_thread_id_is_a_clear_error(saver: BaseCheckpointSaver):
    cp, versions = child_checkpoint(None, {"a": 1})
    with pytest.raises(ValueError, match="thread_id"):
        await saver.aput({"configurable": {}}, cp, {}, versions)
    with pytest.raises(ValueError, match="thread_id"):
        await saver.aget_tuple({})


async def test_values_of_every_supported_type_round_trip(saver: BaseCheckpointSaver):
    values = {
        "text": "héllo",
        "number": 3,
        "ratio": 0.25,
        "flag": True,
        "nothing": None,
        "raw": b"\x00\x01",
        "pair": (1, "a"),
        "tags": {"x", "y"},
        "when": dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.timezone.utc),
        "price": Decimal("9.99"),
        "id": uuid.UUID(int=7),
        "ticket": Ticket(1, ["bug"]),
        "nested": {"a": [1, {"b": (2, 3)}], 5: "int key"},
    }
    cp, versions = child_checkpoint(None, values)
    config = await saver.aput(config_for("t"), cp, {"source": "input", "step": -1}, versions)
    tup = await saver.aget_tuple(config)
    assert tup is not None
    assert tup.checkpoint["channel_values"] == values
    assert type(tup.checkpoint["channel_values"]["pair"]) is tuple


async def test_metadata_round_trips_exactly(saver: BaseCheckpointSaver):
    metadata = {
        "source": "update",
        "step": 3,
        "parents": {"": "abc"},
        "score": 0.5,
        "ok": False,
        "note": None,
        "tags": ["a", "b"],
        "when": dt.date(2024, 1, 2),
        "pair": (1, 2),
        "odd keys": {1: "one"},
    }
    cp, versions = child_checkpoint(None, {"a": 1})
    config = await saver.aput(config_for("t"), cp, metadata, versions)  # type: ignore[arg-type]
    tup = await saver.aget_tuple(config)
    assert tup is not None and tup.metadata == metadata
    assert type(tup.metadata["pair"]) is tuple  # type: ignore[typeddict-item]


async def test_loaded_values_are_independent_copies(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"items": [1, 2]}, {"other": 1}])
    latest = await saver.aget_tuple(configs[1])
    assert latest is not None
    latest.checkpoint["channel_values"]["items"].append(99)
    again = [t async for t in saver.alist(config_for("t"))]
    assert [t.checkpoint["channel_values"]["items"] for t in again] == [[1, 2], [1, 2]]
    again[0].checkpoint["channel_values"]["items"].append(3)
    assert again[1].checkpoint["channel_values"]["items"] == [1, 2]


async def test_putting_the_same_checkpoint_again_replaces_its_metadata(saver):
    cp, versions = child_checkpoint(None, {"a": 1})
    await saver.aput(config_for("t"), cp, {"source": "input", "step": -1}, versions)
    await saver.aput(config_for("t"), cp, {"source": "input", "step": -1, "note": "x"}, versions)
    listed = [t async for t in saver.alist(config_for("t"))]
    assert [t.metadata for t in listed] == [{"source": "input", "step": -1, "note": "x"}]


# --- list --------------------------------------------------------------------------------------


async def test_list_is_newest_first_with_parent_configs(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": i} for i in range(5)])
    listed = [t async for t in saver.alist(config_for("t"))]
    assert [t.config for t in listed] == configs[::-1]
    assert [t.parent_config for t in listed] == [*configs[::-1][1:], None]
    assert [t.metadata["step"] for t in listed] == [3, 2, 1, 0, -1]
    assert [t.checkpoint["channel_values"]["n"] for t in listed] == [4, 3, 2, 1, 0]


async def test_list_limit_before_and_metadata_filter(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": i} for i in range(6)])
    history = ids(configs)[::-1]  # newest first

    async def listed(**kwargs: Any) -> list[str]:
        return [t.config["configurable"]["checkpoint_id"] async for t in saver.alist(**kwargs)]

    thread = config_for("t")
    assert await listed(config=thread, limit=2) == history[:2]
    assert await listed(config=thread, before=configs[3]) == history[3:]
    assert await listed(config=thread, before=configs[3], limit=1) == history[3:4]
    assert await listed(config=thread, filter={"source": "input"}) == history[-1:]
    assert await listed(config=thread, filter={"source": "loop"}, limit=2) == history[:2]
    assert await listed(config=thread, filter={"step": 2}) == [ids(configs)[3]]
    assert await listed(config=thread, filter={"source": "loop", "step": 0}) == [history[-2]]
    assert await listed(config=thread, filter={"step": "2"}) == []
    assert await listed(config=thread, filter={"missing": None}) == []
    assert await listed(config=thread, limit=0) == []


async def test_metadata_filter_compares_values_exactly(saver: BaseCheckpointSaver):
    config = config_for("t")
    metas = [
        {"flag": True, "who": {"name": "ana", "team": 1}, "note": None},
        {"flag": False, "who": {"name": "bo"}, "note": "x"},
    ]
    configs = []
    parent = None
    for meta in metas:
        cp, versions = child_checkpoint(parent, {"a": len(configs)})
        config = await saver.aput(config, cp, meta, versions)  # type: ignore[arg-type]
        configs.append(config)
        parent = cp

    async def listed(filter: dict) -> list[dict]:
        return [t.config async for t in saver.alist(config_for("t"), filter=filter)]

    assert await listed({"flag": True}) == [configs[0]]
    assert await listed({"flag": False}) == [configs[1]]
    assert await listed({"who": {"team": 1, "name": "ana"}}) == [configs[0]]
    assert await listed({"who": {"name": "ana"}}) == []
    assert await listed({"note": None}) == [configs[0]]
    assert await listed({"note": "x", "flag": False}) == [configs[1]]


async def test_list_pages_through_long_histories(saver: BaseCheckpointSaver):
    saver.page_size = 3  # type: ignore[attr-defined]  # force several pages on SQL savers
    configs = await put_chain(saver, "t", [{"n": i} for i in range(11)])
    listed = [t async for t in saver.alist(config_for("t"))]
    assert [t.config for t in listed] == configs[::-1]
    loops = [t.config async for t in saver.alist(config_for("t"), filter={"source": "loop"})]
    assert loops == configs[:0:-1]
    odd = [t.config async for t in saver.alist(config_for("t"), filter={"step": 7}, limit=5)]
    assert odd == [configs[8]]


async def test_list_across_threads_is_newest_first(saver: BaseCheckpointSaver):
    a = await put_chain(saver, "a", [{"n": 0}])
    b = await put_chain(saver, "b", [{"n": 0}])
    a += await put_chain(saver, "a", [{"n": 1}])  # a new first checkpoint of "a", newest
    listed = [t.config async for t in saver.alist(None)]
    assert listed == [a[1], b[0], a[0]]
    newest = [t.config async for t in saver.alist(None, limit=1)]
    assert newest == [a[1]]
    before = [t.config async for t in saver.alist(None, before=a[1])]
    assert before == [b[0], a[0]]


async def test_list_without_namespace_lists_every_namespace(saver: BaseCheckpointSaver):
    root = await put_chain(saver, "t", [{"n": 0}])
    child = await put_chain(saver, "t", [{"m": 0}], ns="sub:1")
    every = [t.config async for t in saver.alist({"configurable": {"thread_id": "t"}})]
    assert every == [child[0], root[0]]
    only_root = [t.config async for t in saver.alist(config_for("t", ""))]
    assert only_root == root
    only_child = [t.config async for t in saver.alist(config_for("t", "sub:1"))]
    assert only_child == child
    latest_child = await saver.aget_tuple(config_for("t", "sub:1"))
    assert latest_child is not None and latest_child.checkpoint["channel_values"] == {"m": 0}


async def test_list_threads(saver: BaseCheckpointSaver):
    assert await saver.alist_threads() == []
    for thread in ("first", "second", "third"):
        await put_chain(saver, thread, [{"n": 0}, {"n": 1}])
    assert await saver.alist_threads() == ["first", "second", "third"]
    await saver.adelete_thread("second")
    assert await saver.alist_threads() == ["first", "third"]


# --- pending writes ----------------------------------------------------------------------------


async def test_pending_writes_are_returned_with_their_task(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0}])
    await saver.aput_writes(configs[0], [("n", 1), ("log", ["a"])], "task-a", "~a")
    await saver.aput_writes(configs[0], [("log", ["b"])], "task-b", "~b")
    tup = await saver.aget_tuple(config_for("t"))
    assert tup is not None and tup.pending_writes is not None
    assert sorted(tup.pending_writes) == sorted(
        [("task-a", "n", 1), ("task-a", "log", ["a"]), ("task-b", "log", ["b"])]
    )
    task_a = [w for w in tup.pending_writes if w[0] == "task-a"]
    assert task_a == [("task-a", "n", 1), ("task-a", "log", ["a"])]  # in the order written
    listed = [t async for t in saver.alist(config_for("t"))]
    assert sorted(listed[0].pending_writes or []) == sorted(tup.pending_writes)


async def test_ordinary_writes_are_written_once(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0}])
    await saver.aput_writes(configs[0], [("n", 1)], "task-a")
    await saver.aput_writes(configs[0], [("n", 2)], "task-a")  # a retry of the same task
    tup = await saver.aget_tuple(configs[0])
    assert tup is not None and tup.pending_writes == [("task-a", "n", 1)]


async def test_special_writes_replace_the_previous_one(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0}])
    config = configs[0]
    await saver.aput_writes(config, [(ERROR, "ValueError('first')")], "task-a")
    await saver.aput_writes(config, [(ERROR, "ValueError('second')")], "task-a")
    await saver.aput_writes(config, [(INTERRUPT, [{"value": "approve?", "id": "i1"}])], "task-b")
    await saver.aput_writes(config, [(INTERRUPT, [{"value": "really?", "id": "i2"}])], "task-b")
    await saver.aput_writes(config, [(RESUME, ["yes"])], "task-b")
    await saver.aput_writes(config, [(RESUME, ["yes", "no"])], "task-b")
    await saver.aput_writes(config, [(RESUME, {"i1": "yes"})], NULL_TASK_ID)
    tup = await saver.aget_tuple(config)
    assert tup is not None
    assert sorted(tup.pending_writes or [], key=repr) == sorted(
        [
            ("task-a", ERROR, "ValueError('second')"),
            ("task-b", INTERRUPT, [{"value": "really?", "id": "i2"}]),
            ("task-b", RESUME, ["yes", "no"]),
            (NULL_TASK_ID, RESUME, {"i1": "yes"}),
        ],
        key=repr,
    )
    assert await count_rows(saver, "checkpoint_writes", "t") == 4


async def test_writes_belong_to_one_checkpoint(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0}, {"n": 1}])
    await saver.aput_writes(configs[0], [("n", 5)], "old-task")
    latest = await saver.aget_tuple(config_for("t"))
    first = await saver.aget_tuple(configs[0])
    assert latest is not None and latest.pending_writes == []
    assert first is not None and first.pending_writes == [("old-task", "n", 5)]


async def test_put_writes_needs_a_checkpoint_id(saver: BaseCheckpointSaver):
    with pytest.raises(ValueError, match="checkpoint_id"):
        await saver.aput_writes(config_for("t"), [("n", 1)], "task")


# --- forks and blob sharing --------------------------------------------------------------------


async def test_fork_two_children_of_one_parent(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0, "keep": "k"}, {"n": 1}])
    parent_tup = await saver.aget_tuple(configs[1])
    assert parent_tup is not None
    parent = parent_tup.checkpoint
    left, lv = child_checkpoint(parent, {"n": 10})
    right, rv = child_checkpoint(parent, {"n": 20})
    left_config = await saver.aput(configs[1], left, {"source": "fork", "step": 1}, lv)
    right_config = await saver.aput(configs[1], right, {"source": "fork", "step": 1}, rv)

    for config, n in ((left_config, 10), (right_config, 20)):
        tup = await saver.aget_tuple(config)
        assert tup is not None
        assert tup.parent_config == configs[1]
        assert tup.checkpoint["channel_values"] == {"n": n, "keep": "k"}
    listed = [t async for t in saver.alist(config_for("t"))]
    assert [t.config for t in listed] == [right_config, left_config, configs[1], configs[0]]
    assert [t.parent_config for t in listed[:2]] == [configs[1], configs[1]]
    assert lv["n"] != rv["n"]  # same counter, different suffix: no collision between branches
    assert await count_rows(saver, "checkpoint_blobs", "t", "keep") == 1
    assert await count_rows(saver, "checkpoint_blobs", "t", "n") == 4


async def test_unchanged_channel_is_stored_once_across_30_checkpoints(saver):
    big = {"document": "x" * 2000, "items": list(range(100))}
    steps = [{"big": big, "counter": 0}] + [{"counter": i} for i in range(1, 30)]
    configs = await put_chain(saver, "t", steps)
    assert await count_rows(saver, "checkpoints", "t") == 30
    assert await count_rows(saver, "checkpoint_blobs", "t", "big") == 1
    assert await count_rows(saver, "checkpoint_blobs", "t", "counter") == 30
    listed = [t async for t in saver.alist(config_for("t"))]
    assert all(t.checkpoint["channel_values"]["big"] == big for t in listed)
    assert [t.checkpoint["channel_values"]["counter"] for t in listed] == list(range(29, -1, -1))
    versions = {t.checkpoint["channel_versions"]["big"] for t in listed}
    assert len(versions) == 1
    middle = await saver.aget_tuple(configs[15])
    assert middle is not None and middle.checkpoint["channel_values"]["counter"] == 15


async def test_blobs_are_shared_across_branches(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"a": 1, "b": 1}, {"a": 2}])
    base = await saver.aget_tuple(configs[1])
    assert base is not None
    tips = []
    for n in range(3):
        cp, versions = child_checkpoint(base.checkpoint, {"a": 100 + n})
        config = await saver.aput(configs[1], cp, {"source": "fork", "step": 1}, versions)
        tips.append((config, cp))
        more, more_versions = child_checkpoint(cp, {"a": 200 + n})
        await saver.aput(config, more, {"source": "loop", "step": 2}, more_versions)
    assert await count_rows(saver, "checkpoint_blobs", "t", "b") == 1
    assert await count_rows(saver, "checkpoint_blobs", "t", "a") == 2 + 3 * 2
    for n, (config, cp) in enumerate(tips):
        tup = await saver.aget_tuple(config)
        assert tup is not None and tup.checkpoint["channel_values"] == {"a": 100 + n, "b": 1}
        assert tup.checkpoint["channel_versions"]["b"] == cp["channel_versions"]["b"]


async def test_channel_with_a_version_but_no_value_is_empty(saver: BaseCheckpointSaver):
    cp1, v1 = child_checkpoint(None, {"a": 1, "scratch": "tmp"})
    c1 = await saver.aput(config_for("t"), cp1, {"source": "input", "step": -1}, v1)
    cp2, v2 = child_checkpoint(cp1, {"a": 2}, cleared=("scratch",))
    c2 = await saver.aput(c1, cp2, {"source": "loop", "step": 0}, v2)
    tup = await saver.aget_tuple(c2)
    assert tup is not None
    assert tup.checkpoint["channel_values"] == {"a": 2}
    assert tup.checkpoint["channel_versions"]["scratch"] == v2["scratch"]
    # The cleared channel's new version has no blob row: only the value of the first version.
    assert await count_rows(saver, "checkpoint_blobs", "t", "scratch") == 1
    first = await saver.aget_tuple(c1)
    assert first is not None and first.checkpoint["channel_values"] == {"a": 1, "scratch": "tmp"}


# --- errors and deletion -----------------------------------------------------------------------


async def test_unsupported_value_raises_naming_channel_and_stores_nothing(saver):
    configs = await put_chain(saver, "t", [{"n": 0}])
    parent = await saver.aget_tuple(configs[0])
    assert parent is not None
    cp, versions = child_checkpoint(parent.checkpoint, {"n": 1, "handle": object()})
    with pytest.raises(UnsupportedValueError, match="'handle'"):
        await saver.aput(configs[0], cp, {"source": "loop", "step": 0}, versions)
    with pytest.raises(UnsupportedValueError, match="'sock'"):
        await saver.aput_writes(configs[0], [("n", 2), ("sock", object())], "task")
    assert await count_rows(saver, "checkpoints") == 1
    assert await count_rows(saver, "checkpoint_blobs") == 1
    assert await count_rows(saver, "checkpoint_writes") == 0
    latest = await saver.aget_tuple(config_for("t"))
    assert latest is not None and latest.config == configs[0]


async def test_a_step_that_cannot_be_saved_stores_neither_its_writes_nor_its_checkpoint(saver):
    configs = await put_chain(saver, "t", [{"n": 0}])
    parent = await saver.aget_tuple(configs[0])
    assert parent is not None
    cp, versions = child_checkpoint(parent.checkpoint, {"n": 1, "handle": object()})
    with pytest.raises(UnsupportedValueError, match="'handle'"):
        await saver.aput_step(
            configs[0], [("task", [("n", 1)], "")], cp, {"source": "loop", "step": 0}, versions
        )
    assert await count_rows(saver, "checkpoint_writes") == 0
    assert await count_rows(saver, "checkpoints") == 1
    cp, versions = child_checkpoint(parent.checkpoint, {"n": 1})
    saved = await saver.aput_step(
        configs[0], [("task", [("n", 1)], "")], cp, {"source": "loop", "step": 0}, versions
    )
    latest = await saver.aget_tuple(config_for("t"))
    assert latest is not None and latest.config == saved
    assert latest.checkpoint["channel_values"] == {"n": 1}
    first = await saver.aget_tuple(configs[0])
    assert first is not None and first.pending_writes == [("task", "n", 1)]


async def test_changing_a_checkpoint_read_back_does_not_change_what_is_stored(saver):
    configs = await put_chain(saver, "t", [{"n": 0}, {"n": 1, "items": [1]}])
    read = await saver.aget_tuple(configs[1])
    assert read is not None
    expected = (
        dict(read.checkpoint["channel_versions"]),
        {n: dict(v) for n, v in read.checkpoint["versions_seen"].items()},
        read.checkpoint["channel_values"]["items"][:],
    )
    read.checkpoint["channel_versions"]["n"] = "changed"
    for seen in read.checkpoint["versions_seen"].values():
        seen["n"] = "changed"
    read.checkpoint["versions_seen"]["intruder"] = {}
    read.checkpoint["channel_values"]["items"].append(2)
    again = await saver.aget_tuple(configs[1])
    assert again is not None
    assert again.checkpoint["channel_versions"] == expected[0]
    assert again.checkpoint["versions_seen"] == expected[1]
    assert again.checkpoint["channel_values"]["items"] == expected[2]


async def test_delete_thread_removes_only_that_thread(saver: BaseCheckpointSaver):
    doomed = await put_chain(saver, "doomed", [{"n": 0}, {"n": 1}])
    kept = await put_chain(saver, "kept", [{"n": 0}, {"n": 1}])
    await put_chain(saver, "doomed", [{"m": 0}], ns="sub")
    await saver.aput_writes(doomed[1], [("n", 2)], "task")
    await saver.aput_writes(kept[1], [("n", 2)], "task")

    await saver.adelete_thread("doomed")

    assert await saver.aget_tuple(config_for("doomed")) is None
    assert [t async for t in saver.alist({"configurable": {"thread_id": "doomed"}})] == []
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        assert await count_rows(saver, table, "doomed") == 0
    assert await count_rows(saver, "checkpoints", "kept") == 2
    assert await count_rows(saver, "checkpoint_blobs", "kept") == 2
    assert await count_rows(saver, "checkpoint_writes", "kept") == 1
    tup = await saver.aget_tuple(config_for("kept"))
    assert tup is not None and tup.pending_writes == [("task", "n", 2)]
    await saver.adelete_thread("no-such-thread")  # harmless


# --- sync twins --------------------------------------------------------------------------------


def exercise_sync_twins(saver: BaseCheckpointSaver) -> None:
    cp1, v1 = child_checkpoint(None, {"n": 1})
    c1 = saver.put(config_for("sync"), cp1, {"source": "input", "step": -1}, v1)
    cp2, v2 = child_checkpoint(cp1, {"n": 2})
    c2 = saver.put(c1, cp2, {"source": "loop", "step": 0}, v2)
    saver.put_writes(c2, [("n", 3)], "task")
    tup = saver.get_tuple(config_for("sync"))
    assert tup is not None and tup.checkpoint["channel_values"] == {"n": 2}
    assert tup.pending_writes == [("task", "n", 3)]
    assert [t.config for t in saver.list(config_for("sync"))] == [c2, c1]
    assert [t.config for t in saver.list(config_for("sync"), limit=1)] == [c2]
    assert saver.list_threads() == ["sync"]
    saver.delete_thread("sync")
    assert saver.get_tuple(config_for("sync")) is None


async def test_sync_twins_work_inside_a_running_event_loop(saver: BaseCheckpointSaver):
    asyncio.get_running_loop()  # as in a notebook cell
    exercise_sync_twins(saver)


def test_sync_twins_work_in_plain_sync_code(saver: BaseCheckpointSaver):
    exercise_sync_twins(saver)


async def test_sync_and_async_calls_mix_on_one_saver(saver: BaseCheckpointSaver):
    configs = await put_chain(saver, "t", [{"n": 0}])
    loop = asyncio.get_running_loop()

    async def async_writes(i: int) -> None:
        await saver.aput_writes(configs[0], [("n", i)], f"async-{i}")

    def sync_writes(i: int) -> None:
        saver.put_writes(configs[0], [("n", i)], f"sync-{i}")

    await asyncio.gather(
        *(async_writes(i) for i in range(10)),
        *(loop.run_in_executor(None, sync_writes, i) for i in range(10)),
    )
    tup = await saver.aget_tuple(configs[0])
    assert tup is not None and tup.pending_writes is not None
    assert sorted(w[0] for w in tup.pending_writes) == sorted(
        [f"async-{i}" for i in range(10)] + [f"sync-{i}" for i in range(10)]
    )


def test_async_calls_from_successive_event_loops(saver: BaseCheckpointSaver):
    first = asyncio.run(put_chain(saver, "t", [{"n": 0}]))
    second = asyncio.run(saver.aget_tuple(config_for("t")))
    assert second is not None and second.config == first[0]


# --- subgraph namespaces -----------------------------------------------------------------------


async def test_nested_namespaces_keep_checkpoints_writes_and_parents_apart(saver):
    """A subgraph's namespace (``node:task_id``, levels joined by ``|``) is its own history in
    the thread: its checkpoints, pending writes and ``parents`` metadata round-trip, and
    deleting the thread removes every namespace."""
    root = await put_chain(saver, "t", [{"n": 0}, {"n": 1}])
    outer_ns = "call:0b1d2c3e-aaaa-bbbb-cccc-000000000001"
    inner_ns = f"{outer_ns}|inner:0b1d2c3e-aaaa-bbbb-cccc-000000000002"
    parents = {"": root[1]["configurable"]["checkpoint_id"]}
    cp, versions = child_checkpoint(None, {"y": "a"})
    outer = await saver.aput(
        config_for("t", outer_ns), cp, {"source": "input", "step": -1, "parents": parents}, versions
    )
    inner_parents = {**parents, outer_ns: outer["configurable"]["checkpoint_id"]}
    cp2, versions2 = child_checkpoint(None, {"y": "b"})
    inner = await saver.aput(
        config_for("t", inner_ns),
        cp2,
        {"source": "input", "step": -1, "parents": inner_parents},
        versions2,
    )
    await saver.aput_writes(inner, [(INTERRUPT, [{"id": "i" * 32, "value": "ok?"}])], "task-1")

    got = await saver.aget_tuple(config_for("t", inner_ns))
    assert got is not None and got.config == inner
    assert got.metadata["parents"] == inner_parents
    assert got.pending_writes == [("task-1", INTERRUPT, [{"id": "i" * 32, "value": "ok?"}])]
    assert [t.config async for t in saver.alist(config_for("t", outer_ns))] == [outer]
    assert [t.config async for t in saver.alist(config_for("t", ""))] == root[::-1]
    every = {
        t.config["configurable"]["checkpoint_ns"]
        async for t in saver.alist({"configurable": {"thread_id": "t"}})
    }
    assert every == {"", outer_ns, inner_ns}
    root_latest = await saver.aget_tuple(config_for("t", ""))
    assert root_latest is not None and root_latest.pending_writes == []

    await saver.adelete_thread("t")
    assert [t async for t in saver.alist({"configurable": {"thread_id": "t"}})] == []


async def test_a_subgraph_pauses_and_resumes_through_the_saver(saver):
    """The engine on this saver: an interrupt two levels down pauses the parent; the resume
    continues the subgraph from its saved step; every namespace lists as on MemorySaver."""
    from typing import TypedDict

    from durable_debug import Command, StateGraph, interrupt

    class S(TypedDict):
        y: str

    ran: list[str] = []

    def first(state: S) -> dict:
        ran.append("first")
        return {"y": state["y"] + "1"}

    def ask(state: S) -> dict:
        ran.append("ask")
        return {"y": state["y"] + interrupt("more?")}

    inner = (
        StateGraph(S)
        .add_node("first", first)
        .add_node("ask", ask)
        .add_edge("__start__", "first")
        .add_edge("first", "ask")
        .compile()
    )
    middle = StateGraph(S).add_node("inner", inner).add_edge("__start__", "inner").compile()

    async def shape(graph_saver: BaseCheckpointSaver) -> tuple[Any, list[tuple[int, str, int]]]:
        async def call(state: S) -> dict:
            return await middle.ainvoke(state)

        g = StateGraph(S).add_node("call", call).add_edge("__start__", "call")
        g = g.compile(checkpointer=graph_saver)
        cfg = {"configurable": {"thread_id": "nested"}}
        paused = await g.ainvoke({"y": "x"}, cfg)
        done = await g.ainvoke(Command(resume="2"), cfg)
        levels = [
            (
                t.config["configurable"]["checkpoint_ns"].count("|"),
                t.metadata["source"],
                t.metadata["step"],
            )
            async for t in graph_saver.alist(cfg)
        ]
        return ([i.value for i in paused["__interrupt__"]], done), sorted(levels)

    ran.clear()
    ours = await shape(saver)
    assert ran == ["first", "ask", "ask"]
    assert ours[0] == (["more?"], {"y": "x12"})
    assert ours == await shape(MemorySaver())
