"""One writer per thread that never forks and never blocks the user.

* Fencing: a holder stopped (SIGSTOP) inside a node past its lease, while another process
  resumes the thread, writes nothing more and starts no further node once continued; a worker
  whose wall clock is two minutes ahead cannot take a live lease. (The test runs a few trials
  per saver; ``bench/lease_experiments.py`` runs the full counts.)
* A run killed mid-step is resumed at once by a new process on the same host (its lease
  names a dead process), and only the unfinished node runs again; a Jupyter kernel restart is
  the same.
* Runs waiting for a lease are woken when it is released.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, TypedDict

import pytest
from stall_workers import (
    HERE,
    SRC,
    forks,
    kill_trial,
    outcome,
    skew_trial,
    spawn,
    stall_trial,
    starts,
    wait_until,
)

from durable_debug import START, LeaseLostError, SqliteSaver, StateGraph
from durable_debug.checkpoint.lease import holder_is_dead, holder_proof, thread_lease
from durable_debug.checkpoint.url import saver_from_url

TRIALS = 3
"""Stall trials per saver in the suite (bench/lease_experiments.py runs 60)."""


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ]
)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.db'}"
    if request.param == "redis":
        return str(request.getfixturevalue("redis_db"))
    return str(request.getfixturevalue("postgres_db"))


def test_a_stalled_holder_neither_forks_its_thread_nor_starts_another_node(
    url: str, tmp_path: Path
) -> None:
    rng = random.Random(26)
    for trial in range(TRIALS):
        result = stall_trial(url, tmp_path, trial, gate_at=rng.randrange(2, 36))
        assert result["a"] == "lost", result
        assert result["b"] == "finished", result
        assert result["forks"] == 0, result
        assert result["a_starts_after_stop"] == 0, result


def test_a_worker_whose_clock_is_ahead_cannot_take_a_live_lease(url: str, tmp_path: Path) -> None:
    for trial in range(2):
        result = skew_trial(url, tmp_path, trial, skew=120.0)
        assert result == {"a": "finished", "b": "busy", "forks": 0}


class Counter(TypedDict):
    n: int


def _one_node(saver: Any) -> Any:
    builder = StateGraph(Counter)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    return builder.compile(checkpointer=saver)


def _steal(url: str, thread_id: str) -> None:
    """What another run taking the thread does to its lease row, from outside this process."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        with conn:
            conn.execute(
                "UPDATE thread_leases SET token = 'other' WHERE thread_id = ?", (thread_id,)
            )
        conn.close()
        return
    if url.startswith("redis"):
        import redis

        saver = saver_from_url(url)
        key = saver._keys.lease(thread_id)  # type: ignore[attr-defined]
        base = url.partition("?")[0]
        client = redis.Redis.from_url(base)
        value = client.get(key)
        assert value is not None
        client.set(key, b"other" + value[value.index(b"\n") :], keepttl=True)
        client.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE thread_leases SET token = 'other' WHERE thread_id = %s", (thread_id,))


async def test_every_write_of_a_run_whose_lease_was_taken_is_refused_with_nothing_written(
    url: str,
) -> None:
    saver = saver_from_url(url)
    try:
        graph = _one_node(saver)
        config = {"configurable": {"thread_id": "fenced"}}
        await graph.ainvoke({"n": 0}, config)
        head = await saver.aget_tuple(config)
        assert head is not None
        before = [t.config async for t in saver.alist(config)]
        async with thread_lease(saver, "fenced"):
            _steal(url, "fenced")
            with pytest.raises(LeaseLostError):
                await saver.aput_writes(head.config, [("n", 5)], "task-1")
            with pytest.raises(LeaseLostError):
                await graph.aupdate_state(config, {"n": 7})
            queue = saver.step_queue()
            checkpoint = dict(head.checkpoint, id="1f000000-0000-6000-8000-000000000000")
            with pytest.raises(LeaseLostError):
                await queue.put(head.config, [], checkpoint, head.metadata, {})  # type: ignore[arg-type]
                await queue.drain()
        assert [t.config async for t in saver.alist(config)] == before
        again = await saver.aget_tuple(config)
        assert again is not None and again.pending_writes == head.pending_writes
    finally:
        await saver.aclose()


@pytest.mark.parametrize("kill_at", [0, 1, 9, 23, 39])
def test_a_run_killed_mid_step_resumes_at_once_in_a_new_process(
    url: str, tmp_path: Path, kill_at: int
) -> None:
    result = kill_trial(url, tmp_path, 0, kill_at)
    # The default 30 s lease: only a dead holder's lease can be free this soon.
    assert result["b"] == "finished", result
    assert result["b_nodes"] == list(range(kill_at, 40)), result
    assert result["forks"] == 0


def test_a_lease_names_a_process_dead_only_when_it_is(tmp_path: Path) -> None:
    assert not holder_is_dead(holder_proof())
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from durable_debug.checkpoint.lease import holder_proof as p; print(p())",
        ],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = proc.communicate()
    assert holder_is_dead(out.strip())  # exited (reaped): its pid is free
    boot, pidns, pid, start = holder_proof().split()
    assert holder_is_dead(f"{boot} {pidns} {pid} {int(start) + 1}")  # the pid, reused later
    assert not holder_is_dead(f"another-boot {pidns} 1 0")  # another host: not provable
    assert not holder_is_dead("")  # an older lease row: it only expires


