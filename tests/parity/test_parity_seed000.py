"""The scenarios of notebooks 01–08 on both libraries: history, resume, fork, pending writes,
Send, interrupts.

Each test runs one scenario on durable_debug and on LangGraph and compares the outputs, the
whole checkpoint history (all branches), the snapshots and the node execution counters.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class ChainState(TypedDict):
    value: str
    log: Annotated[list, operator.add]


def chain(api: Api, trace: Trace, names: str, *, fail_once: str = "") -> object:
    """A compiled chain START → names[0] → … → END over ChainState; node ``fail_once``
    raises RuntimeError('boom') the first time it runs."""
    failed: set[str] = set()

    def make(name: str):
        async def node(state: ChainState) -> dict:
            trace.ran(name)
            if name == fail_once and name not in failed:
                failed.add(name)
                raise RuntimeError("boom")
            return {"value": name.upper(), "log": [f"ran {name.upper()}"]}

        return node

    builder = api.StateGraph(ChainState)
    previous = api.START
    for name in names:
        builder.add_node(name, make(name)).add_edge(previous, name)
        previous = name
    builder.add_edge(previous, api.END)
    return builder.compile(checkpointer=api.MemorySaver())


async def history(graph, config) -> list:
    """The thread's whole history, newest first."""
    return [s async for s in graph.aget_state_history(config)]


# -- notebook 01 the checkpoint model --------------------------------------------------------------


async def test_history_accumulates_log_and_overwrites_value():
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace, "ab")
        cfg = {"configurable": {"thread_id": "demo-1"}}
        await trace.run("output", g.ainvoke({"value": "", "log": []}, cfg))
        trace.history("history", await history(g, cfg))
        trace.state("state", await g.aget_state(cfg))

    ours = await acheck_parity(scenario)
    steps = [(c["step"], c["next"]) for c in ours["history"]["checkpoints"]]
    assert steps == [(2, ()), (1, ("b",)), (0, ("a",)), (-1, ("__start__",))]


# -- notebook 02 resume ----------------------------------------------------------------------------


async def test_resume_after_failure_runs_only_the_failed_node():
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace, "abc", fail_once="c")
        cfg = {"configurable": {"thread_id": "resume-1"}}
        await trace.run("run 1", g.ainvoke({"value": "", "log": []}, cfg))
        trace.state("after failure", await g.aget_state(cfg))
        await trace.run("run 2", g.ainvoke(None, cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["run 1"] == {"raised": "RuntimeError", "message": "boom"}
    assert ours["after failure"]["next"] == ("c",)
    assert ours["executions"] == {"a": 1, "b": 1, "c": 2}


async def test_fresh_input_on_a_failed_thread_reruns_from_the_top():
    """The "classic bug" of notebook 02, and the right pattern next to it."""

    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace, "abc", fail_once="c")
        fresh = {"value": "", "log": []}
        wrong = {"configurable": {"thread_id": "wrong"}}
        await trace.run("wrong 1", g.ainvoke(fresh, wrong))
        await trace.run("wrong 2", g.ainvoke(fresh, wrong))
        trace.history("wrong history", await history(g, wrong))
        wrong_counts = dict(trace.executions)
        trace.note("wrong executions", wrong_counts)

        right_graph = chain(api, trace, "abc", fail_once="c")
        right = {"configurable": {"thread_id": "right"}}
        await trace.run("right 1", right_graph.ainvoke(fresh, right))
        snap = await right_graph.aget_state(right)
        graph_input = None if snap.next else fresh
        await trace.run("right 2", right_graph.ainvoke(graph_input, config=right))
        trace.history("right history", await history(right_graph, right))

    ours = await acheck_parity(scenario)
    assert ours["wrong executions"] == {"a": 2, "b": 2, "c": 2}
    assert ours["wrong 2"]["log"] == ["ran A", "ran B", "ran A", "ran B", "ran C"]
    assert ours["right 2"]["log"] == ["ran A", "ran B", "ran C"]
    # the right pattern adds one run of a and b, and c's failed run plus its re-run
    assert ours["executions"] == {"a": 3, "b": 3, "c": 4}


# -- notebook 03 time travel: forking --------------------------------------------------------------


async def test_fork_from_step_one_grows_a_second_branch():
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace, "abc")
        cfg = {"configurable": {"thread_id": "fork-1"}}
        await trace.run("original", g.ainvoke({"value": "", "log": []}, cfg))
        target = None
        async for snap in g.aget_state_history(cfg):
            if snap.metadata["step"] == 1:
                target = snap.config
                break
        new_cfg = await g.aupdate_state(target, {"value": "FORKED"})
        trace.note("fork config", new_cfg)
        trace.state("fork", await g.aget_state(new_cfg))
        await trace.run("forked run", g.ainvoke(None, new_cfg))
        trace.history("both branches", await history(g, cfg))
        trace.state("latest", await g.aget_state(cfg))
        trace.state("target after fork", await g.aget_state(target))

    ours = await acheck_parity(scenario)
    fork = ours["fork"]
    assert (fork["source"], fork["step"], fork["values"]["value"]) == ("update", 2, "FORKED")
    assert len(ours["both branches"]["checkpoints"]) == 8
    assert ours["executions"] == {"a": 1, "b": 2, "c": 2}


