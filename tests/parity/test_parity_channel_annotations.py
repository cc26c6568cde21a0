"""A channel class given uninstantiated in a key's annotation (``Annotated[str,
UntrackedValue]``) is made for that key's type, as LangGraph makes it."""

# No ``from __future__ import annotations``: the state class is built in the scenario.
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def channels(api: Api) -> Any:
    if api.name == "langgraph":
        import langgraph.channels as module
    else:
        import durable_debug.channels as module
    return module


def test_an_untracked_value_class_annotation_is_the_keys_channel():
    def scenario(api: Api, trace: Trace) -> None:
        ch = channels(api)

        class State(TypedDict):
            question: Annotated[str, ch.UntrackedValue]
            answer: str

        g = (
            api.StateGraph(State)
            .add_node("a", lambda s: {"answer": s["question"] + "!"})
            .add_edge(api.START, "a")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}}
        trace.note("result", g.invoke({"question": "hi"}, cfg))
        trace.state("saved", g.get_state(cfg))

    ours = check_parity(scenario)
    assert ours["result"] == {"question": "hi", "answer": "hi!"}
    assert ours["saved"]["values"] == {"answer": "hi!"}
