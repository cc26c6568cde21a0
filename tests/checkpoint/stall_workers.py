"""Worker processes and trials for the lease experiments: a stalled holder, a skewed clock, a
holder killed mid-step.

The graph is a chain of ``NODES`` nodes; each appends ``start <pid> <i>`` to a log when it
starts (its side effect), and the node ``gate_at`` then waits until the gate file exists, so a
test can stop the process inside that node. Run as a script:

    python stall_workers.py first  <url> <thread> <log> <gate_at> <gate-file>
    python stall_workers.py resume <url> <thread> <log> <wait>

``first`` starts the thread, ``resume`` continues it with ``invoke(None)``, waiting up to
``wait`` seconds for its lease. Each prints one JSON line: ``{"pid", "outcome"}`` with outcome
``finished``, ``lost`` (LeaseLostError), ``busy`` (ThreadBusyError) or ``error: ...``.
``DURABLE_DEBUG_TEST_CLOCK_SKEW=<seconds>`` moves the worker's wall clock (``time.time``).

:func:`stall_trial`, :func:`skew_trial` and :func:`kill_trial` drive one trial each from the
test process (also used by ``bench/lease_experiments.py`` for the full counts).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"

NODES = 40
NODE_SECONDS = 0.03


class Chain(TypedDict):
    n: int


def append(log: Path, line: str) -> None:
    """One short append: atomic between processes."""
    with open(log, "a") as f:
        f.write(line + "\n")


def chain_graph(saver: Any, log: Path, gate_at: int, gate: Path | None) -> Any:
    from durable_debug import START, StateGraph

    builder = StateGraph(Chain)

    def make(i: int) -> Any:
        def node(state: Chain) -> dict[str, Any]:
            append(log, f"start {os.getpid()} {i}")
            if i == gate_at and gate is not None:
                deadline = time.monotonic() + 120
                while not gate.exists() and time.monotonic() < deadline:
                    time.sleep(0.005)
            time.sleep(NODE_SECONDS)
            return {"n": i}

        return node

    for i in range(NODES):
        builder.add_node(f"n{i}", make(i))
    builder.add_edge(START, "n0")
    for i in range(NODES - 1):
        builder.add_edge(f"n{i}", f"n{i + 1}")
    return builder.compile(checkpointer=saver)


def main(argv: list[str]) -> None:
    skew = float(os.environ.get("DURABLE_DEBUG_TEST_CLOCK_SKEW") or 0)
    if skew:
        real = time.time
        time.time = lambda: real() + skew  # type: ignore[assignment]
    from durable_debug import LeaseLostError, ThreadBusyError
    from durable_debug.checkpoint.url import saver_from_url

    mode, url, thread, log = argv[:4]
    saver = saver_from_url(url)
    config = {"configurable": {"thread_id": thread}}
    try:
        if mode == "first":
            gate_at, gate = int(argv[4]), Path(argv[5])
            graph = chain_graph(saver, Path(log), gate_at, gate)
            graph.invoke({"n": -1}, config)
        else:
            graph = chain_graph(saver, Path(log), -1, None)
            graph.invoke(None, config, wait=float(argv[4]))
        outcome = "finished"
    except LeaseLostError:
        outcome = "lost"
    except ThreadBusyError:
        outcome = "busy"
    except Exception as exc:
        outcome = f"error: {type(exc).__name__}: {exc}"
    finally:
        saver.close()
    print(json.dumps({"pid": os.getpid(), "outcome": outcome}), flush=True)


# -- trials, driven from the test process ---------------------------------------------------------


def spawn(*args: str, lease: float, skew: float = 0.0) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["DURABLE_DEBUG_LEASE_SECONDS"] = str(lease)
    if skew:
        env["DURABLE_DEBUG_TEST_CLOCK_SKEW"] = str(skew)
    return subprocess.Popen(
        [sys.executable, str(HERE / "stall_workers.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def outcome(proc: subprocess.Popen[str], timeout: float = 180) -> str:
    out, err = proc.communicate(timeout=timeout)
    lines = out.strip().splitlines()
    assert lines, f"worker {proc.pid} printed nothing (exit {proc.returncode}): {err[-2000:]}"
    return str(json.loads(lines[-1])["outcome"])


def starts(log: Path) -> list[tuple[int, int]]:
    """(pid, node) of every node start logged, in log order."""
    if not log.exists():
        return []
    found = []
    for line in log.read_text().splitlines():
        kind, pid, node = line.split()
        if kind == "start":
            found.append((int(pid), int(node)))
    return found


def wait_until(condition: Any, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def forks(url: str, thread: str) -> int:
    """Checkpoints of ``thread`` (top namespace) with more than one child."""
    from durable_debug.checkpoint.url import saver_from_url

    saver = saver_from_url(url)
    try:
        parents = Counter(
            t.parent_config["configurable"]["checkpoint_id"]
            for t in saver.list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            if t.parent_config is not None
        )
    finally:
        saver.close()
    return sum(1 for n in parents.values() if n > 1)


def reached(proc: subprocess.Popen[str], log: Path, node: int) -> None:
    """Wait until ``proc`` logged the start of ``node``; fail with its output if it ended."""
    wait_until(
        lambda: (proc.pid, node) in starts(log) or proc.poll() is not None,
        f"worker {proc.pid} to start node {node}",
    )
    if (proc.pid, node) not in starts(log):
        out, err = proc.communicate()
        raise AssertionError(f"worker {proc.pid} ended before node {node}: {out} {err[-3000:]}")


def stall_trial(url: str, workdir: Path, trial: int, gate_at: int, lease: float = 1.0) -> dict:
    """Holder A is stopped (SIGSTOP) inside node ``gate_at``, past its lease; B resumes the
    thread; A is continued (SIGCONT) once B runs. Returns the outcomes, the forks, and how
    many nodes A started after it was stopped."""
    thread = f"stall-{trial}"
    log = workdir / f"{thread}.log"
    gate = workdir / f"{thread}.gate"
    a = spawn("first", url, thread, str(log), str(gate_at), str(gate), lease=lease)
    try:
        reached(a, log, gate_at)
        os.kill(a.pid, signal.SIGSTOP)
        stopped_at = len(starts(log))
        gate.touch()
        b = spawn("resume", url, thread, str(log), "60", lease=lease)
        wait_until(
            lambda: any(pid == b.pid for pid, _ in starts(log)) or b.poll() is not None,
            "B to start a node",
        )
        os.kill(a.pid, signal.SIGCONT)
        a_outcome, b_outcome = outcome(a), outcome(b)
    finally:
        for proc in (a,):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
    late = [node for pid, node in starts(log)[stopped_at:] if pid == a.pid]
    return {
        "a": a_outcome,
        "b": b_outcome,
        "forks": forks(url, thread),
        "a_starts_after_stop": len(late),
        "b_nodes": sorted({node for pid, node in starts(log) if pid == b.pid}),
    }


def skew_trial(url: str, workdir: Path, trial: int, skew: float = 120.0) -> dict:
    """Holder A runs the chain; B, whose wall clock is ``skew`` seconds ahead, tries to resume
    the thread while A holds it. Returns both outcomes and the forks."""
    thread = f"skew-{trial}"
    log = workdir / f"{thread}.log"
    gate = workdir / f"{thread}.gate"
    a = spawn("first", url, thread, str(log), "5", str(gate), lease=1.0)
    try:
        reached(a, log, 5)
        b = spawn("resume", url, thread, str(log), "0", lease=1.0, skew=skew)
        b_outcome = outcome(b)
        gate.touch()
        a_outcome = outcome(a)
    finally:
        gate.touch()
    return {"a": a_outcome, "b": b_outcome, "forks": forks(url, thread)}


def kill_trial(url: str, workdir: Path, trial: int, kill_at: int, lease: float = 30.0) -> dict:
    """Holder A is killed (SIGKILL) inside node ``kill_at``; B, a new process on the same
    host, resumes the thread at once (``wait=0``) with the default lease. Returns B's outcome,
    the nodes B ran and the forks."""
    thread = f"kill-{trial}-{kill_at}"
    log = workdir / f"{thread}.log"
    gate = workdir / f"{thread}.gate"
    a = spawn("first", url, thread, str(log), str(kill_at), str(gate), lease=lease)
    try:
        reached(a, log, kill_at)
    finally:
        os.kill(a.pid, signal.SIGKILL)
        a.communicate()
    b = spawn("resume", url, thread, str(log), "0", lease=lease)
    b_outcome = outcome(b)
    return {
        "b": b_outcome,
        "b_nodes": [node for pid, node in starts(log) if pid == b.pid],
        "forks": forks(url, thread),
    }


if __name__ == "__main__":
    main(sys.argv[1:])
