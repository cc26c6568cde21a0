"""Reading a thread, and the errors a user meets when a config or an id is wrong."""

from __future__ import annotations

import pytest

from durable_debug.checkpoint.base import CheckpointNotFoundError
from durable_debug.inspect import aread_checkpoint, aread_thread, checkpoint_detail, history_frame


async def test_thread_is_read_oldest_first_across_branches(seed):
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    thread = await aread_thread(g, cfg)
    assert [r.step for r in thread] == [-1, 0, 1, 2]
    assert thread.latest.values == {"value": "B", "log": ["ran A", "ran B"]}
    ids = list(thread.records)
    latest = thread.latest.id
    unique = next(
        p for p in (latest[:n] for n in range(4, 37)) if [i[: len(p)] for i in ids].count(p) == 1
    )
    assert thread.resolve(unique) is thread.latest  # a unique prefix is enough
    assert thread.resolve(thread.latest.config) is thread.latest
    # A config pinned to an old checkpoint still reads the whole thread.
    pinned = await aread_thread(g, thread.records[min(thread.records)].config)
    assert len(pinned) == 4


async def test_unknown_thread_is_empty_not_an_error(seed):
    ns = seed("accumulate")
    thread = await aread_thread(ns["g"], {"configurable": {"thread_id": "never-ran"}})
    assert len(thread) == 0
    assert history_frame(ns["g"], {"configurable": {"thread_id": "never-ran"}}).empty


async def test_config_without_thread_id_says_how_to_name_one(seed):
    ns = seed("accumulate")
    with pytest.raises(ValueError, match=r"no thread_id.*\"thread_id\": \"demo-1\""):
        await aread_thread(ns["g"], {"configurable": {}})
    with pytest.raises(TypeError, match="needs a config naming the thread"):
        await aread_thread(ns["g"], "demo-1")


async def test_checkpoint_not_in_thread_names_the_thread(seed):
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    missing = "1f000000-0000-6000-8000-000000000000"
    with pytest.raises(CheckpointNotFoundError, match=r"Thread 'demo-1' has no checkpoint"):
        await aread_checkpoint(g, cfg, missing)
    # The saver's own error (durable_debug) or ours (LangGraph): both name the thread and say
    # where the checkpoints are listed.
    with pytest.raises(CheckpointNotFoundError, match=r"'demo-1'.*(history_frame|get_state_hist)"):
        checkpoint_detail(g, {"configurable": {"thread_id": "demo-1", "checkpoint_id": missing}})
    thread = await aread_thread(g, cfg)
    with pytest.raises(CheckpointNotFoundError, match="its latest is"):
        thread.resolve("zzz")
    with pytest.raises(ValueError, match="matches 4 checkpoints"):
        thread.resolve(thread.latest.id[:4])


async def test_graph_without_checkpointer_says_how_to_add_one(seed):
    ns = seed("accumulate")
    bare = ns["g"].builder.compile()
    with pytest.raises(TypeError, match=r"has no checkpointer.*compile\(checkpointer="):
        await aread_thread(bare, ns["cfg"])


async def test_one_checkpoint_is_read_with_its_parent_only(seed):
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    thread, record = await aread_checkpoint(g, cfg)
    assert not thread.complete and len(thread) == 2
    assert record.step == 2 and thread.parent(record).step == 1
    assert thread.writers(record) == ["b"]
