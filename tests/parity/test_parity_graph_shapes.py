"""Graph shapes on both libraries: conditional edges, joins, add_sequence, Command from a
node, and dataclass / pydantic state schemas."""

from __future__ import annotations

import asyncio
import dataclasses
import operator
from typing import Annotated

import pydantic
import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class LogState(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def logger(trace: Trace, name: str, *, delay: float = 0.0, bump: int = 0):
    """A node that appends its name to ``log`` (after ``delay``) and adds ``bump`` to n."""

    async def node(state: LogState) -> dict:
        trace.ran(name)
        await asyncio.sleep(delay)
        update: dict = {"log": [name]}
        if bump:
            update["n"] = state["n"] + bump
        return update

    return node


async def run_and_record(trace: Trace, graph, inputs: dict, thread: str) -> None:
    """Invoke ``graph`` on a new thread; record the output and the history."""
    cfg = {"configurable": {"thread_id": thread}}
    await trace.run(f"{thread}: output", graph.ainvoke(inputs, cfg))
    trace.history(f"{thread}: history", [s async for s in graph.aget_state_history(cfg)])


# -- conditional edges ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 5])
async def test_conditional_edge_returning_a_name(n):
    async def scenario(api: Api, trace: Trace) -> None:
        def route(state: LogState) -> str:
            return "big" if state["n"] > 2 else "small"

        g = (
            api.StateGraph(LogState)
            .add_node("check", logger(trace, "check"))
            .add_node("big", logger(trace, "big"))
            .add_node("small", logger(trace, "small"))
            .add_edge(api.START, "check")
            .add_conditional_edges("check", route)
            .add_edge("big", api.END)
            .add_edge("small", api.END)
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": n, "log": []}, "name")

    ours = await acheck_parity(scenario)
    assert ours["name: output"]["log"] == ["check", "big" if n else "small"]


async def test_conditional_edge_returning_a_list_runs_in_parallel():
    async def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(LogState)
            .add_node("check", logger(trace, "check"))
            .add_node("x", logger(trace, "x", delay=0.03))
            .add_node("y", logger(trace, "y"))
            .add_node("after", logger(trace, "after"))
            .add_edge(api.START, "check")
            .add_conditional_edges("check", lambda s: ["y", "x"])
            .add_edge("x", "after")
            .add_edge("y", "after")
            .add_edge("after", api.END)
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": 0, "log": []}, "list")

    ours = await acheck_parity(scenario)
    # two edges into "after" (not a join): it runs once, in the step after x and y
    assert ours["executions"]["after"] == 1


async def test_next_of_a_parallel_step_lists_nodes_in_graph_order():
    """Nodes added zeta, beta, alpha and picked in yet another order: ``next`` and
    ``tasks`` of the paused step list them in one order, the writes apply in another."""

    async def scenario(api: Api, trace: Trace) -> None:
        builder = api.StateGraph(LogState)
        for name in ("zeta", "beta", "alpha", "first"):
            builder.add_node(name, logger(trace, name))
        builder.add_edge(api.START, "first")
        builder.add_conditional_edges("first", lambda s: ["beta", "zeta", "alpha"])
        g = builder.compile(checkpointer=api.MemorySaver(), interrupt_before=["zeta"])
        cfg = {"configurable": {"thread_id": "order"}}
        await trace.run("paused", g.ainvoke({"n": 0, "log": []}, cfg))
        trace.state("next", await g.aget_state(cfg))
        await trace.run("output", g.ainvoke(None, cfg))

    ours = await acheck_parity(scenario)
    assert ours["output"]["log"] == ["first", "alpha", "beta", "zeta"]


@pytest.mark.parametrize("n", [1, 7])
async def test_conditional_edge_with_a_path_map_and_end(n):
    async def scenario(api: Api, trace: Trace) -> None:
        def is_big(state: LogState) -> bool:
            return state["n"] > 3

        g = (
            api.StateGraph(LogState)
            .add_node("grow", logger(trace, "grow", bump=2))
            .add_edge(api.START, "grow")
            .add_conditional_edges("grow", is_big, {True: api.END, False: "grow"})
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": n, "log": []}, "map")

    ours = await acheck_parity(scenario)
    assert ours["map: output"]["n"] > 3


async def test_conditional_entry_point_returning_sends_and_a_name():
    async def scenario(api: Api, trace: Trace) -> None:
        def route(state: LogState) -> list:
            return [
                api.Send("w", {"n": 10, "log": []}),
                "solo",
                api.Send("w", {"n": 20, "log": []}),
            ]

        async def w(state: dict) -> dict:
            trace.ran(f"w{state['n']}")
            return {"log": [f"w{state['n']}"]}

        g = (
            api.StateGraph(LogState)
            .add_node("w", w)
            .add_node("solo", logger(trace, "solo"))
            .add_conditional_edges(api.START, route, ["w", "solo"])
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": 0, "log": []}, "send")

    await acheck_parity(scenario)


# -- joins and sequences ----------------------------------------------------------------------


async def test_join_waits_for_every_source():
    async def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(LogState)
            .add_node("a", logger(trace, "a"))
            .add_node("b", logger(trace, "b"))
            .add_node("b2", logger(trace, "b2"))
            .add_node("c", logger(trace, "c"))
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .add_edge("b", "b2")
            .add_edge(["a", "b2"], "c")
            .add_edge("c", api.END)
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": 0, "log": []}, "join")

    ours = await acheck_parity(scenario)
    assert ours["join: output"]["log"] == ["a", "b", "b2", "c"]
    assert ours["executions"] == {"a": 1, "b": 1, "b2": 1, "c": 1}


async def test_a_join_to_end():
    """A join may end at END (drawn only: the run ends when nothing is left)."""

    async def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(LogState)
            .add_node("a", logger(trace, "a"))
            .add_node("b", logger(trace, "b"))
            .add_node("c", logger(trace, "c"))
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .add_edge("a", "c")
            .add_edge(["b", "c"], api.END)
            .compile(checkpointer=api.MemorySaver())
        )
        trace.note("edges", sorted(tuple(e) for e in g.get_graph().edges))
        await run_and_record(trace, g, {"n": 0, "log": []}, "joins")

    ours = await acheck_parity(scenario)
    assert ours["joins: output"]["log"] == ["a", "b", "c"]


async def test_add_sequence_with_functions_and_named_pairs():
    async def scenario(api: Api, trace: Trace) -> None:
        async def first(state: LogState) -> dict:
            trace.ran("first")
            return {"log": ["first"]}

        g = (
            api.StateGraph(LogState)
            .add_sequence(
                [first, ("second", logger(trace, "second")), ("third", logger(trace, "third"))]
            )
            .add_edge(api.START, "first")
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": 0, "log": []}, "seq")

    ours = await acheck_parity(scenario)
    assert ours["seq: output"]["log"] == ["first", "second", "third"]


# -- Command from a node ----------------------------------------------------------------------


@pytest.mark.parametrize("goto", ["one", "list", "send", "end"])
async def test_command_goto_and_update_from_a_node(goto):
    async def scenario(api: Api, trace: Trace) -> None:
        targets = {
            "one": "left",
            "list": ["right", "left"],
            "send": api.Send("right", {"n": 99, "log": []}),
            "end": api.END,
        }

        async def decide(state: LogState):
            trace.ran("decide")
            return api.Command(update={"n": 42, "log": ["decide"]}, goto=targets[goto])

        async def right(state: LogState) -> dict:
            trace.ran("right")
            return {"log": [f"right saw {state['n']}"]}

        g = (
            api.StateGraph(LogState)
            .add_node("decide", decide, destinations=("left", "right"))
            .add_node("left", logger(trace, "left"))
            .add_node("right", right)
            .add_edge(api.START, "decide")
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": 0, "log": []}, goto)

    ours = await acheck_parity(scenario)
    assert ours[f"{goto}: output"]["n"] == 42


async def test_command_goto_plus_static_edge_runs_both():
    async def scenario(api: Api, trace: Trace) -> None:
        async def decide(state: LogState):
            trace.ran("decide")
            return api.Command(update={"log": ["decide"]}, goto="left")

        g = (
            api.StateGraph(LogState)
            .add_node("decide", decide)
            .add_node("left", logger(trace, "left"))
            .add_node("right", logger(trace, "right"))
            .add_edge(api.START, "decide")
            .add_edge("decide", "right")
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"n": 0, "log": []}, "both")

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"decide": 1, "left": 1, "right": 1}


# -- state schemas ----------------------------------------------------------------------------


@dataclasses.dataclass
class DataState:
    topic: str
    notes: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
    verdict: str = "none"


class ModelState(pydantic.BaseModel):
    topic: str
    notes: Annotated[list, operator.add] = []
    verdict: str = "none"


@pytest.mark.parametrize("schema", [DataState, ModelState], ids=["dataclass", "pydantic"])
async def test_dataclass_and_pydantic_state(schema):
    async def scenario(api: Api, trace: Trace) -> None:
        async def research(state) -> dict:
            trace.ran("research")
            trace.note("research received", type(state).__name__)
            return {"notes": [f"about {state.topic}"]}

        async def judge(state) -> dict:
            trace.ran("judge")
            return {"verdict": f"{len(state.notes)} note(s), verdict was {state.verdict}"}

        g = (
            api.StateGraph(schema)
            .add_node("research", research)
            .add_node("judge", judge)
            .add_edge(api.START, "research")
            .add_edge("research", "judge")
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"topic": "owls"}, "schema")

    ours = await acheck_parity(scenario)
    assert ours["research received"] == schema.__name__
    assert ours["schema: output"]["verdict"] == "1 note(s), verdict was none"


class Pair(TypedDict):
    a: int
    b: int


async def test_a_dict_of_runnables_as_a_node():
    """``add_node(name, {key: runnable})`` runs the runnables side by side on the state and
    writes each result to its key (LangChain's RunnableParallel), as in LangGraph."""
    from langchain_core.runnables import RunnableLambda

    async def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(Pair)
            .add_node("p", {"a": RunnableLambda(lambda s: s["a"] + 1), "b": lambda s: s["a"] * 10})
            .add_edge(api.START, "p")
            .compile(checkpointer=api.MemorySaver())
        )
        await run_and_record(trace, g, {"a": 1, "b": 0}, "parallel")

    ours = await acheck_parity(scenario)
    assert ours["parallel: output"] == {"a": 2, "b": 10}
