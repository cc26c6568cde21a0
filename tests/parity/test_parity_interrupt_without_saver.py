"""``interrupt()`` in a graph compiled without a checkpointer, on both libraries: the run ends
with ``__interrupt__`` (invoke, stream, and a fan-out whose other task still writes), and the
same graph runs to its end when the node does not interrupt. Ours also records the
``interrupt-no-saver`` finding (a warning), which ``strict=True`` turns into the error."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity, durable_api
from typing_extensions import TypedDict

from durable_debug import DurableDebugWarning

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[str, operator.add]
    market: str


def build(api: Api, trace: Trace, *, strict: bool = False):  # type: ignore[no-untyped-def]
    def ask(state: State) -> dict:
        trace.ran("ask")
        answer = api.interrupt("why?") if state["market"] == "DE" else " fine"
        return {"log": answer}

    def other(state: State) -> dict:
        trace.ran("other")
        return {"log": " other"}

    def start(state: State) -> list:
        return ["ask", api.Send("other", state)]

    builder = api.StateGraph(State).add_node("ask", ask).add_node("other", other)
    builder.add_conditional_edges(api.START, start)
    options = {"strict": True} if strict else {}
    return builder.compile(**options)


def without_saver(api: Api, trace: Trace) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DurableDebugWarning)
        g = build(api, trace)
        trace.call("invoke", g.invoke, {"log": "v", "market": "DE"})
        # each task's chunk comes as it finishes or pauses: compared in any order
        for label, modes in (("stream", None), ("updates", "updates")):
            chunks = g.stream({"log": "v", "market": "DE"}, stream_mode=modes)
            trace.note(label, sorted(map(repr, trace.normalize(list(chunks)))))
        trace.call("no interrupt", g.invoke, {"log": "v", "market": "US"})


def test_interrupt_without_a_checkpointer_ends_the_run_with_interrupt() -> None:
    ours = check_parity(without_saver)
    assert ours["invoke"]["log"] == "v other"


def test_interrupt_without_a_checkpointer_is_a_finding_and_strict_refuses_it() -> None:
    api = durable_api()
    trace = Trace(api)
    with pytest.warns(DurableDebugWarning, match="Node 'ask' called interrupt\\(\\) but the graph"):
        out = build(api, trace).invoke({"log": "v", "market": "DE"})
    assert [i.value for i in out["__interrupt__"]] == ["why?"]
    assert out["log"] == "v other"
    with pytest.raises(RuntimeError, match="Node 'ask' called interrupt\\(\\) but the graph"):
        build(api, trace, strict=True).invoke({"log": "v", "market": "DE"})
