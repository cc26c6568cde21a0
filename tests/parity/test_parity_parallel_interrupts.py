"""Tasks of one step that pause on ``interrupt()`` stream as LangGraph streams them: one
``__interrupt__`` chunk per task as it pauses (``updates``), each with the state without the
step's writes (``values``), then the state with the writes of the tasks that finished (when
they wrote any), on the first run and on a resume that answers one of them."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict, total=False):
    items: list[str]
    out: Annotated[list[str], operator.add]


def build(api: Api, saver: Any) -> Any:
    def fan(state: State) -> list[Any]:
        asks = [api.Send("ask", {"items": [item]}) for item in state["items"]]
        return [*asks, api.Send("plain", {"items": ["z"]})]

    def ask(state: State) -> dict[str, Any]:
        return {"out": [api.interrupt(state["items"][0])]}

    def plain(state: State) -> dict[str, Any]:
        return {"out": ["plain"]}

    builder = api.StateGraph(State).add_node("ask", ask).add_node("plain", plain)
    builder.add_conditional_edges(api.START, fan, ["ask", "plain"])
    return builder.compile(checkpointer=saver)


def shown(chunk: Any) -> str:
    """A chunk with its interrupts as their values (ids differ by design), as text."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(plain(v) for v in value)
        if hasattr(value, "value") and hasattr(value, "id"):
            return ("interrupt", value.value)
        return value

    return repr(plain(chunk))


@pytest.mark.parametrize("modes", ["updates", "values", ("updates", "values")], ids=str)
def test_each_paused_task_streams_its_own_interrupt(modes: Any) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = build(api, api.MemorySaver())
        config = {"configurable": {"thread_id": "1"}}
        stream_mode = list(modes) if isinstance(modes, tuple) else modes
        # tasks side by side finish in any order: the chunks are compared as a multiset
        chunks = graph.stream({"items": ["a", "b"]}, config, stream_mode=stream_mode)
        trace.note("first", sorted(map(shown, chunks)))
        pending = graph.get_state(config).interrupts
        trace.note("pending", sorted(i.value for i in pending))
        answer = api.Command(resume={pending[0].id: "R"})
        chunks = graph.stream(answer, config, stream_mode=stream_mode)
        trace.note("resumed", sorted(map(shown, chunks)))

    check_parity(scenario)


def test_without_a_checkpointer_each_paused_task_streams_its_own_interrupt() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ours warns: interrupt() without a checkpointer
            chunks = build(api, None).stream({"items": ["a", "b"]}, stream_mode="updates")
            trace.note("updates", sorted(map(shown, chunks)))

    check_parity(scenario)
