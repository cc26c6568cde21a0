"""Storage benchmarks of the durable savers against LangGraph's savers and raw sqlite3.

    python bench/storage.py            # all workloads, 5 alternating rounds
    python bench/storage.py --quick    # 3 rounds
    python bench/storage.py --no-postgres --no-redis
    python bench/storage.py --servers-only    # only the PostgreSQL and Redis rows
    python bench/storage.py --listings-only --rounds 3   # only the SQLite alist rows

Workloads:

* wide state — 100 fields of 1 KiB, 30 steps each changing one field, one thread, SQLite:
  bytes on disk (target ≤ 0.1× LangGraph, which stores the whole state every step) and run
  time (target ≤ 0.5×); the bytes on disk again with random bytes as field values, which no
  compression can shrink (no target: it shows what the saver's own compression is worth);
* long thread — one thread of 60 runs × 11 checkpoints on SQLite: time to write it (target
  ≤ 1×) and to list its whole history with ``aget_state_history`` (target ≤ 0.5×);
* listings — ``alist`` of one thread of 1,000, 10,000, 50,000 and 100,000 checkpoints
  (1,000 and 10,000 with ``--quick``; target ≤ 0.5× LangGraph), the per-checkpoint CPU of each
  against the thread of 1,000 (flat: ≤ 1.2), and ``alist(None)`` over 10,000 threads of 5
  (2,000 with ``--quick``; target ≤ 0.4×);
* the inspect layer: the read sessions and ``to_tuple`` calls of ``durable-debug
  inspect DB --thread T --html`` on the long thread (floor: one pass, one ``to_tuple`` per
  checkpoint), and ``durable-debug inspect DB`` over 10,000 threads of 5 (2,000 with
  ``--quick``; CPU seconds, target ≤ 5× the bare latest-row SQL; bench/listing.py also runs
  LangGraph's layout) with the time ``import durable_debug.inspect`` takes;
* PostgreSQL against LangGraph's AsyncPostgresSaver, one local server, a schema
  each: a 10-node chain on 200 threads (50 with ``--quick``; target ≤ 0.5×) and ``aget_state``
  p50 (target ≤ 0.7×) on the tests' server (``fsync=off``, ``synchronous_commit=off``: no side
  waits for the disk); the statements and round trips each side sends per checkpoint, counted
  on the wire; the chain again on 50 threads (20) on a server with PostgreSQL's default
  durability, where each commit waits for the disk (no target: the ratio follows the commits
  each side makes per checkpoint);
* SQLite write against its floor: the p50 of ``aput_step`` against the p50 of the
  very same transactions replayed in plain sqlite3 (target ≤ 3×; both WAL with
  ``synchronous=NORMAL``, so each side syncs the same: the WAL at checkpoints, not per commit);
* Redis script round trips per write and per ``get_state`` (target 1 each);
* per-checkpoint write latency (p50, p95) of ``aput_step`` (a checkpoint with its task's
  writes) on SQLite, PostgreSQL and Redis (servers
  started for the run from Debian's packages, as the tests do; Redis first without
  persistence, then with ``appendonly yes`` and ``appendfsync everysec``, as docs/storage.md
  recommends).

Field values are pseudo-random words (seeded): zlib shrinks them to about 60 %, real text and
JSON usually further. durable_debug's SQL savers compress big blobs (docs/storage.md), so the
random-bytes row is the one to read for data that does not compress.
Times are medians of alternating rounds (durable_debug, LangGraph, durable_debug, …).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import operator
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "checkpoint"))
# this checkout's code, not whichever durable_debug is installed (as the other scripts do)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

FIELDS = 100
FIELD_BYTES = 1024
STEPS = 30
RUNS = 60
CHAIN = 9  # nodes; with the input checkpoint and START's step: 11 checkpoints per run
LISTING_SIZES = [1_000, 10_000, 50_000, 100_000]
"""Thread lengths of the ``alist(thread)`` rows; per-checkpoint CPU is compared with the first."""


def words(rng: random.Random, size: int) -> str:
    """About ``size`` characters of pseudo-random lowercase words."""
    out: list[str] = []
    length = 0
    while length < size:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


def api(lib: str) -> dict[str, Any]:
    """StateGraph, START and a SQLite saver factory for one library."""
    if lib == "durable_debug":
        from durable_debug import START, SqliteSaver, StateGraph

        return {"StateGraph": StateGraph, "START": START, "saver": SqliteSaver}
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import START, StateGraph

    return {"StateGraph": StateGraph, "START": START, "saver": AsyncSqliteSaver.from_conn_string}


class Wide(TypedDict, total=False):
    step: int
    payload: dict[str, str]


def wide_schema() -> type:
    """A TypedDict with ``step`` and 100 string fields."""
    fields: dict[str, Any] = {"step": int}
    fields.update({f"f{i:03}": str for i in range(FIELDS)})
    return TypedDict("WideState", fields)  # type: ignore[operator]


async def wide_run(lib: str, path: Path, *, incompressible: bool = False) -> float:
    """Run the wide-state workload into ``path``; return the seconds it took.

    Field values are words, or random bytes when ``incompressible``.
    """
    a = api(lib)
    rng = random.Random(7)
    values: list[Any] = [
        rng.randbytes(FIELD_BYTES) if incompressible else words(rng, FIELD_BYTES)
        for _ in range(FIELDS + STEPS)
    ]

    def edit(state: dict[str, Any]) -> dict[str, Any]:
        step = state["step"]
        return {"step": step + 1, f"f{step % FIELDS:03}": values[FIELDS + step]}

    builder = a["StateGraph"](wide_schema())
    builder.add_node("edit", edit)
    builder.add_edge(a["START"], "edit")
    builder.add_conditional_edges("edit", lambda s: "edit" if s["step"] < STEPS else "__end__")
    start_values: dict[str, Any] = {"step": 0}
    start_values.update({f"f{i:03}": values[i] for i in range(FIELDS)})
    cfg = {"configurable": {"thread_id": "wide"}, "recursion_limit": STEPS + 5}
    t0 = time.perf_counter()
    if lib == "durable_debug":
        saver = a["saver"](str(path))
        graph = builder.compile(checkpointer=saver)
        await graph.ainvoke(start_values, cfg)
        await saver.aclose()
    else:
        async with a["saver"](str(path)) as saver:
            await same_sync(saver)
            graph = builder.compile(checkpointer=saver)
            await graph.ainvoke(start_values, cfg)
    return time.perf_counter() - t0


async def same_sync(saver: Any) -> None:
    """Give LangGraph's AsyncSqliteSaver our durability: its ``setup()`` switches to WAL but
    leaves ``synchronous`` at SQLite's default FULL, which fsyncs the WAL at every commit; ours
    runs ``synchronous=NORMAL`` (the WAL is synced at checkpoints). Like for like, both NORMAL."""
    await saver.setup()
    await saver.conn.execute("PRAGMA synchronous = NORMAL")


def disk_bytes(path: Path) -> int:
    """Bytes of the database and its WAL/SHM files."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


