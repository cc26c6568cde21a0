"""SaverView: reading a store without the graph's code gives what the graph would show."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from durable_debug import START, Command, MemorySaver, Send, StateGraph, interrupt
from durable_debug.inspect import history_frame
from durable_debug.inspect.stored import SaverView, is_internal_channel


class S(TypedDict):
    items: list
    done: Annotated[list, operator.add]
    note: str


def review(state: dict) -> dict:
    return {"done": [f"{state['item']}={interrupt(state['item'])}"]}


def build(saver: MemorySaver):  # type: ignore[no-untyped-def]
    return (
        StateGraph(S)
        .add_node("prep", lambda s: {"note": "prepared"})
        .add_node("review", review)
        .add_node("b1", lambda s: {"done": ["b1"]})
        .add_node("join", lambda s: {"note": "joined"})
        .add_edge(START, "prep")
        .add_edge(START, "b1")
        .add_edge(["prep", "b1"], "join")
        .add_conditional_edges("join", lambda s: [Send("review", {"item": i}) for i in s["items"]])
        .compile(checkpointer=saver)
    )


def test_saver_view_matches_the_graph_on_every_checkpoint() -> None:
    saver = MemorySaver()
    g = build(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    out = g.invoke({"items": ["x", "y"]}, cfg)
    g.invoke(Command(resume={out["__interrupt__"][0].id: "ok"}), cfg)  # a partial answer
    view = SaverView(saver)
    ours = list(g.get_state_history(cfg))
    theirs = _history(view, cfg)
    # Without the graph, nodes are listed by name, and a reducer key nobody wrote yet is
    # absent rather than shown at its empty value.
    assert [(sorted(s.next), s.values, s.metadata, s.interrupts) for s in theirs] == [
        (sorted(s.next), _written(s.values), s.metadata, s.interrupts) for s in ours
    ]
    assert [sorted((t.id, t.name, t.error, str(t.result)) for t in s.tasks) for s in theirs] == [
        sorted((t.id, t.name, t.error, str(t.result)) for t in s.tasks) for s in ours
    ]
    latest_graph, latest_view = g.get_state(cfg), _state(view, cfg)
    assert latest_view.next == latest_graph.next == ("review",)
    assert latest_view.interrupts == latest_graph.interrupts
    assert view.list_threads() == ["t"]
    frame = history_frame(view, cfg)
    assert list(frame["step"]) == [-1, 0, 1, 2]


def _written(values: dict) -> dict:
    return {k: v for k, v in values.items() if v != []}


def _history(view: SaverView, cfg: dict) -> list:
    from durable_debug._sync import run_sync

    async def collect() -> list:
        return [s async for s in view.aget_state_history(cfg)]

    return run_sync(collect())


def _state(view: SaverView, cfg: dict):  # type: ignore[no-untyped-def]
    from durable_debug._sync import run_sync

    return run_sync(view.aget_state(cfg))


def test_internal_channels_are_recognised() -> None:
    assert is_internal_channel("branch:to:a") and is_internal_channel("join:a+b:c")
    assert is_internal_channel("__start__") and is_internal_channel("__pregel_tasks")
    assert not is_internal_channel("items")
