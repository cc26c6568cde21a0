"""``durable-debug replay-check DB THREAD --graph MODULE:NAME``: a thread's recorded tasks run
again on the code as it is now."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from durable_debug import SqliteSaver
from durable_debug.cli import main
from support.replay_graphs import APP

GRAPH = "support.replay_graphs:app_graph"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Path]:
    """A SQLite file holding thread ``t``: the agent run once (its calls recorded)."""
    db = tmp_path / "agent.db"
    saver = SqliteSaver(db)
    try:
        graph = APP.graph.builder.compile(checkpointer=saver)
        graph.invoke({"messages": [("user", "tides")]}, {"configurable": {"thread_id": "t"}})
    finally:
        saver.close()
    kept = dict(APP.prompts)
    yield db
    APP.prompts.update(kept)


def test_replay_check_passes_on_unchanged_code(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = APP.model.calls
    assert main(["replay-check", str(store), "t", "--graph", GRAPH]) == 0
    assert "thread 't': 2 tasks write what they recorded" in capsys.readouterr().out
    assert APP.model.calls == calls  # every call answered from the recording


def test_replay_check_names_the_node_the_change_made_diverge(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    APP.prompts["answer"] = "Be verbose."
    assert main(["replay-check", str(store), "t", "--graph", GRAPH]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 tasks write something else now" in out
    assert "  answer (task " in out and "differs at messages[0]" in out
    assert "live call: answer call 2 (chat_model 'CountingModel')" in out
    assert "plan (task" not in out


def test_replay_check_of_an_unknown_thread_is_a_usage_error(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay-check", str(store), "nope", "--graph", GRAPH]) == 2
    assert "thread 'nope' has no finished task" in capsys.readouterr().err
