"""The engine's own step save on the memory saver (``MemorySaver.put_run_step``, the run's
``put_now``) stores what ``aput_step`` stores: checkpoint, metadata, pending writes, blobs
(byte for byte) and debug record; a blob taken from a lone task's write is the bytes the
channel's value serializes to; a run's records are in stored form and its versions known."""

from __future__ import annotations

import asyncio
import json
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from durable_debug import MemorySaver, StateGraph
from durable_debug.checkpoint.base import empty_checkpoint
from durable_debug.checkpoint.lease import _RENEWER, LOST_LEASES
from durable_debug.checkpoint.records import (
    GRAPH_VERSION,
    RECORD_KEY,
    known_version,
    record_text,
    stored_record,
)
from durable_debug.checkpoint.serde import MsgpackSerializer
from durable_debug.graph.saving import RunSaves


def _checkpoint(values: dict[str, Any], versions: dict[str, str]) -> Any:
    checkpoint = empty_checkpoint()
    checkpoint["id"], checkpoint["ts"] = "1f0-step", "2026-01-01T00:00:00+00:00"
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = versions
    checkpoint["versions_seen"] = {"n": dict(versions)}
    checkpoint["updated_channels"] = sorted(versions)
    return checkpoint


SHARED = ["shared"]
"""A value written by the task that the channel then holds (the same object)."""


@pytest.mark.parametrize(
    ("task_writes", "record"),
    [
        ([], None),
        ([("task", [("a", SHARED), ("b", None), ("c", 3)], "~__pregel_pull, n")], {"k": 1}),
        ([("task", [("a", ["other"]), ("__error__", "x"), ("__error__", "y")], "p")], None),
        ([("t1", [("a", SHARED)], "p1"), ("t2", [("b", None), ("a", 1)], "p2")], {"f": [1]}),
    ],
    ids=["no-writes", "lone-task-reused", "lone-task-specials", "two-tasks"],
)
@pytest.mark.parametrize("earlier_writes", [False, True], ids=["new-bucket", "bucket"])
def test_the_run_step_save_stores_what_aput_step_stores(
    task_writes: list[Any], record: dict[str, Any] | None, earlier_writes: bool
) -> None:
    values = {"a": SHARED, "b": None, "c": 3, "d": {"k": [1, 2]}}
    versions = {"a": "2", "b": "2", "c": "2", "d": "2", "gone": "2"}

    async def saved(engine: bool) -> tuple[Any, ...]:
        saver = MemorySaver()
        start = empty_checkpoint()
        start["id"] = "1f0-first"
        first = await saver.aput({"configurable": {"thread_id": "t"}}, start, {}, {})
        if earlier_writes:
            await saver.aput_writes(first, [("a", 0), ("__error__", "before")], "task", "p")
        checkpoint = _checkpoint(dict(values), dict(versions))
        metadata: Any = {"step": 0, "source": "loop", "parents": {}}
        if engine:
            stored = stored_record(record) if record is not None else None
            args = ("t", "", "1f0-first", task_writes, checkpoint, metadata, stored, versions)
            config = saver.put_run_step(*args)
        else:
            if record is not None:
                metadata[RECORD_KEY] = dict(record)
            config = await saver.aput_step(first, task_writes, checkpoint, metadata, versions)
        got = await saver.aget_tuple(config)
        parent = await saver.aget_tuple(first)
        assert got is not None and parent is not None
        return (
            config,
            got.checkpoint,
            got.metadata,
            got.parent_config,
            parent.pending_writes,
            sorted(saver.writes[("t", "", "1f0-first")].items()) if task_writes else None,
            await saver.aget_debug_records("t", ""),
            sorted(saver.blobs.items()),
        )

    assert asyncio.run(saved(True)) == asyncio.run(saved(False))


def test_a_blob_taken_from_a_write_is_the_bytes_of_the_channels_value() -> None:
    calls: list[Any] = []

    class Counting(MsgpackSerializer):
        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            calls.append(obj)
            return super().dumps_typed(obj)

    for serde, dumped in ((MsgpackSerializer(), None), (Counting(), 4)):
        saver = MemorySaver(serde=serde)
        value = {"x": [1, 2, 3]}
        checkpoint = _checkpoint({"a": value, "b": [1]}, {"a": "2", "b": "2"})
        writes = [("task", [("a", value), ("b", [1])], "p")]
        saver.put_run_step("t", "", "1f0-first", writes, checkpoint, {}, None, {"a": "2", "b": "2"})
        blob = saver.blobs[("t", "", "a", "2")]
        assert blob == MsgpackSerializer().dumps_typed(value)
        stored = saver.writes[("t", "", "1f0-first")]
        if dumped is None:  # the built-in serializer: the write's own blob
            assert stored[("task", 0)].blob is blob
            assert stored[("task", 1)].blob is not saver.blobs[("t", "", "b", "2")]
        else:  # another serializer is asked for each value (its bytes may differ)
            assert len(calls) == dumped


