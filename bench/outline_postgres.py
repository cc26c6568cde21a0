"""The tree readers on a 12,000-checkpoint PostgreSQL thread: the outline read against the full
read it replaces, and against the bare SQL of the outline.

Starts a throwaway PostgreSQL server (``tests/servers.py``; or ``--url`` an existing database,
whose tables it fills), builds a chain of ``--checkpoints`` checkpoints (default 12,000, written
with ``aupdate_state``: each checkpoint a step with a two-key state) with ``--forks`` forks
(default 50) along it, then, alternating ``--rounds`` times (default 5), times:

- the floor: psycopg running the outline's three SELECTs (rows with metadata and debug
  records, writes, trigger blobs) in one ``REPEATABLE READ`` transaction, every row fetched and
  each checkpoint and metadata column decoded with ``json.loads``; once as is, once with the
  garbage collector off (the readers pause it while they build their rows);
- after: ``checkpoint_dag``, ``dag_data`` and the widget's open (``DagReader``, the packed
  ``_dag``, the comm message) on the ``PostgresSaver``, which reads the outline;
- before: the same three on a ``PostgresSaver`` subclass that offers no outline read (what
  every saver but SQLite did: the full read, every state decoded);
- the saver's outline read alone (``aread_outline``) of the whole thread, and of what came
  since its 100th newest checkpoint (the read a refresh after a run makes).

It prints wall and CPU medians and each ratio to the floor and after/before. A measurement,
not a test: it always exits 0.

    python bench/outline_postgres.py                      # 12,000 checkpoints, 5 rounds
    python bench/outline_postgres.py --checkpoints 2000 --rounds 3
    python bench/outline_postgres.py --saver redis        # RedisSaver, outline against full read
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from typing_extensions import TypedDict  # noqa: E402
from widget_lazy import comm_message, machine  # noqa: E402

from durable_debug import END, START, PostgresSaver, StateGraph  # noqa: E402
from durable_debug.checkpoint.names import trigger_channel_sql  # noqa: E402
from durable_debug.checkpoint.outline import PG_OUTLINE  # noqa: E402
from durable_debug.inspect import DagReader, acheckpoint_dag, adag_data  # noqa: E402
from durable_debug.inspect.dag import pack_wire  # noqa: E402


class Small(TypedDict):
    n: int
    note: str


async def step(state: Small) -> dict[str, Any]:
    return {"n": state["n"] + 1}


class FullReadSaver(PostgresSaver):
    """The same saver without the outline read: the readers fall back to the full read."""

    aread_outline = None  # type: ignore[assignment]
    alatest_mark = None  # type: ignore[assignment]


def redis_savers(url: str) -> tuple[Any, Any]:
    """A ``RedisSaver`` and the same without its outline read."""
    from durable_debug.checkpoint.redis import RedisSaver

    class FullReadRedis(RedisSaver):
        aread_outline = None  # type: ignore[assignment]
        alatest_mark = None  # type: ignore[assignment]

    return RedisSaver(url), FullReadRedis(url)


def graph(saver: Any) -> Any:
    builder = StateGraph(Small).add_node("step", step)
    return builder.add_edge(START, "step").add_edge("step", END).compile(checkpointer=saver)


async def build(saver: Any, checkpoints: int, forks: int) -> Any:
    g = graph(saver)
    cfg: Any = {"configurable": {"thread_id": "big-tree"}}
    await g.ainvoke({"n": 0, "note": ""}, cfg)
    configs = [(await g.aget_state(cfg)).config]
    for i in range(checkpoints - 3 - forks):
        configs.append(await g.aupdate_state(configs[-1], {"n": i}, as_node="step"))
    for k in range(forks):
        at = configs[(k + 1) * len(configs) // (forks + 1)]
        await g.aupdate_state(at, {"note": f"fork {k}"}, as_node="step")
    return cfg


async def floor(conn: Any, thread_id: str, collect: bool = True) -> None:
    """The outline's three SELECTs with plain psycopg on an open connection, every JSON
    column ``json.loads``-ed; ``collect=False``: with the garbage collector off meanwhile (as
    the readers pause it while they build)."""
    if not collect:
        gc.disable()
        try:
            return await floor(conn, thread_id)
        finally:
            gc.enable()
    thread = (thread_id, "")
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    rows = conn.execute(PG_OUTLINE.rows.format(since="", debug=PG_OUTLINE.debug), thread).fetchall()
    conn.execute(PG_OUTLINE.writes.format(since=""), thread).fetchall()
    conn.execute(
        PG_OUTLINE.blobs.format(value="blob", where=trigger_channel_sql("channel")), thread
    ).fetchall()
    conn.execute("COMMIT")
    [(c, p, json.loads(r), json.loads(m)) for c, p, r, m, _ in rows]


async def open_widget(g: Any, cfg: Any) -> bytes:
    """The widget's open, kernel side: read, the packed ``_dag``, the comm message."""
    fresh = DagReader(g, cfg)
    return comm_message({"_dag": await fresh.arefresh_then(lambda: pack_wire(fresh.wire()))})


