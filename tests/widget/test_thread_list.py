"""The thread list's status kinds: each thread of the store says whether it is running (work
left), paused on an interrupt, failed, or done, for the list's status filter."""

from __future__ import annotations

import contextlib
from typing import TypedDict

from test_timetravel import open_widget

from durable_debug import START, StateGraph, interrupt
from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.inspect.listing import STATUS_KINDS, status_kind


class State(TypedDict, total=False):
    mode: str
    answer: str


def work(state: State) -> State:
    if state["mode"] == "fail":
        raise RuntimeError("boom")
    if state["mode"] == "ask":
        return {"answer": interrupt("ok?")}
    return {"answer": "done"}


async def test_every_thread_is_listed_with_its_status_kind(tmp_path):
    async with SqliteSaver(tmp_path / "threads.db") as saver:
        graph = StateGraph(State).add_node("work", work).add_edge(START, "work")
        graph = graph.compile(checkpointer=saver)
        for mode in ("done", "ask", "fail"):
            with contextlib.suppress(RuntimeError):  # "fail" fails, as it should
                await graph.ainvoke({"mode": mode}, {"configurable": {"thread_id": mode}})
        await graph.aupdate_state({"configurable": {"thread_id": "todo"}}, {"mode": "done"})
        _, front = await open_widget(graph, {"configurable": {"thread_id": "done"}})
        rows = {t["thread_id"]: t for t in (await front.result("threads"))["threads"]}
    assert {k: (r["kind"], r["status"]) for k, r in rows.items()} == {
        "done": ("done", "done"),
        "ask": ("paused", "paused on 1 interrupt(s) at work"),
        "fail": ("failed", "failed at work"),
        "todo": ("running", "next work"),
    }
    assert set(STATUS_KINDS) == {r["kind"] for r in rows.values()}
    assert status_kind("broken: cannot decode") == "failed"
