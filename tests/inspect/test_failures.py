"""Failure classes: transient, deterministic, poison and crash, in history_frame, the
widget's detail and the CLI's history."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, MemorySaver, RetryPolicy, SqliteSaver, StateGraph
from durable_debug.checkpoint.base import FAILURES
from durable_debug.cli import history_text
from durable_debug.inspect import checkpoint_detail, history_frame


class S(TypedDict, total=False):
    n: int


class QuotaExceeded(Exception):
    """A service's own error, retried by the node's policy."""


def _graph(saver: Any, fail: Any, *, retry: RetryPolicy | None = None, **compile: Any) -> Any:
    builder = StateGraph(S)
    builder.add_node("prep", lambda s: {"n": 1})
    builder.add_node("call", fail, retry_policy=retry)
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "call")
    builder.add_edge("call", END)
    return builder.compile(checkpointer=saver, **compile)


def _raising(*errors: BaseException) -> Any:
    queue = list(errors)

    def call(state: S) -> S:
        if queue:
            raise queue.pop(0)
        return {"n": 2}

    return call


def _fail(graph: Any, cfg: Any, times: int, *, resume: bool = False) -> None:
    """Run (or with ``resume``, resume) the thread ``times`` times, each failing."""
    for i in range(times):
        with pytest.raises((ValueError, OSError, QuotaExceeded)):
            graph.invoke(None if resume or i else {"n": 0}, cfg)


def _failure(graph: Any, cfg: Any) -> list[str]:
    frame = history_frame(graph, cfg)
    return list(frame["failure"])


CFG = {"configurable": {"thread_id": "t"}}


def test_a_timeout_is_transient_and_the_cli_shows_it() -> None:
    graph = _graph(MemorySaver(), _raising(TimeoutError("upstream took 30 s")))
    _fail(graph, CFG, 1)
    assert _failure(graph, CFG) == ["", "", "transient"]
    assert "1 failed [transient]" in history_text(history_frame(graph, CFG))
    graph.invoke(None, CFG)  # it was: the resume works
    assert _failure(graph, CFG) == ["", "", "transient", ""]


@pytest.fixture
def saver(every_saver: Any) -> Any:
    """Every saver: the __failures__ write replaces the previous one on each."""
    return every_saver


def test_the_same_error_twice_is_deterministic_and_one_failure_keeps_langgraphs_writes(
    saver: Any,
) -> None:
    graph = _graph(saver, _raising(*[ValueError("bad row 7")] * 3))
    _fail(graph, CFG, 1)
    assert _failure(graph, CFG)[-1] == "failed"
    head = saver.get_tuple(CFG)
    assert head is not None
    assert [channel for _, channel, _ in head.pending_writes or ()] == ["__error__"]
    _fail(graph, CFG, 1, resume=True)
    assert _failure(graph, CFG)[-1] == "deterministic"
    head = saver.get_tuple(CFG)
    assert head is not None
    [(_, history)] = [(t, v) for t, c, v in head.pending_writes or () if c == FAILURES]
    assert [entry["error"] for entry in history] == ["ValueError('bad row 7')"] * 2
    _fail(graph, CFG, 1, resume=True)  # a third failure replaces the list, one write still
    head = saver.get_tuple(CFG)
    assert head is not None
    [history] = [v for _, c, v in head.pending_writes or () if c == FAILURES]
    assert len(history) == 3
    assert not any(entry["transient"] for entry in history)


def test_failing_after_n_resumes_is_poison_even_when_transient() -> None:
    graph = _graph(MemorySaver(), _raising(*[ConnectionError(f"reset {i}") for i in range(4)]))
    _fail(graph, CFG, 3)
    assert _failure(graph, CFG)[-1] == "transient"
    _fail(graph, CFG, 1, resume=True)  # the third resume fails too
    assert _failure(graph, CFG)[-1] == "poison"
    assert "[poison]" in history_text(history_frame(graph, CFG))


def test_retry_on_makes_an_error_transient() -> None:
    policy = RetryPolicy(max_attempts=1, retry_on=QuotaExceeded)
    graph = _graph(MemorySaver(), _raising(QuotaExceeded(), QuotaExceeded()), retry=policy)
    _fail(graph, CFG, 1)
    assert _failure(graph, CFG)[-1] == "transient"
    _fail(graph, CFG, 1, resume=True)
    assert _failure(graph, CFG)[-1] == "transient"


def test_the_widget_detail_names_the_class() -> None:
    graph = _graph(MemorySaver(), _raising(ValueError("x"), ValueError("x")))
    _fail(graph, CFG, 2)
    tasks = checkpoint_detail(graph, CFG)["tasks"]
    assert [(t["name"], t["failure"]) for t in tasks] == [("call", "deterministic")]


def test_a_pause_before_a_node_is_not_a_crash() -> None:
    graph = _graph(MemorySaver(), _raising(), interrupt_before=["call"])
    graph.invoke({"n": 0}, CFG)
    assert _failure(graph, CFG) == ["", "", ""]


CRASHING = textwrap.dedent(
    """
    import os, sys
    from typing_extensions import TypedDict
    from durable_debug import END, START, SqliteSaver, StateGraph

    class S(TypedDict, total=False):
        n: int

    def call(state):
        os._exit(3)  # the process dies in the middle of the step

    builder = StateGraph(S)
    builder.add_node("prep", lambda s: {"n": 1})
    builder.add_node("call", call)
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "call")
    builder.add_edge("call", END)
    graph = builder.compile(checkpointer=SqliteSaver(sys.argv[1]))
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})
    """
)


def test_a_process_that_died_mid_step_is_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    env = {**os.environ, "DURABLE_DEBUG_LEASE_SECONDS": "1"}  # the dead run's lease expires soon
    done = subprocess.run([sys.executable, "-c", CRASHING, str(db)], check=False, env=env)
    assert done.returncode == 3
    graph = _graph(SqliteSaver(str(db)), _raising())
    assert _failure(graph, CFG) == ["", "", "crash"]
    assert "[crash]" in history_text(history_frame(graph, CFG))
    # Recovered once the dead run's lease on the thread expired (one writer per thread): the
    # crashed step now has a child.
    graph.invoke(None, CFG, wait=60)
    assert _failure(graph, CFG) == ["", "", "", ""]


def test_a_langgraph_thread_is_classified_too() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import StateGraph as LangGraphStateGraph

    def boom(state: S) -> S:
        raise TimeoutError("slow")

    graph = (
        LangGraphStateGraph(S)
        .add_node("boom", boom)
        .add_edge(START, "boom")
        .compile(checkpointer=InMemorySaver())
    )
    with pytest.raises(TimeoutError):
        graph.invoke({"n": 1}, CFG)
    assert _failure(graph, CFG) == ["", "transient"]


def test_without_the_graph_the_lease_rows_tell_a_crash_from_an_interrupt_and_a_pause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read from the store alone (the CLI, health, crashed_threads): a run that died in a
    one-task step left its lease behind, so it is a crash; a thread paused before that node,
    one waiting on interrupt(), one that failed and one that finished gave theirs back."""
    import datetime as dt

    from durable_debug import interrupt
    from durable_debug.cli import main
    from durable_debug.inspect import crashed_threads, health
    from durable_debug.inspect.stored import SaverView

    db = tmp_path / "crash.db"
    env = {**os.environ, "DURABLE_DEBUG_LEASE_SECONDS": "1"}  # the dead run's lease expires soon
    done = subprocess.run([sys.executable, "-c", CRASHING, str(db)], check=False, env=env)
    assert done.returncode == 3
    saver = SqliteSaver(str(db))
    _graph(saver, _raising(), interrupt_before=["call"]).invoke({"n": 0}, _cfg("paused"))
    _graph(saver, lambda s: {"n": interrupt("ok?")}).invoke({"n": 0}, _cfg("asking"))
    _fail(_graph(saver, _raising(ValueError("x"))), _cfg("failed"), 1)
    _graph(saver, _raising()).invoke({"n": 0}, _cfg("finished"))
    deadline = time.monotonic() + 120
    while saver.list_abandoned_threads() != ["t"]:  # the dead run's lease expires
        assert time.monotonic() < deadline, "the dead run's lease never expired"
        time.sleep(0.05)

    view = SaverView(saver)
    classes = {t: _failure(view, _cfg(t)) for t in ("t", "paused", "asking", "failed", "finished")}
    assert classes == {
        "t": ["", "", "crash"],  # a one-task step: no finished sibling shows it started
        "paused": ["", "", ""],
        "asking": ["", "", ""],
        "failed": ["", "", "failed"],
        "finished": ["", "", "", ""],
    }
    crashed = crashed_threads(saver)
    assert list(crashed["thread_id"]) == ["t"] and list(crashed["tasks"]) == ["call"]
    assert list(crashed["step"]) == [1]
    report = health(saver, sla=dt.timedelta(0))
    assert report["crashed"].to_dict("records") == crashed.to_dict("records")
    assert list(report["waiting"]["thread_id"]) == ["asking"]
    counts = dict(zip(report["failures"]["class"], report["failures"]["tasks"], strict=True))
    assert (counts["crash"], counts["failed"]) == (1, 1)

    assert main(["recover", str(db), "--list"]) == 0
    out, err = capsys.readouterr()
    checkpoint = crashed["checkpoint_id"].iloc[0]
    assert out.startswith(f"t crashed in step 2 (call), checkpoint {checkpoint} saved 20")
    assert out.count("\n") == 1 and err == "1 crashed thread(s)\n"
    assert main(["inspect", str(db), "--thread", "t"]) == 0
    assert "[crash]" in capsys.readouterr().out
    assert main(["recover", str(db)]) == 2
    assert "give --graph MODULE:NAME" in capsys.readouterr().err

    _graph(saver, _raising()).invoke(None, CFG)  # recovered: no longer crashed
    assert crashed_threads(saver).empty and _failure(SaverView(saver), CFG) == ["", "", "", ""]
    saver.close()


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}
