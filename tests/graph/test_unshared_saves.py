"""A run on the in-memory saver hands it each step's maps without a copy (the engine changes
no map of a checkpoint it put): what it saves reads back as what a saver that copies them
(one whose ``aput_step`` is overridden, so the run takes the general path) saves, over runs
that loop, fan out, pause and resume, and fork."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from durable_debug import END, START, Command, MemorySaver, Send, StateGraph, interrupt
from durable_debug.graph.schema import StateSchema


class CopyingSaver(MemorySaver):
    """The in-memory saver reached through an overridden ``aput_step``: the copying path."""

    async def aput_step(self, *args: Any) -> Any:
        return await super().aput_step(*args)


class State(TypedDict):
    count: int
    items: Annotated[list[str], operator.add]


def build(saver: MemorySaver) -> Any:
    def step(state: State) -> dict[str, Any]:
        return {"count": state["count"] + 1, "items": [f"s{state['count']}"]}

    def fan(state: State) -> list[Send]:
        return [Send("worker", {"count": i, "items": []}) for i in range(3)]

    def worker(state: State) -> dict[str, Any]:
        return {"items": [f"w{state['count']}"]}

    def ask(state: State) -> dict[str, Any]:
        answer = interrupt("more?")
        return {"items": [str(answer)]}

    def again(state: State) -> str:
        return "step" if state["count"] < 3 else "ask"

    builder = StateGraph(State)
    builder.add_node("step", step).add_node("worker", worker).add_node("ask", ask)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", again, ["step", "ask"])
    builder.add_conditional_edges("ask", fan, ["worker"])
    builder.add_edge("worker", END)
    return builder.compile(checkpointer=saver)


def history(saver: MemorySaver) -> list[Any]:
    graph = build(saver)
    cfg: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"count": 0, "items": []}, cfg)
    graph.invoke(Command(resume="yes"), cfg)
    past = list(graph.get_state_history(cfg))
    fork = graph.update_state(past[3].config, {"count": 0})
    graph.invoke(None, fork)
    graph.invoke(Command(resume="again"), cfg)
    return [
        (s.values, s.next, s.metadata.get("step"), s.metadata.get("source"), len(s.tasks))
        for s in graph.get_state_history(cfg)
    ]


def test_unshared_saves_read_back_as_copied_saves() -> None:
    assert history(MemorySaver()) == history(CopyingSaver())


class Private(TypedDict):
    secret: str


def plain(state: State) -> dict[str, Any]:
    return {}


def reads_private(state: Private) -> dict[str, Any]:
    return {}


def test_a_node_without_an_input_schema_leaves_the_graph_schema_as_made() -> None:
    """``add_node`` makes the graph's schema again only for a node with an input schema of
    its own: otherwise its keys are those a schema made anew would have."""

    builder = StateGraph(State)
    for name, fn in [("a", plain), ("b", reads_private), ("c", plain)]:
        builder.add_node(name, fn)
        fresh = StateSchema(builder.state_schema.schema, extra=builder._schemas)
        assert builder.schema.keys == fresh.keys
        assert builder.schema.own_keys == fresh.own_keys
    assert "secret" in builder.schema.keys


def test_an_aput_step_set_on_the_saver_itself_is_still_called() -> None:
    saver = MemorySaver()
    calls: list[int] = []
    real = saver.aput_step

    async def aput_step(*args: Any) -> Any:
        calls.append(args[3]["step"])
        return await real(*args)

    saver.aput_step = aput_step  # type: ignore[method-assign]
    build(saver).invoke({"count": 0, "items": []}, {"configurable": {"thread_id": "t"}})
    assert calls[:3] == [-1, 0, 1]
