"""State schemas on both libraries: ``input_schema`` / ``output_schema`` (and the older
``input=`` / ``output=``), private channels declared by a node's input annotation or
``add_node(..., input_schema=)``, a node named like a state key, and a pydantic node that
returns a model instance (its defaults are written too)."""

from __future__ import annotations

import dataclasses
import warnings

import pydantic
import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class Question(TypedDict):
    question: str


class Answer(TypedDict):
    answer: str


class Overall(TypedDict):
    question: str
    answer: str
    notes: str


class Private(TypedDict):
    secret: str


class Other(TypedDict):
    other: str


def qa_graph(api: Api, trace: Trace, **schemas: object):
    def think(state: Overall) -> dict:
        trace.ran("think")
        trace.note(f"think saw {len(trace.executions)}/{trace.executions['think']}", state)
        return {"secret": "s3", "notes": "n"}

    def reply(state: Private) -> dict:  # its annotation declares the private channel
        trace.ran("reply")
        trace.note(f"reply saw {trace.executions['reply']}", state)
        return {"answer": f"{state['secret']}!"}

    return (
        api.StateGraph(Overall, **schemas)
        .add_node("think", think)
        .add_node("reply", reply)
        .add_edge(api.START, "think")
        .add_edge("think", "reply")
        .add_edge("reply", api.END)
        .compile(checkpointer=api.MemorySaver())
    )


async def input_output(api: Api, trace: Trace) -> None:
    graph = qa_graph(api, trace, input_schema=Question, output_schema=Answer)
    cfg = {"configurable": {"thread_id": "qa"}}
    # "notes" is a state key but not an input key: dropped from the input.
    await trace.run("result", graph.ainvoke({"question": "why", "notes": "x"}, cfg))
    trace.state("state", await graph.aget_state(cfg))
    trace.history("history", [s async for s in graph.aget_state_history(cfg)])
    cfg2 = {"configurable": {"thread_id": "qa2"}}
    trace.note(
        "values",
        [c async for c in graph.astream({"question": "how"}, cfg2, stream_mode="values")],
    )
    cfg3 = {"configurable": {"thread_id": "qa3"}}
    trace.note(
        "updates",
        [c async for c in graph.astream({"question": "who"}, cfg3, stream_mode="updates")],
    )


async def test_input_and_output_schemas_filter_the_run():
    ours = await acheck_parity(input_output)
    assert ours["result"] == {"answer": "s3!"}


async def test_older_input_output_keywords():
    async def older(api: Api, trace: Trace) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = qa_graph(api, trace, input=Question, output=Answer)
        cfg = {"configurable": {"thread_id": "old"}}
        await trace.run("result", graph.ainvoke({"question": "why"}, cfg))

    await acheck_parity(older)


async def test_private_channel_without_input_or_output_schema():
    async def private(api: Api, trace: Trace) -> None:
        graph = qa_graph(api, trace)
        cfg = {"configurable": {"thread_id": "p"}}
        await trace.run("result", graph.ainvoke({"question": "q"}, cfg))
        trace.state("state", await graph.aget_state(cfg))

    await acheck_parity(private)


def test_add_node_input_schema_and_branch_reads():
    def scenario(api: Api, trace: Trace) -> None:
        def first(state: Overall) -> dict:
            trace.ran("first")
            return {"secret": "x", "other": "o"}

        def second(state: Overall) -> dict:  # annotation overridden by input_schema=
            trace.ran("second")
            trace.note("second saw", state)
            return {"other": "o2"}

        def route(state: dict) -> str:
            trace.note(f"route saw {len(trace.observations)}", state)
            return api.END

        builder = api.StateGraph(Overall)
        builder.add_node("first", first)
        builder.add_node("second", second, input_schema=Private)
        builder.add_node("unused", lambda s: {}, input_schema=Other)
        builder.add_edge(api.START, "first").add_edge("first", "second")
        builder.add_conditional_edges("first", route, [api.END])
        builder.add_conditional_edges("second", route, [api.END])
        graph = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "b"}}
        trace.call("result", graph.invoke, {"question": "q"}, cfg)
        trace.note("state", graph.get_state(cfg).values)

    check_parity(scenario)


def test_node_named_like_a_state_key():
    def scenario(api: Api, trace: Trace) -> None:
        def answer(state: Overall) -> dict:
            trace.ran("answer")
            return {"answer": state["question"].upper()}

        builder = api.StateGraph(Overall).add_node("answer", answer)
        graph = builder.add_edge(api.START, "answer").compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "k"}}
        trace.call("result", graph.invoke, {"question": "q"}, cfg)
        trace.state("state", graph.get_state(cfg))
        trace.call("updates", graph.stream, {"question": "r"}, cfg, stream_mode="updates")

    check_parity(scenario)


class Form(pydantic.BaseModel):
    name: str = "anon"
    count: int = 0
    tags: list[str] = []


@dataclasses.dataclass
class Patch:
    count: int
    tags: list


def test_pydantic_node_returning_a_model_writes_its_defaults():
    def scenario(api: Api, trace: Trace) -> None:
        def fill(state: Form) -> Form:
            trace.ran("fill")
            return Form(count=state.count + 1)

        def patch(state: Form) -> Patch:
            trace.ran("patch")
            return Patch(count=state.count * 10, tags=["p"])

        graph = (
            api.StateGraph(Form)
            .add_node("fill", fill)
            .add_node("patch", patch)
            .add_edge(api.START, "fill")
            .add_edge("fill", "patch")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "f"}}
        trace.call("updates", graph.stream, {"name": "kim", "count": 1}, cfg, stream_mode="updates")
        trace.note("state", graph.get_state(cfg).values)
        trace.call(
            "input model", graph.invoke, Form(name="lee"), {"configurable": {"thread_id": "g"}}
        )

    check_parity(scenario)
