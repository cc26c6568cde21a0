"""health(saver): write latency, threads stuck on an interrupt, resume success, failures by
class, growth per day and the largest threads; `durable-debug health` prints it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, Command, MemorySaver, SqliteSaver, StateGraph, interrupt
from durable_debug.cli import main
from durable_debug.inspect import HEALTH_TABLES, health


class S(TypedDict, total=False):
    text: str
    answer: str


def _ask(state: S) -> S:
    return {"answer": interrupt("approve?")}


def _graph(saver: Any, flaky: list[BaseException]) -> Any:
    def work(state: S) -> S:
        if flaky:
            raise flaky.pop(0)
        return {"text": state["text"] * 2}

    builder = StateGraph(S)
    builder.add_node("work", work)
    builder.add_node("ask", _ask)
    builder.add_edge(START, "work")
    builder.add_edge("work", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


def _fill(saver: Any) -> None:
    """Three threads: one waiting on its interrupt, one answered, one that failed twice (the
    same error) and then succeeded on the second resume."""
    graph = _graph(saver, [])
    graph.invoke({"text": "x" * 5000}, {"configurable": {"thread_id": "big"}})
    small = {"configurable": {"thread_id": "small"}}
    graph.invoke({"text": "y"}, small)
    graph.invoke(Command(resume="ok"), small)
    failing = _graph(saver, [ValueError("bad"), ValueError("bad")])
    cfg = {"configurable": {"thread_id": "flaky"}}
    for run in ({"text": "z"}, None):
        with pytest.raises(ValueError):
            failing.invoke(run, cfg)
    failing.invoke(None, cfg)


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return MemorySaver()
    return SqliteSaver(str(tmp_path / "health.db"))


def test_health_reports_every_table(saver: Any) -> None:
    _fill(saver)
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)
    report = health(saver, sla=dt.timedelta(hours=1), now=later)
    assert tuple(report) == HEALTH_TABLES
    latency = report["latency"].iloc[0]
    assert latency["samples"] > 0 and 0 <= latency["p50_ms"] <= latency["p95_ms"]
    # "big" and "flaky" wait on the approval; "small" was answered.
    waiting = report["waiting"]
    assert sorted(waiting["thread_id"]) == ["big", "flaky"]
    assert (waiting["waiting_s"] > 3600).all() and (waiting["interrupts"] == 1).all()
    assert report["resumes"].to_dict("records") == [
        {"failed_steps": 1, "resumed": 1, "succeeded": 1, "success_rate": 1.0}
    ]
    failures = dict(zip(report["failures"]["class"], report["failures"]["tasks"], strict=True))
    assert failures["deterministic"] == 1 and sum(failures.values()) == 1
    size = report["size"].iloc[0]
    assert (size["threads"], size["checkpoints"]) == (3, 10)
    assert size["bytes"] == report["largest"]["bytes"].sum()
    if isinstance(saver, SqliteSaver):
        assert size["file_bytes"] >= size["bytes"]
    else:
        assert size["file_bytes"] is None
    growth = report["growth"]
    assert growth["checkpoints"].sum() == 3 + 4 + 3  # big, small, flaky
    assert growth["total_bytes"].iloc[-1] == growth["bytes"].sum()
    largest = report["largest"]
    assert largest["thread_id"].iloc[0] == "big"
    assert largest["bytes"].iloc[0] > 10_000 > largest["bytes"].iloc[-1]


def test_threads_within_the_sla_are_not_listed(saver: Any) -> None:
    _fill(saver)
    report = health(saver, sla=dt.timedelta(hours=1))
    assert report["waiting"].empty


def test_an_empty_store_is_healthy(saver: Any) -> None:
    report = health(saver)
    assert report["latency"].iloc[0]["samples"] == 0
    assert report["waiting"].empty and report["largest"].empty and report["growth"].empty
    assert report["resumes"].iloc[0]["success_rate"] is None


def test_the_cli_prints_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.db"
    _fill(SqliteSaver(str(db)))
    assert main(["health", str(db), "--sla", "0"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("==")] == [
        f"== {name} ==" for name in HEALTH_TABLES
    ]
    assert "deterministic      1" in out
    assert "big" in out and "flaky" in out


def test_the_cli_refuses_a_negative_sla(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.db"
    _fill(SqliteSaver(str(db)))
    assert main(["health", str(db), "--sla", "-1"]) == 2
    assert "--sla and --top must not be negative" in capsys.readouterr().err
