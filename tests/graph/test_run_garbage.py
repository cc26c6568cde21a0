"""A finished run is freed by reference counting: nothing of it waits for the garbage
collector (a run left in a reference cycle kept its channels, values and bookkeeping alive
until a collection, which then cost every later run a slower collection)."""

from __future__ import annotations

import asyncio
import gc
import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.func import entrypoint, task
from durable_debug.graph.loop import RunLoop


class Chain(TypedDict):
    value: int
    trail: Annotated[list, operator.add]


def _step(name: str) -> Callable[[Chain], dict[str, Any]]:
    def step(state: Chain) -> dict[str, Any]:
        return {"value": state["value"] + 1, "trail": [name]}

    return step


def _chain(length: int, compile_saver: MemorySaver | None) -> Any:
    builder = StateGraph(Chain)
    previous = START
    for i in range(length):
        builder.add_node(f"n{i}", _step(f"n{i}"))
        builder.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    return builder.compile(checkpointer=compile_saver)


@contextmanager
def _cyclic_runs() -> Iterator[list[RunLoop]]:
    """The runs that the garbage collector found unreachable (in a cycle) after the block."""
    found: list[RunLoop] = []
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
        found.extend(o for o in gc.garbage if isinstance(o, RunLoop))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_sync_and_async_runs_leave_no_cycle() -> None:
    graph = _chain(3, MemorySaver())
    graph.invoke({"value": 0, "trail": []}, {"configurable": {"thread_id": "warm"}})
    with _cyclic_runs() as cyclic:
        for n in range(3):
            out = graph.invoke({"value": 0, "trail": []}, {"configurable": {"thread_id": f"s{n}"}})
            assert out == {"value": 3, "trail": ["n0", "n1", "n2"]}
            out = asyncio.run(
                graph.ainvoke({"value": 0, "trail": []}, {"configurable": {"thread_id": f"a{n}"}})
            )
            assert out["value"] == 3
    assert cyclic == []


def test_nested_and_functional_runs_leave_no_cycle() -> None:
    inner = _chain(2, None)
    top = StateGraph(Chain).add_node("sub", inner).add_edge(START, "sub")
    nested = top.compile(checkpointer=MemorySaver())

    @task
    def add_one(x: int) -> int:
        return x + 1

    @entrypoint(checkpointer=MemorySaver())
    def workflow(x: int) -> int:
        return add_one(add_one(x).result()).result()

    nested.invoke({"value": 0, "trail": []}, {"configurable": {"thread_id": "warm"}})
    with _cyclic_runs() as cyclic:
        for n in range(3):
            out = nested.invoke({"value": 0, "trail": []}, {"configurable": {"thread_id": f"n{n}"}})
            assert out == {"value": 2, "trail": ["n0", "n1"]}
            assert workflow.invoke(n, {"configurable": {"thread_id": f"f{n}"}}) == n + 2
    assert cyclic == []
