"""Running one task: sync and async nodes, retries, and the task observer hook."""

from __future__ import annotations

import pytest
from graph_support import LogState, cfg

from durable_debug import START, MemorySaver, RetryPolicy, StateGraph
from durable_debug.graph.hooks import TaskEvent, add_task_observer


def test_retry_policy_retries_the_listed_errors_then_succeeds(saver: MemorySaver) -> None:
    attempts = []

    def flaky(state: LogState) -> dict:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return {"log": ["ok"]}

    policy = RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ConnectionError)
    g = StateGraph(LogState).add_node("f", flaky, retry_policy=policy).add_edge(START, "f")
    assert g.compile(checkpointer=saver).invoke({"value": "", "log": []}, cfg("r"))["log"] == ["ok"]
    assert len(attempts) == 3


def test_retry_policy_gives_up_after_max_attempts_and_skips_other_errors(
    saver: MemorySaver,
) -> None:
    attempts = {"conn": 0, "value": 0}

    def always(state: LogState) -> dict:
        attempts["conn"] += 1
        raise ConnectionError("down")

    def wrong(state: LogState) -> dict:
        attempts["value"] += 1
        raise ValueError("bad input")

    policy = RetryPolicy(initial_interval=0.001, max_attempts=2, jitter=False)
    g1 = StateGraph(LogState).add_node("n", always, retry_policy=policy).add_edge(START, "n")
    with pytest.raises(ConnectionError):
        g1.compile(checkpointer=saver).invoke({"value": "", "log": []}, cfg("a"))
    g2 = StateGraph(LogState).add_node("n", wrong, retry_policy=policy).add_edge(START, "n")
    with pytest.raises(ValueError):
        g2.compile(checkpointer=saver).invoke({"value": "", "log": []}, cfg("b"))
    assert attempts == {"conn": 2, "value": 1}  # ValueError is a bug, not a transient error


