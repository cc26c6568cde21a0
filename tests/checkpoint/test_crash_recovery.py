"""A worker killed with SIGKILL mid-step loses nothing it saved (notebook 04).

The fan-out graph runs ``prepare``, then four ``worker`` tasks in parallel, then ``join``. A
child process runs it until chosen nodes are blocked (and the other workers have saved their
writes), then is killed. A fresh process resumes the thread: tasks whose writes were saved do not
run again, the blocked ones do, and the result is the same as an uninterrupted run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import RawDatabase, raw_connection
from durable_graphs import CHAIN, LEASE_ENV, WORKERS, runs
from test_cross_process import HERE, SRC, run_graph

from durable_debug.checkpoint.url import saver_from_url

ALL_WORKERS = [f"worker{i}" for i in range(WORKERS)]

KILL_POINTS = {
    "while-prepare-runs": (["prepare"], 0),
    "before-any-worker-finished": (ALL_WORKERS, 0),
    "after-one-worker-finished": (ALL_WORKERS[1:], 1),
    "after-three-workers-finished": (ALL_WORKERS[3:], 3),
    "while-join-runs": (["join"], WORKERS),
}
"""Kill point → (the nodes running when the process is killed, workers whose writes are saved)."""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.db'}"
    return request.getfixturevalue("postgres_db")


def start_worker(
    url: str, thread_id: str, log: Path, block: list[str], graph: str = "fanout"
) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env.update(LEASE_ENV)
    script = str(HERE / "durable_graphs.py")
    return subprocess.Popen(
        [sys.executable, script, graph, "start", url, thread_id, str(log), *block],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


SAVED_WORKER_WRITES = """SELECT count(DISTINCT w.task_id) FROM checkpoint_writes AS w
JOIN checkpoints AS c
  ON c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
 AND c.checkpoint_id = w.checkpoint_id
WHERE w.thread_id = ? AND w.channel = 'results' AND c.parent_checkpoint_id IS NOT NULL"""
"""Tasks that saved a "results" write (the input's own write sits on the first checkpoint)."""


def saved_worker_writes(db: RawDatabase, thread_id: str) -> int:
    return int(db.execute(SAVED_WORKER_WRITES, (thread_id,))[0][0])


@pytest.mark.parametrize("kill_point", list(KILL_POINTS))
def test_killed_worker_resumes_without_rerunning_finished_tasks(
    durable_url: str, tmp_path: Path, kill_point: str
):
    block, finished = KILL_POINTS[kill_point]
    log = tmp_path / "runs.log"
    thread_id = f"crash-{kill_point}"
    handle = saver_from_url(durable_url)  # only to address the database; never opened

    proc = start_worker(durable_url, thread_id, log, block)
    try:
        with raw_connection(handle) as db:
            deadline = time.monotonic() + 60
            while True:
                started = runs(log)
                ready = all(started.get(node) for node in block)
                ready = ready and saved_worker_writes(db, thread_id) == finished
                if ready:
                    break
                assert proc.poll() is None, f"the worker exited early: {proc.communicate()}"
                assert time.monotonic() < deadline, f"kill point not reached: {started}"
                time.sleep(0.02)
            before_kill = db.dump()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    with raw_connection(handle) as db:
        after_kill = db.dump()
        if durable_url.startswith("sqlite"):
            assert db.execute("PRAGMA integrity_check") == [("ok",)]
    for table, rows in before_kill.items():
        kept = {repr(row) for row in after_kill[table]}
        assert {repr(row) for row in rows} <= kept, f"rows of {table} lost by the kill"

    result = run_graph("fanout", "resume", durable_url, thread_id, str(log))

    assert result["summary"] == ",".join(f"job!#{i}" for i in range(WORKERS))
    nodes = ["prepare", *ALL_WORKERS, "join"]
    assert runs(log) == {node: 2 if node in block else 1 for node in nodes}


def kill_when_started(proc: subprocess.Popen[str], log: Path, node: str) -> None:
    """SIGKILL ``proc`` once ``node`` has started (and waits forever)."""
    kill_when(proc, lambda: bool(runs(log).get(node)), lambda: f"{node} never started: {runs(log)}")


def kill_when(
    proc: subprocess.Popen[str], ready: Callable[[], bool], never: Callable[[], str]
) -> None:
    """SIGKILL ``proc`` once ``ready()`` holds (failing with ``never()`` after a minute)."""
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert proc.poll() is None, f"the worker exited early: {proc.communicate()}"
            assert time.monotonic() < deadline, never()
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("graph", ["nested", "nested-called"])
def test_killed_inside_a_subgraph_resumes_only_its_unfinished_task(
    durable_url: str, tmp_path: Path, graph: str
):
    """Killed while the subgraph's second step runs: a fresh process resumes the parent,
    whose task re-enters the subgraph at that step (its first step does not run again)."""
    log = tmp_path / "runs.log"
    thread_id = f"crash-{graph}"
    proc = start_worker(durable_url, thread_id, log, ["s2"], graph=graph)
    kill_when_started(proc, log, "s2")

    result = run_graph(graph, "resume", durable_url, thread_id, str(log))

    assert result["text"] == "t-before-s1-s2-s3-after"
    # As the node, the subgraph returns its whole state, so "before" is added again.
    inside = ["before", "s1", "s2", "s3"] if graph == "nested" else ["s1", "s2", "s3"]
    assert result["steps"] == ["before", *inside, "after"]
    assert runs(log) == {"before": 1, "s1": 1, "s2": 2, "s3": 1, "after": 1}


CHAIN_STEPS = """SELECT count(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"""


def test_killed_during_an_async_run_resumes_from_the_last_step_it_saved(
    durable_url: str, tmp_path: Path
):
    """The chain runs with ``durability="async"`` (the default): c2's checkpoint is saved
    while c3 runs. Killed there, the thread resumes at c3: nothing before it runs again, and
    the history has every step, each with its parent."""
    log = tmp_path / "runs.log"
    thread_id = "crash-async-chain"
    handle = saver_from_url(durable_url)  # only to address the database; never opened
    proc = start_worker(durable_url, thread_id, log, ["c3"], graph="chain")
    with raw_connection(handle) as db:
        # input, START's step, c0, c1, c2: c2's checkpoint has landed while c3 runs
        kill_when(
            proc,
            lambda: bool(runs(log).get("c3")) and db.execute(CHAIN_STEPS, (thread_id,))[0][0] == 5,
            lambda: f"c3 never started: {runs(log)}",
        )

    result = run_graph("chain", "resume", durable_url, thread_id, str(log))

    assert result["steps"] == CHAIN
    assert runs(log) == {node: 2 if node == "c3" else 1 for node in CHAIN}
    with raw_connection(handle) as db:
        rows = db.execute(
            "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        )
    ids = {row[0] for row in rows}
    assert len(ids) == len(CHAIN) + 2
    assert all(parent is None or parent in ids for _, parent in rows)
