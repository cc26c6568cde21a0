"""The debugger on a functional-API thread (``@entrypoint`` with ``@task`` calls), on our
engine and on LangGraph's: ``%%graph`` counts each task call, the widget shows the thread's
checkpoints with the return value and the saved ``previous`` as channels, forks one with
``update_state`` and re-runs from any of them."""

from __future__ import annotations

from typing import Any

import pytest
from test_timetravel import ids, open_widget, until

from durable_debug import TimeTravel
from durable_debug.magics import CellOptions, GraphSession
from support.seed_graphs import ENGINES


def workflow_of(engine: str) -> dict[str, Any]:
    """A namespace with ``workflow`` (an entrypoint calling a task twice) on ``engine``."""
    if engine == "langgraph":
        from langgraph.checkpoint.memory import InMemorySaver as Saver
        from langgraph.func import entrypoint, task
        from langgraph.types import Command, interrupt
    else:
        from durable_debug import Command, interrupt
        from durable_debug import MemorySaver as Saver
        from durable_debug.func import entrypoint, task

    @task
    def double(x: int) -> int:
        return 2 * x

    @task
    def confirm(x: int) -> Any:
        return interrupt({"keep": x})

    @entrypoint(checkpointer=Saver())
    def workflow(x: int, *, previous: int | None = None) -> int:
        total = double(x).result() + double(x + 1).result() + (previous or 0)
        return total if confirm(total).result() else 0

    return {"workflow": workflow, "Command": Command, "cfg": {"configurable": {"thread_id": "f"}}}


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_graph_cell_counts_each_task_call(engine: str) -> None:
    ns = workflow_of(engine)
    shown: list[Any] = []
    session = GraphSession(ns, shown.append)
    async with session.cell(CellOptions()):
        await ns["workflow"].ainvoke(1, ns["cfg"])
        await ns["workflow"].ainvoke(ns["Command"](resume=True), ns["cfg"])
    counts, widget = shown
    by_node = dict(zip(counts.node.tolist(), counts.executions.tolist(), strict=True))
    # The entrypoint ran twice (paused, then resumed); each double() call ran once (its
    # result was saved); confirm() ran twice (it asked, then took the answer).
    assert by_node == {"workflow": 2, "double": 2, "confirm": 2}
    assert isinstance(widget, TimeTravel) and widget._thread_id == "f"


async def test_the_widget_shows_forks_and_reruns_an_entrypoint_thread(engine: str) -> None:
    ns = workflow_of(engine)
    workflow, cfg = ns["workflow"], ns["cfg"]
    await workflow.ainvoke(1, cfg)
    assert await workflow.ainvoke(ns["Command"](resume=True), cfg) == 6
    widget, front = await open_widget(workflow, cfg)
    steps = [n["step"] for n in sorted(widget.dag["nodes"], key=lambda n: n["id"])]
    assert steps == [-1, 0]
    first, done = ids(widget)
    detail = await front.select(done)
    assert detail["values"] == {"__end__": 6, "__previous__": 6}
    assert detail["editable"] == ["__end__", "__previous__"]

    fork = await front.result(
        "fork", checkpoint_id=done, edits={"__end__": "60", "__previous__": "100"}
    )
    assert "entrypoint.final(value=60, save=100)" in fork["code"]
    forked = {"configurable": {**cfg["configurable"], "checkpoint_id": fork["checkpoint_id"]}}
    assert (await workflow.aget_state(forked)).values == 60
    # The next run of the thread gets the forked previous.
    await workflow.ainvoke(1, cfg)
    assert await workflow.ainvoke(ns["Command"](resume=True), cfg) == 106

    before = set(ids(widget))
    started = await front.result("rerun", checkpoint_id=first)
    assert started["started"] is True
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._error == ""
    assert set(ids(widget)) > before  # the replay grew a branch from the first checkpoint
