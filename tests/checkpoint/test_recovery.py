"""Recovery on start (issue 13, item 7): workers resume the threads whose run died.

A seeder starts N threads and is killed while every one of them is in its first step. Four
worker processes (each in its own process group, as on separate machines) loop ``recover()``
on one PostgreSQL database while the driver kills workers with SIGKILL in the middle of steps
and starts new ones. Every thread finishes exactly once: each step's output is applied once,
each effect happened once, no thread forked. N is 40 to suit a 2-core test machine.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from recovery_workers import STEPS, job_graph
from test_cross_process import HERE, SRC

from durable_debug import Command, SqliteSaver, StateGraph, interrupt, recover
from durable_debug.checkpoint.url import saver_from_url

THREADS = 40
WORKERS = 4
KILLS = 6
LEASE = "2"


def spawn(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["DURABLE_DEBUG_LEASE_SECONDS"] = LEASE
    return subprocess.Popen(
        [sys.executable, str(HERE / "recovery_workers.py"), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a "machine" of its own
    )


def log_lines(log: Path, kind: str) -> list[list[str]]:
    if not log.exists():
        return []
    return [line.split()[1:] for line in log.read_text().splitlines() if line.startswith(kind)]


def wait_until(condition: Any, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()


@pytest.mark.postgres
def test_workers_killed_at_random_recover_every_thread_exactly_once(
    postgres_db: str, tmp_path: Path
) -> None:
    log, stop = tmp_path / "runs.log", tmp_path / "stop"
    seeder = spawn("seed", postgres_db, str(log), str(THREADS))
    workers: list[subprocess.Popen[str]] = []
    try:
        wait_until(lambda: len(log_lines(log, "working")) == THREADS, "every thread to start")
        kill(seeder)  # every thread dies in step1, its effect already made
        workers = [spawn("work", postgres_db, str(log), str(stop)) for _ in range(WORKERS)]
        killed = 0
        seen = len(log_lines(log, "working"))
        while killed < KILLS:
            live = {str(w.pid): w for w in workers if w.poll() is None}
            wait_until(lambda n=seen: len(log_lines(log, "working")) > n, "a worker to take a step")
            lines = log_lines(log, "working")
            victims = [pid for pid, _, _ in lines[seen:] if pid in live]
            seen = len(lines)
            if not victims:
                continue
            victim = live[victims[-1]]
            kill(victim)  # in the middle of a step, after its effect was saved
            killed += 1
            workers.remove(victim)
            workers.append(spawn("work", postgres_db, str(log), str(stop)))

        graph = job_graph(log).compile(checkpointer=saver_from_url(postgres_db))
        configs = [{"configurable": {"thread_id": f"job-{i:03d}"}} for i in range(THREADS)]

        def all_done() -> bool:
            return all(graph.get_state(c).values.get("done") == list(STEPS) for c in configs)

        wait_until(all_done, "every thread to finish")
        stop.touch()
        for w in workers:
            _, err = w.communicate(timeout=120)
            assert w.returncode == 0, err
    finally:
        stop.touch()
        for proc in [seeder, *workers]:
            if proc.poll() is None:
                kill(proc)

    assert killed == KILLS
    effects = collections.Counter(tuple(fields) for fields in log_lines(log, "effect"))
    assert len(effects) == THREADS * len(STEPS)
    assert set(effects.values()) == {1}, "an effect ran twice"
    saver = graph.checkpointer
    assert saver is not None
    for config in configs:
        state = graph.get_state(config)
        assert state.next == () and state.values["done"] == list(STEPS)
        parents = collections.Counter(
            t.parent_config["configurable"]["checkpoint_id"]
            for t in saver.list(config)
            if t.parent_config
        )
        assert set(parents.values()) == {1}, f"{config} forked"
    assert saver.list_abandoned_threads() == []
    saver.close()


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ]
)
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    if request.param == "redis":
        return request.getfixturevalue("redis_db")
    return request.getfixturevalue("postgres_db")


def test_recover_resumes_only_threads_whose_run_died(durable_url: str, tmp_path: Path) -> None:
    url = durable_url
    log = tmp_path / "runs.log"
    seeder = spawn("seed", url, str(log), "2")
    try:
        wait_until(lambda: len(log_lines(log, "working")) == 2, "both threads to start")
    finally:
        kill(seeder)

    with saver_from_url(url) as saver:
        graph = job_graph(log).compile(checkpointer=saver)

        def failing(state: Any) -> dict[str, Any]:
            raise RuntimeError("boom")

        def asking(state: Any) -> dict[str, Any]:
            return {"done": [interrupt("ok?")]}

        from recovery_workers import Job

        other = (
            StateGraph(Job)
            .add_node("fail", failing)
            .add_node("ask", asking)
            .add_conditional_edges("__start__", lambda s: "fail" if s["done"] else "ask")
            .compile(checkpointer=saver)
        )
        with pytest.raises(RuntimeError):
            other.invoke({"done": ["x"]}, {"configurable": {"thread_id": "failed"}})
        other.invoke({"done": []}, {"configurable": {"thread_id": "asking"}})

        wait_until(lambda: len(saver.list_abandoned_threads()) == 2, "the dead leases to expire")
        assert sorted(saver.list_abandoned_threads()) == ["job-000", "job-001"]
        done = recover(graph)

        assert sorted((r.thread_id, r.outcome) for r in done) == [
            ("job-000", "finished"),
            ("job-001", "finished"),
        ]
        for thread in ("job-000", "job-001"):
            state = graph.get_state({"configurable": {"thread_id": thread}})
            assert state.values["done"] == list(STEPS)
        assert recover(graph) == []  # nothing left; the failed and asking threads untouched
        assert other.get_state({"configurable": {"thread_id": "asking"}}).interrupts
        assert other.invoke(Command(resume="y"), {"configurable": {"thread_id": "asking"}}) == {
            "done": ["y"]
        }
    effects = collections.Counter(tuple(f) for f in log_lines(log, "effect"))
    assert set(effects.values()) == {1} and len(effects) == 6


def test_the_recover_command_resumes_dead_threads_with_the_named_graph(tmp_path: Path) -> None:
    db, log = tmp_path / "jobs.db", tmp_path / "runs.log"
    seeder = spawn("seed", f"sqlite:///{db}", str(log), "1")
    try:
        wait_until(lambda: len(log_lines(log, "working")) == 1, "the thread to start")
    finally:
        kill(seeder)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["RECOVERY_LOG"] = str(log)
    command = [sys.executable, "-m", "durable_debug.cli", "recover", str(db)]
    with SqliteSaver(db) as saver:
        wait_until(lambda: saver.list_abandoned_threads() == ["job-000"], "the lease to expire")

    done = subprocess.run(
        [*command, "--graph", "recovery_workers:cli_graph"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "job-000 finished\n"
    again = subprocess.run(
        [*command, "--graph", "recovery_workers:cli_graph"], env=env, capture_output=True, text=True
    )
    assert again.stdout == "" and "0 thread(s) recovered" in again.stderr
    bad = subprocess.run(
        [*command, "--graph", "recovery_workers"], env=env, capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert bad.stderr == (
        "durable-debug: error: --graph 'recovery_workers': give it as MODULE:NAME\n"
    )
