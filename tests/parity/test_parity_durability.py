"""``durability="async"`` (LangGraph's default, and ours) against LangGraph: the same results,
states, histories and streams as with ``"sync"``, on the memory saver and on PostgreSQL (whose
step queue saves a step while the next one runs; LangGraph's side uses its memory saver); and
``"exit"``, which saves only the checkpoint each run ends on, with its writes, as LangGraph.

Scenarios: a chain, a fan-out with ``Send`` and a join, an interrupt answered with
``Command(resume=...)``, a node that fails once and is resumed, and a subgraph node.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, durable_api
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]
    answer: str


def thread(name: str) -> dict:
    return {"configurable": {"thread_id": name}}


def options(durability: str | None) -> dict[str, Any]:
    return {} if durability is None else {"durability": durability}


def graph(api: Api, trace: Trace) -> Any:
    """start → (sub: s1 → s2) → fan out three ``work`` → ask (interrupt) → flaky (fails the
    first time it runs)."""
    failures = {"flaky": 1}

    def record(name: str) -> Any:
        def node(state: State) -> dict:
            trace.ran(name)
            return {"log": [name]}

        return node

    def ask(state: State) -> dict:
        trace.ran("ask")
        return {"answer": api.interrupt("ok?"), "log": ["ask"]}

    def flaky(state: State) -> dict:
        trace.ran("flaky")
        if failures["flaky"]:
            failures["flaky"] -= 1
            raise RuntimeError("transient")
        return {"log": ["flaky"]}

    sub = (
        api.StateGraph(State)
        .add_node("s1", record("s1"))
        .add_node("s2", record("s2"))
        .add_edge(api.START, "s1")
        .add_edge("s1", "s2")
        .compile()
    )
    return (
        api.StateGraph(State)
        .add_node("start", record("start"))
        .add_node("sub", sub)
        .add_node("work", record("work"))
        .add_node("join", record("join"))
        .add_node("ask", ask)
        .add_node("flaky", flaky)
        .add_edge(api.START, "start")
        .add_edge("start", "sub")
        .add_conditional_edges("sub", lambda s: [api.Send("work", s) for _ in range(3)])
        .add_edge("work", "join")
        .add_edge("join", "ask")
        .add_edge("ask", "flaky")
        .compile(checkpointer=api.MemorySaver())
    )


def chain(api: Api, trace: Trace) -> Any:
    builder = api.StateGraph(State)
    names = [f"n{i}" for i in range(5)]
    for name in names:

        def node(state: State, name: str = name) -> dict:
            trace.ran(name)
            return {"log": [name]}

        builder.add_node(name, node)
    builder.add_edge(api.START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder.compile(checkpointer=api.MemorySaver())


def scenario_for(durability: str | None) -> Any:
    async def scenario(api: Api, trace: Trace) -> None:
        opts = options(durability)
        g = chain(api, trace)
        await trace.run("chain", g.ainvoke({"log": [], "answer": ""}, thread("c"), **opts))
        trace.history("chain history", [s async for s in g.aget_state_history(thread("c"))])
        chunks = g.astream(
            {"log": [], "answer": ""}, thread("s"), stream_mode=["updates", "values"], **opts
        )
        trace.note("chain stream", [chunk async for chunk in chunks])
        trace.history("stream history", [s async for s in g.aget_state_history(thread("s"))])

        g = graph(api, trace)
        cfg = thread("g")
        await trace.run("first", g.ainvoke({"log": [], "answer": ""}, cfg, **opts))
        trace.state("paused", await g.aget_state(cfg))
        await trace.run("answered", g.ainvoke(api.Command(resume="yes"), cfg, **opts))
        trace.state("failed", await g.aget_state(cfg))
        await trace.run("resumed", g.ainvoke(None, cfg, **opts))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    return scenario


@pytest.mark.parametrize("durability", ["async", None, "sync", "exit"])
async def test_async_durability_matches_langgraph(durability):
    ours = await acheck_parity(scenario_for(durability))
    assert ours["resumed"]["log"][-1] == "flaky"


@pytest.fixture
def postgres_api(postgres_db: str) -> Iterator[Api]:
    """durable_debug's names with a PostgresSaver (one schema per test) as ``MemorySaver``."""
    from durable_debug import PostgresSaver

    saver = PostgresSaver(postgres_db)
    try:
        yield dataclasses.replace(durable_api(), MemorySaver=lambda: saver)
    finally:
        saver.close()


@pytest.mark.postgres
@pytest.mark.parametrize("durability", ["async", None, "exit"])
async def test_async_durability_on_postgres_matches_langgraph(durability, postgres_api):
    await acheck_parity(scenario_for(durability), api=postgres_api)


@pytest.mark.parametrize("durability", ["async", "exit"])
async def test_debug_checkpoints_and_a_reused_task_call(durability):
    # Under "exit" nothing is saved on the way, so each debug checkpoint names the parent the
    # loaded checkpoint had; on resume a @task call whose result was saved is reported as
    # started (not as finished), as LangGraph reports it.
    async def scenario(api: Api, trace: Trace) -> None:
        if api.name == "langgraph":
            from langgraph.func import entrypoint, task
        else:
            from durable_debug.func import entrypoint, task

        @task
        def double(x: int) -> int:
            trace.ran("double")
            return 2 * x

        @entrypoint(checkpointer=api.MemorySaver())
        def flow(x: int) -> int:
            y = double(x).result()
            return y + int(api.interrupt("more?"))

        def shown(events: list[dict]) -> list[Any]:
            return [
                (
                    e["type"],
                    e["payload"].get("name"),
                    trace.checkpoint_label(e["payload"].get("parent_config")),
                )
                for e in events
            ]

        cfg = {"configurable": {"thread_id": "t"}}
        for label, given in (("first", 1), ("resumed", api.Command(resume="5"))):
            events = [
                e
                async for e in flow.astream(given, cfg, stream_mode="debug", durability=durability)
            ]
            trace.note(label, shown(events))

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"double": 1}
