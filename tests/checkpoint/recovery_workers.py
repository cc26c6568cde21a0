"""Processes for test_recovery.py: a seeder whose runs die mid-step, recovering workers, and
"machines" that keep two workers running.

The job graph is ``step1 → step2 → step3``. Each step makes its effect with ``aonce``: the
effect logs ``effect <thread> <step> <pid> <receipt>`` and returns a fresh receipt, which
``once`` saves; the step then logs ``saved <thread> <step> <pid> <receipt>`` (the receipt
``once`` returned: the recorded one on a re-run), works a moment and returns its step name and
receipt. Run as a script:

    python recovery_workers.py seed <saver-url> <log> <threads>    # thread i dies in step i%3+1
    python recovery_workers.py work <saver-url> <log> <stop-file>  # loops recover() until stop
    python recovery_workers.py machine <saver-url> <log> <stop-file> <name> <workers>

``machine`` is a supervisor, started by the test in a session (process group) of its own: it
starts ``workers`` workers in its group, logs ``worker <name> <pid>`` for each, starts a new
one whenever one dies (logging ``exit <name> <pid> <returncode>``), and at the stop file
waits for its workers to end. SIGKILL to its group is a lost machine.
"""

from __future__ import annotations

import asyncio
import operator
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Annotated, Any, TypedDict

from durable_debug import END, START, StateGraph, aonce, arecover
from durable_debug.checkpoint.url import saver_from_url

STEPS = ("step1", "step2", "step3")
WORK_SECONDS = (0.01, 0.05)
"""How long each step works after its effect (a random span in this range)."""


class Job(TypedDict):
    done: Annotated[list[str], operator.add]
    receipts: Annotated[list[str], operator.add]


def append(log: Path, line: str) -> None:
    """One short append: atomic between processes."""
    with open(log, "a") as f:
        f.write(line + "\n")


def job_graph(log: Path, *, hang_in: dict[str, str] | None = None) -> StateGraph:
    """step1 → step2 → step3, each an effect made once, then some work. ``hang_in`` maps a
    thread to the step in which it hangs (logging ``hanging <thread> <step>``) until killed."""

    def make(name: str) -> Any:
        def effect(thread: str) -> str:
            receipt = uuid.uuid4().hex[:12]
            append(log, f"effect {thread} {name} {os.getpid()} {receipt}")
            return receipt

        async def step(state: Job, config: dict[str, Any]) -> dict[str, Any]:
            thread = config["configurable"]["thread_id"]
            receipt = await aonce(effect, thread)
            append(log, f"saved {thread} {name} {os.getpid()} {receipt}")
            if hang_in is not None and hang_in.get(thread) == name:
                append(log, f"hanging {thread} {name}")
                await asyncio.sleep(3600)
            await asyncio.sleep(random.uniform(*WORK_SECONDS))
            return {"done": [name], "receipts": [receipt]}

        return step

    builder = StateGraph(Job)
    previous = START
    for name in STEPS:
        builder.add_node(name, make(name))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder


def cli_graph() -> StateGraph:
    """The job graph for ``durable-debug recover --graph recovery_workers:cli_graph``; its log
    is the file named by RECOVERY_LOG."""
    return job_graph(Path(os.environ["RECOVERY_LOG"]))


def thread_name(i: int) -> str:
    """The id of the seeder's i-th thread."""
    return f"job-{i:03d}"


async def seed(url: str, log: Path, threads: int) -> None:
    saver = saver_from_url(url)
    hang_in = {thread_name(i): STEPS[i % len(STEPS)] for i in range(threads)}
    graph = job_graph(log, hang_in=hang_in).compile(checkpointer=saver)
    runs = [
        graph.ainvoke({"done": [], "receipts": []}, {"configurable": {"thread_id": t}})
        for t in hang_in
    ]
    await asyncio.gather(*runs)  # never returns: killed by the driver


async def work(url: str, log: Path, stop: Path) -> None:
    saver = saver_from_url(url)
    graph = job_graph(log).compile(checkpointer=saver)
    while not stop.exists():
        if not await arecover(graph):
            await asyncio.sleep(0.05)
    await saver.aclose()


def machine(url: str, log: Path, stop: Path, name: str, count: int) -> None:
    """Keep ``count`` workers running until the stop file exists, then wait for them."""
    here = Path(__file__).resolve()
    started = 0

    def start() -> subprocess.Popen[bytes]:
        nonlocal started
        started += 1
        with open(log.parent / f"{name}-{started}.err", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, str(here), "work", url, str(log), str(stop)], stderr=err
            )
        append(log, f"worker {name} {proc.pid} {name}-{started}.err")
        return proc

    workers = [start() for _ in range(count)]
    while not stop.exists():
        for i, proc in enumerate(workers):
            if proc.poll() is not None:
                append(log, f"exit {name} {proc.pid} {proc.returncode}")
                workers[i] = start()
        time.sleep(0.02)
    for proc in workers:
        append(log, f"exit {name} {proc.pid} {proc.wait()}")


if __name__ == "__main__":
    command, url, log_name, extra = sys.argv[1:5]
    if command == "seed":
        asyncio.run(seed(url, Path(log_name), int(extra)))
    elif command == "machine":
        machine(url, Path(log_name), Path(extra), sys.argv[5], int(sys.argv[6]))
    else:
        asyncio.run(work(url, Path(log_name), Path(extra)))
