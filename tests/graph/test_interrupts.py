"""interrupt() and Command(resume=...): ids, answers by id, and the errors we raise where
LangGraph silently ignores what the user asked for."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from graph_support import cfg
from typing_extensions import TypedDict

from durable_debug import (
    START,
    Command,
    DurableDebugWarning,
    MemorySaver,
    Send,
    StateGraph,
    interrupt,
)
from durable_debug.graph.interrupts import is_resume_map
from durable_debug.inspect import findings


class Plan(TypedDict):
    plan: str
    approved: object


class Reviews(TypedDict):
    items: list
    approvals: Annotated[list, operator.add]


def gate(state: Plan) -> dict:
    return {"approved": interrupt({"question": "approve?", "plan": state["plan"]})}


def review(state: dict) -> dict:
    return {"approvals": [f"{state['item']}={interrupt({'review_item': state['item']})}"]}


def fan(state: Reviews) -> list[Send]:
    return [Send("review", {"item": it}) for it in state["items"]]


def gate_graph(saver: MemorySaver, *, strict: bool = False):  # type: ignore[no-untyped-def]
    return (
        StateGraph(Plan)
        .add_node("gate", gate)
        .add_edge(START, "gate")
        .compile(checkpointer=saver, strict=strict)
    )


def review_graph(saver: MemorySaver, *, strict: bool = False):  # type: ignore[no-untyped-def]
    return (
        StateGraph(Reviews)
        .add_node("review", review)
        .add_conditional_edges(START, fan)
        .compile(checkpointer=saver, strict=strict)
    )


def codes(graph, thread: str) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The finding codes of a thread, by checkpoint id."""
    return {cid: [f.code for f in found] for cid, found in findings(graph, cfg(thread)).items()}


def pending_writes(saver: MemorySaver, thread: str) -> list:
    return saver.get_tuple(cfg(thread)).pending_writes  # type: ignore[union-attr]


def test_interrupt_id_is_stable_when_the_node_reruns_unanswered(saver: MemorySaver) -> None:
    g = gate_graph(saver)
    first = g.invoke({"plan": "deploy", "approved": ""}, cfg("h"))["__interrupt__"][0]
    again = g.invoke(None, cfg("h"))["__interrupt__"][0]
    assert first.id == again.id
    assert len(first.id) == 32
    assert g.get_state(cfg("h")).interrupts == (first,)
    assert g.get_state(cfg("h")).tasks[0].interrupts == (first,)


def test_parallel_and_sequential_interrupts_get_distinct_ids(saver: MemorySaver) -> None:
    g = review_graph(saver)
    out = g.invoke({"items": ["x", "y", "z"]}, cfg("p"))
    ids = [i.id for i in out["__interrupt__"]]
    assert len(set(ids)) == 3
    assert g.get_state(cfg("p")).next == ("review", "review", "review")

    class Two(TypedDict):
        a: str
        b: str

    def two(state: Two) -> dict:
        return {"a": interrupt("A?"), "b": interrupt("B?")}

    g2 = StateGraph(Two).add_node("two", two).add_edge(START, "two").compile(checkpointer=saver)
    a = g2.invoke({"a": "", "b": ""}, cfg("s"))["__interrupt__"][0]
    b = g2.invoke(Command(resume="1"), cfg("s"))["__interrupt__"][0]
    assert (a.value, b.value) == ("A?", "B?")
    assert a.id != b.id


def test_partial_resume_map_answers_some_and_keeps_the_rest_pending(saver: MemorySaver) -> None:
    g = review_graph(saver)
    out = g.invoke({"items": ["x", "y", "z"]}, cfg("p"))
    ids = {i.value["review_item"]: i.id for i in out["__interrupt__"]}
    partial = g.invoke(Command(resume={ids["y"]: "ok"}), cfg("p"))
    assert sorted(i.id for i in partial["__interrupt__"]) == sorted([ids["x"], ids["z"]])
    assert partial["approvals"] == ["y=ok"]
    snap = g.get_state(cfg("p"))
    assert snap.next == ("review", "review")
    assert snap.metadata["step"] == 0  # the step has not completed yet
    done = g.invoke(Command(resume={ids["x"]: "no", ids["z"]: "yes"}), cfg("p"))
    assert done["approvals"] == ["x=no", "y=ok", "z=yes"]  # fan-out order, not answer order


def test_single_resume_value_with_several_pending_is_refused(saver: MemorySaver) -> None:
    """LangGraph raises RuntimeError here too; ours names the ids to answer by."""
    g = review_graph(saver)
    g.invoke({"items": ["x", "y"]}, cfg("p"))
    before = pending_writes(saver, "p")
    with pytest.raises(
        RuntimeError, match="has 2 pending interrupts.*Command\\(resume=\\{interrupt_id"
    ):
        g.invoke(Command(resume="ok"), cfg("p"))
    assert pending_writes(saver, "p") == before


def test_resume_with_nothing_pending_is_a_finding(saver: MemorySaver) -> None:
    """As LangGraph: the value is ignored; the checkpoint gets a finding (strict: an error)."""
    g = gate_graph(saver)
    g.invoke({"plan": "p", "approved": ""}, cfg("h"))
    g.invoke(Command(resume="yes"), cfg("h"))
    latest = g.get_state(cfg("h")).config["configurable"]["checkpoint_id"]
    with pytest.warns(DurableDebugWarning, match="Thread 'h' had no pending interrupt"):
        out = g.invoke(Command(resume="again"), cfg("h"))
    assert out["approved"] == "yes"
    assert g.get_state(cfg("h")).config["configurable"]["checkpoint_id"] == latest
    assert codes(g, "h") == {latest: ["resume-nothing-pending"]}

    with pytest.raises(ValueError, match="Thread 'h' has no pending interrupt"):
        gate_graph(saver, strict=True).invoke(Command(resume="again"), cfg("h"))
    assert g.get_state(cfg("h")).values["approved"] == "yes"


