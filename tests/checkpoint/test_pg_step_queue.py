"""PostgreSQL with ``durability="async"`` (the default): each step's statement is sent when the
step is put and its answer read when the next one is (``checkpoint/_pg_steps.py``).

The database itself checks the order here: triggers refuse a checkpoint whose parent (or
enclosing checkpoint, for a subgraph) is not saved yet, and a pending write whose checkpoint is
not. Every run below goes through them, so a write that overtook the step it depends on would
fail the run. What another connection sees is read on a connection of the test's own.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import psycopg
import pytest
from builders import chain_builder, config_for
from typing_extensions import TypedDict

from durable_debug import START, Command, Send, StateGraph, interrupt, once
from durable_debug.checkpoint.postgres import PostgresSaver

pytestmark = pytest.mark.postgres

ORDER_CHECKS = """
CREATE FUNCTION check_step_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    outer_ns text;
    outer_id text;
BEGIN
    IF NEW.parent_checkpoint_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = NEW.thread_id
        AND c.checkpoint_ns = NEW.checkpoint_ns AND c.checkpoint_id = NEW.parent_checkpoint_id)
    THEN
        RAISE EXCEPTION 'checkpoint % saved before its parent %',
            NEW.checkpoint_id, NEW.parent_checkpoint_id;
    END IF;
    FOR outer_ns, outer_id IN SELECT * FROM jsonb_each_text(NEW.metadata -> 'parents') LOOP
        IF NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = NEW.thread_id
            AND c.checkpoint_ns = outer_ns AND c.checkpoint_id = outer_id) THEN
            RAISE EXCEPTION 'checkpoint % saved before its enclosing checkpoint %',
                NEW.checkpoint_id, outer_id;
        END IF;
    END LOOP;
    IF NEW.thread_id LIKE 'slow-%' THEN
        PERFORM pg_sleep(0.02);  -- a slow server: a write that overtakes this one is caught
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER step_order BEFORE INSERT ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION check_step_order();
CREATE FUNCTION check_write_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = NEW.thread_id
        AND c.checkpoint_ns = NEW.checkpoint_ns AND c.checkpoint_id = NEW.checkpoint_id) THEN
        RAISE EXCEPTION 'write % of task % saved before checkpoint %',
            NEW.channel, NEW.task_id, NEW.checkpoint_id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER write_order BEFORE INSERT ON checkpoint_writes
    FOR EACH ROW EXECUTE FUNCTION check_write_order();
"""

FAIL_AT_STEP = """
CREATE FUNCTION fail_a_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.thread_id = 'fails' AND NEW.metadata ->> 'step' = '3' THEN
        RAISE EXCEPTION 'step 3 refused';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER fail_a_step BEFORE INSERT ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION fail_a_step();
"""


@pytest.fixture
async def saver(postgres_db: str) -> Any:
    async with PostgresSaver(postgres_db) as opened:
        with psycopg.connect(postgres_db, autocommit=True) as conn:
            conn.execute(ORDER_CHECKS)
        yield opened


def saved_steps(url: str, thread_id: str, ns: str = "") -> list[int]:
    """The steps of the thread's checkpoints, as another connection sees them."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT (metadata ->> 'step')::int FROM checkpoints "
            "WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id",
            (thread_id, ns),
        ).fetchall()
    return [row[0] for row in rows]


class Log(TypedDict):
    log: Annotated[list, operator.add]
    answer: str


async def test_a_run_returns_once_every_step_is_saved(saver: PostgresSaver, postgres_db: str):
    graph = chain_builder(10).compile(checkpointer=saver)
    for i in range(5):
        thread = f"t{i}"
        assert (await graph.ainvoke({"n": 0}, config_for(thread)))["n"] == 10
        assert saved_steps(postgres_db, thread) == list(range(-1, 11))
    # the sync twin too (its sync nodes run inline on the runner loop)
    assert graph.invoke({"n": 0}, config_for("sync-twin"))["n"] == 10
    assert saved_steps(postgres_db, "sync-twin") == list(range(-1, 11))


async def test_the_steps_go_through_the_queue_one_statement_each(saver: PostgresSaver):
    queue = saver.step_queue()
    graph = chain_builder(2).compile(checkpointer=saver)
    await graph.ainvoke({"n": 0}, config_for("warm"))  # opens the saver
    seen: list[bool] = []
    real_put = type(queue).put

    async def put(self: Any, *args: Any) -> Any:
        config = await real_put(self, *args)
        seen.append(self.pending)  # sent, its answer not read yet
        return config

    type(queue).put = put  # type: ignore[method-assign]
    try:
        await graph.ainvoke({"n": 0}, config_for("q"))
    finally:
        type(queue).put = real_put  # type: ignore[method-assign]
    assert seen == [True, True, True, True]
    assert await graph.ainvoke({"n": 0}, config_for("q"), durability="sync") == {"n": 2}


