"""Recovery on start: workers resume the threads whose run died.

A seeder starts 200 threads and is killed while each of them is in one of its three steps.
Two "machines" (supervisors, each in a session and process group of its own, each keeping two
worker processes running) share one PostgreSQL database; every worker loops ``recover()``.
Meanwhile the driver kills a worker with SIGKILL, or a whole machine (its process group), at
moments drawn from a seeded random generator and spread over the work, and starts the lost
machine again. Every thread finishes exactly once: each step's output is applied once, no
checkpoint has two children, and each step's effect (made through ``aonce``) is made once —
except, as docs/production.md says, when a process died between making the effect and saving
its result; the log tells those apart (the repeated attempt's result was never saved and its
process was killed), so the verdict does not depend on where the kills land.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from recovery_workers import STEPS, job_graph, thread_name
from test_cross_process import HERE, SRC
from typing_extensions import TypedDict

from durable_debug import END, START, Command, SqliteSaver, StateGraph, arecover, interrupt, recover
from durable_debug.checkpoint.url import saver_from_url

THREADS = 200
MACHINES = ("machine-a", "machine-b")
WORKERS_PER_MACHINE = 2
KILLS = 12
"""Kills in one run of the test; about one in four loses a whole machine."""
SEED = 13
LEASE = "5"
"""Lease seconds of every process: a killed run's thread is recovered this long after."""


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
        start_new_session=True,  # its own session and process group: a "machine" of its own
    )


def log_lines(log: Path, kind: str) -> list[list[str]]:
    if not log.exists():
        return []
    return [line.split()[1:] for line in log.read_text().splitlines() if line.startswith(kind)]


