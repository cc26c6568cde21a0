"""The inspect layer and the widget on LangGraph apps, with LangGraph's own savers as configured.

Sync-only savers (``SqliteSaver``, ``PostgresSaver``) raise ``NotImplementedError`` from every
async method; the inspect layer reads them through their sync methods in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from durable_debug import inspect as ddi
from durable_debug.inspect.locate import afind_graph
from support.langgraph_app import CONFIG, THREAD, arun_app, build_app, run_app

SAVERS = ["memory", "sqlite", "aiosqlite", "postgres", "apostgres"]


@contextlib.asynccontextmanager
async def langgraph_saver(kind: str, tmp_path: Path, request: Any) -> AsyncIterator[Any]:
    """A LangGraph saver set up the way its docs show."""
    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()
    elif kind == "aiosqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "lg.db")) as saver:
            yield saver
    elif kind == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        url = request.getfixturevalue("postgres_db")
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        url = request.getfixturevalue("postgres_db")
        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver


@pytest.fixture(params=SAVERS)
async def app(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    """(graph, fork config): the app run on one of LangGraph's savers."""
    async with langgraph_saver(str(request.param), tmp_path, request) as saver:
        graph = build_app(saver)
        if str(request.param) in ("sqlite", "postgres"):
            fork = await asyncio.to_thread(run_app, graph)
        else:
            fork = await arun_app(graph)
        yield graph, fork


def history_of(graph: Any) -> list[Any]:
    """What LangGraph itself reports, through whichever API the saver has."""
    try:
        return list(graph.get_state_history(CONFIG))
    except Exception:  # an async-only saver refuses sync calls from its loop's thread
        return []


async def test_every_checkpoint_langgraph_reports_is_in_the_history_frame(app):
    graph, _ = app
    snapshots = await ddi.access.astate_history(graph, CONFIG)
    frame = await ddi.ahistory_frame(graph, CONFIG)
    assert sorted(frame["checkpoint_id"]) == sorted(
        s.config["configurable"]["checkpoint_id"] for s in snapshots
    )
    assert len(frame) >= 7
    assert frame["errors"].sum() >= 1  # the failed research of "b"
    assert frame["interrupts"].sum() >= 1  # review asked


async def test_the_dag_shows_the_fork_and_the_messages(app):
    graph, fork = app
    dag = await ddi.acheckpoint_dag(graph, CONFIG)
    parents = [n for n in dag.nodes if dag.out_degree(n) == 2]
    assert len(parents) == 1  # the checkpoint after chat, forked once
    fork_id = fork["configurable"]["checkpoint_id"]
    assert dag.has_edge(parents[0], fork_id)
    detail = await ddi.acheckpoint_detail(graph, CONFIG, fork_id)
    assert detail["values"]["topics"] == ["a", "c"]
    messages = [
        m.content for m in (await ddi.aread_thread(graph, CONFIG)).latest.values["messages"]
    ]
    assert messages == ["find notes", "researching a, b, c"]


async def test_failed_task_interrupt_and_send_writes_show_in_the_detail(app):
    graph, _ = app
    thread = await ddi.aread_thread(graph, CONFIG)
    fanned = [r for r in thread if r.next == ("research",) * 3]
    failed = [t for r in fanned for t in r.failed_tasks()]
    assert any("search backend timed out" in str(t.error) for t in failed)
    asked = [r for r in thread if r.pending_interrupts()]
    assert asked and asked[-1].pending_interrupts()[0][1].value["question"] == "publish?"
    writes = await ddi.awrites_frame(graph, CONFIG)
    assert {"notes"} <= set(writes["channel"])
    blobs = await ddi.ablobs_frame(graph, CONFIG)
    assert {"messages", "topics", "notes"} <= set(blobs["channel"])
    stats = await ddi.astorage_stats(graph, CONFIG)
    assert stats.checkpoints == len(thread)


async def test_export_html_holds_every_checkpoint(app, tmp_path):
    graph, _ = app
    path = await ddi.aexport_html(graph, CONFIG, tmp_path / "job.html")
    page = Path(path).read_text()
    thread = await ddi.aread_thread(graph, CONFIG)
    assert all(record.id in page for record in thread)


