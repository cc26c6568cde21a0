"""Stream modes of the engine beyond parity: ``custom`` chunks arrive while the node still
runs; a step's result chunks come only once the step is saved; bad modes and durability are
refused by name."""

from __future__ import annotations

import asyncio
import threading

import pytest
from graph_support import LogState, cfg

from durable_debug import START, DurableDebugWarning, MemorySaver, StateGraph, get_config
from durable_debug.inspect import findings


def test_custom_chunks_reach_the_consumer_while_a_sync_node_still_runs() -> None:
    reply = threading.Event()

    def node(state: LogState, writer) -> dict:
        writer("waiting for the consumer")
        # the consumer sets `reply` when it has read the chunk: only a live stream gets here
        return {"log": [f"consumer replied: {reply.wait(timeout=30)}"]}

    g = (
        StateGraph(LogState)
        .add_node("n", node)
        .add_edge(START, "n")
        .compile(checkpointer=MemorySaver())
    )
    seen = []
    for mode, chunk in g.stream(
        {"value": "", "log": []}, cfg("live"), stream_mode=["custom", "updates"]
    ):
        seen.append((mode, chunk))
        if mode == "custom":
            reply.set()
    assert seen == [
        ("custom", "waiting for the consumer"),
        ("updates", {"n": {"log": ["consumer replied: True"]}}),
    ]


async def test_custom_chunks_of_parallel_async_nodes_arrive_before_they_finish() -> None:
    release = asyncio.Event()

    async def talker(state: LogState, writer) -> dict:
        writer("talker started")
        await release.wait()
        return {"log": ["talker"]}

    async def other(state: LogState) -> dict:
        await release.wait()
        return {"log": ["other"]}

    g = (
        StateGraph(LogState)
        .add_node("talker", talker)
        .add_node("other", other)
        .add_edge(START, "talker")
        .add_edge(START, "other")
        .compile(checkpointer=MemorySaver())
    )
    modes = ["custom", "updates"]
    seen = []
    async for mode, _chunk in g.astream({"value": "", "log": []}, cfg("par"), stream_mode=modes):
        seen.append(mode)
        if mode == "custom":
            release.set()
    assert seen[0] == "custom"
    assert sorted(seen[1:]) == ["updates", "updates"]


def test_an_update_is_yielded_after_its_checkpoint_is_saved() -> None:
    saver = MemorySaver()
    g = (
        StateGraph(LogState)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )
    for chunk in g.stream({"value": "", "log": []}, cfg("saved")):
        assert chunk == {"a": {"log": ["a"]}}
        # the consumer holds the first update: the step that produced it is already saved
        snapshot = g.get_state(cfg("saved"))
        assert snapshot.values["log"] == ["a"]
        assert snapshot.next == ("b",)
        break


def test_unknown_durability_is_a_finding_and_get_config_outside_a_node_is_refused() -> None:
    """LangGraph runs an unknown durability as "async"; so do we, with a finding on the
    run's first checkpoint (strict: the ValueError naming it, before anything runs)."""
    builder = StateGraph(LogState).add_node("n", lambda s: {}).add_edge(START, "n")
    strict = builder.compile(checkpointer=MemorySaver(), strict=True)
    with pytest.raises(ValueError, match="Unknown durability 'eventually'"):
        strict.invoke({"value": "", "log": []}, cfg("d"), durability="eventually")
    assert strict.get_state(cfg("d")).values == {}
    g = builder.compile(checkpointer=MemorySaver())
    with pytest.warns(DurableDebugWarning, match="durability 'eventually' is not one of"):
        g.invoke({"value": "", "log": []}, cfg("d"), durability="eventually")
    assert len(list(g.get_state_history(cfg("d")))) == 3  # every step saved, as "async"
    found = [f for listed in findings(g, cfg("d")).values() for f in listed]
    assert [(f.code, f.key) for f in found] == [("unknown-durability", "eventually")]
    with pytest.raises(RuntimeError, match="get_config\\(\\) was called outside a running node"):
        get_config()


async def test_leaving_a_stream_mid_step_stops_the_node_before_the_thread_is_given_back() -> None:
    """One writer per thread: a consumer that leaves while a node still runs ends the run at
    once; the node is cancelled by the time ``aclose()`` returns, so the next run of the
    thread never overlaps it."""
    stopped: list[str] = []

    async def slow(state: LogState, writer) -> dict:
        writer("slow started")
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise
        return {"log": ["never"]}

    g = (
        StateGraph(LogState)
        .add_node("slow", slow)
        .add_edge(START, "slow")
        .compile(checkpointer=MemorySaver())
    )
    stream = g.astream({"value": "", "log": []}, cfg("left"), stream_mode="custom")
    assert await stream.__anext__() == "slow started"
    await stream.aclose()
    assert stopped == ["cancelled"]
    state = await g.aupdate_state(cfg("left"), {"value": "next"})  # refused if still held
    assert (await g.aget_state(state)).values["value"] == "next"
