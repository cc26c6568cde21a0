"""Replay never answers a call with another call's output: a call is answered only by the
recorded call of the same node, at the same index, with the same input; everything else goes
live (or, under ``strict``, is refused naming the thread, task and call)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

import durable_debug as dd
from durable_debug.checkpoint.records import TASK_CALLS
from durable_debug.inspect import history_frame
from durable_debug.inspect.replay import (
    ReplayMismatchError,
    recorded_calls,
    replay_check,
    replaying,
)
from support.replay_graphs import CountingModel

CFG = {"configurable": {"thread_id": "t"}}


class Asker:
    """One node, ``ask``, sending the model each of ``self.questions`` in turn."""

    def __init__(self) -> None:
        self.model = CountingModel()
        self.questions = ["alpha", "beta"]
        self.saver = dd.MemorySaver()

        def ask(state: dd.MessagesState) -> dict[str, Any]:
            replies = [self.model.invoke([HumanMessage(q)]) for q in self.questions]
            return {"messages": replies}

        def echo(state: dd.MessagesState) -> dict[str, Any]:
            return {"messages": [self.model.invoke([HumanMessage("alpha")])]}

        self.graph = (
            dd.StateGraph(dd.MessagesState)
            .add_node("ask", ask)
            .add_node("echo", echo)
            .add_edge(dd.START, "ask")
            .add_edge("ask", "echo")
            .compile(checkpointer=self.saver)
        )
        self.graph.invoke({"messages": [("user", "go")]}, CFG)
        assert self.model.calls == 3

    def first(self) -> dict[str, Any]:
        frame = history_frame(self.graph, CFG)
        first = frame[frame["step"] == -1]["checkpoint_id"].iloc[0]
        return {"configurable": {"thread_id": "t", "checkpoint_id": first}}


def test_calls_in_another_order_go_live_and_are_not_answered_by_each_other() -> None:
    asker = Asker()
    asker.questions = ["beta", "alpha"]
    with replaying(asker.graph, CFG) as replay:
        out = asker.graph.invoke(None, asker.first())
    # both of ask's calls are live (their index holds the other question's recording); echo's
    # call, the same input as ask's recorded call 0 but another node's, is echo's own
    assert [(c["node"], c["i"]) for c in replay.live] == [("ask", 0), ("ask", 1)]
    assert [(c["node"], c["i"]) for c in replay.replayed] == [("echo", 0)]
    assert asker.model.calls == 5
    contents = [m.content for m in out["messages"][1:]]
    assert contents == ["answer 4 to beta", "answer 5 to alpha", "answer 3 to alpha"]


def test_strict_replay_refuses_a_reordered_call_naming_thread_task_and_call() -> None:
    asker = Asker()
    asker.questions = ["beta", "alpha"]
    with (
        replaying(asker.graph, CFG, strict=True),
        pytest.raises(
            ReplayMismatchError,
            match=r"thread 't', task \S+ \(node 'ask'\) from checkpoint \S+, call 0 "
            r"\(chat_model 'CountingModel'\)",
        ),
    ):
        asker.graph.invoke(None, asker.first())
    assert asker.model.calls == 3


def test_a_call_past_the_end_of_the_recording_goes_live_or_is_refused() -> None:
    asker = Asker()
    asker.questions = ["alpha", "beta", "gamma"]
    report = replay_check(asker.graph, CFG)
    assert [d["node"] for d in report.diverged] == ["ask"]
    assert [(c["node"], c["i"]) for c in report.live_calls] == [("ask", 2)]
    with (
        replaying(asker.graph, CFG, strict=True),
        pytest.raises(ReplayMismatchError, match=r"\(node 'ask'\).*call 2 .*no such call"),
    ):
        asker.graph.invoke(None, asker.first())
    with replaying(asker.graph, CFG) as replay:
        asker.graph.invoke(None, asker.first())
    assert [(c["node"], c["i"]) for c in replay.live] == [("ask", 2)]
    assert asker.model.calls == 5  # gamma, live in the check and in the rerun


def test_a_recording_without_its_list_of_calls_names_the_thread_and_task() -> None:
    asker = Asker()
    for record in asker.saver.records.values():
        for task in (record.get(TASK_CALLS) or {}).values():
            del task["calls"]
    with pytest.raises(ValueError, match=r"thread 't', task \S+ \(checkpoint \S+\).*no list"):
        recorded_calls(asker.graph, CFG)
