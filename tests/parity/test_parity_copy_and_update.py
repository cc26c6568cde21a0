"""``update_state(cfg, [(values, node), ...], as_node="__copy__")`` on both libraries: the
checkpoint is copied (a fork beside it) and the updates become the copy's next step, each
answering the copy's scheduled task of its node, so the history shows them as those tasks'
results; a run resumed from there and the whole history match."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def joined(a: str, b: str) -> str:
    return f"{a} > {b}" if a else b


class State(TypedDict):
    name: Annotated[str, joined]


def test_a_copy_with_updates_answers_the_copys_tasks() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def one(state: State) -> Any:
            return api.Command(goto=[api.Send("two", {})], update={"name": "one"})

        graph = (
            api.StateGraph(State)
            .add_node("one", one)
            .add_node("two", lambda s: {"name": "two"})
            .add_node("three", lambda s: {"name": "three"})
            .add_edge(api.START, "one")
            .add_edge("one", "two")
            .add_edge("two", "three")
            .compile(checkpointer=api.MemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}}
        graph.invoke({"name": "start"}, config)
        history = list(graph.get_state_history(config))
        # the two "two" tasks of one checkpoint, answered in one copy
        forked = graph.update_state(
            history[2].config, [({"name": "2a"}, "two"), ({"name": "2b"}, "two")], "__copy__"
        )
        trace.note("forked", graph.get_state(forked).values)
        trace.note("resumed", graph.invoke(None, forked))
        # the input checkpoint, answered as START
        forked = graph.update_state(history[-1].config, [({"name": "s*"}, "__start__")], "__copy__")
        trace.note("restarted", graph.invoke(None, forked))
        trace.history("history", graph.get_state_history(config))
        # a copy alone
        trace.note(
            "copy", graph.get_state(graph.update_state(history[0].config, None, "__copy__")).values
        )

    ours = check_parity(scenario)
    assert ours["resumed"] == {"name": "start > one > 2a > 2b > three"}
    assert ours["restarted"] == {"name": "s* > one > two > two > three"}
