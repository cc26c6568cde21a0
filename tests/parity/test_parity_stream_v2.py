"""``stream(..., version="v2")`` and ``invoke(..., version="v2")``: the parts and the
``GraphOutput`` a user sees, as LangGraph gives them."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from pydantic import BaseModel
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class Model(BaseModel):
    value: str
    items: Annotated[list[str], operator.add] = []


class Plain(TypedDict):
    value: str


def asking(api: Api) -> Any:
    """START → a (appends) → b (asks a question), on a pydantic state."""

    def b(state: Model) -> dict[str, Any]:
        return {"value": api.interrupt("name?")}

    return (
        api.StateGraph(Model)
        .add_node("a", lambda s: {"value": s.value + "a", "items": ["a"]})
        .add_node("b", b)
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=api.MemorySaver())
    )


def nested(api: Api) -> Any:
    """A parent running a subgraph as its node ``inner``, both on plain dict states."""
    inner = api.StateGraph(Plain).add_node("x", lambda s: {"value": s["value"] + "x"})
    inner = inner.add_edge(api.START, "x").compile()
    return api.StateGraph(Plain).add_node("inner", inner).add_edge(api.START, "inner").compile()


def checkpoint_shapes(parts: list[dict[str, Any]]) -> list[Any]:
    """What a ``checkpoints`` / ``debug`` part shows apart from ids and timestamps."""
    shapes = []
    for part in parts:
        data = part["data"]
        if part["type"] == "debug":
            shapes.append((data["type"], data["step"], type(data["payload"]).__name__))
            data = data["payload"] if data["type"] == "checkpoint" else None
        if data is not None:
            shapes.append((type(data["values"]).__name__, data["next"], data["metadata"]["step"]))
    return shapes


def test_v2_parts_of_every_mode_alone_and_combined():
    def scenario(api: Api, trace: Trace) -> None:
        g = asking(api)
        for n, mode in enumerate(["values", "updates", ["values", "updates"], "tasks"]):
            cfg = {"configurable": {"thread_id": f"t{n}"}}
            parts = list(g.stream({"value": "x"}, cfg, stream_mode=mode, version="v2"))
            if mode == "tasks":  # task ids are labelled; the payloads are v1's
                parts = [{**p, "data": {"name": p["data"]["name"]}} for p in parts]
            trace.note(f"parts {mode}", parts)
        for mode in ("checkpoints", "debug"):
            cfg = {"configurable": {"thread_id": f"c-{mode}"}}
            parts = list(g.stream({"value": "x"}, cfg, stream_mode=mode, version="v2"))
            trace.note(f"keys {mode}", [sorted(p) for p in parts])
            trace.note(f"shapes {mode}", checkpoint_shapes(parts))

    ours = check_parity(scenario)
    paused = ours["parts values"][-1]
    assert paused["data"] == {"Model": {"value": "xa", "items": ["a"]}}
    assert paused["interrupts"] == ({"Interrupt": "name?", "id": "i0"},)


def test_v2_subgraph_parts_carry_their_namespace_and_custom_parts_their_data():
    def scenario(api: Api, trace: Trace) -> None:
        g = nested(api)
        for subgraphs in (False, True):
            parts = list(
                g.stream({"value": ""}, stream_mode="updates", subgraphs=subgraphs, version="v2")
            )
            trace.note(
                f"subgraphs={subgraphs}",
                [
                    (p["type"], len(p["ns"]), [n.split(":")[0] for n in p["ns"]], p["data"])
                    for p in parts
                ],
            )
        if api.name == "langgraph":
            from langgraph.func import entrypoint
            from langgraph.types import StreamWriter
        else:
            from durable_debug.func import entrypoint
            from durable_debug.types import StreamWriter

        @entrypoint()
        def flow(inputs: Any, *, writer: StreamWriter) -> Any:
            writer("hello")
            return inputs

        trace.note("custom", list(flow.stream({"k": 1}, stream_mode="custom", version="v2")))

    check_parity(scenario)


def test_invoke_v2_returns_graph_output_with_its_interrupts_and_typed_value():
    def scenario(api: Api, trace: Trace) -> None:
        g = asking(api)
        cfg = {"configurable": {"thread_id": "i"}}
        paused = trace.note("paused", g.invoke({"value": "x"}, cfg, version="v2"))
        trace.note("type", type(paused).__name__)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace.note("item access", paused["value"])
            trace.note("interrupt access", len(paused["__interrupt__"]))
        trace.note("warned", [w.category.__name__ for w in caught])
        trace.note("resumed", g.invoke(api.Command(resume="Bob"), cfg, version="v2"))
        trace.note(
            "updates list",
            g.invoke(
                {"value": "y"},
                {"configurable": {"thread_id": "u"}},
                stream_mode="updates",
                version="v2",
            ),
        )

    ours = check_parity(scenario)
    assert ours["resumed"] == {
        "GraphOutput": {"value": {"Model": {"value": "Bob", "items": ["a"]}}, "interrupts": ()}
    }


async def test_ainvoke_and_astream_v2_match_langgraph():
    async def scenario(api: Api, trace: Trace) -> None:
        g = asking(api)
        cfg = {"configurable": {"thread_id": "a"}}
        trace.note("ainvoke", await g.ainvoke({"value": "x"}, cfg, version="v2"))
        parts = [
            p
            async for p in g.astream(
                api.Command(resume="Al"), cfg, stream_mode="values", version="v2"
            )
        ]
        trace.note("astream", parts)

    await acheck_parity(scenario)
