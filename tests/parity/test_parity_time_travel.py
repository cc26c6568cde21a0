"""Time travel on both libraries: replaying from an old checkpoint (with None or with new
input), forking a paused step, and Command given as run input (resume with update, goto)."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]


def abc(api: Api, trace: Trace, **compile_kwargs: object) -> object:
    """START → a → b → c → END; each node logs its name and the value it saw."""

    def make(name: str):
        async def node(state: State) -> dict:
            trace.ran(name)
            return {"value": name, "log": [f"{name} saw {state['value']!r}"]}

        return node

    builder = api.StateGraph(State)
    for name in "abc":
        builder.add_node(name, make(name))
    builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", api.END)
    return builder.compile(checkpointer=api.MemorySaver(), **compile_kwargs)


async def history(graph, config) -> list:
    """The thread's whole history, newest first."""
    return [s async for s in graph.aget_state_history(config)]


async def at_step(graph, config, step: int) -> dict:
    """Config of the (first listed) checkpoint of ``step``."""
    for snap in await history(graph, config):
        if snap.metadata["step"] == step:
            return snap.config
    raise AssertionError(f"no checkpoint at step {step}")


@pytest.mark.parametrize("step", [-1, 0, 1, 3])
async def test_replay_from_an_old_checkpoint(step):
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace)
        cfg = {"configurable": {"thread_id": "replay"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        old = await at_step(g, cfg, step)
        await trace.run("replay", g.ainvoke(None, old))
        trace.history("history", await history(g, cfg))
        trace.state("latest", await g.aget_state(cfg))

    await acheck_parity(scenario)


async def test_new_input_on_an_old_checkpoint():
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace)
        cfg = {"configurable": {"thread_id": "reinput"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        old = await at_step(g, cfg, 1)
        await trace.run("rerun", g.ainvoke({"value": "new"}, old))
        trace.history("history", await history(g, cfg))

    await acheck_parity(scenario)


async def test_fork_a_paused_step_and_resume_both_branches():
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace, interrupt_before=["c"])
        cfg = {"configurable": {"thread_id": "paused-fork"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        paused = (await g.aget_state(cfg)).config
        fork = await g.aupdate_state(paused, {"value": "FORK"})
        await trace.run("fork run", g.ainvoke(None, fork))
        await trace.run("original run", g.ainvoke(None, paused))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["executions"]["c"] == 2


class GateState(TypedDict):
    value: str
    log: Annotated[list, operator.add]
    answer: str


def gated(api: Api, trace: Trace) -> object:
    """START → ask (interrupts) → done → END, plus an ``other`` node reachable by goto."""

    async def ask(state: GateState) -> dict:
        trace.ran("ask")
        answer = api.interrupt({"value": state["value"]})
        return {"answer": answer, "log": [f"ask got {answer} with value {state['value']}"]}

    async def done(state: GateState) -> dict:
        trace.ran("done")
        return {"log": ["done"]}

    async def other(state: GateState) -> dict:
        trace.ran("other")
        return {"log": [f"other saw {state['value']}"]}

    return (
        api.StateGraph(GateState)
        .add_node("ask", ask)
        .add_node("done", done)
        .add_node("other", other)
        .add_edge(api.START, "ask")
        .add_edge("ask", "done")
        .compile(checkpointer=api.MemorySaver())
    )


@pytest.mark.parametrize(
    "command",
    [
        {"resume": "yes", "update": {"value": "updated"}},
        {"update": {"value": "updated"}, "goto": "other"},
        {"resume": "yes", "goto": "other"},
    ],
    ids=["resume+update", "update+goto", "resume+goto"],
)
async def test_command_as_run_input(command):
    async def scenario(api: Api, trace: Trace) -> None:
        g = gated(api, trace)
        cfg = {"configurable": {"thread_id": "cmd"}}
        await trace.run("paused", g.ainvoke({"value": "v0", "log": [], "answer": ""}, cfg))
        await trace.run("command", g.ainvoke(api.Command(**command), cfg))
        trace.state("state", await g.aget_state(cfg))
        trace.history("history", await history(g, cfg))

    await acheck_parity(scenario)


async def test_answer_an_interrupt_through_its_checkpoint_config():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gated(api, trace)
        cfg = {"configurable": {"thread_id": "addressed-resume"}}
        await g.ainvoke({"value": "v0", "log": [], "answer": ""}, cfg)
        snap = await g.aget_state(cfg)
        await trace.run("resume", g.ainvoke(api.Command(resume="yes"), snap.config))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"ask": 2, "done": 1}


class Trail(TypedDict):
    trail: Annotated[list, operator.add]


@pytest.mark.parametrize("how", ["replay", "fork"])
async def test_a_stateful_subgraph_replays_with_the_state_it_had_then(how):
    # A subgraph compiled with checkpointer=True keeps its state across parent runs; replaying
    # (or forking) the parent from its first run must show the subgraph the state it had
    # then, not what later runs added.
    async def scenario(api: Api, trace: Trace) -> None:
        seen: list[list] = []

        async def step(state: Trail) -> dict:
            seen.append(list(state["trail"]))
            return {"trail": ["s"]}

        sub = (
            api.StateGraph(Trail)
            .add_node("step", step)
            .add_edge(api.START, "step")
            .compile(checkpointer=True)
        )
        g = (
            api.StateGraph(Trail)
            .add_node("first", lambda s: {"trail": ["p"]})
            .add_node("sub", sub)
            .add_edge(api.START, "first")
            .add_edge("first", "sub")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "sub-replay"}}
        await g.ainvoke({"trail": []}, cfg)
        await g.ainvoke({"trail": []}, cfg)
        first_run = [s for s in await history(g, cfg) if s.next == ("sub",)][-1]
        target = first_run.config
        if how == "fork":
            target = await g.aupdate_state(target, {"trail": ["forked"]})
        seen.clear()
        await trace.run("again", g.ainvoke(None, target))
        trace.note("the subgraph saw", seen)

    ours = await acheck_parity(scenario)
    # The parent's state as its input, on the subgraph's empty state of the first run.
    assert ours["the subgraph saw"] == [["p"] if how == "replay" else ["p", "forked"]]
