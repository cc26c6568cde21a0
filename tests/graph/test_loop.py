"""The run loop: starting, resuming, parallel steps, failures, limits and interrupts."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Literal

import pytest
from graph_support import LogState, cfg, checkpoint_count
from typing_extensions import TypedDict

from durable_debug import (
    END,
    START,
    Command,
    EmptyInputError,
    GraphRecursionError,
    MemorySaver,
    Send,
    SqliteSaver,
    StateGraph,
)


class Out(TypedDict):
    out: Annotated[list, operator.add]
    route: str


def append(name: str):  # type: ignore[no-untyped-def]
    def node(state: Out) -> dict:
        return {"out": [name]}

    node.__name__ = name
    return node


def test_resume_needs_a_thread_with_a_checkpoint(saver: MemorySaver) -> None:
    g = StateGraph(Out).add_node("a", append("a")).add_edge(START, "a").compile(checkpointer=saver)
    with pytest.raises(EmptyInputError, match="Thread 'empty' has no checkpoint"):
        g.invoke(None, cfg("empty"))
    assert checkpoint_count(saver) == 0


def test_a_checkpointed_graph_needs_a_thread_id(saver: MemorySaver) -> None:
    g = StateGraph(Out).add_node("a", append("a")).add_edge(START, "a").compile(checkpointer=saver)
    with pytest.raises(ValueError, match='pass config=\\{"configurable": \\{"thread_id"'):
        g.invoke({"out": []}, {})


def test_graph_without_checkpointer_runs_but_keeps_nothing() -> None:
    g = StateGraph(Out).add_node("a", append("a")).add_edge(START, "a").compile()
    assert g.invoke({"out": []}) == {"out": ["a"]}
    with pytest.raises(ValueError, match="get_state needs a checkpointer"):
        g.get_state(cfg("t"))


def test_recursion_limit_stops_a_loop_and_keeps_its_checkpoints(saver: MemorySaver) -> None:
    g = (
        StateGraph(Out)
        .add_node("spin", append("spin"))
        .add_edge(START, "spin")
        .add_edge("spin", "spin")
        .compile(checkpointer=saver)
    )
    config = {**cfg("loop"), "recursion_limit": 5}
    with pytest.raises(
        GraphRecursionError, match="Recursion limit of 5 reached.*next \\('spin',\\)"
    ):
        g.invoke({"out": []}, config)
    snap = g.get_state(cfg("loop"))
    assert snap.metadata["step"] == 5
    assert snap.next == ("spin",)
    assert snap.values["out"] == ["spin"] * 5


def test_parallel_branches_merge_by_node_name_not_completion_order(saver: MemorySaver) -> None:
    async def slow_b(state: Out) -> dict:
        await asyncio.sleep(0.02)
        return {"out": ["b"]}

    async def fast_c(state: Out) -> dict:
        return {"out": ["c"]}

    g = (
        StateGraph(Out)
        .add_node("c", fast_c)
        .add_node("b", slow_b)
        .add_edge(START, "c")
        .add_edge(START, "b")
        .compile(checkpointer=saver)
    )
    assert g.invoke({"out": []}, cfg("p"))["out"] == ["b", "c"]


def test_failure_cancels_running_siblings_which_rerun_on_resume(saver: MemorySaver) -> None:
    runs: list[str] = []
    state = {"fail": True}
    slow_started, never = asyncio.Event(), asyncio.Event()

    async def fails(s: Out) -> dict:
        runs.append("fails")
        if state["fail"]:
            await slow_started.wait()  # the sibling is running when this one fails
            raise KeyError("missing")
        return {"out": ["fails"]}

    async def slow(s: Out) -> dict:
        runs.append("slow")
        if state["fail"]:
            slow_started.set()
            await never.wait()  # still running: only its sibling's failure ends it
        return {"out": ["slow"]}

    g = (
        StateGraph(Out)
        .add_node("fails", fails)
        .add_node("slow", slow)
        .add_edge(START, "fails")
        .add_edge(START, "slow")
        .compile(checkpointer=saver)
    )
    with pytest.raises(KeyError):
        g.invoke({"out": []}, cfg("f"))
    snap = g.get_state(cfg("f"))
    assert snap.next == ("fails", "slow")
    errors = {t.name: t.error for t in snap.tasks}
    assert errors == {"fails": "KeyError('missing')", "slow": "CancelledError()"}
    state["fail"] = False
    runs.clear()
    assert g.invoke(None, cfg("f"))["out"] == ["fails", "slow"]
    assert sorted(runs) == ["fails", "slow"]


def test_fresh_input_discards_what_the_thread_had_scheduled(saver: MemorySaver) -> None:
    g = (
        StateGraph(Out)
        .add_node("a", append("a"))
        .add_node("b", append("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver, interrupt_before=["b"])
    )
    g.invoke({"out": []}, cfg("t"))
    assert g.get_state(cfg("t")).next == ("b",)
    g.invoke({"out": ["new"]}, cfg("t"))
    history = list(g.get_state_history(cfg("t")))
    assert [(s.metadata["step"], s.metadata["source"], s.next) for s in history[:3]] == [
        (4, "loop", ("b",)),
        (3, "loop", ("a",)),
        (2, "input", ("__start__",)),
    ]
    assert history[0].values["out"] == ["a", "new", "a"]


def test_interrupt_after_pauses_once_per_pause(saver: MemorySaver) -> None:
    g = (
        StateGraph(Out)
        .add_node("a", append("a"))
        .add_node("b", append("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver, interrupt_after=["a"])
    )
    assert g.invoke({"out": []}, cfg("t")) == {"out": ["a"]}
    assert g.get_state(cfg("t")).next == ("b",)
    assert g.invoke(None, cfg("t")) == {"out": ["a", "b"]}


def test_join_runs_its_target_once_after_every_source(saver: MemorySaver) -> None:
    counts = {"c": 0}

    def c(state: Out) -> dict:
        counts["c"] += 1
        return {"out": ["c"]}

    g = (
        StateGraph(Out)
        .add_node("a", append("a"))
        .add_node("b1", append("b1"))
        .add_node("b2", append("b2"))
        .add_node("c", c)
        .add_edge(START, "a")
        .add_edge(START, "b1")
        .add_edge("b1", "b2")
        .add_edge(["a", "b2"], "c")
        .compile(checkpointer=saver)
    )
    assert g.invoke({"out": []}, cfg("j"))["out"] == ["a", "b1", "b2", "c"]
    assert counts["c"] == 1


def test_conditional_edges_by_name_list_path_map_and_send(saver: MemorySaver) -> None:
    def router(state: Out) -> Literal["left", "right"]:
        return "left" if state["route"] == "L" else "right"

    g = (
        StateGraph(Out)
        .add_node("left", append("left"))
        .add_node("right", append("right"))
        .add_node("both", append("both"))
        .add_conditional_edges(START, router)
        .add_conditional_edges("left", lambda s: ["both", "right"])
        .add_conditional_edges("right", lambda s: s["route"], {"L": END, "R": "both"})
        .compile(checkpointer=saver)
    )
    assert g.invoke({"out": [], "route": "L"}, cfg("l"))["out"] == ["left", "both", "right"]
    assert g.invoke({"out": [], "route": "R"}, cfg("r"))["out"] == ["right", "both"]


def test_command_from_a_node_updates_and_routes(saver: MemorySaver) -> None:
    def decide(state: Out) -> Command:
        return Command(update={"route": "chosen"}, goto=[Send("worker", {"out": [], "route": "x"})])

    def worker(state: dict) -> dict:
        return {"out": [f"worker saw {state['route']}"]}

    g = (
        StateGraph(Out)
        .add_node("decide", decide, destinations=("worker",))
        .add_node("worker", worker)
        .add_edge(START, "decide")
        .compile(checkpointer=saver)
    )
    assert g.invoke({"out": []}, cfg("c")) == {"out": ["worker saw x"], "route": "chosen"}


def test_command_update_and_goto_as_run_input(saver: MemorySaver) -> None:
    g = (
        StateGraph(Out)
        .add_node("a", append("a"))
        .add_node("b", append("b"))
        .add_edge(START, "a")
        .compile(checkpointer=saver)
    )
    g.invoke({"out": []}, cfg("t"))
    out = g.invoke(Command(update={"route": "manual"}, goto="b"), cfg("t"))
    assert out == {"out": ["a", "b"], "route": "manual"}
    with pytest.raises(Exception, match="routed to unknown node 'zz'"):
        g.invoke(Command(goto="zz"), cfg("t"))


def test_routing_to_an_unknown_node_names_it(saver: MemorySaver) -> None:
    g = (
        StateGraph(Out)
        .add_node("a", append("a"))
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: "nowhere")
        .compile(checkpointer=saver)
    )
    with pytest.raises(Exception, match="Node 'a' routed to unknown node 'nowhere'"):
        g.invoke({"out": []}, cfg("t"))


async def test_sync_api_works_inside_a_running_event_loop(saver: MemorySaver) -> None:
    """A Jupyter cell runs inside an event loop; the sync API must still work there."""

    def sync_node(state: LogState) -> dict:
        return {"log": ["sync"]}

    g = (
        StateGraph(LogState)
        .add_node("n", sync_node)
        .add_edge(START, "n")
        .compile(checkpointer=saver)
    )
    assert g.invoke({"value": "v", "log": []}, cfg("jupyter")) == {"value": "v", "log": ["sync"]}
    assert g.get_state(cfg("jupyter")).next == ()
    assert [
        c["log"] for c in g.stream({"value": "v", "log": []}, cfg("j2"), stream_mode="values")
    ] == [[], ["sync"]]


def test_nodes_can_take_the_run_config(saver: MemorySaver) -> None:
    seen = {}

    def node(state: Out, config: dict) -> dict:
        seen.update(config["metadata"])
        return {"out": [config["configurable"]["thread_id"]]}

    # LangGraph's warning for the annotation; the config is passed all the same
    with pytest.warns(UserWarning, match="The 'config' parameter should be typed as"):
        g = StateGraph(Out).add_node("n", node).add_edge(START, "n")
    g = g.compile(checkpointer=saver)
    assert g.invoke({"out": []}, cfg("cfg-thread"))["out"] == ["cfg-thread"]
    assert seen["langgraph_node"] == "n"
    assert seen["langgraph_step"] == 1


class _Crash(Exception):
    """Stands for the process dying right after a step's tasks saved their writes."""


