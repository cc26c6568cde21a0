"""The cost of one writer per thread: a 10-node chain with and without the thread lease.

    python bench/lease.py              # SQLite and PostgreSQL, 15 rounds
    python bench/lease.py --quick      # 3 rounds
    python bench/lease.py --no-postgres

Every run takes its thread's lease (one upsert) and gives it back (one delete); a 10-node chain
writes 12 checkpoints besides. Each round runs the chain on 20 fresh threads with the lease and
20 without (the lease replaced by a no-op for this measurement only), alternating run by run;
the report is the median run time per variant, their ratio, and the median of the ratios
of the back-to-back pairs (with / without; the verdict, target ≤ 1.10), which a
loaded machine's swings move less, and the ratio of the median CPU time this process spent
per run (the client's share of the cost, which load moves least; it leaves out the server's
work and the waits for it). The
PostgreSQL server is started for the run from Debian's packages, as the tests do. It always
exits 0: it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import operator
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from durable_debug import START, StateGraph
from durable_debug.graph import loop as run_loop

CHAIN = 10
THREADS = 20
TARGET = 1.10


class Chain(TypedDict):
    n: int
    trail: Annotated[list, operator.add]


def chain(saver: Any) -> Any:
    builder = StateGraph(Chain)

    def node(state: Chain) -> dict[str, Any]:
        return {"n": state["n"] + 1, "trail": [state["n"]]}

    for i in range(CHAIN):
        builder.add_node(f"n{i}", node)
    builder.add_edge(START, "n0")
    for i in range(CHAIN - 1):
        builder.add_edge(f"n{i}", f"n{i + 1}")
    return builder.compile(checkpointer=saver)


@contextlib.asynccontextmanager
async def no_lease(saver: Any, thread_id: str, *, wait: float | None = None) -> AsyncIterator[None]:
    yield


async def timed(graph: Any, thread_id: str) -> tuple[float, float]:
    """Wall and CPU seconds (this process's) of one chain run."""
    t0, c0 = time.perf_counter(), time.process_time()
    await graph.ainvoke({"n": 0, "trail": []}, {"configurable": {"thread_id": thread_id}})
    return time.perf_counter() - t0, time.process_time() - c0


async def measure(saver: Any, rounds: int) -> tuple[float, float, float, float]:
    """Median seconds of one chain run on a fresh thread (with the lease, without), and the
    median of the ratios of the two runs of each pair. Runs alternate one by one (A B, B A,
    …), and each pair runs back to back, so its ratio sees the same machine load: on a
    loaded machine the load swings more between pairs than within one."""
    graph = chain(saver)
    real = run_loop.thread_lease
    times: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    ratios: list[float] = []
    for i in range(THREADS):
        await timed(graph, f"warm-{i}")
    for r in range(rounds):
        for i in range(THREADS):
            pair: dict[bool, float] = {}
            for leased in (True, False) if i % 2 else (False, True):
                run_loop.thread_lease = real if leased else no_lease  # type: ignore[assignment]
                try:
                    pair[leased], used = await timed(graph, f"r{r}-{i}-{leased}")
                finally:
                    run_loop.thread_lease = real
                times[leased].append(pair[leased])
                cpu[leased].append(used)
            ratios.append(pair[True] / pair[False])
    return (
        statistics.median(times[True]),
        statistics.median(times[False]),
        statistics.median(ratios),
        statistics.median(cpu[True]) / statistics.median(cpu[False]),
    )


def report(name: str, with_lease: float, without: float, ratio: float, cpu: float) -> None:
    verdict = "ok" if ratio <= TARGET else "OVER TARGET"
    print(
        f"  {name:<11} with {with_lease * 1000:7.2f} ms/run   without "
        f"{without * 1000:7.2f} ms/run   ratio of medians {with_lease / without:.3f}   "
        f"median pair ratio {ratio:.3f}  (≤ {TARGET}) {verdict}   "
        f"client CPU ratio {cpu:.3f}"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    from durable_debug import SqliteSaver

    print(f"{CHAIN}-node chain, {rounds} rounds of {THREADS} runs per variant, alternating")
    with tempfile.TemporaryDirectory() as tmp:
        saver: Any = SqliteSaver(str(Path(tmp) / "lease.db"))
        report("SQLite", *await measure(saver, rounds))
        await saver.aclose()
    if not args.no_postgres:
        from durable_debug import PostgresSaver
        from servers import ServerUnavailable, postgres_server

        try:
            with postgres_server() as url:
                saver = PostgresSaver(url)
                report("PostgreSQL", *await measure(saver, rounds))
                await saver.aclose()
        except ServerUnavailable as exc:
            print(f"  PostgreSQL  not measured: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
