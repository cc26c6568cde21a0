"""``add_node(..., trace_policy=TracePolicy(...))`` on both libraries: tracers record the
processed input and output of the node's run, other handlers (one with tap methods too) and
the run's result see the real values, and a raising processor records the real value."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.base import BaseTracer
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: int


class Tracer(BaseTracer):
    """Keeps every finished run by name."""

    def __init__(self) -> None:
        super().__init__()
        self.finished: dict[str, Any] = {}

    def _persist_run(self, run: Any) -> None:
        pass

    def _end_trace(self, run: Any) -> None:
        super()._end_trace(run)
        self.finished[run.name] = (run.inputs, run.outputs)

    def _on_chain_end(self, run: Any) -> None:
        self.finished[run.name] = (run.inputs, run.outputs)


class Tapping(BaseCallbackHandler):
    """A handler that has tap methods without being a streaming handler."""

    def __init__(self) -> None:
        self.node_runs: set[Any] = set()
        self.payloads: list[Any] = []

    async def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
        async for chunk in output:
            if run_id in self.node_runs:
                self.payloads.append(("tap", chunk))
            yield chunk

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any, **kw: Any) -> None:
        if kw.get("name") == "n":
            self.node_runs.add(run_id)
            self.payloads.append(("start", inputs))

    def on_chain_end(self, outputs: Any, *, run_id: Any, **kw: Any) -> None:
        if run_id in self.node_runs:
            self.payloads.append(("end", outputs))


def _graph(api: Api, policy: Any) -> Any:
    return (
        api.StateGraph(State)
        .add_node("n", lambda s: {"value": s["value"] + 1}, trace_policy=policy)
        .add_edge(api.START, "n")
        .compile()
    )


def test_tracers_record_the_processed_payloads():
    def scenario(api: Api, trace: Trace) -> None:
        types = importlib.import_module(f"{api.name}.types")
        for label, policy in (
            (
                "both",
                types.TracePolicy(
                    process_inputs=lambda v: {"in": sorted(v)}, process_outputs=lambda v: {"out": v}
                ),
            ),
            ("omitted input", types.TracePolicy(process_inputs=types.omit_payload)),
            ("raising", types.TracePolicy(process_outputs=lambda v: 1 / 0)),
        ):
            tracer = Tracer()
            result = _graph(api, policy).invoke({"value": 1}, {"callbacks": [tracer]})
            trace.note(label, {"result": result, "node run": tracer.finished["n"]})

    ours = check_parity(scenario)
    assert ours["both"]["node run"] == ({"in": ["value"]}, {"out": {"value": 2}})
    assert ours["raising"]["node run"] == ({"value": 1}, {"value": 2})


async def test_a_handler_with_tap_methods_sees_the_real_payloads_once():
    async def scenario(api: Api, trace: Trace) -> None:
        types = importlib.import_module(f"{api.name}.types")
        policy = types.TracePolicy(process_inputs=lambda v: "in", process_outputs=lambda v: "out")
        for via_events in (False, True):
            handler, tracer = Tapping(), Tracer()
            config: dict[str, Any] = {"callbacks": [handler, tracer]}
            graph = _graph(api, policy)
            if via_events:
                async for _ in graph.astream_events({"value": 1}, config, version="v2"):
                    pass
            else:
                await graph.ainvoke({"value": 1}, config)
            trace.note(f"events={via_events}", (handler.payloads, tracer.finished["n"]))

    ours = await acheck_parity(scenario)
    handler_saw, tracer_saw = ours["events=False"]
    assert handler_saw == [("start", {"value": 1}), ("end", {"value": 2})]
    assert tracer_saw == ({"input": "in"}, {"output": "out"})  # a non-dict is wrapped
