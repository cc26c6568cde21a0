"""Issue 9, the store side: a damaged store or a bad config gives the package's own error,
naming where it happened, never silent data loss or a raw driver error."""

from __future__ import annotations

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
