"""The rest of the run API LangGraph code uses: ``with_config``, ``batch`` / ``abatch``,
``durability=``, a list of ``RetryPolicy``, and ``NodeInterrupt`` pausing the run."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def counter(api: Api, trace: Trace) -> Any:
    """START → double (fails on a negative n, after logging)."""

    def double(state: State, config) -> dict:
        trace.ran("double")
        if state["n"] < 0:
            raise ValueError(f"negative n {state['n']}")
        tag = config["configurable"].get("tag", "-")
        return {"n": state["n"] * 2, "log": [tag]}

    return (
        api.StateGraph(State)
        .add_node("double", double)
        .add_edge(api.START, "double")
        .compile(checkpointer=api.MemorySaver())
    )


def thread(name: str, **configurable: Any) -> dict:
    return {"configurable": {"thread_id": name, **configurable}}


def test_with_config_binds_config_under_each_call():
    def scenario(api: Api, trace: Trace) -> None:
        g = counter(api, trace)
        bound = g.with_config(thread("bound", tag="bound"))
        trace.call("bound", bound.invoke, {"n": 1, "log": []})
        trace.call("merged", bound.invoke, {"n": 2, "log": []}, {"configurable": {"tag": "mine"}})
        trace.note("state", g.get_state(thread("bound")).values)
        kw = g.with_config(configurable={"thread_id": "kw", "tag": "kw"})
        trace.call("keyword", kw.invoke, {"n": 3, "log": []})

    ours = check_parity(scenario)
    assert ours["merged"] == {"n": 4, "log": ["bound", "mine"]}


async def test_batch_and_abatch():
    async def scenario(api: Api, trace: Trace) -> None:
        g = counter(api, trace)
        inputs = [{"n": 1, "log": []}, {"n": 5, "log": []}]
        trace.call("batch", g.batch, inputs, [thread("b1"), thread("b2", tag="two")])
        configs = [thread("a1"), thread("a2")]
        await trace.run("abatch", g.abatch(inputs, configs))
        bad = [{"n": 1, "log": []}, {"n": -1, "log": []}]
        results = await g.abatch(bad, [thread("e1"), thread("e2")], return_exceptions=True)
        trace.note("return_exceptions", results)
        trace.call("raised", g.batch, bad, [thread("r1"), thread("r2")])

    ours = await acheck_parity(scenario)
    assert ours["batch"] == [{"n": 2, "log": ["-"]}, {"n": 10, "log": ["two"]}]


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_durability_sync_and_async_save_every_step(durability):
    def scenario(api: Api, trace: Trace) -> None:
        g = counter(api, trace)
        cfg = thread("d")
        trace.call("run", g.invoke, {"n": 1, "log": []}, cfg, durability=durability)
        trace.history("history", g.get_state_history(cfg))

    check_parity(scenario)


def test_a_list_of_retry_policies_first_match_decides():
    def scenario(api: Api, trace: Trace) -> None:
        failures = {"flaky": 0}

        def flaky(state: State) -> dict:
            trace.ran("flaky")
            failures["flaky"] += 1
            if failures["flaky"] < 3:
                raise ConnectionError("try again")
            if failures["flaky"] < 5:
                raise KeyError("other policy")
            return {"log": ["ok"]}

        policies = [
            api.RetryPolicy(retry_on=ConnectionError, initial_interval=0.001, jitter=False),
            api.RetryPolicy(
                retry_on=KeyError, max_attempts=5, initial_interval=0.001, jitter=False
            ),
        ]
        g = (
            api.StateGraph(State)
            .add_node("flaky", flaky, retry_policy=policies)
            .add_edge(api.START, "flaky")
            .compile(checkpointer=api.MemorySaver())
        )
        trace.call("run", g.invoke, {"n": 0, "log": []}, thread("retry"))

    ours = check_parity(scenario)
    assert ours["executions"] == {"flaky": 5}


def node_interrupt(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.errors import NodeInterrupt

        return NodeInterrupt
    import durable_debug

    return durable_debug.NodeInterrupt


def test_node_interrupt_pauses_the_run_until_the_state_is_fixed():
    def scenario(api: Api, trace: Trace) -> None:
        NodeInterrupt = node_interrupt(api)

        def check(state: State) -> dict:
            trace.ran("check")
            if state["n"] > 2:
                raise NodeInterrupt(f"n is too big: {state['n']}")
            return {"log": ["checked"]}

        g = (
            api.StateGraph(State)
            .add_node("check", check)
            .add_edge(api.START, "check")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = thread("ni")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace.call("paused", g.invoke, {"n": 5, "log": []}, cfg)
            trace.state("snapshot", g.get_state(cfg))
            trace.call("still paused", g.stream, None, cfg, stream_mode="updates")
            g.update_state(cfg, {"n": 1})
            trace.call("fixed", g.invoke, None, cfg)

    ours = check_parity(scenario)
    assert ours["fixed"] == {"n": 1, "log": ["checked"]}


@pytest.mark.parametrize("state", ["one value", "output_keys"])
def test_invoke_of_a_paused_run_that_is_not_a_dict_gives_only_the_interrupts(state):
    # A one-value state, or output_keys naming one key: the result is not a dict, so a paused
    # run returns {"__interrupt__": [...]} alone, as LangGraph does.
    def scenario(api: Api, trace: Trace) -> None:
        def ask(s: Any) -> Any:
            api.interrupt("why?")
            return ["x"] if state == "one value" else {"log": ["x"]}

        if state == "one value":
            builder = api.StateGraph(Annotated[list, operator.add])
            first, kwargs = ["0"], {}
        else:
            builder = api.StateGraph(Logged)
            first, kwargs = {"log": ["0"]}, {"output_keys": "log"}
        g = builder.add_node("ask", ask).add_edge(api.START, "ask")
        g = g.compile(checkpointer=api.MemorySaver())
        for durability in ("async", "exit"):
            cfg = {"configurable": {"thread_id": durability}}
            trace.call(durability, g.invoke, first, cfg, durability=durability, **kwargs)

    ours = check_parity(scenario)
    assert set(ours["async"]) == {"__interrupt__"}


class Logged(TypedDict):
    log: Annotated[list, operator.add]
