"""LangGraph's stored layouts read directly: no LangGraph call, no app code, nothing written.

The stores are written by the real LangGraph app (``langgraph_app``) with LangGraph's own
savers; what the readers show is compared with what LangGraph itself reports.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest

from durable_debug import inspect as ddi
from durable_debug.checkpoint import CorruptPayloadError, DatabaseSetupError
from durable_debug.checkpoint.langgraph_layout import ReadOnlyStoreError
from durable_debug.checkpoint.langgraph_serde import TYPE_KEY, LangGraphLoader
from durable_debug.checkpoint.langgraph_sqlite import LangGraphSqliteReader
from durable_debug.checkpoint.serde import Limits
from durable_debug.inspect.listing import athread_listing
from durable_debug.inspect.stored import SaverView
from support.langgraph_app import CONFIG, THREAD, build_app, run_app


@pytest.fixture
def lg_file(tmp_path: Path) -> tuple[Path, Any]:
    """A SQLite file written by the app with LangGraph's sync SqliteSaver; and the graph."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "app.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = build_app(SqliteSaver(conn))
    run_app(graph)
    yield path, graph
    conn.close()


@pytest.fixture
def lg_postgres(postgres_db: str) -> tuple[str, Any]:
    """A PostgreSQL schema written by the app with LangGraph's PostgresSaver; and the graph."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_db) as saver:
        saver.setup()
        graph = build_app(saver)
        run_app(graph)
        yield postgres_db, graph


def open_reader(kind: str, where: Any) -> Any:
    if kind == "sqlite":
        return LangGraphSqliteReader(where)
    from durable_debug.checkpoint.langgraph_postgres import LangGraphPostgresReader

    return LangGraphPostgresReader(where)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """(reader, LangGraph graph) over the same store, for both layouts."""
    where, graph = request.getfixturevalue(
        "lg_file" if request.param == "sqlite" else "lg_postgres"
    )
    reader = open_reader(str(request.param), where)
    yield reader, graph
    reader.close()


def plain(value: Any) -> Any:
    """A LangGraph value as the reader shows it: objects as their tagged fields."""
    if hasattr(value, "model_dump"):
        cls = type(value)
        return {TYPE_KEY: f"{cls.__module__}.{cls.__name__}", **plain(value.model_dump())}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


async def test_the_reader_shows_what_langgraph_reports(store):
    reader, graph = store
    view = SaverView(reader)
    assert await view.alist_threads() == [THREAD]
    theirs = {s.config["configurable"]["checkpoint_id"]: s for s in graph.get_state_history(CONFIG)}
    thread = await ddi.aread_thread(view, CONFIG)
    assert set(thread.records) == set(theirs)
    for record in thread:
        snapshot = theirs[record.id]
        assert record.next == snapshot.next, record.step
        assert record.parent_id == (snapshot.parent_config or {}).get("configurable", {}).get(
            "checkpoint_id"
        )
        # Without the graph, a reducer channel nothing wrote yet is absent, not empty.
        expected = {k: v for k, v in plain(snapshot.values).items() if k in record.values}
        assert plain(record.values) == expected
        assert all(not plain(snapshot.values)[k] for k in set(snapshot.values) - set(expected))
        assert record.metadata["step"] == snapshot.metadata["step"]
        ran = {t.id for t in snapshot.tasks if t.error or t.interrupts or t.result is not None}
        assert ran <= {t.id for t in record.tasks}  # LangGraph's own task ids


async def test_messages_forks_failures_interrupts_and_sends_are_shown(store):
    reader, _ = store
    view = SaverView(reader)
    thread = await ddi.aread_thread(view, CONFIG)
    latest = thread.latest
    assert [m["content"] for m in latest.values["messages"]] == [
        "find notes",
        "researching a, b, c",
    ]
    assert latest.values["messages"][1][TYPE_KEY] == "langchain_core.messages.ai.AIMessage"
    fanned = [r for r in thread if r.next == ("research",) * 3]
    assert len(fanned) == 1 and len(thread.children(fanned[0])) == 2  # the fork
    failed = [t for t in fanned[0].failed_tasks() if "timed out on 'b'" in str(t.error)]
    # the Send of topic "b", its path as LangGraph gives a Send task's (a trailing False)
    assert [t.path for t in failed] == [("__pregel_push", 1, False)]
    ((task, question),) = latest.pending_interrupts()
    assert task.name == "review" and question.value == {"question": "publish?", "notes": 2}
    writes = await ddi.awrites_frame(view, CONFIG)
    assert {"notes", "__error__", "__interrupt__", "__pregel_tasks"} <= set(writes["channel"])
    rows = await athread_listing(reader)
    assert [(r.thread_id, r.checkpoints, r.step, r.status) for r in rows] == [
        (THREAD, len(thread), 3, "paused on 1 interrupt(s) at review")
    ]


async def test_postgres_blob_versions_are_the_stored_blobs(lg_postgres):
    url, _ = lg_postgres
    import psycopg

    with psycopg.connect(url) as conn:
        stored = {
            (channel, version): length
            for channel, version, length in conn.execute(
                "SELECT channel, version, length(blob) FROM checkpoint_blobs WHERE blob IS NOT NULL"
            )
        }
    reader = open_reader("postgres", url)
    try:
        blobs = await ddi.ablobs_frame(SaverView(reader), CONFIG)
    finally:
        reader.close()
    messages = blobs[blobs["channel"] == "messages"]
    assert len(set(messages["version"])) == 2  # the human message, then the answer
    for row in messages.itertuples():
        assert row.size == stored[("messages", row.version)]


async def test_export_html_of_a_langgraph_file(lg_file, tmp_path):
    path, graph = lg_file
    reader = LangGraphSqliteReader(path)
    page = Path(await ddi.aexport_html(SaverView(reader), CONFIG, tmp_path / "t.html")).read_text()
    reader.close()
    for snapshot in graph.get_state_history(CONFIG):
        assert snapshot.config["configurable"]["checkpoint_id"] in page
    assert "search backend timed out" in page


def test_the_file_is_opened_read_only_and_writes_are_refused(lg_file):
    path, _ = lg_file
    before = path.read_bytes()
    reader = LangGraphSqliteReader(path)
    assert reader.list(CONFIG)
    with pytest.raises(ReadOnlyStoreError, match="nothing is written"):
        reader.put_writes(CONFIG, [("x", 1)], "task")
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader._conn.execute("DELETE FROM writes")
    reader.close()
    assert path.read_bytes() == before
    with pytest.raises(DatabaseSetupError, match="no such SQLite file"):
        LangGraphSqliteReader(path.with_name("typo.db"))
    assert not path.with_name("typo.db").exists()


# -- the decoder ------------------------------------------------------------------------------


def ext(code: int, *parts: Any) -> msgpack.ExtType:
    return msgpack.ExtType(code, msgpack.packb(list(parts), use_bin_type=True))


def test_a_hostile_class_path_is_data_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    payload = msgpack.packb(
        {
            "a": ext(0, "os", "system", f"touch {marker}"),
            "b": ext(1, "subprocess", "call", [["touch", str(marker)]]),
            "c": ext(2, "builtins", "eval", {"source": f"open({str(marker)!r}, 'w')"}),
            "d": ext(3, "os", "system", f"touch {marker}", "__call__"),
            "e": ext(5, "os", "system", {"x": 1}, "model_validate_json"),
        },
        use_bin_type=True,
    )
    value = LangGraphLoader().loads_typed(("msgpack", payload))
    assert value == {
        "a": {TYPE_KEY: "os.system", "value": f"touch {marker}"},
        "b": {TYPE_KEY: "subprocess.call", "args": [["touch", str(marker)]]},
        "c": {TYPE_KEY: "builtins.eval", "source": f"open({str(marker)!r}, 'w')"},
        "d": {TYPE_KEY: "os.system", "value": f"touch {marker}"},
        "e": {TYPE_KEY: "os.system", "x": 1},
    }
    assert LangGraphLoader().loads_typed(("pickle", b"cos\nsystem\n"))[TYPE_KEY] == "pickle"
    assert not marker.exists()


def test_a_hostile_value_in_a_langgraph_file_is_shown_not_run(lg_file, tmp_path):
    path, _ = lg_file
    marker = tmp_path / "pwned"
    with sqlite3.connect(path) as conn:  # what a tampered file could hold
        conn.execute(
            "UPDATE writes SET type = 'msgpack', value = ? WHERE channel = 'notes'",
            (msgpack.packb(ext(0, "os", "system", f"touch {marker}"), use_bin_type=True),),
        )
    reader = LangGraphSqliteReader(path)
    writes = ddi.writes_frame(SaverView(reader), CONFIG)
    reader.close()
    notes = writes[writes["channel"] == "notes"]["value"].tolist()
    assert notes and all(v == {TYPE_KEY: "os.system", "value": f"touch {marker}"} for v in notes)
    assert not marker.exists()


@dataclass
class Point:
    x: int
    y: int


def test_values_langgraph_serializes_read_back_as_tagged_fields():
    import numpy as np
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    ident = uuid.UUID(int=7)
    value = {
        "when": when,
        "id": ident,
        "tags": {"x"},
        "point": Point(1, 2),
        "message": AIMessage("hi", id="m1"),
        "array": np.arange(3, dtype="<i4"),
    }
    loaded = LangGraphLoader().loads_typed(JsonPlusSerializer().dumps_typed(value))
    assert loaded["when"] == when and loaded["id"] == ident and loaded["tags"] == {"x"}
    assert loaded["point"] == {TYPE_KEY: f"{__name__}.Point", "x": 1, "y": 2}
    assert loaded["message"][TYPE_KEY] == "langchain_core.messages.ai.AIMessage"
    assert loaded["message"]["content"] == "hi"
    assert loaded["array"] == {
        TYPE_KEY: "numpy.ndarray",
        "dtype": "<i4",
        "shape": [3],
        "order": "C",
        "data": np.arange(3, dtype="<i4").tobytes(),
    }


def test_payloads_beyond_the_limits_are_corrupt_not_a_crash():
    nested: Any = 1
    for _ in range(200):
        nested = ext(7, nested)  # LangGraph's delta wrapper, nested 200 deep
    with pytest.raises(CorruptPayloadError, match="nests deeper than the limit of 128 levels"):
        LangGraphLoader().loads_typed(("msgpack", msgpack.packb(nested)))
    huge_array = b"\xdd\xff\xff\xff\xff"  # declares 4 billion items, holds none
    with pytest.raises(CorruptPayloadError, match="not a LangGraph msgpack value"):
        LangGraphLoader().loads_typed(("msgpack", huge_array))
    with pytest.raises(CorruptPayloadError, match="more than the limit"):
        LangGraphLoader(Limits(max_bytes=10)).loads_typed(("msgpack", b"\x00" * 11))
    with pytest.raises(CorruptPayloadError, match="unknown extension type 42"):
        LangGraphLoader().loads_typed(("msgpack", msgpack.packb(msgpack.ExtType(42, b""))))
    with pytest.raises(CorruptPayloadError, match="'msgpack\\+aes'"):
        LangGraphLoader().loads_typed(("msgpack+aes", b"x"))
