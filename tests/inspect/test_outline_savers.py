"""The checkpoint tree without state on every saver besides SQLite (PostgreSQL, Redis, memory).

Each saver's outline read must give the tree its own full read gives (ids, parents, next
nodes, writers, interrupts, errors, findings, forks), and the same tree, mark for mark, as
durable_debug's SQLite outline on the same run; a later read with ``since`` must give what a
fresh full read gives; a damaged stored row must give an error naming where it is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_outline_pregel import pregel_chain

from durable_debug import SqliteSaver
from durable_debug.checkpoint.base import OutlineSaver
from durable_debug.checkpoint.outline import aread_outline
from durable_debug.inspect import acheckpoint_dag, adag_data
from durable_debug.inspect.dag import DagReader, dag_data_of, dag_from_thread
from durable_debug.inspect.thread import aread_thread
from support.savers import open_saver
from support.seed_graphs import empty_state, source

OUTLINE_KINDS = [
    "memory",
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("redis", marks=pytest.mark.redis),
]
"""The savers besides SQLite that read outlines."""


@pytest.fixture(params=OUTLINE_KINDS)
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with open_saver(request.param, request, tmp_path) as opened:
        yield opened


def seed_on(name: str, saver: Any) -> dict[str, Any]:
    """Seed ``name`` on durable_debug's engine, every graph saving to ``saver``."""
    text = source("durable_debug", name).replace("MemorySaver()", "SAVER")
    namespace: dict[str, Any] = {"__name__": f"seed_{name}", "SAVER": saver}
    exec(compile(text, f"<seed {name}>", "exec", dont_inherit=True), namespace)
    return namespace