class Log(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def chain(lib: str, saver: Any, nodes: int = CHAIN) -> Any:
    a = api(lib)
    builder = a["StateGraph"](Log)

    def node(state: Log) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    for i in range(nodes):
        builder.add_node(f"n{i}", node)
    builder.add_edge(a["START"], "n0")
    for i in range(nodes - 1):
        builder.add_edge(f"n{i}", f"n{i + 1}")
    return builder.compile(checkpointer=saver)


async def long_thread(lib: str, path: Path) -> tuple[float, float, int, float]:
    """Write 60 runs × 11 checkpoints to one thread, then list it: (write s, list s, count,
    list CPU s — of every thread of this process, so the saver's I/O thread counts too)."""
    cfg = {"configurable": {"thread_id": "long"}}

    async def work(saver: Any) -> tuple[float, float, int, float]:
        graph = chain(lib, saver)
        t0 = time.perf_counter()
        for _ in range(RUNS):
            await graph.ainvoke({"n": 0, "log": []}, cfg)
        written = time.perf_counter() - t0
        t0, cpu0 = time.perf_counter(), time.process_time()
        count = 0
        async for _snap in graph.aget_state_history(cfg):
            count += 1
        return written, time.perf_counter() - t0, count, time.process_time() - cpu0

    a = api(lib)
    if lib == "durable_debug":
        saver = a["saver"](str(path))
        result = await work(saver)
        await saver.aclose()
        return result
    async with a["saver"](str(path)) as saver:
        await same_sync(saver)
        return await work(saver)


async def put_latencies(saver: Any, label: str) -> tuple[float, float]:
    """p50 and p95 milliseconds per checkpoint write while a chain graph runs 30 times.

    A step's checkpoint is saved with its lone task's writes by ``aput_step`` (one
    transaction on the SQL savers); that call is what is timed, once per step, so the runs use
    ``durability="sync"`` (with ``"async"`` PostgreSQL's step queue sends the statement and
    reads its answer later, without ``aput_step``).
    """
    seen: list[float] = []
    real = saver.aput_step

    async def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await real(*args, **kwargs)
        finally:
            seen.append((time.perf_counter() - t0) * 1000)

    saver.aput_step = timed
    graph = chain("durable_debug", saver)
    for i in range(30):
        config = {"configurable": {"thread_id": f"{label}-{i}"}}
        await graph.ainvoke({"n": 0, "log": []}, config, durability="sync")
    seen.sort()
    return statistics.median(seen), seen[int(len(seen) * 0.95) - 1]


async def sqlite_write_floor(tmp: Path) -> tuple[float, float, float]:
    """p50 and p95 ms of SqliteSaver's ``aput_step``, and p50 ms of the very same transactions
    (statements and rows recorded from the saver) replayed in plain sqlite3 on the caller's
    thread: the floor. Both files run in WAL mode with ``synchronous=NORMAL``."""
    from durable_debug import SqliteSaver
    from durable_debug.checkpoint import sqlite as dd_sqlite

    transactions: list[list[tuple[str, Any, bool]]] = []
    session = dd_sqlite._ThreadSession
    real_execute, real_many = session.execute, session.executemany
    real_transact, real_now = dd_sqlite._transact, dd_sqlite._transact_now

    async def execute(self: Any, sql: str, params: Any = ()) -> None:
        transactions[-1].append((sql, params, False))
        await real_execute(self, sql, params)

    async def executemany(self: Any, sql: str, rows: Any) -> None:
        transactions[-1].append((sql, list(rows), True))
        await real_many(self, sql, rows)

    def transact(raw: Any, fn: Any, write: bool) -> Any:
        if write:
            transactions.append([])
        return real_transact(raw, fn, write)

    def transact_now(raw: Any, fn: Any) -> Any:
        transactions.append([])  # left empty (and skipped) when the write lock was taken
        return real_now(raw, fn)

    saver = SqliteSaver(str(tmp / "latency.db"))
    await saver.asetup()
    session.execute, session.executemany = execute, executemany  # type: ignore[method-assign]
    dd_sqlite._transact, dd_sqlite._transact_now = transact, transact_now
    try:
        p50, p95 = await put_latencies(saver, "sqlite")
    finally:
        session.execute, session.executemany = real_execute, real_many  # type: ignore[method-assign]
        dd_sqlite._transact, dd_sqlite._transact_now = real_transact, real_now
        await saver.aclose()
    floor = SqliteSaver(str(tmp / "floor.db"))  # the same schema, then plain sqlite3
    floor.setup()
    floor.close()
    import sqlite3

    raw = sqlite3.connect(tmp / "floor.db", isolation_level=None)
    raw.execute("PRAGMA synchronous = NORMAL")
    seen: list[float] = []
    for statements in transactions:
        if not statements:
            continue
        t0 = time.perf_counter()
        raw.execute("BEGIN IMMEDIATE")
        for sql, params, many in statements:
            if many:
                raw.executemany(sql, params)
            else:
                raw.execute(sql, params)
        raw.execute("COMMIT")
        seen.append((time.perf_counter() - t0) * 1000)
    raw.close()
    return p50, p95, statistics.median(seen)


async def alternate(rounds: int, fn: Callable[[str, Path], Awaitable[Any]]) -> dict[str, list[Any]]:
    """Run ``fn`` for each library in alternation, each time on a fresh file."""
    results: dict[str, list[Any]] = {"durable_debug": [], "langgraph": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for lib in ("durable_debug", "langgraph"):
                path = Path(tmp) / f"{lib}-{r}.db"
                results[lib].append((await fn(lib, path), path))
    return results


def row(name: str, ours: float, theirs: float, unit: str, target: float | None) -> str:
    ratio = ours / theirs
    if target is None:
        verdict = "(no target)"
    else:
        verdict = f"≤ {target:<4} " + ("met" if ratio <= target else "MISSED")
    return f"{name:<44} {ours:>10.1f} {unit:<3} {theirs:>10.1f} {unit:<3} {ratio:>6.2f}  {verdict}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 5")
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL latency")
    parser.add_argument("--no-redis", action="store_true", help="skip Redis latency")
    parser.add_argument(
        "--servers-only", action="store_true", help="only the PostgreSQL and Redis rows"
    )
    parser.add_argument(
        "--listings-only", action="store_true", help="only the SQLite alist rows (full sizes)"
    )
    parser.add_argument("--rounds", type=int, help="alternating rounds (default 5, --quick 3)")
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 5)
    import langgraph.version

    import durable_debug

    print(
        f"durable_debug {durable_debug.__version__} vs langgraph {langgraph.version.__version__}"
        f", Python {sys.version.split()[0]}, median of {rounds} alternating rounds\n"
    )
    print(f"{'workload':<44} {'durable':>14} {'langgraph':>14} {'ratio':>6}  target")
    print("-" * 96)
    if args.servers_only:
        if not args.no_postgres:
            await postgres_vs_langgraph(rounds, 50 if args.quick else 200, 20 if args.quick else 50)
        print("\nper-checkpoint write latency (aput_step: a checkpoint with its task's writes):")
        await server_latencies(args)
        return 0
    if args.listings_only:
        await listing_vs_langgraph(rounds, LISTING_SIZES, 10_000)
        return 0

    async def wide(lib: str, path: Path) -> tuple[float, int]:
        seconds = await wide_run(lib, path)
        return seconds, disk_bytes(path)

    res = await alternate(rounds, wide)
    ours = [r[0] for r in res["durable_debug"]]
    theirs = [r[0] for r in res["langgraph"]]
    kib = ours[0][1] / 1024, theirs[0][1] / 1024
    print(row("wide state: bytes on disk (KiB)", *kib, "KiB", 0.1))
    print(
        row(
            "wide state: run time",
            statistics.median(o[0] for o in ours) * 1000,
            statistics.median(t[0] for t in theirs) * 1000,
            "ms",
            0.5,
        )
    )

    async def wide_random(lib: str, path: Path) -> int:
        await wide_run(lib, path, incompressible=True)
        return disk_bytes(path)

    res = await alternate(1, wide_random)
    ours_random, theirs_random = res["durable_debug"][0][0], res["langgraph"][0][0]
    print(
        row(
            "wide state, random bytes: bytes on disk (KiB)",
            ours_random / 1024,
            theirs_random / 1024,
            "KiB",
            None,
        )
    )
    res = await alternate(rounds, long_thread)
    ours = [r[0] for r in res["durable_debug"]]
    theirs = [r[0] for r in res["langgraph"]]
    assert ours[0][2] == theirs[0][2] == RUNS * (CHAIN + 2), (ours[0][2], theirs[0][2])
    print(
        row(
            f"long thread: write {RUNS}×{CHAIN + 2} checkpoints",
            statistics.median(o[0] for o in ours) * 1000,
            statistics.median(t[0] for t in theirs) * 1000,
            "ms",
            1.0,
        )
    )
    print(
        row(
            f"long thread: list {RUNS * (CHAIN + 2)} checkpoints",
            statistics.median(o[1] for o in ours) * 1000,
            statistics.median(t[1] for t in theirs) * 1000,
            "ms",
            0.5,
        )
    )
    print(  # a loaded machine moves wall time by whole scheduler slices per thread hand-off
        row(
            f"long thread: list {RUNS * (CHAIN + 2)}, CPU seconds",
            statistics.median(o[3] for o in ours) * 1000,
            statistics.median(t[3] for t in theirs) * 1000,
            "ms",
            0.5,
        )
    )
    if args.quick:
        await listing_vs_langgraph(rounds, [1_000, 10_000], 2_000)
    else:
        await listing_vs_langgraph(rounds, LISTING_SIZES, 10_000)
    await inspect_reads()
    # in a thread of its own: the command runs its own event loop, as from a shell
    await asyncio.to_thread(inspect_listing, rounds, 2_000 if args.quick else 10_000)
    if not args.no_postgres:
        await postgres_vs_langgraph(rounds, 50 if args.quick else 200, 20 if args.quick else 50)
    print("\nper-checkpoint write latency (aput_step: a checkpoint with its task's writes):")
    with tempfile.TemporaryDirectory() as tmp:
        p50, p95, raw50 = await sqlite_write_floor(Path(tmp))
    print(f"  SQLite      p50 {p50:.2f} ms   p95 {p95:.2f} ms")
    print(
        row(
            "SQLite write vs the same transaction raw",
            p50 * 1000,
            raw50 * 1000,
            "µs",
            3.0,
        ).replace("langgraph", "raw")
        + "  (floor: plain sqlite3; both WAL, synchronous=NORMAL)"
    )
    await server_latencies(args)
    return 0