def saver_rows(graph: Any, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one query on ``graph``'s SQL saver."""
    return graph.checkpointer.query(sql)


def wait_until(condition: Any, what: str, timeout: float = 300, every: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


def kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL ``proc``'s whole process group (a lost machine) and reap it."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def kill_worker(pid: int, group: int) -> bool:
    """SIGKILL the worker ``pid`` of the machine whose process group is ``group``; False when
    it is gone already. The pidfd pins the process checked, so a reused pid is never hit."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        if os.getpgid(pid) != group:
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False
    finally:
        os.close(fd)


def live_workers(log: Path, killed: set[str] | frozenset[str], machine: str = "") -> set[str]:
    """Pids of the workers the machines started (only ``machine``'s if given) that have not
    exited and were not killed."""
    exited = {f[1] for f in log_lines(log, "exit")}
    return {
        pid
        for name, pid, _ in log_lines(log, "worker")
        if pid not in killed and pid not in exited and machine in ("", name)
    }


@pytest.mark.postgres
def test_workers_on_two_machines_killed_at_random_recover_every_thread_exactly_once(
    postgres_db: str, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    log, stop = tmp_path / "runs.log", tmp_path / "stop"
    seeder = spawn("seed", postgres_db, str(log), str(THREADS))
    machines: dict[str, subprocess.Popen[str]] = {}
    killed = {str(seeder.pid)}
    try:
        wait_until(lambda: len(log_lines(log, "hanging")) == THREADS, "every thread to start")
        kill(seeder)  # every thread dies in its step, the step's effect already saved
        for name in MACHINES:
            machines[name] = spawn(
                "machine", postgres_db, str(log), str(stop), name, str(WORKERS_PER_MACHINE)
            )

        # The kills are spread over the work: the i-th waits until the workers have taken a
        # seeded random share of the steps left (each thread has its hanging step onwards),
        # then a random moment more. The whole schedule is drawn first, so it is the same in
        # every run whatever the machine's speed.
        def steps_taken() -> int:
            """Steps the workers have taken (a step taken again after a kill counts once)."""
            return len({(f[0], f[1]) for f in log_lines(log, "saved") if f[2] != str(seeder.pid)})

        steps_left = sum(len(STEPS) - i % len(STEPS) for i in range(THREADS))
        schedule = sorted(
            (
                round(rng.uniform(0.02, 0.85) * steps_left),
                rng.uniform(0.0, 0.05),
                rng.random() < 0.25,  # lose a whole machine
                rng.choice(MACHINES),
                rng.random(),  # which live worker
            )
            for _ in range(KILLS)
        )
        assert any(lose for _, _, lose, _, _ in schedule)
        for target, pause, lose_machine, name, which in schedule:
            wait_until(lambda t=target: steps_taken() >= t, f"the workers to take {target} steps")
            time.sleep(pause)  # a moment inside a step, or between steps
            if lose_machine:
                kill(machines[name])
                killed |= live_workers(log, killed, name)
                machines[name] = spawn(
                    "machine", postgres_db, str(log), str(stop), name, str(WORKERS_PER_MACHINE)
                )
                continue
            wait_until(lambda k=frozenset(killed): live_workers(log, k), "a live worker")
            workers = sorted(live_workers(log, killed))
            pid = workers[int(which * len(workers))]
            machine = next(f[0] for f in log_lines(log, "worker") if f[1] == pid)
            assert kill_worker(int(pid), machines[machine].pid)
            killed.add(pid)

        graph = job_graph(log).compile(checkpointer=saver_from_url(postgres_db))
        configs = [{"configurable": {"thread_id": thread_name(i)}} for i in range(THREADS)]
        wait_until(
            lambda: len({(f[0], f[1]) for f in log_lines(log, "saved")}) == THREADS * len(STEPS),
            "every step to be taken",
        )

        def all_done() -> bool:
            return all(graph.get_state(c).values.get("done") == list(STEPS) for c in configs)

        wait_until(all_done, "every thread to finish", every=0.5)
        # A worker killed after its run's last save but before giving back the lease leaves
        # the lease behind; once it expires a live worker's recover() takes it and finds
        # nothing to run. Stop the workers only when every lease has been given back.
        wait_until(
            lambda: saver_rows(graph, "SELECT count(*) FROM thread_leases") == [(0,)],
            "every lease to be given back",
            every=0.5,
        )
        stop.touch()
        for name, proc in machines.items():
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, f"{name}: {err}"
    finally:
        stop.touch()
        for proc in [seeder, *machines.values()]:
            if proc.poll() is None:
                kill(proc)

    assert len(killed) > KILLS  # the seeder, and at least one process per kill
    for _machine, pid, returncode in log_lines(log, "exit"):
        if pid not in killed:  # a worker that died on its own (an error) fails the test
            err = next(f[2] for f in log_lines(log, "worker") if f[1] == pid)
            assert returncode == "0", (tmp_path / err).read_text()

    saver = graph.checkpointer
    assert saver is not None
    receipts: dict[tuple[str, str], str] = {}
    for config in configs:
        state = graph.get_state(config)
        assert state.next == () and state.values["done"] == list(STEPS)  # each step applied once
        thread = config["configurable"]["thread_id"]
        receipts.update(zip([(thread, s) for s in STEPS], state.values["receipts"], strict=True))
        parents = collections.Counter(
            t.parent_config["configurable"]["checkpoint_id"]
            for t in saver.list(config)
            if t.parent_config
        )
        assert set(parents.values()) == {1}, f"{thread} forked"
    assert saver.list_abandoned_threads() == []
    saver.close()

    # Each effect was made once; a repeat is allowed only for an attempt whose process was
    # killed before the result was saved (its receipt never came back from once()).
    saved = {f[3] for f in log_lines(log, "saved")}
    attempts: dict[tuple[str, str], list[tuple[str, str]]] = collections.defaultdict(list)
    for thread, step, pid, receipt in log_lines(log, "effect"):
        attempts[(thread, step)].append((pid, receipt))
    assert attempts.keys() == receipts.keys()
    repeats = 0
    for key, made in attempts.items():
        assert made[-1][1] == receipts[key], f"{key}: the kept result is not the last effect"
        for pid, receipt in made[:-1]:
            assert receipt not in saved, f"{key}: made again after its result was saved"
            assert pid in killed, f"{key}: made again though process {pid} was not killed"
            repeats += 1
    assert repeats <= len(killed)


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
        wait_until(lambda: len(log_lines(log, "hanging")) == 2, "both threads to start")
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
            "done": ["y"],
            "receipts": [],
        }
    effects = collections.Counter((f[0], f[1]) for f in log_lines(log, "effect"))
    assert set(effects.values()) == {1} and len(effects) == 6


def test_the_recover_command_resumes_dead_threads_with_the_named_graph(tmp_path: Path) -> None:
    db, log = tmp_path / "jobs.db", tmp_path / "runs.log"
    seeder = spawn("seed", f"sqlite:///{db}", str(log), "1")
    try:
        wait_until(lambda: len(log_lines(log, "hanging")) == 1, "the thread to start")
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


HANGING = textwrap.dedent(
    """
    import asyncio, sys
    from test_recovery import two_threads

    async def main():
        started = {"t1": asyncio.Event(), "t2": asyncio.Event()}
        graph = two_threads(sys.argv[1], started=started)
        config = lambda t: {"configurable": {"thread_id": t}}
        first = asyncio.ensure_future(graph.ainvoke({"n": 0}, config("t1")))
        await started["t1"].wait()  # t1's lease is the older one: listed first
        second = asyncio.ensure_future(graph.ainvoke({"n": 0}, config("t2")))
        await started["t2"].wait()
        print("hanging", flush=True)
        await asyncio.gather(first, second)

    asyncio.run(main())
    """
)


def two_threads(
    url: str,
    *,
    started: dict[str, Any] | None = None,
    calls: list[str] | None = None,
    release: Any = None,
) -> Any:
    """START → step → END. In the seeder (``started``) the step hangs; in the test, t1's
    step waits for ``release`` and t2's asks a question with ``interrupt()``."""
    import asyncio

    class N(TypedDict):
        n: int

    async def step(state: N, config: dict[str, Any]) -> dict[str, Any]:
        thread = config["configurable"]["thread_id"]
        if started is not None:
            started[thread].set()
            await asyncio.sleep(3600)
        assert calls is not None and release is not None
        calls.append(thread)
        if thread == "t1":
            await release.wait()
            return {"n": 1}
        return {"n": interrupt("ok?")}

    builder = StateGraph(N).add_node("step", step).add_edge(START, "step").add_edge("step", END)
    return builder.compile(checkpointer=saver_from_url(url))


async def test_a_thread_another_worker_recovered_meanwhile_is_not_resumed_again(
    durable_url: str,
) -> None:
    """Worker A lists t1 and t2 as crashed and works on t1; meanwhile worker B recovers t2,
    which now waits on an interrupt. When A reaches t2 its list is stale: t2 is no longer a
    crashed run (its lease was given back), so A leaves it alone instead of running its node
    again."""
    import asyncio

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["DURABLE_DEBUG_LEASE_SECONDS"] = "1"
    seeder = subprocess.Popen(
        [sys.executable, "-c", HANGING, durable_url], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert seeder.stdout is not None and seeder.stdout.readline() == "hanging\n"
    finally:
        seeder.kill()
        seeder.communicate()

    calls: list[str] = []
    release = asyncio.Event()
    graph = two_threads(durable_url, calls=calls, release=release)
    saver = graph.checkpointer
    deadline = time.monotonic() + 120
    while await saver.alist_abandoned_threads() != ["t1", "t2"]:
        assert time.monotonic() < deadline, "the dead run's leases never expired"
        await asyncio.sleep(0.05)

    worker_a = asyncio.ensure_future(arecover(graph))
    while calls != ["t1"]:  # A works on t1 (and holds it)
        assert time.monotonic() < deadline, "worker A never started t1"
        await asyncio.sleep(0.01)
    worker_b = await arecover(graph)
    assert [(r.thread_id, r.outcome) for r in worker_b] == [("t2", "interrupted")]
    release.set()
    done = await worker_a

    assert [(r.thread_id, r.outcome) for r in done] == [("t1", "finished")]
    assert calls == ["t1", "t2"]  # t2's node ran once, in B
    assert await saver.alist_abandoned_threads() == []
    await saver.aclose()
