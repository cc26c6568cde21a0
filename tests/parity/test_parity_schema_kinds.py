"""State schemas other than TypedDict, dataclass and pydantic, on both libraries: a schema
without annotations is one value (``Annotated[list, operator.add]``, ``list[str]``,
``dict``, ``Annotated[str, operator.add]``) that nodes receive and update whole; a plain class
with annotations declares keys that nodes receive as a dict."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

import pytest
from parity_harness import Api, Trace, check_parity, multiset
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class Node:
    """A callable node named ``name`` that appends its name (or what it was sent)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = name

    def __call__(self, state: Any) -> list[str]:
        return [self.name] if isinstance(state, list) else [f"{self.name}|{state}"]


def test_a_reducer_value_with_sends_and_branches() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def fan(state: list) -> list:
            return [api.Send("2", 1), api.Send("2", 2), "3"]

        def to_end(state: list) -> Literal["__end__"]:
            return "__end__"

        builder = api.StateGraph(Annotated[list, operator.add])
        for name in ("1", "2", "3"):
            builder.add_node(Node(name))
        builder.add_edge(api.START, "1")
        builder.add_conditional_edges("1", fan)
        builder.add_conditional_edges("2", to_end)
        graph = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("invoke", graph.invoke, ["0"], cfg)
        trace.state("state", graph.get_state(cfg))
        trace.history("history", graph.get_state_history(cfg))
        trace.call("update", graph.update_state, cfg, ["from outside"])
        trace.state("updated", graph.get_state(cfg))
        stream = list(
            graph.stream(
                ["x"], {"configurable": {"thread_id": "u"}}, stream_mode=["values", "updates"]
            )
        )
        trace.note("values chunks", [c for m, c in stream if m == "values"])
        trace.note("update chunks", multiset(c for m, c in stream if m == "updates"))

    check_parity(scenario)


@pytest.mark.parametrize(
    "schema, value, step",
    [
        (list, ["a"], lambda s: [*s, "b"]),
        (dict, {"a": 1}, lambda s: {**s, "b": 2}),
        (int, 20, lambda s: s + 1),
        (Annotated[str, operator.add], "hi", lambda s: f"[{s}]"),
    ],
    ids=["list", "dict", "int", "str reducer"],
)
def test_one_value_states(schema: Any, value: Any, step: Any) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = (
            api.StateGraph(schema)
            .add_node("n", step)
            .add_node("m", step)
            .add_edge(api.START, "n")
            .add_edge("n", "m")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("invoke", graph.invoke, value, cfg)
        trace.history("history", graph.get_state_history(cfg))
        trace.call("updates", graph.stream, value, {"configurable": {"thread_id": "u"}})
        debug = graph.stream(value, {"configurable": {"thread_id": "v"}}, stream_mode="debug")
        trace.note(
            "debug",
            [(c["type"], c["payload"].get("values"), c["payload"].get("result")) for c in debug],
        )

    check_parity(scenario)


def test_an_annotated_class() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        class Plain:
            count: int
            log: Annotated[list, operator.add]

        class Written(Plain):
            def __init__(self) -> None:
                self.count = 7
                self.log = ["object"]

        def first(state: Plain) -> dict:
            trace.note("first got", state)
            return {"count": state["count"] + 1, "log": ["first"]}

        graph = (
            api.StateGraph(Plain)
            .add_node("first", first)
            .add_node("second", lambda state: Written())
            .add_edge(api.START, "first")
            .add_edge("first", "second")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("invoke", graph.invoke, {"count": 1, "log": []}, cfg)
        trace.history("history", graph.get_state_history(cfg))

    check_parity(scenario)


def test_a_pydantic_update_writes_no_field_left_unset_at_none():
    # A node may return another pydantic model as its update: a field it left unset at a
    # None default is not written (a reducer never sees that None), as in LangGraph.
    from pydantic import BaseModel

    class Docs(BaseModel):
        query: str
        answer: str | None = None
        docs: Annotated[list[str], operator.add] = []

    class Update(BaseModel):
        query: str | None = None
        answer: str | None = None
        docs: list[str] | None = None

    def scenario(api: Api, trace: Trace) -> None:
        def rewrite(state: Docs) -> Any:
            return Update(query=f"q: {state.query}")

        def fetch(state: Docs) -> Any:
            return Update(docs=["d1"], answer=None)

        g = (
            api.StateGraph(Docs)
            .add_node("rewrite", rewrite)
            .add_node("fetch", fetch)
            .add_edge(api.START, "rewrite")
            .add_edge("rewrite", "fetch")
            .compile()
        )
        trace.call("result", g.invoke, {"query": "x", "answer": "kept"})

    ours = check_parity(scenario)
    assert ours["result"] == {"query": "q: x", "answer": None, "docs": ["d1"]}


class Rooted(TypedDict):
    __root__: Annotated[list, operator.add]


def test_a_typeddict_whose_only_key_is_root_is_one_value():
    # LangGraph reads a state whose only key is __root__ as that one value: nodes get it and
    # return its update, and the result is the value itself.
    def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(Rooted)
            .add_node("a", lambda value: [f"a saw {len(value)}"])
            .add_edge(api.START, "a")
            .compile()
        )
        trace.call("result", g.invoke, ["x"])
        trace.note("updates", list(g.stream(["x"], stream_mode="updates")))

    ours = check_parity(scenario)
    assert ours["result"] == ["x", "a saw 1"]
