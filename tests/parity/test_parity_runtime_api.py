"""``Runtime.merge``, ``ServerInfo`` and the ``ExecutionInfo`` fields a node reads
(``run_id``, ``node_attempt``, ``node_first_attempt_time``), as LangGraph gives them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    foo: str


def runtime_names(api: Api) -> Any:
    if api.name == "langgraph":
        import langgraph.runtime as module
    else:
        import durable_debug.runtime as module
    return module


def test_execution_info_on_each_attempt():
    def scenario(api: Api, trace: Trace) -> None:
        runtime_module = runtime_names(api)
        seen: list[Any] = []

        def flaky(state: State, runtime: runtime_module.Runtime) -> dict[str, Any]:
            info = runtime.execution_info
            seen.append(info)
            trace.note(
                f"attempt {info.node_attempt}",
                {
                    "run_id": info.run_id,
                    "thread_id": info.thread_id,
                    "first time is a float": isinstance(info.node_first_attempt_time, float),
                },
            )
            if info.node_attempt < 2:
                raise ValueError("once")
            return {"foo": "done"}

        retry = api.RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ValueError)
        g = (
            api.StateGraph(State)
            .add_node("flaky", flaky, retry_policy=retry)
            .add_edge(api.START, "flaky")
            .compile(checkpointer=api.MemorySaver())
        )
        run_id = uuid.UUID(int=7)
        cfg = {"configurable": {"thread_id": "t"}, "run_id": run_id}
        trace.note("result", g.invoke({"foo": ""}, cfg))
        trace.note(
            "same first attempt time",
            seen[0].node_first_attempt_time == seen[1].node_first_attempt_time,
        )
        trace.note("patched", seen[0].patch(node_attempt=5).node_attempt)

    ours = check_parity(scenario)
    assert ours["attempt 2"]["run_id"] == str(uuid.UUID(int=7))


def test_runtime_merge_and_server_info():
    def scenario(api: Api, trace: Trace) -> None:
        rt = runtime_names(api)
        info = rt.ServerInfo(assistant_id="a", graph_id="g")
        base = rt.Runtime(context={"user": "x"}, store="store", server_info=info)
        merged = base.merge(rt.Runtime(context={"user": "y"}, previous=0))
        trace.note(
            "merged",
            (merged.context, merged.store, merged.previous, merged.server_info.graph_id),
        )
        kept = rt.Runtime(context={"user": "z"}).merge(rt.Runtime())
        trace.note("kept", (kept.context, kept.store, kept.server_info))

    check_parity(scenario)


def errors_of(api: Api) -> Any:
    if api.name == "langgraph":
        import langgraph.errors as module
    else:
        import durable_debug.errors as module
    return module


def test_run_control_drains_before_the_next_step_and_the_thread_resumes():
    def scenario(api: Api, trace: Trace) -> None:
        rt, errors = runtime_names(api), errors_of(api)

        class Steps(TypedDict, total=False):
            first: str
            second: str

        control = rt.RunControl()

        def first(state: Steps, runtime: rt.Runtime) -> dict[str, Any]:
            trace.note("node sees its control", runtime.control is control)
            control.request_drain("sigterm")
            trace.note("drain requested", runtime.drain_requested)
            return {"first": "done"}

        g = (
            api.StateGraph(Steps)
            .add_node("first", first)
            .add_node("second", lambda s: {"second": "ran"})
            .add_edge(api.START, "first")
            .add_edge("first", "second")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "d"}}
        chunks: list[Any] = []
        with pytest.raises(errors.GraphDrained) as drained:
            for chunk in g.stream({}, cfg, control=control, stream_mode="values"):
                chunks.append(chunk)
        trace.note("chunks before the drain", chunks)
        trace.note("reason", (drained.value.reason, str(drained.value)))
        trace.state("drained at", g.get_state(cfg))
        trace.note("resumed", g.invoke(None, cfg))
        early = rt.RunControl()
        early.request_drain()
        other = {"configurable": {"thread_id": "early"}}
        trace.call("drained before it starts", g.invoke, {}, other, control=early)
        trace.note("early next", g.get_state(other).next)

    ours = check_parity(scenario)
    assert ours["reason"] == ("sigterm", "Graph drained: sigterm")
    assert ours["resumed"] == {"first": "done", "second": "ran"}
