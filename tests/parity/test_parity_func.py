"""The functional API (``@entrypoint``, ``@task``) on both libraries: results, streams,
snapshots, histories, ``previous``, ``entrypoint.final``, interrupts in a task, failures and
resume (a finished task is not run again), retries, forks and the injected parameters."""

from __future__ import annotations

import asyncio
import operator
from typing import Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity, multiset
from test_parity_stream_modes import labelled

pytestmark = pytest.mark.parity


def shown(trace: Trace, mode: str, chunk: Any) -> Any:
    """A chunk of any stream mode with its ids labelled and its timestamp left out."""
    if mode == "debug":
        return (mode, chunk["type"], chunk["step"], labelled(trace, chunk["payload"]))
    if mode in ("tasks", "checkpoints"):
        return (mode, labelled(trace, chunk))
    return (mode, trace.normalize(chunk))


def func_names(api: Api) -> tuple[Any, Any]:
    """``entrypoint`` and ``task`` of the library ``api`` comes from."""
    if api.name == "langgraph":
        from langgraph.func import entrypoint, task
    else:
        from durable_debug.func import entrypoint, task
    return entrypoint, task


def test_tasks_stream_snapshots_and_history():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        def add_one(x: int) -> int:
            trace.ran("add_one")
            return x + 1

        @entrypoint(checkpointer=api.MemorySaver())
        def workflow(inputs: dict, *, previous: Any = None) -> dict:
            first = add_one(inputs["x"]).result()
            futures = [add_one(i) for i in range(3)]
            return {"first": first, "rest": [f.result() for f in futures], "previous": previous}

        cfg = {"configurable": {"thread_id": "1"}}
        # Parallel tasks finish in any order, in either library: compared as multisets.
        trace.note("updates", multiset(workflow.stream({"x": 1}, cfg)))
        trace.state("state", workflow.get_state(cfg))
        trace.call("values", workflow.stream, {"x": 5}, cfg, stream_mode="values")
        trace.call("invoke", workflow.invoke, {"x": 7}, cfg)
        trace.history("history", workflow.get_state_history(cfg))
        trace.note("nodes", sorted(workflow.get_graph().nodes))
        chunks = workflow.stream(
            {"x": 2}, {"configurable": {"thread_id": "2"}}, stream_mode="tasks"
        )
        trace.note("tasks", multiset({k: v for k, v in c.items() if k != "id"} for c in chunks))

    trace = check_parity(scenario)
    assert trace["executions"]["add_one"] == 4 * 4


def test_final_splits_return_and_saved_value():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, _ = func_names(api)

        @entrypoint(checkpointer=api.MemorySaver())
        def total(n: int, *, previous: int | None = None) -> Any:
            running = (previous or 0) + n
            return entrypoint.final(value=f"added {n}", save=running)

        cfg = {"configurable": {"thread_id": "1"}}
        for n in (1, 2, 3):
            trace.call(f"invoke {n}", total.invoke, n, cfg)
        trace.state("state", total.get_state(cfg))
        trace.history("history", total.get_state_history(cfg))

    check_parity(scenario)


def test_interrupt_in_a_task_pauses_and_resumes_without_rerunning_finished_tasks():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        def draft(topic: str) -> str:
            trace.ran("draft")
            return f"essay about {topic}"

        @task
        def review(text: str) -> Any:
            trace.ran("review")
            return api.interrupt({"please review": text})

        @entrypoint(checkpointer=api.MemorySaver())
        def workflow(topic: str) -> dict:
            text = draft(topic).result()
            verdict = review(text).result()
            return {"essay": text, "verdict": verdict}

        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("first", workflow.stream, "cats", cfg, stream_mode=["updates", "values"])
        trace.state("paused", workflow.get_state(cfg))
        trace.call("resume", workflow.stream, api.Command(resume="ok"), cfg)
        trace.state("done", workflow.get_state(cfg))
        trace.history("history", workflow.get_state_history(cfg))
        trace.call("again", workflow.invoke, "dogs", cfg)
        trace.call("answer", workflow.invoke, api.Command(resume="fine"), cfg)

    trace = check_parity(scenario)
    assert trace["executions"] == {"draft": 2, "review": 4}


def test_a_failed_task_runs_again_on_resume_and_finished_ones_do_not():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)
        broken = {"yes": True}

        @task
        def fetch(i: int) -> int:
            trace.ran(f"fetch {i}")
            if i == 1 and broken["yes"]:
                raise ValueError("the service is down")
            return i * 10

        @entrypoint(checkpointer=api.MemorySaver())
        def workflow(n: int) -> int:
            total = 0
            for i in range(n):
                total += fetch(i).result()
            return total

        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("fails", workflow.invoke, 3, cfg)
        trace.state("failed", workflow.get_state(cfg))
        broken["yes"] = False
        trace.call("resumed", workflow.invoke, None, cfg)
        trace.history("history", workflow.get_state_history(cfg))

    trace = check_parity(scenario)
    assert trace["executions"] == {"fetch 0": 1, "fetch 1": 2, "fetch 2": 1}


