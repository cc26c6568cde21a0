"""Streaming on both libraries: stream_mode "values", "updates", a list of modes, with
interrupts and resumes, async and sync. Where LangGraph emits in completion order (updates
of parallel tasks) the events are compared as multisets."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity, multiset
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    topic: str
    log: Annotated[list, operator.add]


def node(trace: Trace, name: str, delay: float = 0.0):
    """An async node that logs its name after ``delay`` seconds."""

    async def run(state: State) -> dict:
        trace.ran(name)
        await asyncio.sleep(delay)
        return {"log": [name]}

    return run


def chain(api: Api, trace: Trace) -> object:
    """START → a → b → END."""
    return (
        api.StateGraph(State)
        .add_node("a", node(trace, "a"))
        .add_node("b", node(trace, "b"))
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .add_edge("b", api.END)
        .compile(checkpointer=api.MemorySaver())
    )


def diamond(api: Api, trace: Trace) -> object:
    """START → slow, fast (parallel) → join → END, with a Send fan-out after join."""

    def fan(state: State) -> list:
        return [api.Send("worker", {"topic": t, "log": []}) for t in ("t1", "t2", "t3")]

    async def worker(state: State) -> dict:
        trace.ran("worker")
        await asyncio.sleep({"t1": 0.04, "t2": 0.0, "t3": 0.02}[state["topic"]])
        return {"log": [f"worker {state['topic']}"]}

    return (
        api.StateGraph(State)
        .add_node("slow", node(trace, "slow", 0.04))
        .add_node("fast", node(trace, "fast"))
        .add_node("join", node(trace, "join"))
        .add_node("worker", worker)
        .add_edge(api.START, "slow")
        .add_edge(api.START, "fast")
        .add_edge(["slow", "fast"], "join")
        .add_conditional_edges("join", fan, ["worker"])
        .compile(checkpointer=api.MemorySaver())
    )


async def collect(trace: Trace, label: str, stream, *, unordered: bool = False) -> list:
    """Record every item of ``stream`` (as a multiset when ``unordered``); return them."""
    items = [item async for item in stream]
    normalized = [trace.normalize(i) for i in items]
    trace.note(label, multiset(normalized) if unordered else normalized)
    return items


@pytest.mark.parametrize("mode", ["values", "updates"])
async def test_stream_a_chain(mode):
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace)
        cfg = {"configurable": {"thread_id": "s"}}
        await collect(trace, mode, g.astream({"topic": "x", "log": []}, cfg, stream_mode=mode))

    await acheck_parity(scenario)


async def test_stream_a_list_of_modes():
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace)
        cfg = {"configurable": {"thread_id": "s"}}
        modes = ["updates", "values"]
        await collect(trace, "both", g.astream({"topic": "x", "log": []}, cfg, stream_mode=modes))

    ours = await acheck_parity(scenario)
    assert ours["both"][0] == ("values", {"topic": "x", "log": []})


async def test_stream_parallel_tasks_and_sends():
    async def scenario(api: Api, trace: Trace) -> None:
        g = diamond(api, trace)
        run = {"topic": "x", "log": []}
        cfg = {"configurable": {"thread_id": "values"}}
        await collect(trace, "values", g.astream(run, cfg, stream_mode="values"))
        cfg = {"configurable": {"thread_id": "updates"}}
        await collect(trace, "updates", g.astream(run, cfg, stream_mode="updates"), unordered=True)
        cfg = {"configurable": {"thread_id": "both"}}
        items = [i async for i in g.astream(run, cfg, stream_mode=["values", "updates"])]
        trace.note("both: values", [i for i in items if i[0] == "values"])
        trace.note(
            "both: updates", multiset(trace.normalize(i) for i in items if i[0] == "updates")
        )

    ours = await acheck_parity(scenario)
    assert ours["values"][-1]["log"] == [
        "fast",
        "slow",
        "join",
        "worker t1",
        "worker t2",
        "worker t3",
    ]


class GateState(TypedDict):
    topic: str
    answer: str


async def test_stream_an_interrupt_and_its_resume():
    async def scenario(api: Api, trace: Trace) -> None:
        async def ask(state: GateState) -> dict:
            trace.ran("ask")
            return {"answer": api.interrupt({"question": state["topic"]})}

        g = (
            api.StateGraph(GateState)
            .add_node("ask", ask)
            .add_edge(api.START, "ask")
            .compile(checkpointer=api.MemorySaver())
        )
        for mode in ("values", "updates"):
            cfg = {"configurable": {"thread_id": mode}}
            await collect(trace, f"{mode}: run", g.astream({"topic": "q?"}, cfg, stream_mode=mode))
            resume = api.Command(resume="yes")
            await collect(trace, f"{mode}: resume", g.astream(resume, cfg, stream_mode=mode))

    await acheck_parity(scenario)


@pytest.mark.parametrize("where", ["interrupt_before", "interrupt_after"])
def test_sync_stream_paused_by_a_static_interrupt(where):
    def scenario(api: Api, trace: Trace) -> None:
        def step(name: str):
            def run(state: State) -> dict:
                trace.ran(name)
                return {"log": [name]}

            return run

        g = (
            api.StateGraph(State)
            .add_node("a", step("a"))
            .add_node("b", step("b"))
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .compile(
                checkpointer=api.MemorySaver(),
                **{where: ["b" if where == "interrupt_before" else "a"]},
            )
        )
        cfg = {"configurable": {"thread_id": "sync"}}
        for mode in ("values", "updates"):
            trace.call(
                f"{mode}: paused", g.stream, {"topic": "t", "log": []}, cfg, stream_mode=mode
            )
            trace.call(f"{mode}: rest", g.stream, None, cfg, stream_mode=mode)

    check_parity(scenario)


def debug_event(trace: Trace, event: dict) -> dict:
    """A "debug" stream event without its timestamp, task ids labelled."""
    event = {k: v for k, v in event.items() if k != "timestamp"}
    payload = dict(event["payload"])
    if "id" in payload:
        payload["id"] = trace.label("t", payload["id"])
    if "tasks" in payload:
        payload["tasks"] = [{**t, "id": trace.label("t", t["id"])} for t in payload["tasks"]]
    return trace.normalize({**event, "payload": payload})


async def test_stream_debug_events_of_a_chain():
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace)
        cfg = {"configurable": {"thread_id": "debug"}}
        events = g.astream({"topic": "x", "log": []}, cfg, stream_mode="debug")
        trace.note("debug", [debug_event(trace, e) async for e in events])

    await acheck_parity(scenario)