async def test_the_graph_holding_the_thread_is_found_on_any_saver(app):
    graph, _ = app
    assert await afind_graph({"g": graph}, THREAD) == ("g", graph)


async def test_a_saver_that_fails_is_named_not_hidden(tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False)
    graph = build_app(SqliteSaver(conn))
    conn.close()  # the app closed its connection: reading must say so
    with pytest.raises(LookupError, match=r"could be read for thread 'job-1'.*g: ProgrammingError"):
        await afind_graph({"g": graph}, THREAD)


async def test_the_widget_reads_forks_and_reruns_on_a_sync_sqlite_saver(tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    from durable_debug.widget import TimeTravel

    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False)
    graph = build_app(SqliteSaver(conn))
    await asyncio.to_thread(run_app, graph)
    widget = TimeTravel(graph, CONFIG)
    await widget.aready()
    before = {n["id"] for n in widget.dag["nodes"]}
    assert len(before) == len(list(graph.get_state_history(CONFIG)))
    after_chat = next(s for s in graph.get_state_history(CONFIG) if s.next == ("research",) * 3)
    cid = after_chat.config["configurable"]["checkpoint_id"]
    forked = await widget._do_fork({"checkpoint_id": cid, "edits": {"topics": '["c"]'}})
    assert graph.get_state(
        {"configurable": {**CONFIG["configurable"], "checkpoint_id": forked["checkpoint_id"]}}
    ).values["topics"] == ["c"]
    await widget._do_rerun({"checkpoint_id": forked["checkpoint_id"]})
    await widget._run_task
    assert widget._error == ""
    assert "interrupted at review" in widget._status
    paused = graph.get_state({"configurable": {"thread_id": "job-1"}})
    (question,) = paused.interrupts
    await widget._do_resume(
        {
            "checkpoint_id": paused.config["configurable"]["checkpoint_id"],
            "answers": {question.id: '"ship it"'},
        }
    )
    await widget._run_task
    assert widget._error == "" and widget._status.endswith("done")
    assert graph.get_state(CONFIG).values["decision"] == "ship it"  # through LangGraph's API
    conn.close()


async def test_the_widget_shows_why_it_cannot_read(tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    from durable_debug.widget import TimeTravel

    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False)
    graph = build_app(SqliteSaver(conn))
    conn.close()
    widget = TimeTravel(graph, CONFIG)
    with pytest.raises(Exception, match="closed"):
        await widget.aready()
    assert widget._error.startswith(
        "Cannot read thread 'job-1': the store is closed or gone (ProgrammingError: Cannot "
        "operate on a closed database.)"
    )
    assert "Re-run the cell that opens the store" in widget._error


async def test_the_sync_api_works_inside_a_running_loop_as_in_a_notebook_cell(app):
    """A notebook cell calls ``history_frame`` (sync) while the kernel's loop runs."""
    graph, fork = app
    frame = ddi.history_frame(graph, CONFIG)  # blocks this loop, as a cell does
    assert fork["configurable"]["checkpoint_id"] in set(frame["checkpoint_id"])
    assert ddi.storage_stats(graph, CONFIG).checkpoints == len(frame)


async def test_a_dag_refresh_reads_only_what_was_written_since(app):
    """Big threads: on LangGraph's savers too, a refresh lists only the checkpoints from the
    newest one seen on (and the parents of new ones), and the tree equals a full read's."""
    from durable_debug.inspect.dag import DagReader, dag_data_of, dag_from_wire

    graph, fork = app
    reader = DagReader(graph, CONFIG)
    await reader.arefresh()
    before = len(reader.ids())
    assert dag_from_wire(reader.wire()) == dag_data_of(await ddi.aread_thread(graph, CONFIG))
    try:
        await graph.ainvoke(None, fork)  # the fork runs on: research twice, then review
    except NotImplementedError:  # a sync-only saver
        await asyncio.to_thread(graph.invoke, None, fork)
    await reader.arefresh()
    added = len(reader.ids()) - before
    assert added >= 2
    assert reader.last_read <= added + 2  # the new ones, the newest seen, the fork's parent
    assert dag_from_wire(reader.wire()) == dag_data_of(await ddi.aread_thread(graph, CONFIG))