async def server_latencies(args: argparse.Namespace) -> None:
    """Per-checkpoint write latency on PostgreSQL and Redis (unless skipped)."""
    if not args.no_postgres:
        from durable_debug import PostgresSaver
        from servers import ServerUnavailable, postgres_server

        try:
            with postgres_server() as url:
                saver = PostgresSaver(url)
                p50, p95 = await put_latencies(saver, "pg")
                await saver.aclose()
            print(f"  PostgreSQL  p50 {p50:.2f} ms   p95 {p95:.2f} ms  (local server)")
        except ServerUnavailable as exc:
            print(f"  PostgreSQL  not measured: {exc}")
    if not args.no_redis:
        await redis_latencies()


async def listing_vs_langgraph(rounds: int, sizes: list[int], threads: int) -> None:
    """``alist`` on SQLite against LangGraph's AsyncSqliteSaver: one thread of each of
    ``sizes`` checkpoints, all in one file (per-checkpoint CPU against the smallest should stay
    flat), and ``alist(None)`` over ``threads`` threads of 5 in another. Each checkpoint holds
    two channels (an int and a short string) and its metadata (source, step); no pending
    writes. The files are written once per library (ours with its defaults, WAL and
    ``synchronous=NORMAL``; LangGraph's with ``synchronous=OFF``, only to fill it faster); the
    listings only read, each on a newly opened saver, and alternate (ours, LangGraph's)."""
    from builders import child_checkpoint, config_for
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSync
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from durable_debug import SqliteSaver

    def fill(put: Callable[..., Any], thread: str, count: int) -> None:
        config, parent = config_for(thread), None
        for i in range(count):
            cp, versions = child_checkpoint(parent, {"n": i, "note": f"step {i}"})
            config = put(config, cp, {"source": "loop", "step": i}, versions)
            parent = cp

    with tempfile.TemporaryDirectory() as tmp:
        files: dict[str, dict[str, Path]] = {}
        for lib in ("durable_debug", "langgraph"):
            files[lib] = {shape: Path(tmp) / f"{lib}-{shape}.db" for shape in ("long", "wide")}
            for shape, path in files[lib].items():
                if lib == "durable_debug":
                    saver: Any = SqliteSaver(path)
                    put = saver.put
                else:
                    conn = sqlite3.connect(path, check_same_thread=False)
                    saver = LangGraphSync(conn)
                    saver.setup()
                    conn.execute("PRAGMA synchronous = OFF")
                    put = saver.put
                if shape == "long":
                    for size in sizes:
                        fill(put, f"thread-of-{size}", size)
                else:
                    for t in range(threads):
                        fill(put, f"thread-{t}", 5)
                if lib == "durable_debug":
                    saver.close()
                else:
                    conn.close()

        async def listing(lib: str, path: Path, config: Any) -> tuple[float, float, int]:
            async with contextlib.AsyncExitStack() as stack:
                if lib == "durable_debug":
                    opened: Any = await stack.enter_async_context(SqliteSaver(path))
                else:
                    opened = await stack.enter_async_context(
                        AsyncSqliteSaver.from_conn_string(str(path))
                    )
                    await opened.setup()
                t0, cpu0 = time.perf_counter(), time.process_time()
                count = 0
                async for _tup in opened.alist(config):
                    count += 1
                return time.perf_counter() - t0, time.process_time() - cpu0, count

        shapes: dict[str, tuple[str, Any, int]] = {
            str(size): ("long", {"configurable": {"thread_id": f"thread-of-{size}"}}, size)
            for size in sizes
        }
        shapes["all"] = ("wide", None, threads * 5)
        seconds: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        for lib in ("durable_debug", "langgraph"):  # warm up: imports, caches
            await listing(lib, files[lib]["long"], shapes[str(sizes[0])][1])
        for _ in range(rounds):
            for name, (shape, config, expected) in shapes.items():
                for lib in ("durable_debug", "langgraph"):
                    elapsed, used, count = await listing(lib, files[lib][shape], config)
                    assert count == expected, (lib, name, count, expected)
                    seconds.setdefault((lib, name), []).append(elapsed)
                    cpu.setdefault((lib, name), []).append(used)
    med = {key: statistics.median(values) for key, values in seconds.items()}
    med_cpu = {key: statistics.median(values) for key, values in cpu.items()}
    # CPU time (the process's, every thread): wall time on a loaded machine drifts too much to
    # compare two sizes.
    base = str(sizes[0])
    for size in sizes:
        name = str(size)
        for label, table in (("wall", med), ("CPU", med_cpu)):
            print(
                row(
                    f"alist(thread) at {size:,}, {label}",
                    table[("durable_debug", name)] * 1000,
                    table[("langgraph", name)] * 1000,
                    "ms",
                    0.5,
                )
            )
        if name != base:
            per = {
                lib: (med_cpu[(lib, name)] / size) / (med_cpu[(lib, base)] / sizes[0])
                for lib in ("durable_debug", "langgraph")
            }
            print(
                f"{'  per-checkpoint CPU, ' + f'{size:,} vs {sizes[0]:,}':<44} "
                f"{per['durable_debug']:>10.2f} ×   {per['langgraph']:>10.2f} ×   (≤ 1.2)"
            )
    for label, table in (("wall", med), ("CPU", med_cpu)):
        print(
            row(
                f"alist(None) over {threads:,} threads × 5, {label}",
                table[("durable_debug", "all")] * 1000,
                table[("langgraph", "all")] * 1000,
                "ms",
                0.4,
            )
        )