def test_observer_sees_every_execution_but_not_restored_tasks(saver: MemorySaver) -> None:
    events: list[TaskEvent] = []
    fail = {"b": True}

    def b(state: LogState) -> dict:
        if fail["b"]:
            raise RuntimeError("b broke")
        return {"log": ["b"]}

    g = (
        StateGraph(LogState)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", b)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )
    remove = add_task_observer(events.append)
    try:
        with pytest.raises(RuntimeError):
            g.invoke({"value": "", "log": []}, cfg("t"))
        fail["b"] = False
        g.invoke(None, cfg("t"))
    finally:
        remove()
    finishes = [(e.node, e.outcome, e.thread_id) for e in events if e.kind == "finish"]
    assert finishes == [("a", "ok", "t"), ("b", "error", "t"), ("b", "ok", "t")]
    assert [e.node for e in events if e.kind == "start"] == ["a", "b", "b"]
    g.invoke(None, cfg("t"))
    assert len(events) == 6  # removed observers hear nothing more


async def test_sync_nodes_run_off_the_event_loop_in_ainvoke(saver: MemorySaver) -> None:
    import threading

    threads = []

    def node(state: LogState) -> dict:
        threads.append(threading.current_thread())
        return {"log": ["sync"]}

    g = StateGraph(LogState).add_node("n", node).add_edge(START, "n").compile(checkpointer=saver)
    await g.ainvoke({"value": "", "log": []}, cfg("t"))
    assert threads[0] is not threading.current_thread()


def test_each_run_gives_its_nodes_its_own_metadata_as_langgraph_does() -> None:
    """A node's config is built from the run's metadata and configurable, reused across the
    run's tasks: a later run of the same graph with other metadata, or the same metadata
    object changed in between, gives the nodes the new values, as LangGraph's do."""
    import langgraph.checkpoint.memory as lg_memory
    import langgraph.graph as lg_graph
    from langchain_core.runnables import RunnableConfig
    from typing_extensions import TypedDict

    class Seen(TypedDict, total=False):
        seen: list[str]

    def build(graph_class: type, saver: object) -> object:
        def node(state: Seen, config: RunnableConfig) -> dict:
            metadata = config["metadata"]
            shown = f"{metadata.get('user')}/{metadata['langgraph_node']}"
            shown += f"/{metadata['langgraph_step']}/{config['configurable'].get('tag')}"
            return {"seen": [*state.get("seen", []), shown]}

        builder = graph_class(Seen)
        builder.add_node("a", node)
        builder.add_node("b", node)
        builder.add_edge("__start__", "a")
        builder.add_edge("a", "b")
        return builder.compile(checkpointer=saver)

    def runs(graph: object) -> list[list[str]]:
        metadata = {"user": "ann"}
        configurable = {"thread_id": "t", "tag": "x"}
        config = {"configurable": configurable, "metadata": metadata}
        seen = [graph.invoke({"seen": []}, config)["seen"]]  # type: ignore[attr-defined]
        metadata["user"] = "bob"  # the same objects, changed in place between runs
        configurable["tag"] = "y"
        seen.append(graph.invoke({"seen": []}, config)["seen"])  # type: ignore[attr-defined]
        other = {"configurable": {"thread_id": "t"}, "metadata": {"user": "cy"}}
        seen.append(graph.invoke({"seen": []}, other)["seen"])  # type: ignore[attr-defined]
        return seen

    ours = runs(build(StateGraph, MemorySaver()))
    theirs = runs(build(lg_graph.StateGraph, lg_memory.InMemorySaver()))
    assert ours == theirs
    assert ours[1] == ["bob/a/5/y", "bob/b/6/y"]  # the same thread: its steps go on


def test_a_tasks_scratchpad_is_the_one_the_dataclass_makes(saver: MemorySaver) -> None:
    from durable_debug.graph.interrupts import Scratchpad, current_scratchpad

    pads: list[Scratchpad] = []

    def node(state: LogState) -> dict:
        pad = current_scratchpad()
        assert pad is not None
        pads.append(pad)
        return {"log": [state["value"]]}

    g = StateGraph(LogState).add_node("a", node).add_node("b", node)
    g = g.add_edge(START, "a").add_edge("a", "b").compile(checkpointer=saver)
    g.invoke({"value": "x", "log": []}, cfg("pads"))
    first, second = pads
    nesting = first.nesting
    assert nesting is not None
    assert first.save_once is not None and first.before_effect is nesting.settle
    expected = Scratchpad(
        first.task_id,
        [],
        namespace=f"a:{first.task_id}",
        path=first.path,
        node="a",
        nesting=nesting,
        answers=nesting.answers,
        spare=nesting.spare,
        root=first.task_id,
        save_once=first.save_once,
        before_effect=first.before_effect,
        findings=first.findings,
        inline=True,  # a sync run's lone task
    )
    assert first == expected
    assert first.managed is not second.managed and first.pushed is not second.pushed
    assert first.once is not second.once and first.resume is not second.resume


def test_call_style_knows_a_node_that_takes_the_state_only() -> None:
    from durable_debug.checkpoint.base import RunnableConfig
    from durable_debug.graph.calls import call_style

    async def bare(state: dict) -> dict:
        return state

    async def configured(state: dict, config: RunnableConfig) -> dict:
        return state

    def sync(state: dict) -> dict:
        return state

    assert call_style(bare).bare
    assert not call_style(configured).bare
    assert not call_style(sync).bare


def test_an_async_node_sees_its_config_on_each_attempt_and_leaves_none_behind(
    saver: MemorySaver,
) -> None:
    import asyncio

    from durable_debug import get_config
    from durable_debug.graph.calls import current_call
    from durable_debug.graph.interrupts import current_scratchpad

    seen = []

    async def flaky(state: LogState) -> dict:
        metadata = get_config()["metadata"]
        seen.append((metadata["langgraph_node"], metadata["langgraph_step"]))
        if len(seen) < 2:
            raise ConnectionError("try again")
        return {"log": ["ok"]}

    policy = RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ConnectionError)
    g = StateGraph(LogState).add_node("f", flaky, retry_policy=policy).add_edge(START, "f")

    async def run() -> dict:
        out = await g.compile(checkpointer=saver).ainvoke({"value": "", "log": []}, cfg("a"))
        assert current_call() is None and current_scratchpad() is None
        return out

    assert asyncio.run(run())["log"] == ["ok"]
    assert seen == [("f", 1), ("f", 1)]


def test_a_nested_tasks_namespace_is_its_ids_one(saver: MemorySaver) -> None:
    from durable_debug.graph.ids import task_namespace
    from durable_debug.graph.interrupts import current_scratchpad

    seen: dict[str, tuple[str, str]] = {}

    def record(name: str) -> None:
        pad = current_scratchpad()
        assert pad is not None
        seen[name] = (pad.namespace, pad.task_id)

    def inner(state: LogState) -> dict:
        record("inner")
        return {"log": ["inner"]}

    sub = StateGraph(LogState).add_node("inner", inner).add_edge(START, "inner").compile()

    def outer(state: LogState) -> dict:
        record("outer")
        return sub.invoke(state)

    g = StateGraph(LogState).add_node("outer", outer).add_edge(START, "outer")
    g.compile(checkpointer=saver).invoke({"value": "", "log": []}, cfg("nested"))
    outer_ns, outer_id = seen["outer"]
    inner_ns, inner_id = seen["inner"]
    assert outer_ns == task_namespace("", "outer", outer_id)
    assert inner_ns == task_namespace(outer_ns, "inner", inner_id)
    assert "|" in inner_ns