def test_a_jupyter_kernel_restart_then_resume_works_at_once(tmp_path: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    db, log, gate = tmp_path / "k.db", tmp_path / "k.log", tmp_path / "never"
    setup = textwrap.dedent(
        f"""
        import sys; sys.path[:0] = [{str(SRC)!r}, {str(HERE)!r}]
        from pathlib import Path
        from durable_debug import SqliteSaver
        from stall_workers import chain_graph
        saver = SqliteSaver({str(db)!r})
        config = {{"configurable": {{"thread_id": "nb"}}}}
        """
    )
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kc.execute_interactive(setup, timeout=120)
        kc.execute(
            setup + f"chain_graph(saver, Path({str(log)!r}), 3, Path({str(gate)!r}))"
            ".invoke({'n': -1}, config)"
        )
        wait_until(lambda: any(node == 3 for _, node in starts(log)), "the kernel's run")
        km.restart_kernel(now=True)  # the kernel dies holding the thread, as on "Restart"
        kc.wait_for_ready(timeout=120)
        outputs: list[str] = []

        def keep(msg: dict[str, Any]) -> None:
            content = msg.get("content", {})
            if msg.get("msg_type") == "stream":
                outputs.append(content.get("text", ""))
            elif msg.get("msg_type") == "error":
                outputs.append(f"{content.get('ename')}: {content.get('evalue')}")

        reply = kc.execute_interactive(
            setup + f"print(chain_graph(saver, Path({str(log)!r}), -1, None)"
            ".invoke(None, config)['n'])",
            timeout=120,
            output_hook=keep,
        )
        assert reply["content"]["status"] == "ok", outputs
        assert "".join(outputs).strip() == "39"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert forks(f"sqlite:///{db}", "nb") == 0


async def test_runs_waiting_for_a_lease_are_woken_when_it_is_released(tmp_path: Path) -> None:
    """32 runs on 4 threads of one saver, each waiting for its thread's lease: every run
    goes through, and none is refused (the p99 wait is measured by
    bench/lease_experiments.py)."""
    saver = SqliteSaver(str(tmp_path / "waits.db"))
    try:

        async def slow(state: Counter) -> dict[str, int]:
            await asyncio.sleep(0.01)
            return {"n": state["n"] + 1}

        builder = StateGraph(Counter)
        builder.add_node("inc", slow)
        builder.add_edge(START, "inc")
        graph = builder.compile(checkpointer=saver)

        async def run(i: int) -> int:
            config = {"configurable": {"thread_id": f"w{i % 4}"}}
            out = await graph.ainvoke({"n": i}, config, wait=60)
            return int(out["n"])

        results = await asyncio.gather(*(run(i) for i in range(32)))
        assert sorted(results) == [i + 1 for i in range(32)]
    finally:
        await saver.aclose()


def test_a_busy_thread_is_still_refused_without_wait(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    log, gate = tmp_path / "busy.log", tmp_path / "gate"
    holder = spawn("first", url, "t", str(log), "2", str(gate), lease=30)
    try:
        wait_until(lambda: (holder.pid, 2) in starts(log), "the holder to reach node 2")
        assert outcome(spawn("resume", url, "t", str(log), "0", lease=30)) == "busy"
    finally:
        gate.touch()
    assert outcome(holder) == "finished"


def test_no_renewer_noise_at_interpreter_exit(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys; sys.path[:0] = [{str(SRC)!r}]
        from durable_debug import SqliteSaver, StateGraph, START
        from typing import TypedDict
        class S(TypedDict):
            n: int
        b = StateGraph(S)
        b.add_node("a", lambda s: {{"n": 1}})
        b.add_edge(START, "a")
        with SqliteSaver(sys.argv[1]) as saver:
            graph = b.compile(checkpointer=saver)
            graph.invoke({{"n": 0}}, {{"configurable": {{"thread_id": "t"}}}})
        """
    )
    for i in range(6):
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / f"{i}.db")],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "DURABLE_DEBUG_LEASE_SECONDS": "0.3"},
        )
        assert done.returncode == 0, done.stderr
        assert "Task was destroyed" not in done.stderr
        assert done.stderr.strip() == ""


def test_a_thread_whose_holder_died_on_this_host_is_abandoned_at_once(
    url: str, tmp_path: Path
) -> None:
    import signal

    log, gate = tmp_path / "dead.log", tmp_path / "never"
    holder = spawn("first", url, "dead", str(log), "4", str(gate), lease=30)
    try:
        wait_until(lambda: (holder.pid, 4) in starts(log), "the holder to reach node 4")
        saver = saver_from_url(url)
        try:
            assert saver.list_abandoned_threads() == []  # alive: a running thread
        finally:
            saver.close()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate()
    saver = saver_from_url(url)
    try:
        # The 30 s lease has not expired, but its holder is gone: recover() may take it now.
        assert saver.list_abandoned_threads() == ["dead"]
    finally:
        saver.close()