async def run_seed(ns: dict[str, Any]) -> None:
    """Run a seed from an empty state, then fork it from the middle once."""
    g, cfg = ns["g"], ns["cfg"]
    state = empty_state(ns)
    with contextlib.suppress(Exception):
        await g.ainvoke(state, cfg)
    history = [s async for s in g.aget_state_history(cfg)]
    if len(history) > 2:
        with contextlib.suppress(Exception):
            fork = await g.aupdate_state(history[len(history) // 2].config, None)
            await g.ainvoke(None, fork)


def shape(dag: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A tree's marks with each id replaced by its place in id order (ids are time-ordered,
    so two runs of the same steps have the same places) and no times."""
    order = {n["id"]: i for i, n in enumerate(sorted(dag["nodes"], key=lambda n: n["id"]))}
    return [
        tuple(
            order.get(value, value) if key in ("id", "parent") else value
            for key, value in sorted(node.items())
            if key != "created_at"
        )
        for node in sorted(dag["nodes"], key=lambda n: n["id"])
    ]


async def full_dag(g: Any, cfg: Any) -> Any:
    return dag_data_of(await aread_thread(g, cfg))


def test_the_savers_read_outlines(saver):
    assert isinstance(saver, OutlineSaver)


@pytest.mark.parametrize("name", ["accumulate", "resume", "rerun_rule", "fanout", "reviews"])
async def test_the_outline_is_the_full_tree_and_sqlites(saver, tmp_path, name):
    ns = seed_on(name, saver)
    await run_seed(ns)
    g, cfg = ns["g"], ns["cfg"]
    reader = DagReader(g, cfg)
    dag = await reader.aread()
    assert reader.outlined
    assert dag == await full_dag(g, cfg)

    on_sqlite = seed_on(name, SqliteSaver(str(tmp_path / "s.db")))
    await run_seed(on_sqlite)
    sqlite_reader = DagReader(on_sqlite["g"], on_sqlite["cfg"])
    assert shape(await sqlite_reader.aread()) == shape(dag)
    assert sqlite_reader.outlined

    thread = await aread_thread(g, cfg)
    tree = await acheckpoint_dag(g, cfg)
    expected = dag_from_thread(thread)
    assert tree.graph == expected.graph and dict(tree.nodes(data=True)) == dict(
        expected.nodes(data=True)
    )
    assert sorted(tree.edges) == sorted(expected.edges)
    assert await adag_data(g, cfg) == dag_data_of(thread)


async def test_errors_interrupts_and_later_reads(saver):
    ns = seed_on("rerun_rule", saver)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"prep": "", "decision": ""}, cfg)
    reader = DagReader(g, cfg)
    dag = await reader.aread()
    assert [(n["next"], n["interrupts"]) for n in dag["nodes"] if n["interrupts"]] == [
        (["gate"], 1)
    ]
    first = len(dag["nodes"])
    await g.ainvoke(ns["Command"](resume="yes"), cfg)
    dag = await reader.aread()  # a later read: only what was written since
    assert reader.outlined and reader.reads == 2
    assert reader.last_read < len(dag["nodes"]) and len(dag["nodes"]) > first
    assert [n for n in dag["nodes"] if n["interrupts"]] == []
    assert dag == await full_dag(g, cfg)

    ns = seed_on("resume", saver)
    g, cfg = ns["g"], ns["cfg"]
    with contextlib.suppress(RuntimeError):
        await g.ainvoke({"log": []}, cfg)
    dag = await DagReader(g, cfg).aread()
    assert [(n["step"], n["next"]) for n in dag["nodes"] if n["errors"]] == [(2, ["c"])]
    assert dag == await full_dag(g, cfg)


async def test_since_reads_the_new_checkpoints_and_the_parents_of_newer_ones(saver):
    ns = seed_on("accumulate", saver)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    rows = await aread_outline(saver, "demo-1", "")
    assert rows is not None and len(rows) == 4
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    await g.ainvoke(None, await g.aupdate_state(target.config, {"value": "F"}))
    newer = await aread_outline(saver, "demo-1", "", since=rows[-1].checkpoint_id)
    assert newer is not None
    fresh = {row.checkpoint_id: row for row in await aread_outline(saver, "demo-1", "") or []}
    # the newest seen before, the 2 new checkpoints, and the fork's parent
    assert len(newer) == 4 and len(fresh) == 6
    assert all(fresh[row.checkpoint_id] == row for row in newer)
    assert {row.checkpoint_id for row in newer} >= set(fresh) - {r.checkpoint_id for r in rows}


async def test_a_subgraphs_namespace_reads_its_own_tree(saver):
    from typing_extensions import TypedDict

    from durable_debug import START, StateGraph

    class State(TypedDict):
        n: int

    inner = StateGraph(State)
    inner.add_node("double", lambda s: {"n": s["n"] * 2})
    inner.add_edge(START, "double")
    outer = StateGraph(State)
    outer.add_node("sub", inner.compile(checkpointer=True))
    outer.add_node("one", lambda s: {"n": s["n"] + 1})
    outer.add_edge(START, "one")
    outer.add_edge("one", "sub")
    g = outer.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "nested-1"}}
    await g.ainvoke({"n": 1}, cfg)
    namespaces = {t.config["configurable"]["checkpoint_ns"] async for t in saver.alist(cfg)} - {""}
    assert len(namespaces) == 1
    sub_cfg = {"configurable": {"thread_id": "nested-1", "checkpoint_ns": namespaces.pop()}}
    reader = DagReader(g, sub_cfg)
    dag = await reader.aread()
    assert reader.outlined and len(dag["nodes"]) >= 2
    assert dag == await full_dag(g, sub_cfg)
    top = DagReader(g, cfg)
    assert await top.aread() == await full_dag(g, cfg) and top.outlined


async def test_a_pregel_threads_subscribed_channels(saver):
    g = pregel_chain(saver)
    cfg = {"configurable": {"thread_id": "p-1"}}
    await g.ainvoke(1, cfg)
    reader = DagReader(g, cfg)
    dag = await reader.aread()
    assert reader.outlined
    assert {n["step"]: (n["next"], n["writers"]) for n in dag["nodes"]} == {
        -1: (["one"], []),
        0: (["two"], ["one"]),
    }
    assert dag == await full_dag(g, cfg)
    await g.ainvoke(None, cfg)
    dag = await reader.aread()
    assert reader.outlined and reader.reads == 2
    assert dag == await full_dag(g, cfg)
    assert [n["next"] for n in sorted(dag["nodes"], key=lambda n: n["step"])] == [
        ["one"],
        ["two"],
        ["three"],
        [],
    ]


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("""metadata = '{"step": "two"}'""", "step"),
        ("""checkpoint = '"text"'""", "not a JSON object"),
        ("""checkpoint = jsonb_set(checkpoint, '{id}', '"other"')""", "id is 'other'"),
        ("""checkpoint = checkpoint - 'ts'""", "ts is None"),
    ],
)
async def test_a_damaged_postgres_row_is_named(postgres_db, change, said):
    import psycopg

    from durable_debug.checkpoint.postgres import PostgresSaver

    with PostgresSaver(postgres_db) as saver:
        ns = seed_on("accumulate", saver)
        g, cfg = ns["g"], ns["cfg"]
        await g.ainvoke({"value": "", "log": []}, cfg)
        with psycopg.connect(postgres_db, autocommit=True) as conn:
            newest = conn.execute("SELECT max(checkpoint_id) FROM checkpoints").fetchone()[0]
            conn.execute(f"UPDATE checkpoints SET {change} WHERE checkpoint_id = %s", (newest,))
        with pytest.raises(Exception, match=said) as raised:
            await DagReader(g, cfg).aread()
        assert "demo-1" in str(raised.value) and newest in str(raised.value)
        assert type(raised.value).__name__ == "CorruptPayloadError"


async def test_a_damaged_memory_row_is_named():
    from durable_debug import MemorySaver

    saver = MemorySaver()
    ns = seed_on("accumulate", saver)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    stored = saver.storage["demo-1"][""]
    newest = max(stored)
    stored[newest].metadata["step"] = "two"  # type: ignore[typeddict-item]
    with pytest.raises(Exception, match="step") as raised:
        await DagReader(g, cfg).aread()
    assert "demo-1" in str(raised.value) and newest in str(raised.value)
    assert type(raised.value).__name__ == "CorruptPayloadError"


@pytest.mark.postgres
async def test_no_postgres_state_blob_is_read(postgres_db):
    """State blobs made unreadable: the full read fails, the tree still opens, as it was."""
    import psycopg

    from durable_debug.checkpoint.postgres import PostgresSaver

    with PostgresSaver(postgres_db) as saver:
        ns = seed_on("accumulate", saver)
        g, cfg = ns["g"], ns["cfg"]
        await g.ainvoke({"value": "", "log": []}, cfg)
        expected = await full_dag(g, cfg)
        with psycopg.connect(postgres_db, autocommit=True) as conn:
            for table in ("checkpoint_blobs", "checkpoint_writes"):
                conn.execute(
                    f"UPDATE {table} SET blob = '\\xc1c1'::bytea WHERE channel IN ('value', 'log')"
                )
        with pytest.raises(Exception):  # noqa: B017 - any decoding error: the values are garbage
            await aread_thread(g, cfg)
        assert await DagReader(g, cfg).aread() == expected
        assert await adag_data(g, cfg) == expected


@pytest.mark.postgres
async def test_a_postgres_outline_is_one_transaction_of_three_queries(postgres_db):
    """As docs/inspect.md says, counted on the wire: a thread's outline, and a later read of
    what came since, are each BEGIN, three SELECTs and the end of the transaction, whatever
    the thread's size (no query per checkpoint, no state blob read afterwards)."""
    from durable_debug.checkpoint.postgres import PostgresSaver
    from support.pg_wire import WireCounter

    counted = []
    with WireCounter(postgres_db) as wire:
        async with PostgresSaver(wire.url, pool_size=1) as saver:
            ns = seed_on("accumulate", saver)
            g, cfg = ns["g"], ns["cfg"]
            thread = cfg["configurable"]["thread_id"]
            for runs in (1, 3):
                while len([s async for s in g.aget_state_history(cfg)]) < 4 * runs:
                    await g.ainvoke({"value": "", "log": []}, cfg)
                wire.reset()
                rows = await saver.aread_outline(thread, "")
                counted.append((len(rows), wire.statements(), wire.round_trips()))
            wire.reset()
            later = await saver.aread_outline(thread, "", since=rows[len(rows) // 2].checkpoint_id)
            counted.append((len(later), wire.statements(), wire.round_trips()))
    (few, *_), (many, *_), (since, *_) = counted
    assert few == 4 and many == 12 and 0 < since < many
    assert [c[1:] for c in counted] == [(5, 5)] * 3


@pytest.mark.parametrize("name", ["resume", "rerun_rule", "fanout"])
async def test_the_history_table_reads_the_outline_the_same_table(saver, name):
    """%checkpoints and the CLI's table (ahistory_frame) from the outline: what the full read
    gave, column for column."""
    from pandas.testing import assert_frame_equal

    from durable_debug.inspect.frames import ahistory_frame, history_frame_of

    ns = seed_on(name, saver)
    await run_seed(ns)
    g, cfg = ns["g"], ns["cfg"]
    frame = await ahistory_frame(g, cfg)
    expected = history_frame_of(await aread_thread(g, cfg))
    assert_frame_equal(frame, expected)
    assert frame.attrs == expected.attrs


@pytest.mark.redis
async def test_redis_reads_no_state_blob_and_names_a_damaged_row(redis_db):
    """State blobs made unreadable: the tree still opens; damaged metadata: an error naming
    the thread and the checkpoint."""
    import redis

    from durable_debug.checkpoint._redis_layout import Source
    from durable_debug.checkpoint.redis import RedisSaver

    with RedisSaver(redis_db) as saver:
        ns = seed_on("accumulate", saver)
        g, cfg = ns["g"], ns["cfg"]
        await g.ainvoke({"value": "", "log": []}, cfg)
        expected = await full_dag(g, cfg)
        blobs, metadata = saver._keys.of(Source("demo-1", ""), "blobs", "metadata")
        client = redis.Redis.from_url(redis_db.partition("?")[0])
        try:
            for field in client.hkeys(blobs):
                if field.split(b":")[0] in (b"value", b"log"):
                    client.hset(blobs, field, b'["msgpack"]\n\xc1\xc1')
            with pytest.raises(Exception):  # noqa: B017 - any decoding error: garbage values
                await aread_thread(g, cfg)
            assert await DagReader(g, cfg).aread() == expected
            newest = max(client.hkeys(metadata)).decode()
            client.hset(metadata, newest, '{"step": "two"}')
        finally:
            client.close()
        with pytest.raises(Exception, match="step") as raised:
            await DagReader(g, cfg).aread()
        assert "demo-1" in str(raised.value) and newest in str(raised.value)
        assert type(raised.value).__name__ == "CorruptPayloadError"


async def test_the_latest_mark_is_the_newest_checkpoint_and_its_writes(saver):
    assert await saver.alatest_mark("nobody", "") == ("", 0)
    ns = seed_on("resume", saver)
    g, cfg = ns["g"], ns["cfg"]
    with contextlib.suppress(RuntimeError):
        await g.ainvoke({"log": []}, cfg)  # c fails: its error is a write on the newest
    newest = await saver.aget_tuple(cfg)
    mark = await saver.alatest_mark("resume-1", "")
    assert mark == (newest.config["configurable"]["checkpoint_id"], len(newest.pending_writes))
    assert mark[1] >= 1
