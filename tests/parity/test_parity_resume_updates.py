"""``Command(resume=..., update=...)`` given at each of a node's interrupts, on both
libraries: every update is kept with the checkpoint the node resumes from (the writes of no
task accumulate), so each is applied exactly once, in the run's result and the saved state
with every durability mode, and in the history. And a ``Command(update=..., goto=...)`` on a
thread with no checkpoint starts it (its update applied twice, as LangGraph applies it)."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_each_resume_update_applies_once(durability: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def ask_three_times(state: State) -> dict:
            answers = [api.interrupt(str(question)) for question in range(1, 4)]
            return {"log": ["a:" + "".join(answers)]}

        graph = (
            api.StateGraph(State)
            .add_node("a", ask_three_times)
            .add_edge(api.START, "a")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": []}, cfg, durability=durability)
        for i in range(1, 4):
            resume = api.Command(resume=str(i), update={"log": [f"u{i}"]})
            trace.call(f"resume {i}", graph.invoke, resume, cfg, durability=durability)
            trace.call(f"state {i}", lambda: graph.get_state(cfg).values)
        if durability != "exit":  # with "exit", what the older checkpoints keep differs
            trace.history("history", graph.get_state_history(cfg))

    check_parity(scenario)


@pytest.mark.parametrize(
    "command",
    [{"update": {"log": ["u"]}}, {"goto": "other"}, {"update": {"log": ["u"]}, "goto": "node"}],
    ids=["update", "goto", "update-goto"],
)
def test_a_command_starts_a_thread_with_no_checkpoint(command: dict) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = (
            api.StateGraph(State)
            .add_node("node", lambda state: {"log": ["node"]})
            .add_node("other", lambda state: {"log": ["other"]})
            .add_edge(api.START, "node")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "new"}}
        trace.call("run", graph.invoke, api.Command(**command), cfg)
        trace.history("history", graph.get_state_history(cfg))
        trace.call("again", graph.invoke, {"log": ["more"]}, cfg)

    check_parity(scenario)


def test_a_command_starting_a_thread_is_saved_as_its_input(tmp_path: Path) -> None:
    from durable_debug import START, Command, StateGraph
    from durable_debug.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(tmp_path / "t.db")) as saver:
        graph = (
            StateGraph(State)
            .add_node("node", lambda state: {"log": ["node"]})
            .add_edge(START, "node")
            .compile(checkpointer=saver)
        )
        cfg = {"configurable": {"thread_id": "new"}}
        assert graph.invoke(Command(update={"log": ["u"]}), cfg) == {"log": ["u", "u", "node"]}
        first = list(graph.get_state_history(cfg))[-1]
        assert first.metadata["source"] == "input" and first.values == {"log": ["u"]}