class _State(TypedDict):
    value: int
    trail: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    builder = StateGraph(_State)
    for name, after in (("a", "b"), ("b", "c"), ("c", None)):

        async def step(state: _State, name: str = name) -> dict[str, Any]:
            return {"value": state["value"] + 1, "trail": [name]}

        builder.add_node(name, step)
        if after is not None:
            builder.add_edge(name, after)
    builder.add_edge("__start__", "a")
    return builder.compile(checkpointer=saver)


class _ByAputStep(MemorySaver):
    """A memory saver whose ``aput_step`` is overridden (the engine calls it, as today)."""

    async def aput_step(self, *args: Any) -> Any:
        return await super().aput_step(*args)


def test_a_runs_steps_read_back_as_through_aput_step() -> None:
    """A run on the memory saver saves through ``put_run_step``; one on a subclass
    overriding ``aput_step`` through that: every stored part reads back alike (the ids,
    times and write times aside), and the records are what JSON gives back, keys sorted."""

    async def run(saver: MemorySaver) -> list[Any]:
        assert (RunSaves(saver, "async").put_now is not None) is (type(saver) is MemorySaver)
        graph = _graph(saver)
        config = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"value": 0, "trail": []}, config)
        await graph.ainvoke({"value": 10, "trail": ["again"]}, config)
        history = [s async for s in graph.aget_state_history(config)]
        records = await saver.aget_debug_records("t", "")
        for (ns, cid), found in records.items():
            kept = saver.records[("t", ns, cid)]
            assert json.loads(record_text(kept) or "{}") == kept == found
            assert list(kept) == sorted(kept)
            assert known_version(saver, ("t", ns, cid)) == kept[GRAPH_VERSION]
        blobs = {(k[2], v) for k, v in saver.blobs.items()}
        writes = sorted(  # (task ids differ: they come from the checkpoint ids)
            (w.channel, w.blob, w.task_path)
            for bucket in saver.writes.values()
            for w in bucket.values()
        )
        steps = [
            (
                s.values,
                s.next,
                s.metadata,
                [(t.name, t.path) for t in s.tasks],
                sorted(records[("", s.config["configurable"]["checkpoint_id"])]),
            )
            for s in history
        ]
        return [steps, sorted(blobs), writes]

    assert asyncio.run(run(MemorySaver())) == asyncio.run(run(_ByAputStep()))


def test_lost_leases_is_the_renewers_set() -> None:
    assert LOST_LEASES is _RENEWER.lost


class _OwnUnsharedSave(MemorySaver):
    """A memory saver with its own ``put_step_unshared`` (what runs called before
    ``put_run_step``): runs save through its ``aput_step`` instead, which copies."""

    def put_step_unshared(self, *args: Any) -> Any:
        raise AssertionError("not called by a run")


class _OwnRunSave(MemorySaver):
    """A memory saver with its own ``put_run_step``: a run calls it for each step."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[str] = []

    def put_run_step(self, *args: Any) -> Any:
        config = super().put_run_step(*args)
        self.saved.append(config["configurable"]["checkpoint_id"])
        return config


def test_a_saver_with_its_own_step_save_is_not_passed_over() -> None:
    """A subclass overriding ``put_run_step`` stores each of a run's steps through it; one
    overriding ``put_step_unshared`` is saved through ``aput_step``. Both read back the same
    history as the plain memory saver."""
    config = {"configurable": {"thread_id": "t"}}

    def history(saver: MemorySaver) -> list[Any]:
        graph = _graph(saver)
        assert asyncio.run(graph.ainvoke({"value": 0, "trail": []}, config))["value"] == 3
        return [(s.values, s.next, s.metadata["step"]) for s in graph.get_state_history(config)]

    own_run = _OwnRunSave()
    unshared = _OwnUnsharedSave()
    assert RunSaves(unshared, "async").put_now is None
    expected = history(MemorySaver())
    assert len(expected) == 5  # the empty input checkpoint, the input, a, b, c
    assert history(own_run) == expected
    assert own_run.saved == [  # every checkpoint of the run, oldest first
        s.config["configurable"]["checkpoint_id"]
        for s in reversed(list(_graph(own_run).get_state_history(config)))
    ]
    assert history(unshared) == expected
