"""The checkpoint tree from checkpoint rows and metadata only (big threads).

On durable_debug's SQLite saver the tree is read without decoding any state value, in one read
session of three queries (rows, writes, trigger blobs) plus the debug records, and a read
after the first asks only for what was written since. It must be the same tree, mark for
mark, as the one built from the full thread read, for the widget's DagReader and for
checkpoint_dag and dag_data alike.
"""

from __future__ import annotations

import contextlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from durable_debug.inspect.dag import DagReader, dag_data_of
from durable_debug.inspect.thread import aread_thread
from support.seed_graphs import empty_state, load


def on_sqlite(name: str, path: Path) -> dict[str, Any]:
    """Seed ``name`` on durable_debug's engine with every graph saving to the SQLite ``path``."""
    return load("durable_debug", name, sqlite=path)


async def full_dag(g: Any, cfg: Any) -> Any:
    return dag_data_of(await aread_thread(g, cfg))


async def test_the_outline_tree_is_the_full_tree_with_forks(tmp_path):
    ns = on_sqlite("accumulate", tmp_path / "t.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    for i in range(2):
        await g.ainvoke(None, await g.aupdate_state(target.config, {"value": f"F{i}"}))
    reader = DagReader(g, cfg)
    dag = await reader.aread()
    assert dag == await full_dag(g, cfg)
    assert dag["lanes"] == 3 and reader.reads == 1


async def test_errors_and_interrupts_are_marked_without_reading_state(tmp_path):
    ns = on_sqlite("resume", tmp_path / "r.db")
    g, cfg = ns["g"], ns["cfg"]
    with contextlib.suppress(RuntimeError):
        await g.ainvoke({"log": []}, cfg)
    dag = await DagReader(g, cfg).aread()
    assert dag == await full_dag(g, cfg)
    assert [(n["step"], n["next"]) for n in dag["nodes"] if n["errors"]] == [(2, ["c"])]

    ns = on_sqlite("rerun_rule", tmp_path / "h.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"prep": "", "decision": ""}, cfg)
    reader = DagReader(g, cfg)
    dag = await reader.aread()
    assert dag == await full_dag(g, cfg)
    assert [(n["next"], n["interrupts"]) for n in dag["nodes"] if n["interrupts"]] == [
        (["gate"], 1)
    ]
    await g.ainvoke(ns["Command"](resume="yes"), cfg)
    dag = await reader.aread()  # the paused checkpoint is read again: answered now
    assert [n for n in dag["nodes"] if n["interrupts"]] == []
    assert dag == await full_dag(g, cfg)


@pytest.mark.parametrize("name", ["fanout", "two_gates", "reviews", "loop"])
async def test_the_outline_agrees_on_every_seed(tmp_path, name):
    ns = on_sqlite(name, tmp_path / "s.db")
    g, cfg = ns["g"], ns["cfg"]
    state = empty_state(ns)
    with contextlib.suppress(Exception):
        await g.ainvoke(state, cfg)
    assert await DagReader(g, cfg).aread() == await full_dag(g, cfg)


async def test_no_state_value_is_decoded(tmp_path):
    """State blobs made unreadable: the full read fails, the tree still opens."""
    database = tmp_path / "t.db"
    ns = on_sqlite("accumulate", database)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    expected = await full_dag(g, cfg)
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE checkpoint_blobs SET blob = x'c1c1' WHERE channel IN ('value', 'log')")
        db.execute("UPDATE checkpoint_writes SET blob = x'c1c1' WHERE channel IN ('value', 'log')")
    with pytest.raises(Exception):  # noqa: B017 - any decoding error: the values are garbage
        await aread_thread(g, cfg)
    assert await DagReader(g, cfg).aread() == expected


async def test_a_second_read_reads_only_what_was_written_since(tmp_path):
    ns = on_sqlite("accumulate", tmp_path / "t.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    reader = DagReader(g, cfg)
    first = await reader.aread()
    assert reader.last_read == len(first["nodes"]) == 4
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    await g.ainvoke(None, await g.aupdate_state(target.config, {"value": "F"}))
    dag = await reader.aread()
    # the 2 new checkpoints, the newest seen before, and the fork's parent (its writes grew)
    assert reader.last_read == 4
    assert len(dag["nodes"]) == 6 and dag == await full_dag(g, cfg)
    await reader.aread()
    assert reader.last_read == 1  # nothing new: only the newest seen is read again


async def test_the_protocol_layout_is_dag_layout(tmp_path):
    """dag_data_of places checkpoints without networkx: the same places as dag_layout."""
    from durable_debug.inspect.dag import dag_from_thread, dag_layout

    ns = on_sqlite("accumulate", tmp_path / "t.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    history = [s async for s in g.aget_state_history(cfg)]
    for i, snapshot in enumerate(history[1:3]):  # forks from two places, one run on
        forked = await g.aupdate_state(snapshot.config, {"value": f"F{i}"})
        await g.ainvoke(None, forked)
    thread = await aread_thread(g, cfg)
    placed = {n["id"]: (n["depth"], n["lane"]) for n in dag_data_of(thread)["nodes"]}
    assert placed == dict(dag_layout(dag_from_thread(thread)))
    assert len(set(placed.values())) == len(placed) and max(p[1] for p in placed.values()) == 2


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("UPDATE checkpoints SET checkpoint = '{\"v\": 1, ' WHERE checkpoint_id = ?", "malformed"),
        ('UPDATE checkpoints SET metadata = \'{"step": "two"}\' WHERE checkpoint_id = ?', "step"),
        (
            "DELETE FROM checkpoint_blobs WHERE channel LIKE 'branch:to:%' AND version IN "
            "(SELECT key FROM checkpoints, json_each(checkpoint, '$.channel_versions') "
            "WHERE checkpoint_id = ?)",
            "no blob of that version",
        ),
    ],
)
async def test_a_damaged_row_is_named_not_skipped(tmp_path, change, said):
    """Bad rows give an error naming the thread and the checkpoint (never a crash, never a
    tree that silently lacks a mark)."""
    database = tmp_path / "t.db"
    ns = on_sqlite("accumulate", database)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    with closing(sqlite3.connect(database)) as db, db:
        newest = db.execute("SELECT max(checkpoint_id) FROM checkpoints").fetchone()[0]
        second = db.execute(
            "SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id LIMIT 1 OFFSET 1"
        ).fetchone()[0]
        db.execute(change, (second if "branch" in change else newest,))
    with pytest.raises(Exception, match=said) as raised:
        await DagReader(g, cfg).aread()
    assert "demo-1" in str(raised.value)
    assert (second if "branch" in change else newest) in str(raised.value)


def graph_facts(dag: Any) -> tuple[Any, ...]:
    """Everything a networkx tree says: its attributes, nodes with theirs, and edges."""
    return dag.graph, dict(dag.nodes(data=True)), sorted(dag.edges)


@pytest.mark.parametrize(
    ("name", "store"),
    [(name, "sqlite") for name in ("accumulate", "resume", "rerun_rule", "fanout", "loop")]
    + [("accumulate", "memory"), ("resume", "memory")],
)
async def test_checkpoint_dag_and_dag_data_read_the_outline_the_same_tree(tmp_path, name, store):
    """The public readers give what they gave from the full read, attribute for attribute
    (from the outline, on SQLite and on the memory saver)."""
    from durable_debug.inspect import acheckpoint_dag, adag_data
    from durable_debug.inspect.dag import dag_from_thread

    ns = on_sqlite(name, tmp_path / "s.db") if store == "sqlite" else load("durable_debug", name)
    g, cfg = ns["g"], ns["cfg"]
    state = empty_state(ns)
    with contextlib.suppress(Exception):
        await g.ainvoke(state, cfg)
    history = [s async for s in g.aget_state_history(cfg)]
    if len(history) > 2:  # a fork from the middle, so the tree has a branch
        with contextlib.suppress(Exception):
            await g.aupdate_state(history[len(history) // 2].config, None)
    thread = await aread_thread(g, cfg)
    assert graph_facts(await acheckpoint_dag(g, cfg)) == graph_facts(dag_from_thread(thread))
    assert await adag_data(g, cfg) == dag_data_of(thread)


async def test_checkpoint_dag_and_dag_data_decode_no_state(tmp_path):
    """State blobs made unreadable: the tree and its data still open, the state read fails."""
    from durable_debug.inspect import acheckpoint_dag, adag_data

    database = tmp_path / "t.db"
    ns = on_sqlite("accumulate", database)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    expected = await full_dag(g, cfg)
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE checkpoint_blobs SET blob = x'c1c1' WHERE channel IN ('value', 'log')")
    with pytest.raises(Exception):  # noqa: B017 - any decoding error: the values are garbage
        await aread_thread(g, cfg)
    assert await adag_data(g, cfg) == expected
    tree = await acheckpoint_dag(g, cfg)
    assert sorted(tree.nodes) == sorted(n["id"] for n in expected["nodes"])


def test_the_savers_declare_the_reads_they_can_do_without_state(tmp_path):
    """A view asks the saver, not its class: SQLite reads outlines, marks and heads; the
    memory saver outlines and subgraph namespaces; the others read through the protocol."""
    from durable_debug import MemorySaver, SqliteSaver
    from durable_debug.checkpoint.base import LatestHeadsSaver, OutlineSaver, SubgraphHeadsSaver

    sqlite = SqliteSaver(str(tmp_path / "c.db"))
    assert isinstance(sqlite, OutlineSaver)
    assert isinstance(sqlite, SubgraphHeadsSaver) and isinstance(sqlite, LatestHeadsSaver)
    memory = MemorySaver()
    assert isinstance(memory, SubgraphHeadsSaver)
    assert isinstance(memory, OutlineSaver) and not isinstance(memory, LatestHeadsSaver)


async def test_a_file_older_than_the_debug_records_is_read_as_it_is(tmp_path):
    """A file from before checkpoints had a debug column (read-only: never migrated): the
    outline reads the rows without records, as the full read does."""
    from durable_debug.checkpoint.readonly import ReadOnlySqliteSaver
    from durable_debug.inspect.stored import SaverView

    database = tmp_path / "old.db"
    ns = on_sqlite("accumulate", database)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    count = len([s async for s in g.aget_state_history(cfg)])
    await g.checkpointer.aclose()
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("ALTER TABLE checkpoints DROP COLUMN debug")
    view = SaverView(ReadOnlySqliteSaver(database))
    dag = await DagReader(view, cfg).aread()
    assert dag == await full_dag(view, cfg)
    assert len(dag["nodes"]) == count


async def test_the_outline_is_one_read_session_of_three_queries(tmp_path):
    """As docs/inspect.md says: the rows with their metadata and debug records, the writes,
    the trigger blobs, in one transaction."""
    ns = on_sqlite("accumulate", tmp_path / "t.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    saver = g.checkpointer
    statements: list[str] = []
    await saver._conn.set_trace_callback(statements.append)
    dag = await DagReader(g, cfg).aread()
    await saver._conn.set_trace_callback(None)
    assert len(dag["nodes"]) == 4
    read = [" ".join(sql.split()[:2]) for sql in statements if not sql.startswith("PRAGMA")]
    assert read[0] == "BEGIN" and read[-1] == "COMMIT"
    queries = read[1:-1]
    assert len(queries) == 3 and all(query.startswith("SELECT") for query in queries)
    assert "debug" in statements[statements.index("BEGIN") + 1]


@pytest.mark.parametrize("name", ["accumulate", "resume", "rerun_rule", "fanout", "loop"])
async def test_the_history_table_reads_the_outline_the_same_table(tmp_path, name):
    """%checkpoints and the CLI's table (ahistory_frame) from the outline: what the full read
    gave, column for column, findings included, on forks, failures and pauses."""
    from pandas.testing import assert_frame_equal

    from durable_debug.inspect.frames import ahistory_frame, history_frame_of

    ns = on_sqlite(name, tmp_path / "s.db")
    g, cfg = ns["g"], ns["cfg"]
    state = empty_state(ns)
    with contextlib.suppress(Exception):
        await g.ainvoke(state, cfg)
    history = [s async for s in g.aget_state_history(cfg)]
    if len(history) > 2:  # a fork from the middle, so the table has two lanes
        with contextlib.suppress(Exception):
            await g.aupdate_state(history[len(history) // 2].config, None)
    frame = await ahistory_frame(g, cfg)
    expected = history_frame_of(await aread_thread(g, cfg))
    assert_frame_equal(frame, expected)
    assert frame.attrs == expected.attrs


async def test_the_history_table_decodes_no_state(tmp_path):
    """State blobs made unreadable: the full read fails, the table of a finished thread (no
    failure to classify) still opens, as it was."""
    from pandas.testing import assert_frame_equal

    from durable_debug.inspect.frames import ahistory_frame, history_frame_of

    database = tmp_path / "t.db"
    ns = on_sqlite("accumulate", database)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    expected = history_frame_of(await aread_thread(g, cfg))
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE checkpoint_blobs SET blob = x'c1c1' WHERE channel IN ('value', 'log')")
    with pytest.raises(Exception):  # noqa: B017 - any decoding error: the values are garbage
        await aread_thread(g, cfg)
    assert_frame_equal(await ahistory_frame(g, cfg), expected)


async def test_the_exported_page_holds_the_tree_the_outline_reads(tmp_path):
    """export_html's tree is the widget's outline read: the same tree as the full read's."""
    from durable_debug.inspect.dag_wire import dag_from_wire
    from durable_debug.inspect.export import ahtml_data

    ns = on_sqlite("resume", tmp_path / "r.db")
    g, cfg = ns["g"], ns["cfg"]
    with contextlib.suppress(RuntimeError):
        await g.ainvoke({"log": []}, cfg)
    data = await ahtml_data(g, cfg)
    assert dag_from_wire(data["dag"]) == await full_dag(g, cfg)
    assert sorted(data["details"]) == sorted(n["id"] for n in (await full_dag(g, cfg))["nodes"])


async def test_other_tasks_find_the_collector_on_while_a_tree_is_read(tmp_path):
    """The readers pause the garbage collector only while they build, never across the
    read's await: a task that runs meanwhile always finds it on, and it is on after."""
    import asyncio
    import gc

    from durable_debug.inspect import acheckpoint_dag, adag_data

    ns = on_sqlite("accumulate", tmp_path / "t.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    seen: list[bool] = []
    reading = True

    async def watch() -> None:
        while reading:
            seen.append(gc.isenabled())
            await asyncio.sleep(0)

    assert gc.isenabled()
    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    started = len(seen)
    await acheckpoint_dag(g, cfg)
    await adag_data(g, cfg)
    await DagReader(g, cfg).aread()
    reading = False
    await watcher
    assert len(seen) > started + 3  # the watcher ran while the readers awaited their reads
    assert all(seen) and gc.isenabled()
