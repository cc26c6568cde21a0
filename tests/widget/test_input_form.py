"""The New run form's fields: one per key of the graph's input schema, with its type and
default, never None unless the schema says so; LangGraph's graphs and durable_debug's alike."""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from test_timetravel import open_widget
from typing_extensions import TypedDict

from durable_debug import MemorySaver, StateGraph

CONFIG = {"configurable": {"thread_id": "form-1"}}


class Typed(TypedDict, total=False):
    topic: str
    limit: int
    ratio: float
    draft: bool
    notes: Annotated[list[str], operator.add]
    meta: dict[str, Any]
    anything: Any


@dataclasses.dataclass
class WithDefaults:
    topic: str = "tides"
    notes: list[str] = dataclasses.field(default_factory=lambda: ["first"])
    limit: int | None = None


class Model(BaseModel):
    topic: str
    limit: int = 5


def build(engine: str, schema: Any) -> Any:
    if engine == "langgraph":
        from langgraph.checkpoint.memory import MemorySaver as Saver
        from langgraph.graph import START
        from langgraph.graph import StateGraph as Graph
    else:
        from durable_debug import START

        Graph, Saver = StateGraph, MemorySaver
    return (
        Graph(schema)
        .add_node("a", lambda state: {"topic": "done"})
        .add_edge(START, "a")
        .compile(checkpointer=Saver())
    )


def fields_by_key(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["key"]: f for f in result["fields"]}


@pytest.mark.parametrize("engine", ["durable_debug", "langgraph"])
async def test_a_typeddict_input_gives_a_typed_empty_field_per_key(engine):
    graph = build(engine, Typed)
    await graph.ainvoke({"topic": "x"}, CONFIG)
    _, front = await open_widget(graph, CONFIG)
    fields = fields_by_key(await front.result("input_form"))
    assert list(fields) == ["topic", "limit", "ratio", "draft", "notes", "meta", "anything"]
    kinds = {k: (f["type"], f["kind"], f["default"], f["has_default"]) for k, f in fields.items()}
    assert kinds == {
        "topic": ("str", "string", "", False),
        "limit": ("int", "integer", 0, False),
        "ratio": ("float", "number", 0, False),
        "draft": ("bool", "boolean", False, False),
        "notes": ("list[str]", "array", [], False),
        "meta": ("dict[str, Any]", "object", {}, False),
        "anything": ("Any", "json", "", False),
    }
    assert all(f["default"] is not None for f in fields.values())


@pytest.mark.parametrize("engine", ["durable_debug", "langgraph"])
async def test_schema_defaults_are_the_fields_defaults(engine):
    graph = build(engine, WithDefaults)
    await graph.ainvoke({"topic": "x"}, CONFIG)
    _, front = await open_widget(graph, CONFIG)
    fields = fields_by_key(await front.result("input_form"))
    assert fields["topic"]["default"] == "tides" and fields["topic"]["has_default"]
    assert fields["notes"]["default"] == ["first"]
    # None only because the schema says so, and then it is a default of its own.
    assert fields["limit"]["default"] is None and fields["limit"]["has_default"]
    assert fields["limit"]["kind"] == "integer"


async def test_a_pydantic_input_says_which_keys_have_defaults():
    graph = build("langgraph", Model)
    await graph.ainvoke({"topic": "x"}, CONFIG)
    _, front = await open_widget(graph, CONFIG)
    fields = fields_by_key(await front.result("input_form"))
    assert (fields["topic"]["default"], fields["topic"]["has_default"]) == ("", False)
    assert (fields["limit"]["default"], fields["limit"]["has_default"]) == (5, True)
