"""Failures on both libraries: RetryPolicy per node, and recursion_limit with the checkpoints
a stopped run leaves behind."""

from __future__ import annotations

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class CountState(TypedDict):
    n: int


def flaky_graph(api: Api, trace: Trace, errors: list[Exception], policy: object) -> object:
    """START → before → flaky → END; flaky raises ``errors`` in turn, then returns."""
    pending = list(errors)

    async def before(state: CountState) -> dict:
        trace.ran("before")
        return {"n": state["n"] + 1}

    async def flaky(state: CountState) -> dict:
        trace.ran("flaky")
        if pending:
            raise pending.pop(0)
        return {"n": state["n"] * 10}

    return (
        api.StateGraph(CountState)
        .add_node("before", before)
        .add_node("flaky", flaky, retry_policy=policy)
        .add_edge(api.START, "before")
        .add_edge("before", "flaky")
        .compile(checkpointer=api.MemorySaver())
    )


def quick(api: Api, **kwargs: object) -> object:
    """A RetryPolicy that waits 10 ms between attempts, without jitter."""
    return api.RetryPolicy(initial_interval=0.01, backoff_factor=1.0, jitter=False, **kwargs)


@pytest.mark.parametrize(
    ("case", "errors", "expected_flaky_runs"),
    [
        ("transient errors are retried", [ConnectionError("a"), ConnectionError("b")], 3),
        ("attempts run out", [ConnectionError(str(i)) for i in range(3)], 3),
        ("ValueError is not retried by default", [ValueError("bad")], 1),
    ],
)
async def test_retry_policy_with_the_default_retry_on(case, errors, expected_flaky_runs):
    async def scenario(api: Api, trace: Trace) -> None:
        g = flaky_graph(api, trace, errors, quick(api, max_attempts=3))
        cfg = {"configurable": {"thread_id": "retry"}}
        await trace.run("output", g.ainvoke({"n": 1}, cfg))
        trace.state("state", await g.aget_state(cfg))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"before": 1, "flaky": expected_flaky_runs}


@pytest.mark.parametrize(
    "retry_on",
    [KeyError, (KeyError, TimeoutError), lambda exc: "flaky" in str(exc)],
    ids=["class", "tuple", "predicate"],
)
async def test_retry_policy_with_a_custom_retry_on(retry_on):
    async def scenario(api: Api, trace: Trace) -> None:
        errors = [KeyError("flaky one"), KeyError("flaky two"), ValueError("not retried")]
        g = flaky_graph(api, trace, errors, quick(api, max_attempts=5, retry_on=retry_on))
        cfg = {"configurable": {"thread_id": "retry-on"}}
        await trace.run("output", g.ainvoke({"n": 1}, cfg))
        trace.state("state", await g.aget_state(cfg))
        await trace.run("resumed", g.ainvoke(None, cfg))

    ours = await acheck_parity(scenario)
    assert ours["output"]["raised"] == "ValueError"
    assert ours["resumed"] == {"n": 20}


# -- recursion_limit -------------------------------------------------------------------------


def counting_loop(api: Api, trace: Trace, stop_at: int) -> object:
    """START → tick → tick → … while n < stop_at."""

    async def tick(state: CountState) -> dict:
        trace.ran("tick")
        return {"n": state["n"] + 1}

    return (
        api.StateGraph(CountState)
        .add_node("tick", tick)
        .add_edge(api.START, "tick")
        .add_conditional_edges("tick", lambda s: "tick" if s["n"] < stop_at else api.END)
        .compile(checkpointer=api.MemorySaver())
    )


async def recursion_outcome(trace: Trace, label: str, awaitable) -> None:
    """Record a run's output, or the type of its error and the start of its message."""
    try:
        trace.note(label, await awaitable)
    except trace.api.GraphRecursionError as exc:
        # Both messages open with this sentence; what follows it differs in wording.
        trace.note(label, {"raised": type(exc).__name__, "says": str(exc).split(" without")[0]})


@pytest.mark.parametrize("limit", [3, 4, 5, 6])
async def test_recursion_limit_boundary(limit):
    """Four ticks: which limits let the run finish, and what a stopped run leaves behind."""

    async def scenario(api: Api, trace: Trace) -> None:
        g = counting_loop(api, trace, stop_at=4)
        cfg = {"configurable": {"thread_id": "loop"}, "recursion_limit": limit}
        await recursion_outcome(trace, "output", g.ainvoke({"n": 0}, cfg))
        trace.state("state", await g.aget_state(cfg))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    await acheck_parity(scenario)


async def test_recursion_error_then_resume_with_a_higher_limit():
    async def scenario(api: Api, trace: Trace) -> None:
        g = counting_loop(api, trace, stop_at=8)
        cfg = {"configurable": {"thread_id": "loop"}}
        await recursion_outcome(
            trace, "stopped", g.ainvoke({"n": 0}, {**cfg, "recursion_limit": 3})
        )
        await recursion_outcome(
            trace, "stopped again", g.ainvoke(None, {**cfg, "recursion_limit": 2})
        )
        await recursion_outcome(trace, "finished", g.ainvoke(None, {**cfg, "recursion_limit": 50}))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    ours = await acheck_parity(scenario)
    assert ours["finished"] == {"n": 8}
    assert ours["executions"] == {"tick": 8}
