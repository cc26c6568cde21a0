"""Reading and changing a thread on both libraries: update_state with and without as_node
(on the latest checkpoint, on an old one, on a fresh thread), get_state on a pinned
checkpoint, and get_state_history with filter / before / limit."""

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


def abc(api: Api, trace: Trace, *, parallel: bool = False) -> object:
    """START → a → b → c → END (or START → a, START → b, both → c when ``parallel``; then
    a and b write only ``log``)."""

    def make(name: str):
        async def node(state: State) -> dict:
            trace.ran(name)
            if parallel and name != "c":
                return {"log": [name]}
            return {"value": name, "log": [name]}

        return node

    builder = api.StateGraph(State)
    for name in "abc":
        builder.add_node(name, make(name))
    if parallel:
        builder.add_edge(api.START, "a").add_edge(api.START, "b")
        builder.add_edge("a", "c").add_edge("b", "c")
    else:
        builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c")
    builder.add_edge("c", api.END)
    return builder.compile(checkpointer=api.MemorySaver())


async def history(graph, config, **kwargs) -> list:
    """``aget_state_history`` as a list."""
    return [s async for s in graph.aget_state_history(config, **kwargs)]


async def at_step(graph, config, step: int) -> dict:
    """Config of the (first listed) checkpoint of ``step``."""
    for snap in await history(graph, config):
        if snap.metadata["step"] == step:
            return snap.config
    raise AssertionError(f"no checkpoint at step {step}")


@pytest.mark.parametrize("as_node", ["a", "b", "c"])
async def test_update_state_as_a_given_node_on_an_old_checkpoint(as_node):
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace)
        cfg = {"configurable": {"thread_id": "as-node"}}
        await trace.run("original", g.ainvoke({"value": "", "log": []}, cfg))
        old = await at_step(g, cfg, 1)
        new_cfg = await g.aupdate_state(old, {"value": "EDIT", "log": ["edit"]}, as_node=as_node)
        trace.state("fork", await g.aget_state(new_cfg))
        await trace.run("rerun", g.ainvoke(None, new_cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["fork"]["next"] == {"a": ("b",), "b": ("c",), "c": ()}[as_node]


async def test_update_state_twice_on_the_latest_checkpoint_and_pinned_get_state():
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace)
        cfg = {"configurable": {"thread_id": "twice"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        first = await g.aupdate_state(cfg, {"value": "one"})
        second = await g.aupdate_state(cfg, {"log": ["two"]}, as_node="b")
        trace.state("latest", await g.aget_state(cfg))
        trace.state("pinned first", await g.aget_state(first))
        trace.state("pinned second", await g.aget_state(second))
        await trace.run("run", g.ainvoke(None, cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["executions"]["c"] == 2


async def test_update_state_after_a_parallel_step_needs_as_node():
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace, parallel=True)
        cfg = {"configurable": {"thread_id": "ambiguous"}}
        await g.ainvoke({"value": "", "log": []}, cfg, interrupt_before=["c"])
        await trace.run("no as_node", g.aupdate_state(cfg, {"value": "x"}), message=False)
        await trace.run("as a", g.aupdate_state(cfg, {"value": "x"}, as_node="a"))
        trace.state("state", await g.aget_state(cfg))
        await trace.run("output", g.ainvoke(None, cfg))

    ours = await acheck_parity(scenario)
    assert ours["no as_node"] == {"raised": "InvalidUpdateError"}


@pytest.mark.parametrize("as_node", [None, "a", "c"])
async def test_update_state_on_a_fresh_thread(as_node):
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace)
        cfg = {"configurable": {"thread_id": "fresh"}}
        await trace.run("update", g.aupdate_state(cfg, {"value": "seed"}, as_node=as_node))
        trace.state("state", await g.aget_state(cfg))
        await trace.run("run", g.ainvoke(None, cfg))
        trace.history("history", await history(g, cfg))

    await acheck_parity(scenario)


async def test_get_state_history_filter_before_limit():
    async def scenario(api: Api, trace: Trace) -> None:
        g = abc(api, trace)
        cfg = {"configurable": {"thread_id": "listing"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        step1 = await at_step(g, cfg, 1)
        await g.aupdate_state(step1, {"value": "fork"})
        step3 = await at_step(g, cfg, 3)
        for label, kwargs in {
            "all": {},
            "limit 2": {"limit": 2},
            "source loop": {"filter": {"source": "loop"}},
            "source update": {"filter": {"source": "update"}},
            "step 2": {"filter": {"step": 2}},
            "step 2 and loop": {"filter": {"step": 2, "source": "loop"}},
            "no match": {"filter": {"source": "nothing"}},
            "before step 3": {"before": step3},
            "before step 1": {"before": step1},
            "before step 3, limit 2": {"before": step3, "limit": 2},
            "before step 3, loop": {"before": step3, "filter": {"source": "loop"}},
        }.items():
            trace.history(label, await history(g, cfg, **kwargs))

    ours = await acheck_parity(scenario)
    assert [c["step"] for c in ours["limit 2"]["checkpoints"]] == [2, 3]