async def inspect_reads() -> None:
    """``durable-debug inspect DB --thread T --html`` on a thread of 660 checkpoints (the long
    thread): how many read sessions of checkpoints it opens on the saver (each a page of up to
    ``page_size`` checkpoints with their blobs and writes) and how many checkpoints it decodes
    (``to_tuple``), against the floor of one listing: the pages of one pass and one
    ``to_tuple`` per checkpoint. Reads of no checkpoint (the lease rows, which tell a crashed
    run from a pause) are counted apart, by name."""
    import io
    import math

    from durable_debug import SqliteSaver
    from durable_debug.checkpoint import _sql
    from durable_debug.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "thread.db"
        saver = SqliteSaver(str(path))
        graph = chain("durable_debug", saver)
        for _ in range(RUNS):
            await graph.ainvoke({"n": 0, "log": []}, {"configurable": {"thread_id": "long"}})
        await saver.aclose()
        sessions: list[bool] = []
        others: list[str] = []  # reads of no checkpoint (the lease rows)
        decoded = 0
        real_session, real_to_tuple = SqliteSaver._in_session, _sql.to_tuple

        async def in_session(self: Any, fn: Any, write: bool) -> Any:
            if write or _sql.is_short_read(fn):  # a page of history, one checkpoint, a write
                sessions.append(write)
            else:
                others.append(getattr(fn, "__qualname__", repr(fn)))
            return await real_session(self, fn, write)

        def to_tuple(*args: Any, **kwargs: Any) -> Any:
            nonlocal decoded
            decoded += 1
            return real_to_tuple(*args, **kwargs)

        SqliteSaver._in_session = in_session  # type: ignore[method-assign]
        _sql.to_tuple = to_tuple
        said = io.StringIO()
        try:
            with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                code = await asyncio.to_thread(
                    cli,
                    ["inspect", str(path), "--thread", "long", "--html", str(Path(tmp) / "t.html")],
                )
        finally:
            SqliteSaver._in_session = real_session  # type: ignore[method-assign]
            _sql.to_tuple = real_to_tuple
    assert code == 0, said.getvalue()[-2000:]
    checkpoints = RUNS * (CHAIN + 2)
    pages = math.ceil((checkpoints + 1) / SqliteSaver.page_size)  # the last page is seen empty
    reads = len(sessions)
    print(
        f"{'inspect --thread, ' + f'{checkpoints}' + ' checkpoints: reads':<44} "
        f"{reads:>10} {'':<3} {pages:>10} {'':<3} {reads / pages:>6.2f}  "
        f"= 1 pass ({'met' if reads == pages and not any(sessions) else 'MISSED'}; "
        f"and {len(others)} read of no checkpoint: {', '.join(others)})"
    )
    print(
        f"{'  to_tuple calls':<44} {decoded:>10} {'':<3} {checkpoints:>10} {'':<3} "
        f"{decoded / checkpoints:>6.2f}  = 1 per checkpoint "
        f"({'met' if decoded == checkpoints else 'MISSED'})"
    )


