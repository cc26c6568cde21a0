"""A saver subclass that overrides ``aput`` or ``aput_writes`` (as LangGraph code does to
observe or fail saves) has its override called by an async run, under every durability (a
sync run calls the sync ``put`` / ``put_writes``, as LangGraph's does: see
``tests/checkpoint/test_user_methods.py``)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest

import durable_debug
from durable_debug.checkpoint.memory import MemorySaver


class CountingSaver(MemorySaver):
    def __init__(self) -> None:
        super().__init__()
        self.puts = 0
        self.written: list[str] = []

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.puts += 1
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        self.written.extend(channel for channel, _ in writes)
        await super().aput_writes(config, writes, task_id, task_path)


class FailingPut(MemorySaver):
    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        raise ValueError("Faulty put")


def graph(saver: MemorySaver) -> Any:
    builder = durable_debug.StateGraph(Annotated[str, operator.add])
    builder.add_node("agent", lambda s: "a")
    builder.add_node("other", lambda s: "b")
    builder.add_edge(durable_debug.START, "agent")
    builder.add_edge(durable_debug.START, "other")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_overridden_aput_and_aput_writes_are_called(durability: Any) -> None:
    saver = CountingSaver()
    config = {"configurable": {"thread_id": "t"}}
    assert await graph(saver).ainvoke("", config, durability=durability) in ("ab", "ba")
    history = [s async for s in graph(saver).aget_state_history(config)]
    assert saver.puts == len(history)
    if durability != "exit":  # each of the two side-by-side tasks' writes went through aput_writes
        assert saver.written.count("__root__") >= 2


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_an_overridden_aput_that_raises_fails_the_run(durability: Any) -> None:
    with pytest.raises(ValueError, match="Faulty put"):
        await graph(FailingPut()).ainvoke(
            "", {"configurable": {"thread_id": "t"}}, durability=durability
        )