async def measure(url: str, checkpoints: int, forks: int, rounds: int, kind: str) -> None:
    outline, full = (
        (PostgresSaver(url), FullReadSaver(url)) if kind == "postgres" else redis_savers(url)
    )
    started = time.perf_counter()
    cfg = await build(outline, checkpoints, forks)
    print(
        f"built {checkpoints} checkpoints ({forks} forks) in {time.perf_counter() - started:.0f} s"
    )
    after, before = graph(outline), graph(full)
    dag = await adag_data(after, cfg)
    assert dag == await adag_data(before, cfg), "the two reads must give the same tree"
    assert len(dag["nodes"]) == checkpoints, len(dag["nodes"])
    reader = DagReader(after, cfg)
    await reader.arefresh()
    assert reader.outlined

    cases: dict[str, Callable[[], Awaitable[Any]]] = {}
    conn: Any = None
    if kind == "postgres":
        import psycopg

        conn = psycopg.connect(url, autocommit=True)
        cases["floor"] = lambda: floor(conn, "big-tree")
        cases["floor, collector off"] = lambda: floor(conn, "big-tree", collect=False)
    # The read a widget or a CLI refresh does after a run: what came since a checkpoint
    # (here the 100th newest), against the whole outline it follows.
    rows = await outline.aread_outline("big-tree", "")
    newest = sorted(row.checkpoint_id for row in rows)
    cases["outline, whole thread"] = lambda: outline.aread_outline("big-tree", "")
    cases["outline since, 100 newest"] = lambda: outline.aread_outline(
        "big-tree", "", since=newest[-101]
    )
    for name, g in (("after", after), ("before", before)):
        cases[f"checkpoint_dag {name}"] = lambda g=g: acheckpoint_dag(g, cfg)
        cases[f"dag_data {name}"] = lambda g=g: adag_data(g, cfg)
        cases[f"widget open {name}"] = lambda g=g: open_widget(g, cfg)
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):  # alternating: every case once per round
        for name, fn in cases.items():
            wall, cpu = time.perf_counter(), time.process_time()
            await fn()
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)
    wall = {name: statistics.median(times) for name, times in walls.items()}
    cpu = {name: statistics.median(times) for name, times in cpus.items()}
    print(f"  {'case':<26} {'wall ms':>9} {'CPU ms':>9} {'x floor':>8} {'after/before':>13}")
    for name in cases:
        ratio = wall[name] / wall["floor"] if "floor" in wall else float("nan")
        change = ""
        if name.endswith("after"):
            change = f"{wall[name] / wall[name.replace('after', 'before')]:.3f}"
        print(
            f"  {name:<26} {wall[name] * 1000:9.0f} {cpu[name] * 1000:9.0f} {ratio:8.1f} "
            f"{change:>13}"
        )
    if conn is not None:
        conn.close()
    await outline.aclose()
    await full.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=12_000)
    parser.add_argument("--forks", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--url", help="an existing database or Redis server (it is written to)")
    parser.add_argument(
        "--saver",
        choices=("postgres", "redis"),
        default="postgres",
        help="redis: the same readers on RedisSaver (no SQL floor)",
    )
    args = parser.parse_args()
    print(machine())
    run = (args.checkpoints, args.forks, args.rounds, args.saver)
    if args.url:
        await measure(args.url, *run)
        return
    from servers import ServerUnavailable, postgres_server, redis_server

    try:
        with postgres_server() if args.saver == "postgres" else redis_server() as url:
            await measure(url, *run)
    except ServerUnavailable as exc:
        print(f"{args.saver} not measured: {exc}")


if __name__ == "__main__":
    asyncio.run(main())
