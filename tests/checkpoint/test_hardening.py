"""Hostile input, the store side: a damaged store or a bad config gives the package's own error,
naming where it happened, never silent data loss or a raw driver error."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import raw_connection
from typing_extensions import TypedDict

import durable_debug
from durable_debug import (
    END,
    START,
    CheckpointNotFoundError,
    CorruptPayloadError,
    DatabaseSetupError,
    DurableDebugError,
    InvalidConfigError,
    PostgresSaver,
    SqliteSaver,
    StateGraph,
    StoreClosedError,
    StoreUnavailableError,
    UnsupportedValueError,
)


class Pair(TypedDict, total=False):
    a: str
    b: str


def pair_graph(saver: Any) -> Any:
    """START → fill → END: writes both keys of the state."""

    def fill(state: Pair) -> dict[str, str]:
        return {"a": state["a"] + "!", "b": "written by fill"}

    return (
        StateGraph(Pair)
        .add_node("fill", fill)
        .add_edge(START, "fill")
        .add_edge("fill", END)
        .compile(checkpointer=saver)
    )


@pytest.fixture(params=["sqlite", "postgres"])
def sql_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        saver: Any = SqliteSaver(tmp_path / "store.db")
    else:
        saver = PostgresSaver(request.getfixturevalue("postgres_db"))
    try:
        yield saver
    finally:
        saver.close()


# --- the error hierarchy -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (CorruptPayloadError, ValueError),
        (UnsupportedValueError, TypeError),
        (InvalidConfigError, ValueError),
        (CheckpointNotFoundError, LookupError),
        (StoreUnavailableError, ConnectionError),
        (StoreClosedError, RuntimeError),
        (DatabaseSetupError, RuntimeError),
    ],
)
def test_every_store_error_is_a_package_error_and_its_builtin(error: type, builtin: type):
    assert issubclass(error, DurableDebugError)
    assert issubclass(error, builtin)
    assert getattr(durable_debug, error.__name__) is error
    assert error.__name__ in durable_debug.__all__


def test_every_error_the_store_layer_exports_is_a_package_error():
    import durable_debug.checkpoint as checkpoint

    errors = [name for name in checkpoint.__all__ if name.endswith("Error")]
    assert len(errors) >= 8
    for name in errors:
        assert issubclass(getattr(checkpoint, name), DurableDebugError), name
        assert name in durable_debug.__all__, name


def test_put_writes_without_a_checkpoint_id_is_an_invalid_config_error(sql_saver):
    with pytest.raises(InvalidConfigError, match="names a checkpoint_id"):
        sql_saver.put_writes({"configurable": {"thread_id": "t"}}, [("a", 1)], "task")


def test_a_closed_saver_says_so_with_a_package_error(tmp_path: Path):
    saver = SqliteSaver(tmp_path / "store.db")
    saver.setup()
    saver.close()
    with pytest.raises(StoreClosedError, match="closed"):
        saver.get_tuple({"configurable": {"thread_id": "t"}})


# --- finding 3: a missing blob row ---------------------------------------------------------


def test_a_missing_blob_row_is_an_error_naming_thread_checkpoint_channel_version(sql_saver):
    graph = pair_graph(sql_saver)
    config = {"configurable": {"thread_id": "lost-blob"}}
    graph.invoke({"a": "x"}, config)
    latest = graph.get_state(config)
    assert latest.values == {"a": "x!", "b": "written by fill"}
    checkpoint_id = latest.config["configurable"]["checkpoint_id"]
    with raw_connection(sql_saver) as db:
        (version,) = db.execute(
            "SELECT version FROM checkpoint_blobs WHERE thread_id = ? AND channel = 'b'",
            ("lost-blob",),
        )[0]
        db.execute(
            "DELETE FROM checkpoint_blobs WHERE thread_id = ? AND channel = 'b'", ("lost-blob",)
        )

    with pytest.raises(CorruptPayloadError) as caught:
        graph.get_state(config)
    message = str(caught.value)
    assert "'lost-blob'" in message
    assert checkpoint_id in message
    assert "channel 'b'" in message
    assert version.split(".")[1] in message  # the version that is missing
    assert "blob" in message
    with pytest.raises(CorruptPayloadError, match="'b'"):
        list(graph.get_state_history(config))


# --- finding 5: thread ids and the other address keys --------------------------------------

BAD_IDS = [
    pytest.param([1], "list", id="list"),
    pytest.param({"a": 1}, "dict", id="dict"),
    pytest.param(b"job", "bytes", id="bytes"),
    pytest.param(True, "bool", id="bool"),
    pytest.param(1.5, "float", id="float"),
    pytest.param("job\x00one", "NUL", id="nul"),
    pytest.param("job\ud800", "lone surrogate", id="surrogate"),
]


def entry_points(graph: Any, saver: Any, config: dict) -> dict[str, Any]:
    """Every way a user hands a config to the graph or the saver."""
    from durable_debug.checkpoint.base import empty_checkpoint

    return {
        "invoke": lambda: graph.invoke({"a": "x"}, config),
        "stream": lambda: list(graph.stream({"a": "x"}, config)),
        "get_state": lambda: graph.get_state(config),
        "get_state_history": lambda: list(graph.get_state_history(config)),
        "update_state": lambda: graph.update_state(config, {"a": "y"}, as_node="fill"),
        "saver.get_tuple": lambda: saver.get_tuple(config),
        "saver.list": lambda: list(saver.list(config)),
        "saver.put": lambda: saver.put(config, empty_checkpoint(), {"source": "input"}, {}),
        "saver.put_writes": lambda: saver.put_writes(
            {"configurable": {**config["configurable"], "checkpoint_id": "c"}}, [("a", 1)], "t"
        ),
    }


@pytest.mark.parametrize("key", ["thread_id", "checkpoint_ns", "checkpoint_id"])
@pytest.mark.parametrize(("bad", "what"), BAD_IDS)
def test_a_bad_address_key_is_refused_by_every_entry_point_before_any_write(
    sql_saver, key: str, bad: Any, what: str
):
    graph = pair_graph(sql_saver)
    graph.invoke({"a": "x"}, {"configurable": {"thread_id": "kept"}})
    with raw_connection(sql_saver) as db:
        before = db.dump()
    configurable: dict[str, Any] = {"thread_id": "kept", key: bad}
    for name, call in entry_points(graph, sql_saver, {"configurable": configurable}).items():
        if key == "checkpoint_id" and name in ("saver.put_writes",):
            continue  # that call names its own checkpoint_id
        with pytest.raises(InvalidConfigError) as caught:
            call()
        message = str(caught.value)
        assert f"[{key!r}]" in message, (name, message)
        assert what in message, (name, message)
        assert isinstance(caught.value, ValueError)
    with raw_connection(sql_saver) as db:
        assert db.dump() == before


def test_a_nul_in_a_thread_id_no_longer_loses_the_run_on_sqlite(tmp_path: Path):
    with SqliteSaver(tmp_path / "store.db") as saver:
        graph = pair_graph(saver)
        config = {"configurable": {"thread_id": "a\x00b"}}
        with pytest.raises(InvalidConfigError, match="NUL"):
            graph.invoke({"a": "x"}, config)
        assert saver.list_threads() == []


def test_an_int_thread_id_is_its_decimal_string_as_in_langgraph(sql_saver):
    graph = pair_graph(sql_saver)
    graph.invoke({"a": "x"}, {"configurable": {"thread_id": 7}})
    by_str = graph.get_state({"configurable": {"thread_id": "7"}})
    by_int = graph.get_state({"configurable": {"thread_id": 7}})
    assert by_str.values == by_int.values == {"a": "x!", "b": "written by fill"}
    assert by_int.config["configurable"]["thread_id"] == "7"
    assert sql_saver.list_threads() == ["7"]
    graph.invoke({"a": "y"}, {"configurable": {"thread_id": "7"}})
    assert len(list(graph.get_state_history({"configurable": {"thread_id": 7}}))) == 6


def test_a_uuid_or_numpy_int_thread_id_is_its_string(sql_saver):
    import uuid

    import numpy as np

    graph = pair_graph(sql_saver)
    job = uuid.uuid4()
    graph.invoke({"a": "x"}, {"configurable": {"thread_id": job}})
    graph.invoke({"a": "y"}, {"configurable": {"thread_id": np.int64(9)}})
    assert graph.get_state({"configurable": {"thread_id": str(job)}}).values["a"] == "x!"
    assert graph.get_state({"configurable": {"thread_id": "9"}}).values["a"] == "y!"
    assert sql_saver.list_threads() == [str(job), "9"]


def test_a_missing_thread_id_is_an_invalid_config_error(sql_saver):
    graph = pair_graph(sql_saver)
    with pytest.raises(InvalidConfigError, match="needs a thread id"):
        graph.invoke({"a": "x"}, {"configurable": {}})


@pytest.mark.parametrize("kind", ["memory", "redis"])
@pytest.mark.parametrize(("bad", "what"), BAD_IDS)
def test_memory_and_redis_refuse_a_bad_thread_id_too(
    request: pytest.FixtureRequest, kind: str, bad: Any, what: str
):
    from durable_debug import MemorySaver, RedisSaver

    saver: Any = (
        MemorySaver() if kind == "memory" else RedisSaver(request.getfixturevalue("redis_db"))
    )
    try:
        graph = pair_graph(saver)
        graph.invoke({"a": "x"}, {"configurable": {"thread_id": "kept"}})
        for call in entry_points(graph, saver, {"configurable": {"thread_id": bad}}).values():
            with pytest.raises(InvalidConfigError, match=what):
                call()
        assert saver.list_threads() == ["kept"]
    finally:
        if kind == "redis":
            saver.close()


# --- finding 9: a PostgreSQL restart ---------------------------------------------------------


def test_a_postgres_restart_between_calls_costs_no_failed_call(postgres_control):
    server = postgres_control
    with PostgresSaver(server.url) as saver:
        graph = pair_graph(saver)
        config = {"configurable": {"thread_id": "job"}}
        graph.invoke({"a": "x"}, config)
        server.restart()
        # the pooled connection died with the old server; the first call already works
        assert graph.get_state(config).values == {"a": "x!", "b": "written by fill"}
        server.restart()
        graph.invoke({"a": "y"}, config)
        assert graph.get_state(config).values["a"] == "y!"


def test_a_postgres_server_stopping_mid_run_is_a_package_error_naming_the_thread(
    postgres_control,
):
    import psycopg
    from stall_workers import wait_until

    server = postgres_control
    stopped: list[bool] = []

    def saved(count: int) -> bool:
        with psycopg.connect(server.url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM checkpoints WHERE thread_id = 'restarted-job'"
            ).fetchone()
            return row is not None and row[0] >= count

    def stop_server(state: Pair) -> dict[str, str]:
        if not stopped:  # the first run stops the server while the node runs
            # The step before this node was sent without waiting for its answer: stopped
            # only once the server has it (the input's checkpoint and this step's).
            wait_until(lambda: saved(2), "the checkpoint of the step before the node")
            server.stop()
            stopped.append(True)
        return {"a": state["a"] + "!"}

    with PostgresSaver(server.url, connect_timeout=2) as saver:
        graph = (
            StateGraph(Pair)
            .add_node("stop_server", stop_server)
            .add_node("fill", lambda state: {"b": "filled"})
            .add_edge(START, "stop_server")
            .add_edge("stop_server", "fill")
            .compile(checkpointer=saver)
        )
        config = {"configurable": {"thread_id": "restarted-job"}}
        with pytest.raises(StoreUnavailableError) as caught:
            graph.invoke({"a": "x"}, config)
        message = str(caught.value)
        # The step's write names its checkpoint too; on a slow machine the run may first find
        # the server gone while confirming its lease, before any write (thread only).
        assert re.match(r"thread 'restarted-job'(, checkpoint '[^']+')?: ", message), message
        assert "PostgreSQL database" in message and "is unavailable" in message
        assert isinstance(caught.value, ConnectionError)
        with pytest.raises(StoreUnavailableError, match="thread 'restarted-job'"):
            graph.get_state(config)  # still down

        server.start()
        before = graph.get_state(config)  # the first call after the restart works
        assert before.next == ("stop_server",)
        assert graph.invoke(None, config) == {"a": "x!", "b": "filled"}


# --- driver errors of the other stores ---------------------------------------------------------


def test_a_locked_sqlite_file_is_a_store_unavailable_error_naming_the_thread(tmp_path: Path):
    import sqlite3

    path = tmp_path / "store.db"
    with SqliteSaver(path, busy_timeout=0.05) as saver:
        graph = pair_graph(saver)
        graph.invoke({"a": "x"}, {"configurable": {"thread_id": "first"}})
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
            with pytest.raises(StoreUnavailableError) as caught:
                graph.invoke({"a": "y"}, {"configurable": {"thread_id": "second"}})
            # The run's first write is taking the thread's lease, before any checkpoint exists.
            assert str(caught.value).startswith("thread 'second': ")
            assert "SQLite database" in str(caught.value) and "locked" in str(caught.value)
        finally:
            other.execute("ROLLBACK")
            other.close()
        graph.invoke({"a": "y"}, {"configurable": {"thread_id": "second"}})  # free again
        assert saver.list_threads() == ["first", "second"]


def test_a_damaged_sqlite_file_is_a_corrupt_payload_error(tmp_path: Path):
    path = tmp_path / "store.db"
    with SqliteSaver(path) as saver:
        graph = pair_graph(saver)
        for i in range(30):
            graph.invoke({"a": "x" * 2000}, {"configurable": {"thread_id": f"t{i}"}})
    with open(path, "r+b") as f:  # overwrite four pages past the schema with garbage
        f.seek(4096 * 3)
        f.write(b"\xff" * 4096 * 4)
    errors: list[Exception] = []
    with SqliteSaver(path) as saver:
        graph = pair_graph(saver)
        for i in range(30):
            try:
                graph.get_state({"configurable": {"thread_id": f"t{i}"}})
            except Exception as exc:
                errors.append(exc)
    assert errors
    assert all(isinstance(e, CorruptPayloadError) for e in errors), errors
    assert all("is damaged (database disk image is malformed)" in str(e) for e in errors)
    assert str(errors[0]).startswith("thread 't")


def test_a_redis_server_that_went_away_is_a_store_unavailable_error(own_redis_url: str):
    import redis

    from durable_debug import RedisSaver

    saver = RedisSaver(own_redis_url)
    graph = pair_graph(saver)
    config = {"configurable": {"thread_id": "job"}}
    graph.invoke({"a": "x"}, config)
    with contextlib.suppress(redis.exceptions.ConnectionError):
        redis.Redis.from_url(own_redis_url).shutdown(nosave=True)
    with pytest.raises(StoreUnavailableError) as caught:
        graph.get_state(config)
    assert str(caught.value).startswith("thread 'job': the Redis server")
    assert isinstance(caught.value, ConnectionError)
    with contextlib.suppress(Exception):  # the server is gone: closing may fail too
        saver.close()


# --- text the stores cannot keep, outside thread ids -----------------------------------------


def test_a_lone_surrogate_in_run_metadata_is_refused_naming_where(sql_saver):
    graph = pair_graph(sql_saver)
    config = {"configurable": {"thread_id": "meta", "user": "\ud800"}}
    with pytest.raises(UnsupportedValueError) as caught:
        graph.invoke({"a": "x"}, config)
    assert "thread 'meta'" in str(caught.value) and "field 'metadata'" in str(caught.value)
    assert sql_saver.list_threads() == []


@pytest.mark.parametrize("node", ["a\x00b", "a\ud800b"])
def test_a_node_name_the_store_cannot_keep_is_refused_not_lost(sql_saver, node: str):
    graph = (
        StateGraph(Pair)
        .add_node(node, lambda state: {"b": "written"})
        .add_edge(START, node)
        .add_edge(node, END)
        .compile(checkpointer=sql_saver)
    )
    config = {"configurable": {"thread_id": "named"}}
    with pytest.raises(UnsupportedValueError) as caught:
        graph.invoke({"a": "x"}, config)
    assert f"channel name {'branch:to:' + node!r}" in str(caught.value)
    assert "thread 'named'" in str(caught.value)


# --- checkpoint rows whose fields have the wrong shape ---------------------------------------


@pytest.mark.parametrize(
    ("column", "change", "message"),
    [
        ("checkpoint", {"id": None}, "checkpoint's id is None"),
        ("checkpoint", {"id": "another"}, "checkpoint's id is 'another'"),
        ("checkpoint", {"ts": 5}, "checkpoint's ts is 5"),
        ("metadata", {"step": "x"}, "metadata's 'step' must be int, got 'x'"),
        ("metadata", {"step": None}, "metadata's 'step' must be int"),
        ("metadata", {"source": []}, "metadata's 'source' must be str"),
        ("metadata", {"parents": "x"}, "metadata's 'parents' must be dict"),
    ],
)
def test_a_checkpoint_row_with_a_field_of_the_wrong_shape_is_named(
    sql_saver, column: str, change: dict, message: str
):
    import json

    graph = pair_graph(sql_saver)
    config = {"configurable": {"thread_id": "shape"}}
    graph.invoke({"a": "x"}, config)
    checkpoint_id = graph.get_state(config).config["configurable"]["checkpoint_id"]
    with raw_connection(sql_saver) as db:
        (text,) = db.execute(
            f"SELECT {column} FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        )[0]
        stored = text if isinstance(text, dict) else json.loads(text)
        cast = "::jsonb" if db.placeholder == "%s" else ""
        db.execute(
            f"UPDATE checkpoints SET {column} = ?{cast} WHERE checkpoint_id = ?",
            (json.dumps({**stored, **change}), checkpoint_id),
        )
    for read in (lambda: graph.get_state(config), lambda: list(graph.get_state_history(config))):
        with pytest.raises(CorruptPayloadError) as caught:
            read()
        assert str(caught.value).startswith(
            f"thread 'shape', checkpoint {checkpoint_id!r}, field {column!r}: "
        )
        assert message in str(caught.value)


@pytest.mark.parametrize(
    ("channel", "value", "message"),
    [
        ("__interrupt__", 7, "must be a list of {id, value} maps, got 7"),
        ("__interrupt__", [{"value": 1}], "must be a list of {id, value} maps"),
        ("__resume__", None, "must be a list, got None"),
    ],
)
def test_a_pending_special_write_of_the_wrong_shape_is_named(
    tmp_path: Path, channel: str, value: Any, message: str
):
    from durable_debug import interrupt
    from durable_debug.checkpoint import MsgpackSerializer

    def ask(state: Pair) -> dict[str, str]:
        return {"b": interrupt("ok?")}

    with SqliteSaver(tmp_path / "store.db", compress=False) as saver:
        graph = (
            StateGraph(Pair)
            .add_node("ask", ask)
            .add_edge(START, "ask")
            .add_edge("ask", END)
            .compile(checkpointer=saver)
        )
        config = {"configurable": {"thread_id": "asked"}}
        graph.invoke({"a": "x"}, config)
        ((checkpoint_id,),) = saver.query(
            "SELECT checkpoint_id FROM checkpoint_writes WHERE channel = '__interrupt__'"
        )
        type_, blob = MsgpackSerializer().dumps_typed(value)
        with raw_connection(saver) as db:
            db.execute(
                "UPDATE checkpoint_writes SET channel = ?, type = ?, blob = ? "
                "WHERE channel = '__interrupt__'",
                (channel, type_, blob),
            )
        with pytest.raises(CorruptPayloadError) as caught:
            graph.get_state(config)
        assert str(caught.value).startswith(
            f"thread 'asked', checkpoint {checkpoint_id!r}, channel {channel!r}: the pending"
        )
        assert message in str(caught.value)


def test_a_postgres_session_terminated_mid_query_is_a_package_error(postgres_db: str):
    """``AdminShutdown`` (what a restart sends to every session) while a statement runs."""
    import threading

    import psycopg

    with PostgresSaver(postgres_db) as saver:
        saver.setup()
        outcome: list[BaseException] = []

        def slow_query() -> None:
            try:
                saver.query("SELECT pg_sleep(60)")
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=slow_query)
        worker.start()
        with psycopg.connect(postgres_db, autocommit=True) as admin:
            terminated = False
            while not terminated:  # until the sleeping statement is seen and terminated
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE query = 'SELECT pg_sleep(60)' AND pid <> pg_backend_pid()"
                ).fetchall()
                terminated = any(row[0] for row in rows)
        worker.join()
        (error,) = outcome
        assert isinstance(error, StoreUnavailableError)
        assert "AdminShutdown" in str(error) and "PostgreSQL database" in str(error)
        assert isinstance(error.__cause__, psycopg.errors.AdminShutdown)
        assert saver.query("SELECT 1") == [(1,)]  # the next call works


def test_a_missing_redis_blob_is_an_error_naming_thread_checkpoint_channel(redis_db: str):
    import redis
    from builders import redis_thread_keys

    from durable_debug import RedisSaver

    with RedisSaver(redis_db) as saver:
        graph = pair_graph(saver)
        config = {"configurable": {"thread_id": "lost-blob"}}
        graph.invoke({"a": "x"}, config)
        checkpoint_id = graph.get_state(config).config["configurable"]["checkpoint_id"]
        client = redis.Redis.from_url(saver.url)
        try:
            (blobs,) = [k for k, t, _ns, name in redis_thread_keys(saver) if name == "blobs"]
            fields = [f for f in client.hkeys(blobs) if f.startswith(b"b:")]
            assert fields
            client.hdel(blobs, *fields)
        finally:
            client.close()
        with pytest.raises(CorruptPayloadError) as caught:
            graph.get_state(config)
        message = str(caught.value)
        assert message.startswith(f"thread 'lost-blob', checkpoint {checkpoint_id!r}, channel 'b'")
        assert "no blob of that version is stored" in message