def inspect_listing(rounds: int, threads: int) -> None:
    """``durable-debug inspect DB`` over ``threads`` threads of 5 checkpoints in our layout,
    against the bare SQL selecting each thread's latest row (bench/listing.py, which also
    measures LangGraph's layout), in CPU seconds; and ``import durable_debug.inspect``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import listing

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "own.db"
        with contextlib.redirect_stdout(sys.stderr):
            listing.make_own_file(path, threads)
        floor_fn, command_fn = listing.floor(path), listing.command(path)
        listing.timed(floor_fn), listing.timed(command_fn)  # warm the page cache and imports
        floors, commands = [], []
        for _ in range(rounds):
            floors.append(listing.timed(floor_fn)[0])
            commands.append(listing.timed(command_fn)[0])
    print(
        row(
            f"inspect DB, {threads:,} threads (CPU)",
            statistics.median(commands) * 1000,
            statistics.median(floors) * 1000,
            "ms",
            5.0,
        )
        + "  (floor: the bare latest-row query)"
    )
    print(f"  import durable_debug.inspect: {listing.import_time()}  (target ≤ 0.3 s, no pandas)")


PG_CHAIN = 10  # nodes


async def postgres_vs_langgraph(rounds: int, threads: int, synced_threads: int) -> None:
    """PostgreSQL against LangGraph's AsyncPostgresSaver, each in a schema of its own on one
    local server: a 10-node chain run once on each of ``threads`` threads, then ``aget_state``
    of each thread (p50), and the statements each side sends per checkpoint (counted on the
    wire). Both run in autocommit. The test server runs with ``fsync=off`` and
    ``synchronous_commit=off``, so a commit costs neither side a disk flush; the chain is then
    run again on ``synced_threads`` threads on a server with PostgreSQL's defaults (every commit
    waits for its WAL to reach the disk), where the number of commits per checkpoint counts.
    LangGraph runs with its default durability (saving in the background while the next step
    runs: the target rows) and with ``durability="sync"`` (every step saved before the next
    starts); ours runs with its default, ``"async"`` (its step queue overlaps each step's write
    with the next step). In each round the three savers are open side by side and take
    turns, ``PG_BATCH`` threads at a time, so a load spike on the machine hits all three."""
    from servers import ServerUnavailable, postgres_server, postgres_server_control

    try:
        with postgres_server() as url:
            await _postgres_rounds(url, rounds, threads, with_gets=True, label="", target=0.5)
            await _postgres_statements(url)
        if synced_threads:
            with postgres_server_control() as server:
                _sync_every_commit(server)
                # No target: the chain's target is the first server's, where the rows
                # measure round trips and CPU; with every commit waiting for the disk the
                # ratio follows the WAL flushes per checkpoint (bench/README.md).
                await _postgres_rounds(
                    server.url,
                    rounds,
                    synced_threads,
                    with_gets=False,
                    label=", fsync on",
                    target=None,
                )
    except ServerUnavailable as exc:
        print(f"  PostgreSQL vs LangGraph not measured: {exc}")


def _sync_every_commit(server: Any) -> None:
    """Restart the test server with PostgreSQL's default durability (the tests turn off
    ``fsync``, ``synchronous_commit`` and ``full_page_writes`` for speed)."""
    server.stop()
    server._start = [
        part.replace("-c fsync=off -c synchronous_commit=off -c full_page_writes=off", "")
        for part in server._start
    ]
    server.start()


async def _pg_scoped(url: str, schema: str) -> str:
    """``url`` with a fresh schema first on its search_path."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


