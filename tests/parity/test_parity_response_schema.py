"""``interrupt(value, response_schema=...)`` on both libraries: the schema each interrupt
shows (a JSON Schema dict as given, a pydantic model, TypedDict or dataclass as its JSON
Schema), the answer validated into the class, an answer that does not match failing the
resume with ``pydantic.ValidationError`` (``is_invalid_resume``) and leaving the interrupt
to be answered again, without cancelling the other answered tasks."""

from __future__ import annotations

import asyncio
import dataclasses
import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

import durable_debug.errors
from durable_debug import Interrupt

pytestmark = pytest.mark.parity


class Decision(BaseModel):
    approved: bool
    note: str | None = None


class DecisionDict(TypedDict):
    approved: bool


@dataclasses.dataclass
class DecisionData:
    approved: bool


RAW_SCHEMA = {"type": "object", "properties": {"approved": {"type": "boolean"}}}


class State(TypedDict):
    answer: Any


class Log(TypedDict):
    log: Annotated[list, operator.add]


def is_invalid_resume(api: Api, exc: BaseException) -> bool:
    if api.name == "langgraph":
        from langgraph.errors import is_invalid_resume as check
    else:
        check = durable_debug.errors.is_invalid_resume
    return check(exc)


def shown(interrupts: Any) -> list[Any]:
    return [(i.value, i.response_schema) for i in interrupts]


@pytest.mark.parametrize(
    "schema",
    [None, RAW_SCHEMA, Decision, DecisionDict, DecisionData],
    ids=["none", "raw", "pydantic", "typeddict", "dataclass"],
)
def test_the_schema_shown_and_the_answer_validated(schema: Any) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def node(state: State) -> dict:
            return {"answer": api.interrupt({"question": "approve?"}, response_schema=schema)}

        graph = (
            api.StateGraph(State)
            .add_node("node", node)
            .add_edge(api.START, "node")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        chunks = list(graph.stream({"answer": None}, cfg))
        trace.note("streamed", [shown(c["__interrupt__"]) for c in chunks])
        trace.note("task", shown(graph.get_state(cfg).tasks[0].interrupts))
        debug = graph.stream(None, cfg, stream_mode="debug")
        trace.note(
            "debug",
            [
                [{**i, "id": trace.label("i", i["id"])} for i in c["payload"]["interrupts"]]
                for c in debug
                if "interrupts" in c["payload"]
            ],
        )
        if schema not in (None, RAW_SCHEMA):
            try:
                graph.invoke(api.Command(resume={"approved": "nope"}), cfg)
            except ValidationError as exc:
                trace.note("refused", is_invalid_resume(api, exc))
            trace.note("still asked", shown(graph.get_state(cfg).interrupts))
        trace.call("answered", graph.invoke, api.Command(resume={"approved": True, "x": 1}), cfg)

    check_parity(scenario)


@pytest.mark.parametrize("by_id", [False, True])
def test_a_refused_answer_after_an_accepted_one(by_id: bool) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def node(state: State) -> dict:
            first = api.interrupt("first")
            second = api.interrupt("approve?", response_schema=Decision)
            return {"answer": [first, second]}

        graph = (
            api.StateGraph(State)
            .add_node("node", node)
            .add_edge(api.START, "node")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        graph.invoke({"answer": None}, cfg)
        graph.invoke(api.Command(resume="ok"), cfg)
        [pending] = graph.get_state(cfg).interrupts

        def resume(value: Any) -> Any:
            return api.Command(resume={pending.id: value} if by_id else value)

        trace.call("refused", graph.invoke, resume({"approved": "nope"}), cfg, message=False)
        trace.call("answered", graph.invoke, resume({"approved": True}), cfg)

    check_parity(scenario)


async def test_a_refused_answer_lets_the_other_answered_task_finish() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        sent: list[str] = []
        checked = asyncio.Event()

        async def send(state: Log) -> dict:
            api.interrupt("send?", response_schema=Decision)
            sent.append("email")
            await checked.wait()  # still running when its sibling has failed
            return {"log": ["sent"]}

        async def check(state: Log) -> dict:
            try:
                api.interrupt("check?", response_schema=Decision)
            finally:
                checked.set()
            return {"log": ["checked"]}

        graph = (
            api.StateGraph(Log)
            .add_node("send", send)
            .add_node("check", check)
            .add_edge(api.START, "send")
            .add_edge(api.START, "check")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"log": []}, cfg)
        ids = {i.value: i.id for i in (await graph.aget_state(cfg)).interrupts}
        answers = {ids["send?"]: {"approved": True}, ids["check?"]: {"approved": "nope"}}
        await trace.run("refused", graph.ainvoke(api.Command(resume=answers), cfg), message=False)
        trace.note("pending", [i.value for i in (await graph.aget_state(cfg)).interrupts])
        trace.note("sent", list(sent))
        done = await graph.ainvoke(api.Command(resume={ids["check?"]: {"approved": True}}), cfg)
        trace.note("done", sorted(done["log"]))
        trace.note("sent at the end", list(sent))

    await acheck_parity(scenario)


def test_interrupt_is_generic_and_has_langgraphs_fields() -> None:
    assert Interrupt[Decision] is not None
    assert repr(Interrupt("v", "i")) == "Interrupt(value='v', id='i', response_schema=None)"
    assert Interrupt("v").id == "placeholder-id"
