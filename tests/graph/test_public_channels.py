"""The public channel classes as state channels on our engine: what is saved and what not."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from graph_support import cfg
from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.channels import EphemeralValue, Topic, UntrackedValue
from durable_debug.errors import EmptyChannelError, InvalidUpdateError


class State(TypedDict):
    log: Annotated[list, Topic(str, accumulate=True)]
    secret: Annotated[str, UntrackedValue(str)]
    once: Annotated[str, EphemeralValue(str)]


def test_untracked_writes_are_used_in_the_run_but_never_saved(saver: MemorySaver) -> None:
    def a(state: Any) -> dict:
        return {"log": ["a"], "secret": "token", "once": "a"}

    def b(state: Any) -> dict:
        return {"log": [f"b saw {state.get('secret')} and {state.get('once')}"]}

    graph = (
        StateGraph(State)
        .add_node("a", a)
        .add_node("b", b)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )
    out = graph.invoke({"log": ["in"]}, cfg("t"))  # the run's own output still has it
    assert out == {"log": ["in", "a", "b saw token and a"], "secret": "token"}
    for saved in saver.list(cfg("t")):
        assert "secret" not in saved.checkpoint["channel_values"]
        assert all(w[1] != "secret" for w in saved.pending_writes or ())
    assert "once" not in graph.get_state(cfg("t")).values  # cleared after the step


def test_each_graph_gets_its_own_copy_of_an_annotated_channel() -> None:
    graphs = [StateGraph(State).add_node("a", lambda s: {"log": ["x"]}).add_edge(START, "a")]
    first = graphs[0].compile()
    assert first.invoke({"log": []}) == {"log": ["x"]}
    assert first.invoke({"log": []}) == {"log": ["x"]}  # nothing kept from the first run
    with pytest.raises(EmptyChannelError):
        Topic(str).get()
    with pytest.raises(InvalidUpdateError, match="one value per step"):
        EphemeralValue(int).copy().update([1, 2])