async def _pg_savers(stack: contextlib.AsyncExitStack, url: str, suffix: str) -> dict[str, Any]:
    """One open saver per variant (``sync``: LangGraph's, run with ``durability="sync"``),
    each in a fresh schema of its own."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from durable_debug import PostgresSaver

    savers: dict[str, Any] = {}
    for lib in ("durable_debug", "langgraph", "sync"):
        scoped = await _pg_scoped(url, f"{lib}_{suffix}")
        if lib == "durable_debug":
            savers[lib] = await stack.enter_async_context(PostgresSaver(scoped))
        else:
            saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(scoped))
            await saver.setup()
            savers[lib] = saver
    return savers


PG_BATCH = 10
"""Threads each variant runs before the next one takes its turn: on a shared machine whose load
moves from second to second, every variant sees the same moments."""


async def _postgres_rounds(
    url: str, rounds: int, threads: int, *, with_gets: bool, label: str, target: float | None
) -> None:
    times: dict[str, list[float]] = {"durable_debug": [], "langgraph": [], "sync": []}
    gets: dict[str, list[float]] = {"durable_debug": [], "langgraph": [], "sync": []}
    for r in range(rounds):
        async with contextlib.AsyncExitStack() as stack:
            savers = await _pg_savers(stack, url, str(r))
            spent = dict.fromkeys(savers, 0.0)
            for n, start in enumerate(range(0, threads, PG_BATCH)):
                order = list(savers)[n % 3 :] + list(savers)[: n % 3]  # who goes first rotates
                for lib in order:
                    elapsed, get_ms = await _pg_workload(
                        "durable_debug" if lib == "durable_debug" else "langgraph",
                        savers[lib],
                        min(PG_BATCH, threads - start),
                        "sync" if lib == "sync" else None,
                        start=start,
                    )
                    spent[lib] += elapsed
                    gets[lib].extend(get_ms)
            for lib, seconds in spent.items():
                times[lib].append(seconds)
    ours = statistics.median(times["durable_debug"]) * 1000
    print(
        row(
            f"PostgreSQL {PG_CHAIN}-node chain × {threads} threads{label}",
            ours,
            statistics.median(times["langgraph"]) * 1000,
            "ms",
            target,
        )
        + "  (LangGraph's default durability: saves in the background)"
    )
    print(
        row(
            f"PostgreSQL chain{label}, LangGraph durability=sync",
            ours,
            statistics.median(times["sync"]) * 1000,
            "ms",
            None,
        )
        + "  (LangGraph saves every step before the next starts)"
    )
    if with_gets:
        print(
            row(
                "PostgreSQL get_state p50",
                statistics.median(gets["durable_debug"]) * 1000,
                statistics.median(gets["langgraph"]) * 1000,
                "µs",
                0.7,
            )
        )


async def _postgres_statements(url: str, threads: int = 5) -> None:
    """Statements and round trips per checkpoint over the chain, counted on the wire (every
    connection of each saver goes through a counting proxy), after setup and one warm-up run;
    ours includes taking and giving back the thread's lease and reading its latest checkpoint,
    once per run."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from durable_debug import PostgresSaver
    from support.pg_wire import WireCounter

    counted: dict[str, tuple[float, float]] = {}
    for lib in ("durable_debug", "langgraph"):
        with WireCounter(await _pg_scoped(url, f"{lib}_wire")) as wire:
            async with contextlib.AsyncExitStack() as stack:
                if lib == "durable_debug":
                    saver: Any = await stack.enter_async_context(PostgresSaver(wire.url))
                else:
                    saver = await stack.enter_async_context(
                        AsyncPostgresSaver.from_conn_string(wire.url)
                    )
                    await saver.setup()
                graph = chain(lib, saver, PG_CHAIN)
                await graph.ainvoke({"n": 0, "log": []}, {"configurable": {"thread_id": "warm"}})
                wire.reset()
                for i in range(threads):
                    cfg = {"configurable": {"thread_id": f"t{i}"}}
                    await graph.ainvoke({"n": 0, "log": []}, cfg)
                checkpoints = threads * (PG_CHAIN + 2)
                counted[lib] = (wire.statements() / checkpoints, wire.round_trips() / checkpoints)
    ours, theirs = counted["durable_debug"], counted["langgraph"]
    print(
        f"{'PostgreSQL statements per checkpoint':<44} {ours[0]:>10.2f}     {theirs[0]:>10.2f}"
        f"     {ours[0] / theirs[0]:>6.2f}  ≤ 3    {'met' if ours[0] <= 3 else 'MISSED'}"
        f"  (round trips {ours[1]:.2f} vs {theirs[1]:.2f}; lease and reads included)"
    )


