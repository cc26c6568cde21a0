"""Processes for test_recovery.py: a seeder whose runs die mid-step, and recovering workers.

The job graph is ``step1 → step2 → step3``; each step makes its effect with ``aonce`` (logging
``effect <thread> <step>``), then logs ``working <pid> <thread> <step>`` and works a moment
(the driver kills workers in that moment). Run as a script:

    python recovery_workers.py seed <saver-url> <log> <threads>   # hangs in step1 of each
    python recovery_workers.py work <saver-url> <log> <stop-file> # loops recover() until stop
"""

from __future__ import annotations

import asyncio
import operator
import os
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

from durable_debug import END, START, StateGraph, aonce, arecover
from durable_debug.checkpoint.url import saver_from_url

STEPS = ("step1", "step2", "step3")
WORK_SECONDS = 0.3
"""How long each step works after its effect: the window in which the driver kills."""


class Job(TypedDict):
    done: Annotated[list[str], operator.add]


def append(log: Path, line: str) -> None:
    with open(log, "a") as f:
        f.write(line + "\n")


def job_graph(log: Path, *, hang: bool = False) -> StateGraph:
    """step1 → step2 → step3, each an effect made once, then some work."""

    def make(name: str) -> Any:
        async def step(state: Job, config: dict[str, Any]) -> dict[str, Any]:
            thread = config["configurable"]["thread_id"]
            await aonce(append, log, f"effect {thread} {name}")
            append(log, f"working {os.getpid()} {thread} {name}")
            await asyncio.sleep(3600 if hang else WORK_SECONDS)
            return {"done": [name]}

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


async def seed(url: str, log: Path, threads: int) -> None:
    saver = saver_from_url(url)
    graph = job_graph(log, hang=True).compile(checkpointer=saver)
    runs = [
        graph.ainvoke({"done": []}, {"configurable": {"thread_id": f"job-{i:03d}"}})
        for i in range(threads)
    ]
    await asyncio.gather(*runs)  # never returns: killed by the driver


async def work(url: str, log: Path, stop: Path) -> None:
    saver = saver_from_url(url)
    graph = job_graph(log).compile(checkpointer=saver)
    while not stop.exists():
        if not await arecover(graph):
            await asyncio.sleep(0.05)
    await saver.aclose()


if __name__ == "__main__":
    command, url, log_name, extra = sys.argv[1:5]
    if command == "seed":
        asyncio.run(seed(url, Path(log_name), int(extra)))
    else:
        asyncio.run(work(url, Path(log_name), Path(extra)))
