"""``durable-debug inspect DB`` on 10,000 threads, against the bare SQL it cannot beat.

    python bench/listing.py              # 10,000 threads, 5 alternating rounds
    python bench/listing.py --threads 2000 --rounds 3

For each layout — durable_debug's own SQLite tables and the file LangGraph's ``SqliteSaver``
writes — a file with ``--threads`` threads of 5 checkpoints each is built (a handful of real
runs: finished, paused on an interrupt, failed; then their rows copied under new thread ids
with SQL). Then, alternating, each round times:

* the floor: plain ``sqlite3`` running the bare query that selects each thread's latest
  checkpoint row (connect, execute, fetch every row);
* the command: ``durable-debug inspect FILE`` in this process (opening the store, listing
  every thread with its checkpoint count, latest step and status, printing the table).

Times are CPU seconds of this process (``time.process_time``, all threads: both sides run in
it, and other programs on a shared machine move them less than wall time) and wall seconds.
It prints the medians and the ratios command / floor (target ≤ 5), and the time
``import durable_debug.inspect`` takes in a fresh interpreter with whether it loaded pandas
(target: no pandas until a frame is asked for). A measurement, not a test: it always
exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import operator
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

FLOOR_SQL = """
SELECT c.thread_id, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata
FROM checkpoints c
JOIN (SELECT thread_id, max(checkpoint_id) AS checkpoint_id FROM checkpoints
       WHERE checkpoint_ns = '' GROUP BY thread_id) AS latest
  ON c.thread_id = latest.thread_id AND c.checkpoint_ns = ''
 AND c.checkpoint_id = latest.checkpoint_id
"""
"""Each thread's latest checkpoint row: the least any listing has to read."""

TEMPLATES = ("done", "paused", "failed")


class Job(TypedDict, total=False):
    """State of the benchmark's graph: three steps, maybe an interrupt or a failure."""

    log: Annotated[list[str], operator.add]
    outcome: str


def build(lib: Any, saver: Any) -> Any:
    """plan → work → review; "paused" asks a human in review, "failed" raises in work."""

    def plan(state: Job) -> dict[str, Any]:
        return {"log": ["planned"]}

    def work(state: Job) -> dict[str, Any]:
        if state["outcome"] == "failed":
            raise RuntimeError("the worker crashed")
        return {"log": ["worked"]}

    def review(state: Job) -> dict[str, Any]:
        if state["outcome"] == "paused":
            return {"log": [str(lib.interrupt("approve?"))]}
        return {"log": ["reviewed"]}

    return (
        lib.StateGraph(Job)
        .add_node("plan", plan)
        .add_node("work", work)
        .add_node("review", review)
        .add_edge(lib.START, "plan")
        .add_edge("plan", "work")
        .add_edge("work", "review")
        .compile(checkpointer=saver)
    )


def run_templates(graph: Any) -> None:
    for outcome in TEMPLATES:
        with contextlib.suppress(RuntimeError):
            graph.invoke({"outcome": outcome}, {"configurable": {"thread_id": outcome}})


def copy_threads(path: Path, tables: dict[str, str], threads: int) -> None:
    """Copy the template threads' rows under new ids until the file holds ``threads``."""
    copies = max(1, threads // len(TEMPLATES))
    with sqlite3.connect(path) as conn:
        for table, columns in tables.items():
            rest = ", ".join(c for c in columns.split(", ") if c != "thread_id")
            conn.execute(
                f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                f"INSERT INTO {table} (thread_id, {rest}) "
                f"SELECT t.thread_id || '-' || printf('%06d', n.i), {rest} FROM {table} t, n",
                (copies,),
            )
            conn.execute(f"DELETE FROM {table} WHERE thread_id IN ('done', 'paused', 'failed')")


def make_langgraph_file(path: Path, threads: int) -> None:
    import langgraph.graph
    import langgraph.types
    from langgraph.checkpoint.sqlite import SqliteSaver

    class LangGraphApi:
        StateGraph = langgraph.graph.StateGraph
        START = langgraph.graph.START
        interrupt = staticmethod(langgraph.types.interrupt)

    conn = sqlite3.connect(path, check_same_thread=False)
    run_templates(build(LangGraphApi, SqliteSaver(conn)))
    conn.close()
    copy_threads(
        path,
        {
            "checkpoints": "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            "checkpoint, metadata",
            "writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, "
            "channel, type, value",
        },
        threads,
    )


def make_own_file(path: Path, threads: int) -> None:
    import durable_debug
    from durable_debug import SqliteSaver

    saver = SqliteSaver(str(path))
    run_templates(build(durable_debug, saver))
    saver.close()
    copy_threads(
        path,
        {
            "checkpoints": "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
            "checkpoint, metadata",
            "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version, type, blob",
            "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
            "channel, type, blob, task_path",
        },
        threads,
    )


def floor(path: Path) -> Callable[[], int]:
    def run() -> int:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return len(conn.execute(FLOOR_SQL).fetchall())
        finally:
            conn.close()

    return run


def command(path: Path) -> Callable[[], int]:
    from durable_debug.cli import main

    def run() -> int:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["inspect", str(path)])
        assert code == 0, out.getvalue()[-500:]
        return out.getvalue().count("\n") - 2

    return run


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    """CPU seconds of this process (every thread: other programs on a shared machine move it
    less than wall time; both sides run in this process), wall seconds, rows listed."""
    start, wall = time.process_time(), time.perf_counter()
    rows = fn()
    return time.process_time() - start, time.perf_counter() - wall, rows


def import_time() -> str:
    code = (
        "import sys, time; t = time.perf_counter(); import durable_debug.inspect; "
        "print(f'{time.perf_counter() - t:.3f} s, pandas loaded: {\"pandas\" in sys.modules}')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    return (result.stdout or result.stderr).strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "durable_debug layout": Path(tmp) / "own.db",
            "LangGraph layout": Path(tmp) / "langgraph.db",
        }
        print(f"building {args.threads} threads × 5 checkpoints in each layout…", flush=True)
        make_own_file(files["durable_debug layout"], args.threads)
        make_langgraph_file(files["LangGraph layout"], args.threads)
        print()
        head = (
            f"{'layout':<22} {'threads':>7} {'':>4} {'bare SQL':>10} {'inspect':>10} {'ratio':>7}"
        )
        print(f"{head}  target")
        for name, path in files.items():
            floor_fn, command_fn = floor(path), command(path)
            timed(floor_fn), timed(command_fn)  # warm the page cache and imports
            floors: list[tuple[float, float]] = []
            commands: list[tuple[float, float]] = []
            listed = 0
            for _ in range(args.rounds):
                cpu, wall, _rows = timed(floor_fn)
                floors.append((cpu, wall))
                cpu, wall, listed = timed(command_fn)
                commands.append((cpu, wall))
            for i, kind in enumerate(("CPU", "wall")):
                f = statistics.median(x[i] for x in floors)
                c = statistics.median(x[i] for x in commands)
                times = f"{f * 1000:>8.1f}ms {c * 1000:>8.1f}ms {c / f:>7.2f}"
                print(f"{name if i == 0 else '':<22} {listed:>7} {kind:>4} {times}  ≤ 5")
    print()
    print(f"import durable_debug.inspect: {import_time()}  (target ≤ 0.3 s, no pandas)")
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    sys.exit(main())
