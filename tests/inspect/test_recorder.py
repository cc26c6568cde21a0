"""The recorder counts node executions per (thread, node), as the notebooks' counters do."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from durable_debug import Command, MemorySaver, StateGraph, interrupt
from durable_debug.inspect import Recorder


class S(TypedDict):
    log: Annotated[list, operator.add]


async def test_resume_after_failure_reruns_only_the_failed_node(seed):
    """Notebook 02: a and b run once; c runs twice (it failed, then the thread resumed)."""
    ns = seed("resume")
    g, cfg = ns["g"], ns["cfg"]
    async with Recorder() as rec:
        with pytest.raises(RuntimeError, match="c is broken"):
            await g.ainvoke({"log": []}, cfg)
        ns["broken"]["c"] = False
        await g.ainvoke(None, cfg)
    counts = rec.counts("resume-1")
    assert {n: c.executions for n, c in counts.items()} == {"a": 1, "b": 1, "c": 2}
    assert counts == {n: counts[n] for n in ("a", "b", "c")}
    assert counts["c"].reruns == 1 and counts["c"].errors == 1
    assert counts["a"].reruns == counts["b"].reruns == 0
    # The recorder agrees with the seed's own counters.
    assert {n: c.executions for n, c in counts.items()} == ns["calls"]


async def test_sequential_interrupts_rerun_the_node_once_per_resume(seed):
    """Notebook 07 (a): three ainvoke calls, the node executes three times."""
    ns = seed("two_gates")
    g, cfg, Command = ns["g"], ns["cfg"], ns["Command"]
    with Recorder() as rec:
        await g.ainvoke({"a": "", "b": ""}, cfg)
        await g.ainvoke(Command(resume="A-VALUE"), cfg)
        final = await g.ainvoke(Command(resume="B-VALUE"), cfg)
    assert final["a"] == "A-VALUE" and final["b"] == "B-VALUE"
    count = rec.counts("gates-1")["two_gates"]
    assert (count.executions, count.reruns, count.interrupts) == (3, 2, 2)
    assert rec.counts_frame()["summary"].tolist() == ["two_gates 3 (re-ran 2×)"]


async def test_parallel_interrupts_rerun_every_branch_once(seed):
    """Notebook 07 (b): three reviews interrupt together, one resume keyed by id answers all."""
    ns = seed("reviews")
    g, cfg, Command = ns["g"], ns["cfg"], ns["Command"]
    async with Recorder() as rec:
        first = await g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"], "approvals": []}, cfg)
        ids = {i.value["review_item"]: i.id for i in first["__interrupt__"]}
        answers = {ids["doc-X"]: "APPROVE", ids["doc-Y"]: "REJECT", ids["doc-Z"]: "APPROVE"}
        final = await g.ainvoke(Command(resume=answers), cfg)
    assert final["approvals"] == ["doc-X=APPROVE", "doc-Y=REJECT", "doc-Z=APPROVE"]
    assert list(rec.counts("reviews-1")) == ["review"]  # the entry (__start__) is not a node
    count = rec.counts("reviews-1")["review"]
    assert (count.executions, count.reruns, count.interrupts) == (6, 3, 3)


async def test_rerun_rule_counts(seed):
    """Notebook 08: naive node 2 (its side effect too); interrupt first: the node still executes
    twice but its side effect once; fix B: prepare 1, gate 2."""
    ns = seed("rerun_rule")
    Command, charges = ns["Command"], ns["charges"]
    start = {"prep": "", "decision": ""}
    async with Recorder() as rec:
        for graph, thread in ((ns["g_naive"], "naive"), (ns["g_first"], "first"), (ns["g"], "b")):
            config = {"configurable": {"thread_id": thread}}
            await graph.ainvoke(start, config)
            await graph.ainvoke(Command(resume="yes"), config)
    assert rec.counts("naive")["node"].executions == 2 == charges["naive"]
    assert rec.counts("first")["node"].executions == 2
    assert charges["interrupt_first"] == 1
    fix_b = rec.counts("b")
    assert (fix_b["prepare"].executions, fix_b["gate"].executions) == (1, 2)
    assert charges["prepare"] == 1
    frame = rec.counts_frame(["b"])
    assert frame["summary"].tolist() == ["prepare 1", "gate 2 (re-ran 1×)"]
    assert rec.threads == ["naive", "first", "b"]


async def test_fork_executions_count_but_are_not_reruns(seed):
    """Notebook 03: running forward from a fork executes b again, as a new task."""
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    with Recorder() as rec:
        await g.ainvoke({"value": "", "log": []}, cfg)
        target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
        await g.ainvoke(None, await g.aupdate_state(target.config, {"value": "FORKED"}))
    counts = rec.counts("demo-1")
    assert (counts["a"].executions, counts["b"].executions) == (1, 2)
    assert counts["b"].reruns == 0


async def test_only_executions_while_active_are_counted(seed):
    ns = seed("accumulate")
    g = ns["g"]
    rec = Recorder()
    await g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": "before"}})
    with rec:
        assert rec.active
        await g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": "during"}})
    assert not rec.active
    await g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": "after"}})
    assert rec.threads == ["during"]
    assert rec.counts() == rec.counts("during")
    rec.reset()
    assert rec.executions == [] and rec.counts_frame().empty


def test_sync_invoke_is_counted_too(seed):
    """Sync nodes run with the sync ``invoke`` are counted like async ones."""
    ns = seed("sync_nodes")
    with Recorder() as rec:
        assert ns["g"].invoke({"value": ""}, ns["cfg"]) == {"value": "12"}
    assert {n: c.executions for n, c in rec.counts("sync-1").items()} == {"first": 1, "second": 1}
    assert [(e.node, e.outcome) for e in rec.executions] == [("first", "ok"), ("second", "ok")]


async def test_a_run_streaming_messages_counts_each_execution_once(seed):
    """Streaming "messages" gives the run LangChain callbacks, which LangGraph's hook sees
    too: each execution still counts once."""
    ns = seed("accumulate")
    async with Recorder() as rec:
        async for _ in ns["g"].astream({"value": "", "log": []}, ns["cfg"], stream_mode="messages"):
            pass
    counts = rec.counts(ns["cfg"]["configurable"]["thread_id"])
    assert {n: (c.executions, c.reruns) for n, c in counts.items()} == {"a": (1, 0), "b": (1, 0)}


async def test_subgraph_nodes_are_counted_under_their_parent_path():
    """A subgraph's nodes count as ``parent/child``; its finished step does not run again when
    the parent resumes, the interrupted one does."""

    def first(state: S) -> dict:
        return {"log": ["first"]}

    def ask(state: S) -> dict:
        return {"log": [interrupt("ok?")]}

    inner = StateGraph(S).add_node("first", first).add_node("ask", ask)
    inner = inner.add_edge("__start__", "first").add_edge("first", "ask").compile()
    middle = StateGraph(S).add_node("inner", inner).add_edge("__start__", "inner").compile()

    async def call(state: S) -> dict:
        return await middle.ainvoke({"log": []})

    g = StateGraph(S).add_node("call", call).add_edge("__start__", "call")
    g = g.compile(checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "nested-counts"}}
    async with Recorder() as rec:
        await g.ainvoke({"log": []}, cfg)
        await g.ainvoke(Command(resume="yes"), cfg)
    counts = {n: (c.executions, c.reruns) for n, c in rec.counts("nested-counts").items()}
    assert counts == {
        "call": (2, 1),
        "call/inner": (2, 1),
        "call/inner/first": (1, 0),
        "call/inner/ask": (2, 1),
    }