def test_retry_policy_and_task_name():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)
        tries = {"n": 0}

        @task(
            name="flaky-call",
            retry_policy=api.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False),
        )
        def flaky() -> str:
            trace.ran("flaky")
            tries["n"] += 1
            if tries["n"] < 3:
                raise ConnectionError("try again")
            return "finally"

        @entrypoint(checkpointer=api.MemorySaver())
        def workflow(_: str) -> str:
            return flaky().result()

        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("updates", workflow.stream, "go", cfg)

    trace = check_parity(scenario)
    assert trace["executions"] == {"flaky": 3}


def test_update_state_forks_an_entrypoint_thread():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        def double(x: int) -> int:
            trace.ran("double")
            return x * 2

        @entrypoint(checkpointer=api.MemorySaver())
        def workflow(x: int, *, previous: int | None = None) -> int:
            return double(x).result() + (previous or 0)

        cfg = {"configurable": {"thread_id": "1"}}
        modes = ["debug", "checkpoints", "tasks", "values", "updates"]
        chunks = workflow.stream(1, {"configurable": {"thread_id": "d"}}, stream_mode=modes)
        trace.note("every mode", [shown(trace, mode, chunk) for mode, chunk in chunks])
        trace.call("first", workflow.invoke, 1, cfg)
        forked = workflow.update_state(cfg, 100)
        trace.note("fork", forked)
        trace.state("after fork", workflow.get_state(cfg))
        trace.call("next", workflow.invoke, 2, cfg)
        history = trace.history("history", workflow.get_state_history(cfg))
        first_input = history[-1].config
        trace.call("replay", workflow.invoke, None, first_input)
        trace.history("history after replay", workflow.get_state_history(cfg))
        fresh = {"configurable": {"thread_id": "fresh"}}
        trace.note("update a fresh thread", workflow.update_state(fresh, 40))
        trace.call("after the update", workflow.invoke, 1, fresh)
        trace.history("fresh history", workflow.get_state_history(fresh))

    check_parity(scenario)


def test_injected_parameters_and_custom_stream():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)
        if api.name == "langgraph":
            from langgraph.config import get_stream_writer
            from langgraph.store.memory import InMemoryStore
        else:
            from durable_debug.config import get_stream_writer
            from durable_debug.store import InMemoryStore

        @task
        def shout(word: str) -> str:
            get_stream_writer()({"shouting": word})
            return word.upper()

        store = InMemoryStore()

        @entrypoint(checkpointer=api.MemorySaver(), store=store)
        def workflow(word: str, *, writer, store, config) -> str:  # type: ignore[no-untyped-def]
            writer({"thread": config["configurable"]["thread_id"]})
            store.put(("words",), word, {"seen": True})
            return shout(word).result()

        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("custom", workflow.stream, "hi", cfg, stream_mode=["custom", "updates"])
        trace.note("stored", store.get(("words",), "hi").value)

    check_parity(scenario)


async def test_async_entrypoint_with_concurrent_tasks():
    async def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        async def square(x: int) -> int:
            trace.ran("square")
            await asyncio.sleep(0)
            return x * x

        @task
        def plus(a: int, b: int) -> int:  # a sync task called from an async entrypoint
            return operator.add(a, b)

        @entrypoint(checkpointer=api.MemorySaver())
        async def workflow(xs: list[int]) -> int:
            squares = await asyncio.gather(*(square(x) for x in xs))
            return await plus(sum(squares), 1)

        cfg = {"configurable": {"thread_id": "1"}}
        trace.note("result", await workflow.ainvoke([1, 2, 3], cfg))
        updates = [c async for c in workflow.astream([4], cfg)]
        trace.note("updates", updates)
        trace.state("state", await workflow.aget_state(cfg))
        trace.history("history", [s async for s in workflow.aget_state_history(cfg)])

    trace = await acheck_parity(scenario)
    assert trace["executions"] == {"square": 4}


