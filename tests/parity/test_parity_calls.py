"""Node and branch call conventions on both libraries: run-time values are given by parameter
*name* (``config``, ``writer``, ``store``, ``runtime``), never by position; callable objects
and runnables are nodes too; ``get_config()`` works inside a node."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    topic: str
    log: Annotated[list, operator.add]


def get_config(api: Api) -> Any:
    """``get_config`` from the library under test."""
    if api.name == "langgraph":
        from langgraph.config import get_config as lg_get_config

        return lg_get_config
    import durable_debug

    return durable_debug.get_config


def run_config(trace: Trace, config: dict) -> dict:
    """What a node sees of its config that users read: their keys and LangGraph's metadata."""
    metadata = config["metadata"]
    node, _, task = metadata["langgraph_checkpoint_ns"].partition(":")
    return {
        "user": config["configurable"].get("user"),
        "thread": config["configurable"]["thread_id"],
        "node": metadata["langgraph_node"],
        "step": metadata["langgraph_step"],
        "triggers": tuple(metadata["langgraph_triggers"]),
        "path": tuple(metadata["langgraph_path"]),
        "ns": (node, trace.label("t", task)),
    }


async def test_closure_defaults_in_a_loop_receive_only_the_state():
    async def scenario(api: Api, trace: Trace) -> None:
        g = api.StateGraph(State)
        names = ["a", "b", "c"]
        for i, name in enumerate(names):
            if i == 1:

                async def node(s: State, i: int = i) -> dict:
                    return {"log": [f"async {i} saw {len(s['log'])}"]}

                g.add_node(name, node)
            else:
                g.add_node(name, lambda s, k=name: {"log": [f"lambda {k} saw {len(s['log'])}"]})
        g.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c")
        compiled = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "loop"}}
        await trace.run("run", compiled.ainvoke({"topic": "t", "log": []}, cfg))

    ours = await acheck_parity(scenario)
    assert ours["run"]["log"] == ["lambda a saw 0", "async 1 saw 1", "lambda c saw 2"]


def test_config_by_keyword_only_parameter_and_get_config():
    def scenario(api: Api, trace: Trace) -> None:
        def by_keyword(state: State, *, config) -> dict:
            trace.note("keyword-only", run_config(trace, config))
            return {"log": ["kw"]}

        def by_name(state: State, config) -> dict:
            trace.note("positional name", run_config(trace, config))
            return {"log": ["pos"]}

        def by_call(state: State) -> dict:
            trace.note("get_config()", run_config(trace, get_config(api)()))
            return {"log": ["call"]}

        g = (
            api.StateGraph(State)
            .add_node("kw", by_keyword)
            .add_node("pos", by_name)
            .add_node("call", by_call)
            .add_edge(api.START, "kw")
            .add_edge("kw", "pos")
            .add_edge("pos", "call")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "cfg", "user": "ada"}}
        trace.call("run", g.invoke, {"topic": "t", "log": []}, cfg)

    ours = check_parity(scenario)
    assert ours["get_config()"]["node"] == "call"
    assert ours["keyword-only"]["user"] == "ada"


async def test_a_branch_that_takes_the_config():
    async def scenario(api: Api, trace: Trace) -> None:
        def route(state: State, config) -> str:
            return config["configurable"]["go"]

        async def aroute(state: State, *, config) -> list[str]:
            return [config["configurable"]["go"]]

        def step(name: str):
            return lambda s: {"log": [name]}

        for label, path in (("sync", route), ("async", aroute)):
            g = (
                api.StateGraph(State)
                .add_node("start", step("start"))
                .add_node("left", step("left"))
                .add_node("right", step("right"))
                .add_edge(api.START, "start")
                .add_conditional_edges("start", path, ["left", "right"])
                .compile(checkpointer=api.MemorySaver())
            )
            cfg = {"configurable": {"thread_id": label, "go": "right"}}
            await trace.run(label, g.ainvoke({"topic": "t", "log": []}, cfg))

    ours = await acheck_parity(scenario)
    assert ours["async"]["log"] == ["start", "right"]


class Shout:
    """A callable object as a node: named after its class."""

    def __init__(self, suffix: str) -> None:
        self.suffix = suffix

    def __call__(self, state: State, config) -> dict:
        return {
            "log": [state["topic"].upper() + self.suffix + config["metadata"]["langgraph_node"]]
        }


class Whisper:
    """An object whose ``__call__`` is a coroutine function."""

    async def __call__(self, state: State) -> dict:
        return {"log": [state["topic"].lower()]}


async def test_callable_objects_and_runnables_as_nodes():
    from langchain_core.runnables import RunnableLambda

    async def scenario(api: Api, trace: Trace) -> None:
        def echo(state: dict) -> dict:
            return {"log": [f"runnable saw {len(state['log'])}"]}

        g = (
            api.StateGraph(State)
            .add_node(Shout("!"))
            .add_node(Whisper())
            .add_node("echo", RunnableLambda(echo))
            .add_edge(api.START, "Shout")
            .add_edge("Shout", "Whisper")
            .add_edge("Whisper", "echo")
            .compile(checkpointer=api.MemorySaver())
        )
        trace.note("nodes", sorted(g.get_graph().nodes))
        cfg = {"configurable": {"thread_id": "objects"}}
        await trace.run("run", g.ainvoke({"topic": "Hi", "log": []}, cfg))

    ours = await acheck_parity(scenario)
    assert ours["run"]["log"] == ["HI!Shout", "hi", "runnable saw 2"]