async def test_a_crash_after_start_saved_its_writes_resumes_with_its_input_and_route() -> None:
    # A saver without transactions saves a step's writes, then its checkpoint (the SQL savers
    # and MemorySaver do both at once, so there this window does not exist: see the test
    # below); the process dies in between.
    saver = MemorySaver()
    real_aput_step = saver.aput_step
    crash = True

    async def aput_step(config, task_writes, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
        if crash and metadata["step"] == 0:
            for task_id, writes, task_path in task_writes:
                await saver.aput_writes(config, writes, task_id, task_path)
            raise _Crash
        return await real_aput_step(config, task_writes, checkpoint, metadata, new_versions)

    saver.aput_step = aput_step  # type: ignore[method-assign]
    routes: list[str] = []

    def route(state: Out) -> str:
        # A routing decision that would differ on a second try, so it must not be re-made.
        routes.append("a" if not routes else "b")
        return routes[-1]

    g = (
        StateGraph(Out)
        .add_node("a", append("a"))
        .add_node("b", append("b"))
        .add_conditional_edges(START, route, ["a", "b"])
        .compile(checkpointer=saver)
    )
    with pytest.raises(_Crash):
        await g.ainvoke({"out": ["in"], "route": "r"}, cfg("t"))
    crash = False
    assert await g.ainvoke(None, cfg("t")) == {"out": ["in", "a"], "route": "r"}
    assert routes == ["a"]
    first = [s async for s in g.aget_state_history(cfg("t"))][-1]
    assert [(t.name, t.result) for t in first.tasks] == [(START, {"out": ["in"], "route": "r"})]


async def test_a_lone_tasks_writes_and_its_checkpoint_are_one_transaction(tmp_path: Path) -> None:
    """On SQLite a node either completed and got checkpointed, or left nothing: its writes
    and the checkpoint made from them commit together."""
    async with SqliteSaver(tmp_path / "t.db") as saver:
        g = (
            StateGraph(Out)
            .add_node("a", append("a"))
            .add_edge(START, "a")
            .compile(checkpointer=saver)
        )
        await g.ainvoke({"out": []}, cfg("warm-up"))  # opens and migrates the file
        assert saver._conn is not None
        statements: list[str] = []
        await saver._conn.set_trace_callback(statements.append)
        await g.ainvoke({"out": []}, cfg("t"))
        await saver._conn.set_trace_callback(None)
    writes = [  # PRAGMA busy_timeout: a write asking for the lock without waiting (storage.md)
        sql.split()[:3]
        for sql in statements
        if not sql.lstrip().upper().startswith(("SELECT", "PRAGMA"))
        and sql.strip().upper() != "BEGIN"  # a read's own transaction: one snapshot
    ]
    transactions: list[list[str]] = []
    for words in writes:
        if words[:2] == ["BEGIN", "IMMEDIATE"]:
            transactions.append([])
        elif words[0] != "COMMIT":
            transactions[-1].append(" ".join(words[:3]))
    # taking and giving back the thread's lease are transactions of their own
    leases = [t for t in transactions if any("thread_leases" in w for w in t)]
    assert len(leases) == 2 and all(len(t) == 1 for t in leases)
    transactions = [t for t in transactions if t not in leases]
    # the input checkpoint, then one transaction per step: the task's writes with its checkpoint
    assert len(transactions) == 3
    for step in transactions[1:]:
        assert "INSERT INTO checkpoint_writes" in step and "INSERT INTO checkpoints" in step
