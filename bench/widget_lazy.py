"""The widget's reads on big threads and big states, kernel side (the big-thread targets).

Builds, in durable_debug's SQLite layout (a temporary file):

- a *big-state* thread: its state holds a 2 MB string and a 10,000-item list, and a loop
  node writes ``--steps`` checkpoints (default 500) changing only a counter;
- a *big-tree* thread: a chain of ``--checkpoints`` checkpoints (default 50,000, written with
  ``aupdate_state``) with ``--forks`` forks (default 50) along it;

then prints, each as the median of ``--rounds`` (default 5), with the machine:

- open: ``DagReader.aread()`` from nothing (what the widget sends as ``_dag``) and the peak
  Python memory it allocated (tracemalloc), and the same for the full read (``adag_data``) it
  replaces, once;
- a refresh after one more checkpoint (the incremental read during a run);
- click to detail: ``acheckpoint_detail`` + ``clip_detail`` (what a click costs the kernel)
  and the bytes of the ``_detail`` update;
- ``export_html`` of the first ``--export`` checkpoints' thread (default 5,000): time and size.

    python bench/widget_lazy.py                                # the issue's sizes
    python bench/widget_lazy.py --checkpoints 5000 --forks 10  # quicker
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from typing_extensions import TypedDict  # noqa: E402

from durable_debug import END, START, SqliteSaver, StateGraph  # noqa: E402
from durable_debug.inspect import (  # noqa: E402
    DagReader,
    acheckpoint_dag,
    adag_data,
    export_html,
)
from durable_debug.inspect.dag import pack_wire  # noqa: E402
from durable_debug.inspect.detail import acheckpoint_detail, clip_detail  # noqa: E402


class Big(TypedDict):
    text: str
    items: list[str]
    n: int


class Small(TypedDict):
    n: int
    note: str


async def tick(state: Big) -> dict[str, Any]:
    return {"n": state["n"] + 1}


def loop_until(limit: int) -> Callable[[Big], str]:
    def route(state: Big) -> str:
        return "tick" if state["n"] < limit else END

    return route


async def step(state: Small) -> dict[str, Any]:
    return {"n": state["n"] + 1}


def machine() -> str:
    """One line naming the machine the figures come from."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return f"{cpu}, {os.cpu_count()} cores{load}; Python {platform.python_version()}"


async def timed(fn: Callable[[], Awaitable[Any]], rounds: int) -> tuple[float, Any]:
    """Median seconds of ``rounds`` calls, and the last result."""
    times, result = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        result = await fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


