"""``durable-debug inspect`` on the store of a functional-API thread (``@entrypoint`` with
``@task`` calls and an interrupt), written by our SqliteSaver and by LangGraph's."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from durable_debug.inspect.dag import dag_from_wire
from test_cli import embedded_data, run_cli


def write_thread(engine: str, path: Path) -> None:
    """Two runs of an entrypoint on thread "job": the first answered, the second paused."""
    saver: Any
    if engine == "langgraph":
        from langgraph.checkpoint.sqlite import SqliteSaver as TheirSaver
        from langgraph.func import entrypoint, task
        from langgraph.types import Command, interrupt

        conn = sqlite3.connect(path, check_same_thread=False)
        saver = TheirSaver(conn)
    else:
        from durable_debug.checkpoint.sqlite import SqliteSaver
        from durable_debug.func import entrypoint, task
        from durable_debug.types import Command, interrupt

        saver = SqliteSaver(str(path))

    @task
    def double(x: int) -> int:
        return 2 * x

    @entrypoint(checkpointer=saver)
    def workflow(x: int) -> int:
        y = double(x).result()
        return y if interrupt({"keep": y}) else 0

    cfg = {"configurable": {"thread_id": "job"}}
    workflow.invoke(1, cfg)
    workflow.invoke(Command(resume=True), cfg)
    workflow.invoke(2, cfg)
    if engine == "langgraph":
        conn.close()
    else:
        saver.close()


@pytest.mark.parametrize("engine", ["durable_debug", "langgraph"])
def test_inspect_lists_and_exports_an_entrypoint_thread(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, html = tmp_path / "f.db", tmp_path / "f.html"
    write_thread(engine, db)
    before = db.read_bytes()
    code, out, err = run_cli(capsys, "inspect", str(db))
    assert code == 0, err
    assert re.search(r"job\s+3\s+1\s", out)
    code, out, err = run_cli(capsys, "inspect", str(db), "--thread", "job", "--html", str(html))
    assert code == 0, err
    assert "thread 'job': 3 checkpoints, 1 branch" in out
    steps = re.findall(r"^\s+(-?\d+)\s+(input|loop)\s", out, re.M)
    assert steps[:3] == [("-1", "input"), ("0", "loop"), ("1", "input")]
    assert len(dag_from_wire(embedded_data(html)["dag"])["nodes"]) == 3
    assert db.read_bytes() == before  # read, never written
