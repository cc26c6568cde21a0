"""Node timeouts on both libraries: ``add_node(timeout=...)``, ``set_node_defaults(timeout=...)``,
``@task(timeout=...)`` and ``@entrypoint(timeout=...)`` cancel an attempt that never finishes
with ``NodeTimeoutError`` (retried like any error), a heartbeat keeps an idle timeout from
firing, synchronous code with a timeout and a timeout not above zero are refused when declared,
and a node raising ``asyncio.CancelledError`` itself fails with ``NodeCancelledError``.

The nodes that time out wait on an event nobody sets, so only the timeout can end them."""

from __future__ import annotations

import asyncio
import importlib
import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    x: int


class Log(TypedDict, total=False):
    vals: Annotated[list[str], operator.add]


def _names(api: Api) -> tuple[Any, Any, Any]:
    errors = importlib.import_module(f"{api.name}.errors")
    types = importlib.import_module(f"{api.name}.types")
    func = importlib.import_module(f"{api.name}.func")
    return errors, types, func


async def _forever() -> None:
    await asyncio.Event().wait()


def _timeout_seen(exc: Any) -> dict[str, Any]:
    return {
        "type": type(exc).__name__,
        "node": exc.node,
        "kind": exc.kind,
        "timeout": exc.timeout,
        "run_timeout": exc.run_timeout,
        "idle_timeout": exc.idle_timeout,
    }


async def test_a_node_past_its_timeout_fails_and_is_retried():
    async def scenario(api: Api, trace: Trace) -> None:
        errors, types, _ = _names(api)
        attempts: list[int] = []

        async def hangs(state: State) -> dict:
            await _forever()
            return {"x": 0}

        async def hangs_once(state: State) -> dict:
            attempts.append(len(attempts))
            if len(attempts) == 1:
                await _forever()
            return {"x": state["x"] + 1}

        for label, policy in (
            ("run", types.TimeoutPolicy(run_timeout=0.05)),
            ("idle", types.TimeoutPolicy(idle_timeout=0.05)),
            ("seconds", 0.05),
        ):
            graph = (
                api.StateGraph(State)
                .add_node("hangs", hangs, timeout=policy)
                .add_edge(api.START, "hangs")
                .compile()
            )
            with pytest.raises(errors.NodeTimeoutError) as caught:
                await graph.ainvoke({"x": 1})
            trace.note(label, _timeout_seen(caught.value))
        retried = (
            api.StateGraph(State)
            .add_node(
                "flaky",
                hangs_once,
                timeout=types.TimeoutPolicy(idle_timeout=0.05),
                retry_policy=api.RetryPolicy(initial_interval=0.0, jitter=False),
            )
            .add_edge(api.START, "flaky")
            .compile()
        )
        trace.note("retried", (await retried.ainvoke({"x": 0}), len(attempts)))
        defaulted = (
            api.StateGraph(State)
            .set_node_defaults(timeout=types.TimeoutPolicy(run_timeout=0.05))
            .add_node("hangs", hangs)
            .add_edge(api.START, "hangs")
            .compile()
        )
        with pytest.raises(errors.NodeTimeoutError) as caught:
            await defaulted.ainvoke({"x": 1})
        trace.note("default", _timeout_seen(caught.value))

    ours = await acheck_parity(scenario)
    assert ours["idle"]["kind"] == "idle" and ours["run"]["kind"] == "run"
    assert ours["retried"] == ({"x": 1}, 2)


async def test_heartbeats_keep_an_idle_timeout_from_firing():
    async def scenario(api: Api, trace: Trace) -> None:
        _, types, _ = _names(api)

        async def beats(state: State, runtime: Any) -> dict:
            for _ in range(30):  # 0.6 s in all, three times the idle timeout
                runtime.heartbeat()
                await asyncio.sleep(0.02)
            return {"x": state["x"] + 1}

        graph = (
            api.StateGraph(State)
            .add_node(
                "beats",
                beats,
                timeout=types.TimeoutPolicy(idle_timeout=0.2, refresh_on="heartbeat"),
            )
            .add_edge(api.START, "beats")
            .compile()
        )
        trace.note("result", await graph.ainvoke({"x": 1}))

    ours = await acheck_parity(scenario)
    assert ours["result"] == {"x": 2}


async def test_task_and_entrypoint_timeouts():
    async def scenario(api: Api, trace: Trace) -> None:
        errors, types, func = _names(api)

        @func.task(timeout=types.TimeoutPolicy(idle_timeout=0.05))
        async def slow_task(x: int) -> int:
            await _forever()
            return x

        @func.entrypoint()
        async def calls_task(x: int) -> int:
            return await slow_task(x)

        @func.entrypoint(timeout=0.05)
        async def slow_entry(x: int) -> int:
            await _forever()
            return x

        for label, graph in (("task", calls_task), ("entrypoint", slow_entry)):
            with pytest.raises(errors.NodeTimeoutError) as caught:
                await graph.ainvoke(1)
            trace.note(label, _timeout_seen(caught.value))

    ours = await acheck_parity(scenario)
    assert ours["task"]["node"] == "slow_task"
    assert ours["entrypoint"]["node"] == "slow_entry"


