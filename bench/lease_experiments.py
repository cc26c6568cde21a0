"""The lease experiments at full count, on SQLite and PostgreSQL (the test suite runs a few
trials of each; see tests/checkpoint/test_lease_fencing.py and test_store_sharing.py).

    python bench/lease_experiments.py                 # everything, both savers
    python bench/lease_experiments.py stall --trials 60 --no-postgres
    python bench/lease_experiments.py skew kill waits soak

* ``stall``: holder A is stopped (SIGSTOP) inside a random node of a 40 × 30 ms chain, past its
  1 s lease; B resumes the thread; A is continued once B runs. Counts forks (a checkpoint with
  two children) and nodes A started after it was stopped; both must be 0.
* ``skew``: B's wall clock is 120 s ahead while A holds the thread; B must be refused.
* ``kill``: A is killed (SIGKILL) inside a node; B, a new process, resumes at once (wait=0)
  with the default 30 s lease, and runs exactly the unfinished nodes.
* ``waits``: 32 runs of ~10 ms on 4 threads of one SQLite saver, each with wait=60: the p99
  time from asking to finishing must be at most 1 s.
* ``soak``: writers, a reader, sweep, prune, delete and recover side by side for 60 s: no
  error anywhere, and ``check`` finds the store whole.

It prints one line per experiment and saver, and exits 1 when one missed its target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "tests" / "checkpoint")]

from stall_workers import HERE, SRC, kill_trial, skew_trial, stall_trial  # noqa: E402

EXPERIMENTS = ("stall", "skew", "kill", "waits", "soak")


def stall(url: str, work: Path, trials: int) -> tuple[str, bool]:
    rng = random.Random(26)
    results = [stall_trial(url, work, i, rng.randrange(2, 36)) for i in range(trials)]
    forks = sum(r["forks"] for r in results)
    late = sum(r["a_starts_after_stop"] for r in results)
    lost = sum(r["a"] == "lost" for r in results)
    finished = sum(r["b"] == "finished" for r in results)
    ok = forks == 0 and late == 0 and finished == trials
    return (
        f"{trials} trials: {forks} forks, {late} node starts after the lease was lost, "
        f"A stopped with LeaseLostError {lost}/{trials}, B finished {finished}/{trials}",
        ok,
    )


def skew(url: str, work: Path, trials: int) -> tuple[str, bool]:
    results = [skew_trial(url, work, i) for i in range(trials)]
    forks = sum(r["forks"] for r in results)
    busy = sum(r["b"] == "busy" for r in results)
    ok = forks == 0 and busy == trials
    return f"{trials} trials: {forks} forks, B refused {busy}/{trials}", ok


def kill(url: str, work: Path, trials: int) -> tuple[str, bool]:
    points = [0, 1, 9, 23, 39]
    good = 0
    for i in range(trials):
        at = points[i % len(points)]
        result = kill_trial(url, work, i, at)
        good += result["b"] == "finished" and result["b_nodes"] == list(range(at, 40))
    text = f"{trials} kills at 5 points: resumed at once, only the unfinished nodes {good}/{trials}"
    return text, good == trials


def waits(url: str, work: Path, trials: int) -> tuple[str, bool]:
    from typing_extensions import TypedDict

    from durable_debug import START, SqliteSaver, StateGraph

    class Counter(TypedDict):
        n: int

    async def main() -> list[float]:
        saver = SqliteSaver(str(work / "waits.db"))

        async def slow(state: Counter) -> dict[str, int]:
            await asyncio.sleep(0.01)
            return {"n": state["n"] + 1}

        builder = StateGraph(Counter)
        builder.add_node("inc", slow)
        builder.add_edge(START, "inc")
        graph = builder.compile(checkpointer=saver)
        times: list[float] = []

        async def run(i: int) -> None:
            config = {"configurable": {"thread_id": f"w{i % 4}"}}
            asked = time.monotonic()
            await graph.ainvoke({"n": i}, config, wait=60)
            times.append(time.monotonic() - asked)

        try:
            for _ in range(trials):
                await asyncio.gather(*(run(i) for i in range(32)))
        finally:
            await saver.aclose()
        return times

    times = asyncio.run(main())
    p99 = statistics.quantiles(times, n=100)[98]
    return (
        f"{len(times)} runs (32 tasks on 4 threads, {trials} rounds): p50 "
        f"{statistics.median(times) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms (target ≤ 1000 ms)",
        p99 <= 1.0,
    )


def soak(url: str, work: Path, seconds: int) -> tuple[str, bool]:
    from durable_debug.checkpoint.url import saver_from_url
    from durable_debug.inspect.health import check_store

    roles = [("writer", 0), ("writer", 1), ("writer", 2), ("asker", 0), ("reader", 0)]
    roles += [("sweeper", 0), ("pruner", 0), ("deleter", 0), ("recoverer", 0)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)])}
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "soak_workers.py"), role, url, str(seconds), str(i)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role, i in roles
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate()
        if proc.returncode != 0:
            return f"a worker failed: {err[-500:]}", False
        results.append(json.loads(out.strip().splitlines()[-1]))
    errors = [e for r in results for e in r["errors"]]
    ops = {r["role"]: 0 for r in results}
    for r in results:
        ops[r["role"]] += r["ops"]
    saver = saver_from_url(url)
    try:
        report = check_store(saver)
    finally:
        saver.close()
    whole = not report.damaged and not report.file_problems
    text = ", ".join(f"{role} {n}" for role, n in ops.items())
    return (
        f"{seconds} s: {len(errors)} errors ({text} operations); store whole: {whole}"
        + (f"; first errors: {errors[:3]}" if errors else ""),
        not errors and whole,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="*", help=f"some of {', '.join(EXPERIMENTS)}")
    parser.add_argument("--trials", type=int, default=60, help="stall trials (default 60)")
    parser.add_argument("--seconds", type=int, default=60, help="soak length (default 60)")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    chosen = args.experiments or list(EXPERIMENTS)
    unknown = sorted(set(chosen) - set(EXPERIMENTS))
    if unknown:
        parser.error(f"no experiment {', '.join(unknown)}: choose from {', '.join(EXPERIMENTS)}")
    from servers import postgres_server

    failed = False
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as pg_base:
        savers = {"SQLite": "sqlite", "PostgreSQL": "postgres"}
        if args.no_postgres:
            savers.pop("PostgreSQL")
        for name in chosen:
            for label, kind in savers.items():
                if name == "waits" and kind != "sqlite":
                    continue
                work = Path(tempfile.mkdtemp(dir=tmp))
                url = f"sqlite:///{work / 'store.db'}" if kind == "sqlite" else _fresh_db(pg_base)
                count = {
                    "stall": args.trials,
                    "skew": 5,
                    "kill": 10,
                    "waits": 5,
                    "soak": args.seconds,
                }[name]
                runner: Any = globals()[name]
                text, ok = runner(url, work, count)
                failed = failed or not ok
                print(f"{name:6} {label:10} {'ok  ' if ok else 'FAIL'} {text}", flush=True)
    return 1 if failed else 0


_DBS = 0


def _fresh_db(base: str) -> str:
    """A new, empty database on the experiment's PostgreSQL server."""
    import psycopg

    global _DBS
    _DBS += 1
    name = f"exp{_DBS}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return base.rsplit("/", 1)[0] + f"/{name}"


if __name__ == "__main__":
    sys.exit(main())
