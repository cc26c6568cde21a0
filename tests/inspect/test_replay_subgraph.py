"""``replay_check`` runs the tasks of a subgraph too, with the subgraph's code as it is now."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import SystemMessage

import durable_debug as dd
from durable_debug.inspect.replay import replay_check, replay_text
from support.replay_graphs import CountingModel

CFG = {"configurable": {"thread_id": "t"}}


class Nested:
    """parent: ``intro`` → ``research`` (a compiled subgraph: ``ask`` calls the model)."""

    def __init__(self, saver: Any) -> None:
        self.model = CountingModel()
        self.prompt = "Research briefly."

        def ask(state: dd.MessagesState) -> dict[str, Any]:
            reply = self.model.invoke([SystemMessage(self.prompt), *state["messages"]])
            return {"messages": [reply]}

        research = (
            dd.StateGraph(dd.MessagesState).add_node("ask", ask).add_edge(dd.START, "ask").compile()
        )
        self.graph = (
            dd.StateGraph(dd.MessagesState)
            .add_node("intro", lambda s: {"messages": [("ai", "let me look")]})
            .add_node("research", research)
            .add_edge(dd.START, "intro")
            .add_edge("intro", "research")
            .compile(checkpointer=saver)
        )


@pytest.fixture
def nested(every_saver: Any) -> Nested:
    made = Nested(every_saver)
    made.graph.invoke({"messages": [("user", "tides")]}, CFG)
    assert made.model.calls == 1
    return made


def test_replay_check_runs_the_subgraphs_tasks_and_is_ok_on_unchanged_code(
    nested: Nested,
) -> None:
    report = replay_check(nested.graph, CFG)
    assert report.ok, replay_text(report)
    assert report.checked == 2  # intro, and the subgraph's ask (research runs no task alone)
    assert nested.model.calls == 1  # ask's call was answered from its recording


def test_replay_check_names_the_changed_subgraph_node_and_its_namespace(nested: Nested) -> None:
    nested.prompt = "Research at length."
    report = replay_check(nested.graph, CFG)
    assert [(d["node"], d["namespace"].split(":")[0]) for d in report.diverged] == [
        ("ask", "research")
    ]
    assert [(c["node"], c["namespace"].split(":")[0]) for c in report.live_calls] == [
        ("ask", "research")
    ]
    assert report.diverged[0]["paths"] == ["messages[0]"]
    text = replay_text(report)
    assert f"ask (task {report.diverged[0]['task_id']}" in text
    assert f"subgraph {report.diverged[0]['namespace']}" in text