async def test_a_failed_step_surfaces_and_nothing_after_it_is_saved(
    saver: PostgresSaver, postgres_db: str
):
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute(FAIL_AT_STEP)
    graph = chain_builder(10).compile(checkpointer=saver)
    with pytest.raises(psycopg.errors.RaiseException, match="step 3 refused"):
        await graph.ainvoke({"n": 0}, config_for("fails"))
    assert saved_steps(postgres_db, "fails") == [-1, 0, 1, 2]
    # the queue gave its connection back in a usable state: other threads run on
    assert (await graph.ainvoke({"n": 0}, config_for("other")))["n"] == 10
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute("DROP TRIGGER fail_a_step ON checkpoints")
    assert (await graph.ainvoke(None, config_for("fails")))["n"] == 10
    assert saved_steps(postgres_db, "fails") == list(range(-1, 11))


async def test_a_chunk_arrives_once_its_step_is_saved_and_leaving_loses_nothing(
    saver: PostgresSaver, postgres_db: str
):
    graph = chain_builder(4).compile(checkpointer=saver)
    async for chunk in graph.astream({"n": 0}, config_for("s"), stream_mode="values"):
        # each state arrives after its checkpoint is saved: another connection sees it
        assert saved_steps(postgres_db, "s")[-1] == chunk["n"]  # step k leaves n == k
    assert saved_steps(postgres_db, "s") == list(range(-1, 5))

    def first_update() -> Any:
        for chunk in graph.stream({"n": 0}, config_for("leave")):
            assert saved_steps(postgres_db, "leave") == [-1, 0, 1]
            return chunk
        raise AssertionError("no chunk")

    assert await asyncio.to_thread(first_update) == {"n0": {"n": 1}}
    assert saved_steps(postgres_db, "leave") == [-1, 0, 1]
    # the thread was given back at once: the rest resumes from the step the chunk reported
    assert (await graph.ainvoke(None, config_for("leave")))["n"] == 4


@pytest.mark.parametrize("twin", ["ainvoke", "invoke"])
async def test_interrupts_errors_once_fan_out_and_subgraphs_land_in_order(
    saver: PostgresSaver, postgres_db: str, twin: str
):
    effects: list[str] = []
    failures = {"flaky": 1}

    def effect(name: str) -> str:
        effects.append(name)
        return name

    inner = (
        StateGraph(Log)
        .add_node("s1", lambda s: {"log": ["s1"]})
        .add_node("s2", lambda s: {"log": ["s2"]})
        .add_edge(START, "s1")
        .add_edge("s1", "s2")
        .compile()
    )

    async def call_inner(state: Log) -> dict:
        return {"log": (await inner.ainvoke({"log": [], "answer": ""}))["log"]}

    def call_inner_sync(state: Log) -> dict:  # in a worker thread: the subgraph on another loop
        return {"log": inner.invoke({"log": [], "answer": ""})["log"]}

    def ask(state: Log) -> dict:
        return {"answer": interrupt("ok?"), "log": [once(effect, "asked")]}

    def flaky(state: Log) -> dict:
        if failures["flaky"]:
            failures["flaky"] -= 1
            raise RuntimeError("transient")
        return {"log": ["flaky"]}

    g = (
        StateGraph(Log)
        .add_node("start", lambda s: {"log": ["start"]})
        .add_node("sub", inner)
        .add_node("called", call_inner)
        .add_node("called_sync", call_inner_sync)
        .add_node("ask", ask)
        .add_node("worker", lambda s: {"log": ["w"]})
        .add_node("flaky", flaky)
        .add_edge(START, "start")
        .add_edge("start", "sub")
        .add_edge("sub", "called")
        .add_edge("called", "called_sync")
        .add_edge("called_sync", "ask")
        .add_conditional_edges("ask", lambda s: [Send("worker", s) for _ in range(3)])
        .add_edge("worker", "flaky")
        .compile(checkpointer=saver)
    )

    async def run(payload: Any) -> Any:
        if twin == "ainvoke":
            return await g.ainvoke(payload, config_for("slow-o"))
        # the sync twin runs its sync nodes inline on the runner loop
        return await asyncio.to_thread(g.invoke, payload, config_for("slow-o"))

    first = await run({"log": [], "answer": ""})
    assert first["__interrupt__"][0].value == "ok?"
    with pytest.raises(RuntimeError, match="transient"):
        await run(Command(resume="yes"))
    done = await run(None)
    # as the node, the subgraph returns its whole state, so "start" is added again
    expected = ["start", "start", "s1", "s2", "s1", "s2", "s1", "s2", "asked", "w", "w", "w"]
    expected.append("flaky")
    assert done["log"] == expected
    assert effects == ["asked"]
    steps = saved_steps(postgres_db, "slow-o")
    assert steps == list(range(-1, len(steps) - 1))


async def test_runs_sharing_a_saver_take_turns_on_its_connection(
    saver: PostgresSaver, postgres_db: str
):
    graph = chain_builder(10).compile(checkpointer=saver)
    inputs = [{"n": i} for i in range(8)]
    configs = [config_for(f"b{i}") for i in range(8)]
    # one queue holds the caller-loop connection; the others save through the pool
    results = await graph.abatch(inputs, configs)
    assert [r["n"] for r in results] == [i + 10 for i in range(8)]
    for i in range(8):
        assert saved_steps(postgres_db, f"b{i}") == list(range(-1, 11))