def test_declaring_a_timeout_on_sync_code_or_not_above_zero_is_refused():
    def scenario(api: Api, trace: Trace) -> None:
        _, types, func = _names(api)

        def sync_node(state: State) -> dict:
            return state

        def refused(make: Any) -> str:
            try:
                make()
            except ValueError as exc:
                return "refused: " + (
                    "async only" if "only supported for async nodes" in str(exc) else "> 0"
                )
            return "accepted"

        builder = api.StateGraph(State).add_node(
            "n", sync_node, timeout=types.TimeoutPolicy(run_timeout=1)
        )
        trace.note("sync node", refused(lambda: builder.add_edge(api.START, "n").compile()))
        trace.note("sync task", refused(lambda: func.task(timeout=1)(sync_node)))
        trace.note("sync entrypoint", refused(lambda: func.entrypoint(timeout=1)(sync_node)))
        trace.note("task(timeout=0)", refused(lambda: func.task(timeout=0)))
        trace.note("entrypoint(timeout=0)", refused(lambda: func.entrypoint(timeout=0)))
        trace.note(
            "add_node(timeout=0)",
            refused(lambda: api.StateGraph(State).add_node("n", sync_node, timeout=0)),
        )

    ours = check_parity(scenario)
    assert ours["sync node"] == "refused: async only"
    assert ours["task(timeout=0)"] == "refused: > 0"


async def test_a_node_raising_cancelled_error_fails_the_run():
    async def scenario(api: Api, trace: Trace) -> None:
        errors, _, _ = _names(api)

        async def ok(state: Log) -> dict:
            return {"vals": ["ok"]}

        async def boom(state: Log) -> dict:
            raise asyncio.CancelledError("raised by the node")

        graph = (
            api.StateGraph(Log)
            .add_node("ok", ok)
            .add_node("boom", boom)
            .add_edge(api.START, "ok")
            .add_edge(api.START, "boom")
            .compile()
        )
        with pytest.raises(errors.NodeCancelledError) as caught:
            await graph.ainvoke({"vals": []})
        trace.note("error", (type(caught.value).__name__, caught.value.node, str(caught.value)))

    await acheck_parity(scenario)


async def test_step_timeout_counts_the_consumers_time_and_cancels_the_step():
    async def scenario(api: Api, trace: Trace) -> None:
        cancelled: list[str] = []

        async def hangs(state: State) -> dict:
            try:
                await _forever()
            except asyncio.CancelledError:
                cancelled.append("hangs")
                raise
            return {"x": 0}

        async def quick(state: State) -> dict:
            return {"x": 1}

        builder = api.StateGraph(State).add_node("hangs", hangs).add_node("quick", quick)
        graph = builder.add_edge(api.START, "hangs").add_edge(api.START, "quick").compile()
        graph.step_timeout = 0.2
        chunks = []
        with pytest.raises(asyncio.TimeoutError):
            async for chunk in graph.astream({"x": 0}, stream_mode="updates"):
                chunks.append(chunk)
                await asyncio.sleep(0.3)  # past the step's deadline before asking for more
        trace.note("seen", (chunks, cancelled))

    ours = await acheck_parity(scenario)
    assert ours["seen"] == ([{"quick": {"x": 1}}], ["hangs"])


async def test_auto_refresh_counts_custom_chunks_and_callback_events_as_progress():
    from langchain_core.runnables import RunnableLambda

    async def scenario(api: Api, trace: Trace) -> None:
        _, types, _ = _names(api)
        step = RunnableLambda(lambda x: x + 1, name="step")

        get_stream_writer = importlib.import_module(f"{api.name}.config").get_stream_writer

        async def writes(state: State) -> dict:
            writer = get_stream_writer()
            for i in range(30):  # 0.6 s in all, three times the idle timeout
                writer({"chunk": i})
                await asyncio.sleep(0.02)
            return {"x": state["x"] + 1}

        async def calls_runnables(state: State) -> dict:
            x = state["x"]
            for _ in range(30):
                x = await step.ainvoke(x)
                await asyncio.sleep(0.02)
            return {"x": x}

        policy = types.TimeoutPolicy(idle_timeout=0.2)
        for name, fn in (("writes", writes), ("calls_runnables", calls_runnables)):
            graph = (
                api.StateGraph(State)
                .add_node(name, fn, timeout=policy)
                .add_edge(api.START, name)
                .compile()
            )
            chunks = [c async for c in graph.astream({"x": 0}, stream_mode="custom")]
            trace.note(name, (len(chunks), await graph.ainvoke({"x": 0})))

    ours = await acheck_parity(scenario)
    assert ours["writes"] == (30, {"x": 1})
    assert ours["calls_runnables"] == (0, {"x": 30})
