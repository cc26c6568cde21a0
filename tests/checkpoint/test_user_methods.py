"""A subclass of our savers overriding saver methods (``checkpoint/user_methods.py``): the
engine calls them as LangGraph does — a ``put_writes`` without ``task_path`` gets three
arguments, a sync run calls the sync overrides and an async run the async ones — on the
SQLite saver as on the in-memory one; a subclass implementing our own ``aput_step`` keeps
the one-transaction path."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from durable_debug import START, StateGraph
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.checkpoint.user_methods import SaverCalls, overridden_methods


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _fan_out(saver: Any) -> Any:
    builder = StateGraph(Log)
    for name in ("a", "b"):
        builder.add_node(name, lambda state, name=name: {"log": [name]})
        builder.add_edge(START, name)
    return builder.compile(checkpointer=saver)


def _recording(base: type) -> Any:
    class Recording(base):  # type: ignore[misc,valid-type]  # one of our saver classes, given at run time
        seen: list[tuple[str, int]]

        def put_writes(self, config: Any, writes: Any, task_id: str) -> None:
            self.seen.append(("put_writes", 3))
            super().put_writes(config, writes, task_id)

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            self.seen.append(("put", checkpoint["channel_values"].get("log", []).__len__()))
            return super().put(config, checkpoint, metadata, new_versions)

    return Recording


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        made = _recording(MemorySaver)()
    else:
        made = _recording(SqliteSaver)(tmp_path / "t.db")
    made.seen = []
    return made


def test_a_sync_run_calls_a_put_writes_without_task_path(saver: Any) -> None:
    graph = _fan_out(saver)
    cfg = {"configurable": {"thread_id": "t"}}

    assert sorted(graph.invoke({"log": []}, cfg)["log"]) == ["a", "b"]
    assert ("put_writes", 3) in saver.seen
    assert [n for kind, n in saver.seen if kind == "put"] == [0, 0, 2]  # input, START, a+b
    assert sorted(graph.get_state(cfg).values["log"]) == ["a", "b"]


def test_an_async_run_leaves_the_sync_overrides_alone(saver: Any) -> None:
    graph = _fan_out(saver)
    cfg = {"configurable": {"thread_id": "t"}}

    done = asyncio.run(graph.ainvoke({"log": []}, cfg))

    assert sorted(done["log"]) == ["a", "b"]
    assert saver.seen == []  # as LangGraph: ainvoke calls aput / aput_writes


def test_an_async_run_calls_an_aput_writes_without_task_path(tmp_path: Path) -> None:
    seen: list[str] = []

    class OldStyle(SqliteSaver):
        async def aput_writes(self, config: Any, writes: Any, task_id: str) -> None:
            seen.extend(channel for channel, _ in writes)
            await super().aput_writes(config, writes, task_id)

    graph = _fan_out(OldStyle(tmp_path / "t.db"))
    cfg = {"configurable": {"thread_id": "t"}}

    done = asyncio.run(graph.ainvoke({"log": []}, cfg))

    assert sorted(done["log"]) == ["a", "b"]
    assert seen.count("log") == 2  # each side-by-side task's writes, through the override
    assert sorted(graph.get_state(cfg).values["log"]) == ["a", "b"]


def test_which_overrides_a_run_calls() -> None:
    recording = _recording(MemorySaver)()
    assert SaverCalls(recording, sync=True).methods == {"put", "put_writes"}
    assert SaverCalls(recording, sync=False).methods == frozenset()
    assert not SaverCalls(MemorySaver(), sync=True).saves_by_method

    class OwnSteps(_recording(MemorySaver)):  # type: ignore[misc]  # a class made at run time
        async def aput_step(self, *args: Any) -> Any:
            return await super().aput_step(*args)

    assert overridden_methods(OwnSteps()) == frozenset()