def test_tasks_in_a_state_graph_node_and_in_a_task():
    def scenario(api: Api, trace: Trace) -> None:
        from typing_extensions import TypedDict

        _, task = func_names(api)

        class State(TypedDict):
            x: int

        @task
        def inner(x: int) -> int:
            trace.ran("inner")
            return x + 1

        @task
        def outer(x: int) -> int:
            trace.ran("outer")
            return inner(x).result() * 10

        def node(state: State) -> dict:
            return {"x": outer(state["x"]).result()}

        def anode(state: State) -> dict:
            future = inner(state["x"])
            return {"x": future.result()}

        graph = (
            api.StateGraph(State)
            .add_node("node", node)
            .add_node("anode", anode)
            .add_edge(api.START, "node")
            .add_edge("node", "anode")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("updates", graph.stream, {"x": 1}, cfg)
        trace.call("invoke", graph.invoke, {"x": 2}, cfg)
        trace.history("history", graph.get_state_history(cfg))

    trace = check_parity(scenario)
    assert trace["executions"] == {"outer": 2, "inner": 4}


def test_interrupt_in_the_entrypoint_itself_and_in_two_tasks():
    def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        def ask(question: str) -> Any:
            trace.ran(f"ask {question}")
            return api.interrupt(question)

        @entrypoint(checkpointer=api.MemorySaver())
        def workflow(_: str) -> list:
            first = api.interrupt("start?")
            return [first, ask("a").result(), ask("b").result()]

        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("first", workflow.invoke, "go", cfg)
        for answer in ("yes", "A", "B"):
            trace.call(f"answer {answer}", workflow.invoke, api.Command(resume=answer), cfg)
            trace.state(f"after {answer}", workflow.get_state(cfg))
        trace.history("history", workflow.get_state_history(cfg))

    trace = check_parity(scenario)
    assert trace["executions"] == {"ask a": 2, "ask b": 2}


def test_graphs_invoked_inside_a_task_and_a_task_inside_an_entrypoint_subgraph():
    def scenario(api: Api, trace: Trace) -> None:
        from typing_extensions import TypedDict

        entrypoint, task = func_names(api)

        @entrypoint()
        def add(inputs: list) -> int:
            return inputs[0] + inputs[1]

        @task
        def multiply_task(a: int, b: int) -> int:
            return a * b

        @entrypoint()
        def multiply(inputs: list) -> int:
            return multiply_task(*inputs).result()

        class State(TypedDict):
            a: int
            b: int

        minus = (
            api.StateGraph(State)
            .add_node("minus", lambda s: {"a": s["a"] - s["b"]})
            .add_edge(api.START, "minus")
            .compile()
        )

        @task
        def combine(a: int, b: int) -> list:
            twice = add.invoke([add.invoke([a, b]), 10])
            return [twice, multiply.invoke([a, b]), minus.invoke({"a": a, "b": b})["a"]]

        @entrypoint(checkpointer=api.MemorySaver())
        def parent(inputs: list) -> list:
            return combine(*inputs).result()

        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("invoke", parent.invoke, [2, 3], cfg)
        chunks = parent.stream([4, 5], cfg, subgraphs=True)
        trace.note("stream", [(trace.namespace("|".join(ns)), chunk) for ns, chunk in chunks])
        trace.history("history", parent.get_state_history(cfg))

    check_parity(scenario)


def test_runtime_context_reaches_the_entrypoint_and_its_tasks():
    def scenario(api: Api, trace: Trace) -> None:
        from dataclasses import dataclass

        entrypoint, task = func_names(api)
        if api.name == "langgraph":
            from langgraph.runtime import get_runtime
        else:
            from durable_debug.runtime import get_runtime

        @dataclass
        class Ctx:
            user: str

        @task
        def greet(word: str) -> str:
            return f"{word} {get_runtime(Ctx).context.user}"

        @entrypoint(checkpointer=api.MemorySaver(), context_schema=Ctx)
        def workflow(word: str, *, runtime, previous=None) -> list:  # type: ignore[no-untyped-def]
            return [greet(word).result(), runtime.context.user, runtime.previous, previous]

        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("first", workflow.invoke, "hi", cfg, context=Ctx("ada"))
        trace.call("second", workflow.invoke, "yo", cfg, context={"user": "bo"})

    check_parity(scenario)


def test_a_task_of_a_partial_is_named_after_its_function():
    def scenario(api: Api, trace: Trace) -> None:
        import functools

        entrypoint, task = func_names(api)

        def tagged(tag: str, value: str) -> str:
            return f"{value}|{tag}"

        plain = task(functools.partial(tagged, "a"))
        named = task(functools.partial(tagged, "b"), name="custom")

        @entrypoint()
        def flow(value: str) -> str:
            return named(plain(value).result()).result()

        trace.note("updates", list(flow.stream("x", stream_mode="updates")))

    ours = check_parity(scenario)
    assert ours["updates"][0] == {"tagged": "x|a"}