async def _pg_workload(
    lib: str, saver: Any, threads: int, durability: str | None = None, *, start: int = 0
) -> tuple[float, list[float]]:
    """Run the chain on threads ``t{start}`` … once each, then ``aget_state`` each: seconds
    of the runs, milliseconds of each read."""
    graph = chain(lib, saver, PG_CHAIN)
    options = {} if durability is None else {"durability": durability}
    t0 = time.perf_counter()
    for i in range(start, start + threads):
        cfg = {"configurable": {"thread_id": f"t{i}"}}
        await graph.ainvoke({"n": 0, "log": []}, cfg, **options)
    elapsed = time.perf_counter() - t0
    get_ms: list[float] = []
    for i in range(start, start + threads):
        t0 = time.perf_counter()
        await graph.aget_state({"configurable": {"thread_id": f"t{i}"}})
        get_ms.append((time.perf_counter() - t0) * 1000)
    return elapsed, get_ms


async def redis_latencies() -> None:
    """Print Redis write latency without persistence, then with AOF fsynced every second."""
    import redis

    from durable_debug.checkpoint.redis import RedisSaver
    from servers import ServerUnavailable, redis_server

    try:
        with redis_server() as url:
            saver = RedisSaver(url)
            admin = redis.Redis.from_url(url)
            admin.config_resetstat()
            writes = reads = 0
            real, real_writes, real_get = saver.aput_step, saver.aput_writes, saver.aget_tuple

            async def counted_get(*args: Any, **kwargs: Any) -> Any:
                nonlocal reads
                reads += 1
                return await real_get(*args, **kwargs)

            async def counted(*args: Any, **kwargs: Any) -> Any:
                nonlocal writes
                writes += 1
                return await real(*args, **kwargs)

            async def counted_writes(*args: Any, **kwargs: Any) -> Any:
                nonlocal writes
                writes += 1
                return await real_writes(*args, **kwargs)

            saver.aput_step, saver.aput_writes = counted, counted_writes  # type: ignore[method-assign]
            saver.aget_tuple = counted_get  # type: ignore[method-assign]
            p50, p95 = await put_latencies(saver, "redis")
            saver.aput_step, saver.aput_writes = real, real_writes  # type: ignore[method-assign]
            saver.aget_tuple = real_get  # type: ignore[method-assign]
            note = "(local server, no persistence)"
            print(f"  Redis       p50 {p50:.2f} ms   p95 {p95:.2f} ms  {note}")
            # The engine reads the thread's latest checkpoint at the start of each run.
            calls = admin.info("commandstats")["cmdstat_evalsha"]["calls"] - reads
            admin.config_resetstat()
            for i in range(30):
                await saver.aget_tuple({"configurable": {"thread_id": f"redis-{i}"}})
            gets = admin.info("commandstats")["cmdstat_evalsha"]["calls"]
            print(
                f"  Redis       script round trips per write (aput_step, aput_writes) "
                f"{calls / writes:.1f}, per "
                f"get_state {gets / 30:.1f}  (target: 1 each; were 2 each)"
            )
            admin.config_set("appendfsync", "everysec")
            admin.config_set("appendonly", "yes")
            while admin.info("persistence")["aof_rewrite_in_progress"]:
                await asyncio.sleep(0.05)
            admin.close()
            p50, p95 = await put_latencies(saver, "redis-aof")
            await saver.aclose()
            print(f"  Redis       p50 {p50:.2f} ms   p95 {p95:.2f} ms  (AOF, appendfsync everysec)")
    except ServerUnavailable as exc:
        print(f"  Redis       not measured: {exc}")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
