"""The thread as tables: checkpoints, blob versions (new vs shared), pending writes."""

from __future__ import annotations

import contextlib

from durable_debug.inspect import ablobs_frame, ahistory_frame, awrites_frame, to_jsonable


async def _fork(ns):
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    fork = await g.aupdate_state(target.config, {"value": "FORKED"})
    return target, fork


async def test_update_writes_a_blob_only_for_the_changed_channel(seed):
    """Notebook 01/notebook 03: the fork's checkpoint has a new blob for value, and shares log's."""
    ns = seed("accumulate")
    target, fork = await _fork(ns)
    blobs = await ablobs_frame(ns["g"], ns["cfg"])
    at_fork = blobs[blobs.checkpoint_id == fork["configurable"]["checkpoint_id"]]
    assert dict(zip(at_fork.channel, at_fork.status, strict=True)) == {
        "value": "new",
        "log": "shared",
    }
    parent = blobs[blobs.checkpoint_id == target.config["configurable"]["checkpoint_id"]]
    shared = at_fork[at_fork.channel == "log"].iloc[0]
    assert shared.version == parent[parent.channel == "log"].iloc[0].version
    assert shared["size"] == parent[parent.channel == "log"].iloc[0]["size"] > 0
    # After step 1 (node a wrote both channels) both blobs are new.
    assert set(parent.status) == {"new"}


async def test_unchanged_channels_keep_one_version_for_the_whole_run(seed):
    """Notebook 04: query and options never change, so every checkpoint shares their blob."""
    ns = seed("pointers")
    await ns["g"].ainvoke(ns["first_input"], ns["cfg"])
    blobs = await ablobs_frame(ns["g"], ns["cfg"])
    per_channel = blobs.groupby("channel")
    assert per_channel.version.nunique().to_dict() == {
        "query": 1,
        "options": 1,
        "partial": 2,
        "result": 2,
        "log": 4,
    }
    query = blobs[blobs.channel == "query"]
    assert query.status.tolist() == ["new", "shared", "shared", "shared"]
    assert set(query["size"]) == {len(ns["g"].checkpointer.serde.dumps_typed("find x" * 20)[1])}
    assert "branch:to:plan" not in set(blobs.channel)  # internal channels hidden by default
    everything = await ablobs_frame(ns["g"], ns["cfg"], all_channels=True)
    assert len(everything) > len(blobs)


async def test_history_frame_lists_every_checkpoint_of_every_branch(seed):
    ns = seed("accumulate")
    _target, fork = await _fork(ns)
    await ns["g"].ainvoke(None, fork)
    history = await ahistory_frame(ns["g"], ns["cfg"], values=True)
    assert history.step.tolist() == [-1, 0, 1, 2, 2, 3]
    assert history.source.tolist() == ["input", "loop", "loop", "loop", "update", "loop"]
    assert history.lane.tolist() == [0, 0, 0, 0, 1, 1]
    assert history.is_head.tolist() == [False, False, False, True, False, True]
    assert history["value"].tolist() == [None, "", "A", "B", "FORKED", "B"]
    assert history.next.tolist()[-2:] == [("b",), ()]


async def test_writes_frame_shows_the_failed_task(seed):
    """Notebook 02: the failed task leaves an error write; a and b left their updates."""
    ns = seed("resume")
    with contextlib.suppress(RuntimeError):
        await ns["g"].ainvoke({"log": []}, ns["cfg"])
    writes = await awrites_frame(ns["g"], ns["cfg"])
    errors = writes[writes.kind == "error"]
    assert errors.node.tolist() == ["c"] and "c is broken" in errors.value.iloc[0]
    updates = writes[writes.kind == "write"]
    assert [
        (n, c, v) for n, c, v in zip(updates.node, updates.channel, updates.value, strict=True)
    ][-2:] == [
        ("a", "log", ["a"]),
        ("b", "log", ["b"]),
    ]


async def test_writes_frame_shows_interrupts_and_resume_values(seed):
    ns = seed("two_gates")
    await ns["g"].ainvoke({"a": "", "b": ""}, ns["cfg"])
    await ns["g"].ainvoke(ns["Command"](resume="A-VALUE"), ns["cfg"])
    writes = await awrites_frame(ns["g"], ns["cfg"])
    mine = writes[writes.node == "two_gates"]
    assert set(mine.kind) == {"interrupt", "resume"}
    interrupt = mine[mine.kind == "interrupt"].value.iloc[0]
    # An Interrupt (LangGraph) or its saved dict (durable_debug): the one blocking now.
    assert [to_jsonable(i)["value"] for i in interrupt] == [{"ask": "B?"}]


async def test_writes_frame_shows_the_input_as_the_start_tasks_writes(seed):
    ns = seed("accumulate")
    await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    writes = await awrites_frame(ns["g"], ns["cfg"])
    start = writes[(writes.node == "__start__") & (writes.kind == "write")]
    assert dict(zip(start.channel, start.value, strict=True)) == {"value": "", "log": []}