def test_resume_map_with_an_unknown_id_answers_the_known_ones_with_a_finding(
    saver: MemorySaver,
) -> None:
    """LangGraph ignores ids that match nothing; we do too, and name them in a finding."""
    g = review_graph(saver)
    out = g.invoke({"items": ["x", "y"]}, cfg("p"))
    known = out["__interrupt__"][0].id
    bogus = "f" * 32
    before = pending_writes(saver, "p")
    with pytest.raises(ValueError, match=f"interrupt id\\(s\\) {bogus} that are not pending"):
        review_graph(saver, strict=True).invoke(Command(resume={known: "ok", bogus: "?"}), cfg("p"))
    assert pending_writes(saver, "p") == before  # strict: nothing resumed

    with pytest.warns(DurableDebugWarning, match=f"interrupt id {bogus} that is not pending"):
        out = g.invoke(Command(resume={known: "ok", bogus: "?"}), cfg("p"))
    assert len(out["__interrupt__"]) == 1  # the known one was answered, the other still waits
    assert len(g.get_state(cfg("p")).interrupts) == 1
    (found,) = findings(g, cfg("p")).values()
    assert [(f.code, f.key) for f in found] == [("resume-unknown-id", bogus)]


def test_a_plain_dict_answer_is_a_value_not_a_map(saver: MemorySaver) -> None:
    g = gate_graph(saver)
    g.invoke({"plan": "p", "approved": ""}, cfg("h"))
    out = g.invoke(Command(resume={"approved": True, "reviewer": "josh"}), cfg("h"))
    assert out["approved"] == {"approved": True, "reviewer": "josh"}
    assert not is_resume_map({"approved": True})
    assert is_resume_map({"0" * 32: 1})


def test_interrupt_needs_a_running_node() -> None:
    """(Without a checkpointer it ends the run: test_parity_interrupt_without_saver.py.)"""
    with pytest.raises(RuntimeError, match="outside a running node"):
        interrupt("x")


def test_resume_on_an_empty_thread_runs_from_start_with_a_finding(saver: MemorySaver) -> None:
    """LangGraph runs the graph from START with no input here; strict refuses it."""
    from durable_debug import EmptyInputError

    with pytest.raises(EmptyInputError, match="Thread 'nobody' has no checkpoint"):
        gate_graph(saver, strict=True).invoke(Command(resume="yes"), cfg("nobody"))
    assert saver.storage == {}

    g = gate_graph(saver)
    # the gate then runs on a state without "plan", as in LangGraph
    with (
        pytest.warns(DurableDebugWarning, match="Thread 'nobody' had no checkpoint"),
        pytest.raises(KeyError, match="plan"),
    ):
        g.invoke(Command(resume="yes"), cfg("nobody"))
    first = [s for s in g.get_state_history(cfg("nobody"))][-1]
    assert first.metadata["source"] == "input"
    assert codes(g, "nobody") == {
        first.config["configurable"]["checkpoint_id"]: ["resume-empty-thread"]
    }


class Asked(TypedDict, total=False):
    who: str
    answers: Annotated[list, operator.add]


async def test_side_by_side_subgraphs_never_take_each_others_answer() -> None:
    """Two subgraphs run side by side, each paused; answering one by its id answers that one
    only, whichever resumes first. Here the unanswered one asks first: it used to take the
    answer meant for its sibling, as if it had been its own."""
    gates: list[asyncio.Event] = []

    def ask(state: Asked) -> Asked:
        if state["who"] == "b":
            gates[-1].set()  # b asks before a's subgraph has started
        return {"answers": [f"{state['who']}:{interrupt(state['who'])}"]}

    child = StateGraph(Asked).add_node("ask", ask).add_edge(START, "ask").compile()

    async def run_child(state: Asked) -> Asked:
        if state["who"] == "a":
            await gates[-1].wait()
        done = await child.ainvoke({"who": state["who"]})
        return {"answers": done["answers"]}

    graph = (
        StateGraph(Asked)
        .add_node("run_child", run_child)
        .add_conditional_edges(START, lambda _: [Send("run_child", {"who": w}) for w in "ab"])
        .compile(checkpointer=MemorySaver())
    )
    config = cfg("side-by-side")
    gates.append(asyncio.Event())
    first = await graph.ainvoke({"answers": []}, config)
    asked = {i.value: i.id for i in first["__interrupt__"]}
    assert sorted(asked) == ["a", "b"]

    gates.append(asyncio.Event())
    second = await graph.ainvoke(Command(resume={asked["a"]: "yes"}), config)
    assert [i.value for i in second["__interrupt__"]] == ["b"]  # b still waits for its own
    state = await graph.aget_state(config)
    assert [i.value for t in state.tasks for i in t.interrupts] == ["b"]

    gates.append(asyncio.Event())
    third = await graph.ainvoke(Command(resume={asked["b"]: "no"}), config)
    assert sorted(third["answers"]) == ["a:yes", "b:no"]
    assert "__interrupt__" not in third