# -- notebook 04 pending writes of parallel tasks --------------------------------------------------


class ParallelState(TypedDict):
    results: Annotated[list, operator.add]


def parallel_ab(api: Api, trace: Trace, *, a_delay: float, b_delay: float) -> object:
    """START → a and START → b in one step; b raises the first time, after ``b_delay``."""
    failed: list[bool] = []

    async def a(state: ParallelState) -> dict:
        trace.ran("a")
        await asyncio.sleep(a_delay)
        return {"results": ["A"]}

    async def b(state: ParallelState) -> dict:
        trace.ran("b")
        await asyncio.sleep(b_delay)
        if not failed:
            failed.append(True)
            raise RuntimeError("b failed")
        return {"results": ["B"]}

    return (
        api.StateGraph(ParallelState)
        .add_node("a", a)
        .add_node("b", b)
        .add_edge(api.START, "a")
        .add_edge(api.START, "b")
        .add_edge("a", api.END)
        .add_edge("b", api.END)
        .compile(checkpointer=api.MemorySaver())
    )


@pytest.mark.parametrize(
    ("a_delay", "b_delay"),
    [(0.0, 0.05), (0.2, 0.0)],
    ids=["a-finishes-before-b-fails", "b-fails-while-a-runs"],
)
async def test_parallel_failure_keeps_finished_writes(a_delay, b_delay):
    async def scenario(api: Api, trace: Trace) -> None:
        g = parallel_ab(api, trace, a_delay=a_delay, b_delay=b_delay)
        cfg = {"configurable": {"thread_id": "par-1"}}
        await trace.run("run 1", g.ainvoke({"results": []}, cfg))
        trace.state("after failure", await g.aget_state(cfg))
        await trace.run("resume", g.ainvoke(None, cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["resume"] == {"results": ["A", "B"]}
    if a_delay == 0.0:
        assert ours["after failure"]["next"] == ("b",)
        assert ours["executions"] == {"a": 1, "b": 2}


async def test_resume_a_failed_step_through_its_checkpoint_config():
    """``ainvoke(None, snapshot.config)``: the config names the thread's latest checkpoint
    explicitly, as a debugger UI does when it resumes the checkpoint on screen."""

    async def scenario(api: Api, trace: Trace) -> None:
        g = parallel_ab(api, trace, a_delay=0.0, b_delay=0.05)
        cfg = {"configurable": {"thread_id": "addressed"}}
        await trace.run("run", g.ainvoke({"results": []}, cfg))
        snap = await g.aget_state(cfg)
        await trace.run("resume", g.ainvoke(None, snap.config))
        trace.history("history", await history(g, cfg))

    await acheck_parity(scenario)


# -- notebook 05 Send fan-out and reducers ---------------------------------------------------------


def _merge(left: dict | None, right: dict | None) -> dict:
    return {**(left or {}), **(right or {})}


class FanState(TypedDict):
    items: list
    merged: Annotated[dict, _merge]
    collected: Annotated[list, operator.add]
    single: str


def fan_out(api: Api, trace: Trace, delays: dict[str, float], *, write_single: bool) -> object:
    """START → route → Send('worker', item) per item; each worker sleeps ``delays[item]``."""

    def route(state: FanState) -> list:
        return [api.Send("worker", {"item": it}) for it in state["items"]]

    async def worker(state: dict) -> dict:
        trace.ran(f"worker {state['item']}")
        await asyncio.sleep(delays[state["item"]])
        update = {"merged": {state["item"]: "done"}, "collected": [state["item"]]}
        if write_single:
            update["single"] = state["item"]
        return update

    return (
        api.StateGraph(FanState)
        .add_node("worker", worker)
        .add_conditional_edges(api.START, route, ["worker"])
        .add_edge("worker", api.END)
        .compile(checkpointer=api.MemorySaver())
    )


@pytest.mark.parametrize(
    "delays",
    [
        {"x": 0.0, "y": 0.0, "z": 0.0},
        {"x": 0.06, "y": 0.03, "z": 0.0},
        {"x": 0.0, "y": 0.06, "z": 0.03},
    ],
    ids=["together", "reverse", "middle-last"],
)
async def test_send_fan_out_merges_in_fan_out_order(delays):
    async def scenario(api: Api, trace: Trace) -> None:
        g = fan_out(api, trace, delays, write_single=False)
        cfg = {"configurable": {"thread_id": "fan-1"}}
        await trace.run("output", g.ainvoke({"items": ["x", "y", "z"]}, cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["output"]["collected"] == ["x", "y", "z"]
    assert ours["output"]["merged"] == {"x": "done", "y": "done", "z": "done"}


async def test_parallel_writes_to_a_plain_key_raise_invalid_update():
    async def scenario(api: Api, trace: Trace) -> None:
        g = fan_out(api, trace, {"x": 0.0, "y": 0.0}, write_single=True)
        cfg = {"configurable": {"thread_id": "fan-2"}}
        await trace.run("output", g.ainvoke({"items": ["x", "y"]}, cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["output"] == {
        "raised": "InvalidUpdateError",
        "message": "At key 'single': Can receive only one value per step. "
        "Use an Annotated key to handle multiple values.",
    }


# -- notebook 06 human in the loop -----------------------------------------------------------------


class PlanState(TypedDict):
    plan: str
    approved: str


async def test_interrupt_pauses_at_gate_and_resume_continues():
    async def scenario(api: Api, trace: Trace) -> None:
        async def gate(state: PlanState) -> dict:
            trace.ran("gate")
            decision = api.interrupt({"question": "approve this plan?", "plan": state["plan"]})
            return {"approved": decision}

        g = (
            api.StateGraph(PlanState)
            .add_node("gate", gate)
            .add_edge(api.START, "gate")
            .add_edge("gate", api.END)
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "hitl-1"}}
        await trace.run("r1", g.ainvoke({"plan": "deploy", "approved": ""}, cfg))
        trace.state("paused", await g.aget_state(cfg))
        await trace.run("r2", g.ainvoke(api.Command(resume="APPROVED"), cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["r1"]["__interrupt__"] == [
        {"Interrupt": {"question": "approve this plan?", "plan": "deploy"}, "id": "i0"}
    ]
    assert ours["paused"]["next"] == ("gate",)
    assert ours["r2"]["approved"] == "APPROVED"


# -- notebook 07 multiple interrupts ---------------------------------------------------------------


class GatesState(TypedDict):
    a: str
    b: str


async def test_sequential_interrupts_need_one_resume_each():
    async def scenario(api: Api, trace: Trace) -> None:
        async def two_gates(state: GatesState) -> dict:
            trace.ran("two_gates")
            first = api.interrupt({"ask": "A?"})
            second = api.interrupt({"ask": "B?"})
            return {"a": first, "b": second}

        g = (
            api.StateGraph(GatesState)
            .add_node("two_gates", two_gates)
            .add_edge(api.START, "two_gates")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "seq-1"}}
        await trace.run("invoke", g.ainvoke({"a": "", "b": ""}, cfg))
        trace.state("at A", await g.aget_state(cfg))
        await trace.run("resume A", g.ainvoke(api.Command(resume="A-VALUE"), cfg))
        trace.state("at B", await g.aget_state(cfg))
        await trace.run("resume B", g.ainvoke(api.Command(resume="B-VALUE"), cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["resume B"] == {"a": "A-VALUE", "b": "B-VALUE"}
    assert ours["executions"] == {"two_gates": 3}


class ReviewState(TypedDict):
    items: list
    approvals: Annotated[list, operator.add]


def reviews(api: Api, trace: Trace) -> object:
    """One Send per item to ``review``, each of which interrupts."""

    def fan(state: ReviewState) -> list:
        return [api.Send("review", {"item": it}) for it in state["items"]]

    async def review(state: dict) -> dict:
        trace.ran(f"review {state['item']}")
        d = api.interrupt({"review_item": state["item"]})
        return {"approvals": [f"{state['item']}={d}"]}

    return (
        api.StateGraph(ReviewState)
        .add_node("review", review)
        .add_conditional_edges(api.START, fan, ["review"])
        .compile(checkpointer=api.MemorySaver())
    )


def ids_by_item(result: dict) -> dict[str, str]:
    """Interrupt id per reviewed item, from a run result's ``__interrupt__``."""
    return {i.value["review_item"]: i.id for i in result["__interrupt__"]}


async def test_parallel_interrupts_resume_by_id_in_one_call():
    async def scenario(api: Api, trace: Trace) -> None:
        g = reviews(api, trace)
        cfg = {"configurable": {"thread_id": "par-int-1"}}
        r1 = await trace.run("invoke", g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"]}, cfg))
        trace.state("paused", await g.aget_state(cfg))
        ids = ids_by_item(r1)
        answers = {ids["doc-X"]: "APPROVE", ids["doc-Y"]: "REJECT", ids["doc-Z"]: "APPROVE"}
        await trace.run("resume", g.ainvoke(api.Command(resume=answers), cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert ours["resume"]["approvals"] == ["doc-X=APPROVE", "doc-Y=REJECT", "doc-Z=APPROVE"]
    assert len({i["id"] for i in ours["invoke"]["__interrupt__"]}) == 3


async def test_partial_resume_map_leaves_the_rest_pending_with_the_same_ids():
    async def scenario(api: Api, trace: Trace) -> None:
        g = reviews(api, trace)
        cfg = {"configurable": {"thread_id": "par-int-2"}}
        r1 = await trace.run("invoke", g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"]}, cfg))
        ids = ids_by_item(r1)
        partial = {ids["doc-X"]: "APPROVE", ids["doc-Z"]: "REJECT"}
        await trace.run("partial", g.ainvoke(api.Command(resume=partial), cfg))
        trace.state("still paused", await g.aget_state(cfg))
        await trace.run("rest", g.ainvoke(api.Command(resume={ids["doc-Y"]: "OK"}), cfg))
        trace.history("history", await history(g, cfg))

    ours = await acheck_parity(scenario)
    assert [i["id"] for i in ours["still paused"]["interrupts"]] == [
        i["id"] for i in ours["invoke"]["__interrupt__"] if i["Interrupt"]["review_item"] == "doc-Y"
    ]
    assert ours["rest"]["approvals"] == ["doc-X=APPROVE", "doc-Y=OK", "doc-Z=REJECT"]


# -- notebook 08 the re-run rule -------------------------------------------------------------------


class DecisionState(TypedDict):
    prep: str
    decision: str


async def test_rerun_counters_of_the_three_node_shapes():
    async def scenario(api: Api, trace: Trace) -> None:
        async def naive(state: DecisionState) -> dict:
            trace.ran("charge (naive)")
            d = api.interrupt({"ask": "ok?"})
            return {"decision": d}

        async def interrupt_first(state: DecisionState) -> dict:
            d = api.interrupt({"ask": "ok?"})
            trace.ran("charge (interrupt first)")
            return {"decision": d}

        async def prepare(state: DecisionState) -> dict:
            trace.ran("prepare")
            return {"prep": "expensive"}

        async def gate(state: DecisionState) -> dict:
            trace.ran("gate")
            d = api.interrupt({"ask": "ok?", "prep": state["prep"]})
            return {"decision": d}

        for shape, nodes in {
            "naive": [("node", naive)],
            "interrupt first": [("node", interrupt_first)],
            "upstream": [("prepare", prepare), ("gate", gate)],
        }.items():
            builder = api.StateGraph(DecisionState).add_sequence(nodes)
            g = builder.add_edge(api.START, nodes[0][0]).compile(checkpointer=api.MemorySaver())
            cfg = {"configurable": {"thread_id": shape}}
            await trace.run(f"{shape}: invoke", g.ainvoke({"prep": "", "decision": ""}, cfg))
            trace.state(f"{shape}: paused", await g.aget_state(cfg))
            await trace.run(f"{shape}: resume", g.ainvoke(api.Command(resume="yes"), cfg))

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {
        "charge (interrupt first)": 1,
        "charge (naive)": 2,
        "gate": 2,
        "prepare": 1,
    }
    assert ours["upstream: resume"] == {"prep": "expensive", "decision": "yes"}
