"""A compiled graph in a LangChain chain, on both libraries: ``graph | step``, ``step | graph``
(a function or a dict on the left), ``graph.pipe(...)`` give a ``RunnableSequence`` whose
invoke / stream / batch (sync and async) run the graph with the chain's callbacks; and
``astream_events(..., stream_mode=...)``: the graph's ``on_chain_stream`` events carry the
chunks of the modes given, and ``config={"run_id": ...}`` names the graph's run."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    key: str


def build(api: Api) -> Any:
    inner = (
        api.StateGraph(State)
        .add_node("up", lambda s: {"key": s["key"] + " up"})
        .add_edge(api.START, "up")
        .compile()
    )
    return (
        api.StateGraph(State)
        .add_node("inner", inner)
        .add_node("side", lambda s: {"key": s["key"] + " side"})
        .add_edge(api.START, "inner")
        .add_edge("inner", "side")
        .compile()
    )


class Runs(BaseCallbackHandler):
    """The chain runs a handler hears start: (name, whether it has a parent)."""

    def __init__(self) -> None:
        self.started: list[tuple[str, bool]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.started.append((kwargs.get("name") or "", kwargs.get("parent_run_id") is not None))


def test_a_graph_pipes_into_a_chain() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        app = build(api)
        chain = app | RunnablePassthrough()
        trace.note("type", type(chain).__name__)
        trace.note("steps", [step.get_name() for step in chain.steps])
        trace.note("invoke", chain.invoke({"key": "v"}))
        trace.note("stream", list(chain.stream({"key": "v"})))
        trace.note("batch", chain.batch([{"key": "a"}, {"key": "b"}]))
        upper = RunnableLambda(lambda s: s["key"].upper())
        trace.note("pipe", app.pipe(upper).invoke({"key": "p"}))
        trace.note("function first", ((lambda text: {"key": text}) | app).invoke("f"))
        trace.note("dict first", ({"key": lambda s: s["raw"]} | app).invoke({"raw": "d"}))
        runs = Runs()
        chain.invoke({"key": "c"}, {"callbacks": [runs]})
        top = [(name, nested) for name, nested in runs.started if name in ("LangGraph",)]
        trace.note("graph run nested in the chain's", top[:1])
        trace.note("chain run first", runs.started[0])

    ours = check_parity(scenario)
    assert ours["invoke"] == {"key": "v up side"}
    assert ours["graph run nested in the chain's"] == [("LangGraph", True)]


async def test_a_piped_graph_runs_async() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        chain = build(api) | RunnablePassthrough()
        trace.note("ainvoke", await chain.ainvoke({"key": "v"}))
        trace.note("astream", [c async for c in chain.astream({"key": "v"})])
        trace.note("abatch", await chain.abatch([{"key": "a"}, {"key": "b"}]))

    await acheck_parity(scenario)


async def test_astream_events_streams_the_modes_given() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        app = build(api)
        for mode in (None, "values", "updates", ["values", "updates"]):
            kwargs = {} if mode is None else {"stream_mode": mode}
            events = [
                (e["event"], e["name"], e["data"].get("chunk"))
                async for e in app.astream_events({"key": "x"}, version="v2", **kwargs)
                if e["event"] in ("on_chain_stream", "on_chain_start", "on_chain_end")
            ]
            trace.note(f"events {mode}", events)
        ends = [
            e["data"]["output"]
            async for e in app.astream_events(
                {"key": "x"}, {"run_id": UUID(int=0)}, version="v2", stream_mode="values"
            )
            if e["event"] == "on_chain_end" and e["run_id"] == str(UUID(int=0))
        ]
        trace.note("the graph's run has the config's run id", ends)

    ours = await acheck_parity(scenario)
    assert ours["the graph's run has the config's run id"] == [{"key": "x up side"}]