async def peak_mb(fn: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Seconds and peak MB Python allocated during one call."""
    tracemalloc.start()
    started = time.perf_counter()
    await fn()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return seconds, peak


def row(case: str, figure: str, target: str) -> None:
    print(f"  {case:<46} {figure:<34} target {target}")


async def big_state(path: Path, steps: int, rounds: int) -> None:
    saver = SqliteSaver(str(path))
    builder = StateGraph(Big).add_node("tick", tick).add_edge(START, "tick")
    g = builder.add_conditional_edges("tick", loop_until(steps), ["tick", END]).compile(
        checkpointer=saver
    )
    cfg: Any = {"configurable": {"thread_id": "big-state"}, "recursion_limit": steps + 10}
    state = {"text": "x" * 2_000_000, "items": [f"item {i}" for i in range(10_000)], "n": 0}
    await g.ainvoke(state, cfg)
    cfg = {"configurable": {"thread_id": "big-state"}}
    count = len((await DagReader(g, cfg).aread())["nodes"])
    print(f"big state: {count} checkpoints, each with a 2 MB string and a 10,000-item list")

    async def open_thread() -> str:
        fresh = DagReader(g, cfg)
        await fresh.arefresh()
        return json.dumps(fresh.wire())

    seconds, _ = await timed(open_thread, rounds)
    _, peak = await peak_mb(open_thread)
    row(
        "open (DagReader, rows and metadata; the _dag)",
        f"{seconds * 1000:.0f} ms, peak +{peak:.0f} MB",
        "< 1 s, < +150 MB",
    )
    full_s, full_peak = await peak_mb(lambda: adag_data(g, cfg))
    row(
        "  the full read it replaces (adag_data), once",
        f"{full_s * 1000:.0f} ms, peak +{full_peak:.0f} MB",
        "(was 21 s, +2.6 GB)",
    )
    ids = [n["id"] for n in (await DagReader(g, cfg).aread())["nodes"]]
    picks = ids[:: max(1, len(ids) // 20)]

    async def click() -> Any:
        out = None
        for checkpoint_id in picks:
            out = clip_detail(await acheckpoint_detail(g, cfg, checkpoint_id))
        return out

    seconds, detail = await timed(click, rounds)
    size = len(json.dumps(detail))
    row(
        "click to detail (kernel: read, decode, cut)",
        f"{seconds / len(picks) * 1000:.0f} ms, {size / 1000:.1f} KB sent",
        "< 150 ms; < 64 KB",
    )


async def big_tree(
    path: Path, checkpoints: int, forks: int, rounds: int, export: int, readers_only: bool
) -> None:
    reuse = path.exists()
    saver = SqliteSaver(str(path))
    g = (
        StateGraph(Small).add_node("step", step).add_edge(START, "step").add_edge("step", END)
    ).compile(checkpointer=saver)
    cfg: Any = {"configurable": {"thread_id": "big-tree"}}
    started = time.perf_counter()
    if not reuse:
        await g.ainvoke({"n": 0, "note": ""}, cfg)
        configs = [(await g.aget_state(cfg)).config]
        for i in range(checkpoints - 3 - forks):
            configs.append(await g.aupdate_state(configs[-1], {"n": i}, as_node="step"))
        for k in range(forks):
            at = configs[(k + 1) * len(configs) // (forks + 1)]
            await g.aupdate_state(at, {"note": f"fork {k}"}, as_node="step")
    built = time.perf_counter() - started
    await tree_readers(g, cfg, path, rounds)
    if readers_only:
        return
    configs = [(await g.aget_state(cfg)).config]
    reader = DagReader(g, cfg)
    dag = await reader.aread()
    print(
        f"big tree: {len(dag['nodes'])} checkpoints, {dag['lanes']} lanes (built in {built:.0f} s)"
    )

    async def open_thread() -> bytes:
        """What the kernel does before the first marks: read, the packed _dag, and the comm
        message ipywidgets would send (its walk for buffers, jupyter_client's JSON)."""
        fresh = DagReader(g, cfg)
        packed = await fresh.arefresh_then(lambda: pack_wire(fresh.wire()))
        return comm_message({"_dag": packed})

    seconds, packed = await timed(open_thread, rounds)
    cpu = time.process_time()
    await open_thread()
    cpu = time.process_time() - cpu
    floor = bare_rows_s(path, "big-tree", rounds)
    _, peak = await peak_mb(open_thread)
    decode = js_decode_ms(packed, rounds, path.with_suffix(".json"))
    row(
        "open (kernel): read, packed _dag, comm msg",
        f"{seconds * 1000:.0f} ms ({cpu * 1000:.0f} ms CPU), peak +{peak:.0f} MB",
        "",
    )
    row(
        "  the bare SQL floor (rows, plain sqlite3)",
        f"{floor * 1000:.0f} ms: open is {seconds / floor:.1f}x the floor",
        "",
    )
    row(
        "  + front end (node): unpack, parse, decode",
        f"{decode:.0f} ms; {len(packed) / 1e6:.1f} MB (plain: {len(json.dumps(dag)) / 1e6:.1f})",
        f"sum {seconds * 1000 + decode:.0f} ms < 1.5 s to first marks",
    )

    sent = [0]

    async def one_more() -> Any:
        """A refresh during a run, as the widget does it: read, then only the tail's JSON."""
        configs.append(await g.aupdate_state(configs[-1], {"n": -1}, as_node="step"))
        started = time.perf_counter()
        await reader.arefresh()
        sent[0] = len(json.dumps(reader.wire(reader.low)))
        return time.perf_counter() - started

    await reader.arefresh()
    times = [await one_more() for _ in range(rounds)]
    row(
        "refresh after one more checkpoint (+ its tail)",
        f"{statistics.median(times) * 1000:.1f} ms (read {reader.last_read}, "
        f"sent {sent[0] / 1000:.1f} KB)",
        "(was the full read)",
    )
    picks = [n["id"] for n in dag["nodes"][:: max(1, len(dag["nodes"]) // 20)]]

    async def click() -> Any:
        for checkpoint_id in picks:
            clip_detail(await acheckpoint_detail(g, cfg, checkpoint_id))

    seconds, _ = await timed(click, rounds)
    row("click to detail (kernel)", f"{seconds / len(picks) * 1000:.1f} ms", "< 100 ms")

    small = StateGraph(Small).add_node("step", step).add_edge(START, "step").add_edge("step", END)
    h = small.compile(checkpointer=saver)
    ecfg: Any = {"configurable": {"thread_id": "export"}}
    await h.ainvoke({"n": 0, "note": ""}, ecfg)
    at = (await h.aget_state(ecfg)).config
    for i in range(export - 3):
        at = await h.aupdate_state(at, {"n": i}, as_node="step")
    out = path.with_suffix(".html")
    seconds, _ = await timed(lambda: asyncio.to_thread(export_html, h, ecfg, out), 1)
    row(
        f"export_html, {export} checkpoints",
        f"{seconds:.1f} s, {out.stat().st_size / 1e6:.1f} MB",
        "< 5 s, < 4 MB",
    )


async def tree_readers(g: Any, cfg: Any, path: Path, rounds: int) -> None:
    """Every reader of a thread's tree against the bare SQL of the outline (ids, parents,
    metadata and ``json.loads``), in the same run: medians of wall and of CPU time."""
    floor, floor_cpu = bare_outline_s(path, "big-tree", rounds)
    row(
        "  bare SQL: ids, parents, metadata + json.loads",
        f"{floor * 1000:.0f} ms ({floor_cpu * 1000:.0f} ms CPU)",
        "",
    )
    readers: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("DagReader open: read, packed _dag, comm msg", lambda: _open_packed(g, cfg)),
        ("checkpoint_dag", lambda: acheckpoint_dag(g, cfg)),
        ("dag_data", lambda: adag_data(g, cfg)),
    ]
    for name, fn in readers:
        walls, cpus = [], []
        for _ in range(rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            await fn()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        seconds, cpu = statistics.median(walls), statistics.median(cpus)
        row(
            f"  {name}",
            f"{seconds * 1000:.0f} ms ({cpu * 1000:.0f} ms CPU): {seconds / floor:.1f}x "
            f"({cpu / floor_cpu:.1f}x CPU)",
            "<= 5x",
        )
    packed = await _open_packed(g, cfg)
    reader = DagReader(g, cfg)
    await reader.arefresh()
    as_json = json.dumps(reader.wire(), separators=(",", ":"), ensure_ascii=False).encode()
    row(
        "  the packed _dag sent",
        f"{len(packed) / 1e6:.2f} MB (as JSON: {len(as_json) / 1e6:.2f} MB)",
        "<= 2 MB at 50,000",
    )
    binary = js_decode_ms(packed, max(rounds, 7), path.with_suffix(".bin"))
    text = js_decode_ms(as_json, max(rounds, 7), path.with_suffix(".json"))
    row("  + front end (node): unpack, decode", f"{binary:.0f} ms (as JSON: {text:.0f} ms)", "")


async def _open_packed(g: Any, cfg: Any) -> bytes:
    """The widget's open, kernel side: read, the packed ``_dag``, the comm message."""
    fresh = DagReader(g, cfg)
    return comm_message({"_dag": await fresh.arefresh_then(lambda: pack_wire(fresh.wire()))})


def bare_outline_s(path: Path, thread_id: str, rounds: int) -> tuple[float, float]:
    """Median seconds (wall, CPU) plain ``sqlite3`` takes to fetch a thread's ids, parents and
    metadata, each metadata decoded with ``json.loads``: the floor of an outline read."""
    import sqlite3
    from contextlib import closing

    times, cpus = [], []
    with closing(sqlite3.connect(path)) as db:
        for _ in range(rounds):
            started, cpu = time.perf_counter(), time.process_time()
            rows = db.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
                (thread_id,),
            ).fetchall()
            [(c, p, json.loads(m)) for c, p, m in rows]
            times.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
    return statistics.median(times), statistics.median(cpus)


def bare_rows_s(path: Path, thread_id: str, rounds: int) -> float:
    """Median seconds plain ``sqlite3`` takes to fetch a thread's checkpoint rows (ids,
    parents, the checkpoint and metadata JSON): the floor of any read of the tree."""
    import sqlite3
    from contextlib import closing

    times = []
    with closing(sqlite3.connect(path)) as db:
        for _ in range(rounds):
            started = time.perf_counter()
            db.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM "
                "checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
                (thread_id,),
            ).fetchall()
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def comm_message(state: dict[str, Any]) -> bytes:
    """What the kernel does to send a widget state update: ipywidgets' walk for binary
    buffers, then jupyter_client's JSON of the message; returns the (largest) buffer."""
    from ipywidgets.widgets.widget import _remove_buffers
    from jupyter_client.session import json_packer

    plain, _, buffers = _remove_buffers(state)
    json_packer({"data": {"method": "update", "state": plain}})
    return bytes(max(buffers, key=len)) if buffers else b""


def js_decode_ms(packed: bytes, rounds: int, scratch: Path) -> float:
    """Median ms node takes to unpack a packed ``_dag`` (UTF-8 JSON bytes), parse and decode
    it (js/src/dag-wire.js); NaN without node."""
    if shutil.which("node") is None:
        return float("nan")
    scratch.write_bytes(packed)
    module = (REPO / "js" / "src" / "dag-wire.js").as_uri()
    script = (
        f"import {{ decodeDag, DAG_WIRE_FORMAT }} from {json.dumps(module)};"
        "import { readFileSync } from 'node:fs';"
        "const bytes = new Uint8Array(readFileSync(process.argv[1])); const times = [];"
        f"for (let i = 0; i < {rounds}; i++) {{ const t = performance.now();"
        " decodeDag({ format: DAG_WIRE_FORMAT, packed: new DataView(bytes.buffer) });"
        " times.push(performance.now() - t); }"
        "times.sort((a, b) => a - b); process.stdout.write(String(times[times.length >> 1]));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(scratch)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


async def main() -> None:
    """Build both threads and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--checkpoints", type=int, default=50_000)
    parser.add_argument("--forks", type=int, default=50)
    parser.add_argument("--export", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--readers",
        action="store_true",
        help="only the big tree's readers against the bare SQL (no big state, no export)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="a folder to build the threads in and keep; a tree already there is reused",
    )
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        if not args.readers:
            await big_state(folder / "state.db", args.steps, args.rounds)
        tree = folder / f"tree-{args.checkpoints}-{args.forks}.db"
        await big_tree(tree, args.checkpoints, args.forks, args.rounds, args.export, args.readers)


if __name__ == "__main__":
    asyncio.run(main())
