"""The functional API on our engine: each ``@task`` call is a task of the checkpoint, saved
the moment it finishes, so a resumed run does not call it again; what a run leaves in the
saver; errors for misuse."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from graph_support import cfg
from typing_extensions import TypedDict

from durable_debug import CachePolicy, InMemoryCache, MemorySaver, RetryPolicy, StateGraph
from durable_debug.checkpoint.names import PREVIOUS, RETURN
from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.func import EntrypointGraph, entrypoint, task
from durable_debug.graph.types import END, START, Command
from durable_debug.types import interrupt


def test_entrypoint_makes_a_graph_whose_checkpoints_hold_end_and_previous(tmp_path: Path) -> None:
    @task
    def double(x: int) -> int:
        return 2 * x

    with SqliteSaver(str(tmp_path / "f.db")) as saver:

        @entrypoint(checkpointer=saver)
        def workflow(x: int, *, previous: int | None = None) -> Any:
            return entrypoint.final(value=double(x).result(), save=(previous or 0) + x)

        assert isinstance(workflow, EntrypointGraph)
        assert workflow.invoke(3, cfg("t")) == 6
        assert workflow.invoke(4, cfg("t")) == 8
        latest = saver.get_tuple(cfg("t"))
        assert latest is not None
        assert latest.checkpoint["channel_values"] == {END: 8, PREVIOUS: 7}
        steps = [(s.metadata["source"], s.metadata["step"]) for s in saver.list(cfg("t"))]
        assert steps == [("loop", 2), ("input", 1), ("loop", 0), ("input", -1)]
        # The input checkpoint of the second run holds the task's result as a pending write.
        second_input = next(s for s in saver.list(cfg("t")) if s.metadata["step"] == 1)
        returns = [(w[1], w[2]) for w in second_input.pending_writes or () if w[1] == RETURN]
        assert returns == [(RETURN, 8)]


async def test_leaving_the_stream_keeps_finished_tasks_and_reruns_the_unfinished(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    release = asyncio.Event()

    @task
    async def quick(x: int) -> int:
        calls.append(f"quick {x}")
        return x + 1

    @task
    async def slow(x: int) -> int:
        calls.append(f"slow {x}")
        await release.wait()
        return x * 100

    async with SqliteSaver(tmp_path / "f.db") as saver:

        @entrypoint(checkpointer=saver)
        async def workflow(x: int) -> list[int]:
            first = quick(x)
            second = slow(x)
            return [await first, await second]

        chunks = workflow.astream(1, cfg("t"))
        async for chunk in chunks:
            assert chunk == {"quick": 2}  # quick is saved; slow still waits
            break
        await chunks.aclose()  # the run ends here: slow is cancelled
        assert calls == ["quick 1", "slow 1"]
        snapshot = await workflow.aget_state(cfg("t"))
        assert snapshot.next == ("workflow",)
        release.set()
        assert await workflow.ainvoke(None, cfg("t")) == [2, 100]
        assert calls == ["quick 1", "slow 1", "slow 1"]  # quick was not called again


def test_a_failed_task_is_saved_as_an_error_and_runs_again_on_resume(saver: MemorySaver) -> None:
    attempts: list[int] = []

    @task
    def fragile(x: int) -> int:
        attempts.append(x)
        if attempts.count(x) == 1:
            raise RuntimeError("flaky backend")
        return x

    @task
    def steady(x: int) -> int:
        attempts.append(-x)
        return -x

    @entrypoint(checkpointer=saver)
    def workflow(x: int) -> int:
        return steady(x).result() + fragile(x).result()

    with pytest.raises(RuntimeError, match="flaky backend"):
        workflow.invoke(5, cfg("t"))
    saved = saver.get_tuple(cfg("t"))
    assert saved is not None
    errors = [w for w in saved.pending_writes or () if w[1] == "__error__"]
    assert len(errors) == 2  # the task's and its caller's
    assert workflow.invoke(None, cfg("t")) == 0
    assert attempts == [-5, 5, 5]


def test_retry_policy_retries_a_task_within_the_run(saver: MemorySaver) -> None:
    tries: list[int] = []

    @task(retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False))
    def shaky() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise ConnectionError("again")
        return "ok"

    @entrypoint(checkpointer=saver)
    def workflow(_: str) -> str:
        return shaky().result()

    assert workflow.invoke("go", cfg("t")) == "ok"
    assert len(tries) == 3


def test_cache_policy_answers_a_task_call_from_the_cache() -> None:
    runs: list[int] = []

    @task(cache_policy=CachePolicy())
    def expensive(x: int) -> int:
        runs.append(x)
        return x * x

    @entrypoint(checkpointer=MemorySaver(), cache=InMemoryCache())
    def workflow(x: int) -> list[int]:
        return [expensive(x).result(), expensive(x + 1).result()]

    assert workflow.invoke(2, cfg("a")) == [4, 9]
    assert workflow.invoke(2, cfg("b")) == [4, 9]
    assert runs == [2, 3]


def test_sync_tasks_run_concurrently(saver: MemorySaver) -> None:
    both = threading.Barrier(2, timeout=30)

    @task
    def meet(name: str) -> str:
        both.wait()  # only returns once the other call is running too
        return name

    @entrypoint(checkpointer=saver)
    def workflow(names: list[str]) -> list[str]:
        futures = [meet(n) for n in names]
        return [f.result() for f in futures]

    assert workflow.invoke(["a", "b"], cfg("t")) == ["a", "b"]


def test_a_sync_node_run_inline_can_call_nested_tasks(saver: MemorySaver) -> None:
    class State(TypedDict):
        x: int

    @task
    def inner(x: int) -> int:
        return x + 1

    @task
    def outer(x: int) -> int:
        return inner(x).result() * 10

    graph = (
        StateGraph(State)
        .add_node("node", lambda s: {"x": outer(s["x"]).result()})
        .add_edge(START, "node")
        .compile(checkpointer=saver)
    )
    assert graph.invoke({"x": 1}, cfg("t")) == {"x": 20}
    assert [c for c in graph.stream({"x": 2}, cfg("t"))] == [
        {"inner": 3},
        {"outer": 30},
        {"node": {"x": 30}},
    ]


def test_interrupt_answers_reach_the_task_that_asked(saver: MemorySaver) -> None:
    @task
    def ask(question: str) -> Any:
        return interrupt(question)

    @entrypoint(checkpointer=saver)
    def workflow(_: str) -> list[Any]:
        return [ask("name?").result(), ask("age?").result()]

    first = workflow.invoke("go", cfg("t"))
    assert [i.value for i in first["__interrupt__"]] == ["name?"]
    second = workflow.invoke(Command(resume="Ada"), cfg("t"))
    assert [i.value for i in second["__interrupt__"]] == ["age?"]
    assert workflow.invoke(Command(resume=36), cfg("t")) == ["Ada", 36]


def test_misuse_gets_a_clear_error() -> None:
    @task
    def lonely() -> int:
        return 1

    with pytest.raises(RuntimeError, match="outside a running graph"):
        lonely()
    with pytest.raises(ValueError, match="at least one parameter"):
        entrypoint()(lambda: None)
    with pytest.raises(NotImplementedError, match="generators"):

        @task
        def gen() -> Any:
            yield 1

    with pytest.raises(TypeError, match="unexpected keyword"):
        entrypoint(checkpointr=MemorySaver())


async def test_calls_left_running_by_a_failed_entrypoint_are_cancelled(saver: MemorySaver) -> None:
    started: list[str] = []
    cancelled: list[str] = []
    forever = asyncio.Event()

    @task
    async def slow(name: str) -> str:
        started.append(name)
        try:
            await forever.wait()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return name

    @entrypoint(checkpointer=saver)
    async def workflow(fail: bool) -> str:
        pending = slow("bg")
        while not started:  # the call is running
            await asyncio.sleep(0)
        if fail:
            raise ValueError("the entrypoint failed")
        return await pending

    with pytest.raises(ValueError, match="the entrypoint failed"):
        await workflow.ainvoke(True, cfg("t"))
    assert started == ["bg"] and cancelled == ["bg"]  # not left running after the run
    forever.set()
    started.clear()
    assert await workflow.ainvoke(False, cfg("u")) == "bg"
