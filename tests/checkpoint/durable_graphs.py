"""Graphs that tests run in child processes, to resume them from another process.

Each node appends a line ``run <node>`` to a *log* file as its first act, so a test can count how
often every node ran, across processes, kills included. Run as a script:

    python durable_graphs.py approval start  <saver-url> <thread> <log>
    python durable_graphs.py approval resume <saver-url> <thread> <log> <decision>
    python durable_graphs.py fanout   start  <saver-url> <thread> <log> [node-to-block ...]
    python durable_graphs.py fanout   resume <saver-url> <thread> <log>
    python durable_graphs.py nested   start  <saver-url> <thread> <log> [node-to-block ...]
    python durable_graphs.py nested   resume <saver-url> <thread> <log>

(``nested-called`` runs the subgraph from inside a node instead of as the node;
``chain`` is c0 → c1 → … → c5, with the same arguments as ``fanout``.)

It prints one JSON object: the run's result, or ``{"error": <exception class name>}``.
A node named in ``node-to-block`` logs its line, then waits forever (to be killed).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import operator
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

from durable_debug import END, START, Command, EmptyInputError, Send, StateGraph, interrupt
from durable_debug.checkpoint.url import saver_from_url

WORKERS = 4
"""Parallel tasks of the fan-out graph's second step."""

LEASE_ENV = {"DURABLE_DEBUG_LEASE_SECONDS": "1"}
"""Environment of child processes: thread leases of a killed child expire after a second."""

RESUME_WAIT = 60.0
"""Seconds a child waits for a thread another (killed) child still holds."""


def log_run(log: Path, node: str) -> None:
    """Record that ``node`` started (one short append: atomic between processes)."""
    with open(log, "a") as f:
        f.write(f"run {node}\n")


def runs(log: Path) -> dict[str, int]:
    """How many times each node started, according to ``log``."""
    counts: dict[str, int] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            node = line.removeprefix("run ")
            counts[node] = counts.get(node, 0) + 1
    return counts


class Approval(TypedDict):
    plan: str
    approved: str
    outcome: str


def approval_graph(log: Path) -> Any:
    """prepare → gate (interrupts for a decision) → finish."""

    async def prepare(state: Approval) -> dict[str, Any]:
        log_run(log, "prepare")
        return {"plan": state["plan"] + " v2"}

    async def gate(state: Approval) -> dict[str, Any]:
        log_run(log, "gate")
        decision = interrupt({"question": "approve this plan?", "plan": state["plan"]})
        return {"approved": decision}

    async def finish(state: Approval) -> dict[str, Any]:
        log_run(log, "finish")
        return {"outcome": f"{state['plan']}: {state['approved']}"}

    builder = StateGraph(Approval)
    builder.add_node("prepare", prepare)
    builder.add_node("gate", gate)
    builder.add_node("finish", finish)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "gate")
    builder.add_edge("gate", "finish")
    builder.add_edge("finish", END)
    return builder


class Fanout(TypedDict):
    job: str
    item: int
    results: Annotated[list, operator.add]
    summary: str


def fanout_graph(log: Path, block: set[str]) -> Any:
    """prepare → worker ×4 in parallel (Send) → join."""

    async def wait_if_blocked(node: str) -> None:
        if node in block:
            await asyncio.sleep(3600)

    async def prepare(state: Fanout) -> dict[str, Any]:
        log_run(log, "prepare")
        await wait_if_blocked("prepare")
        return {"job": state["job"] + "!"}

    def fan_out(state: Fanout) -> list[Send]:
        return [Send("worker", {"job": state["job"], "item": i}) for i in range(WORKERS)]

    async def worker(state: Fanout) -> dict[str, Any]:
        name = f"worker{state['item']}"
        log_run(log, name)
        await wait_if_blocked(name)
        return {"results": [f"{state['job']}#{state['item']}"]}

    async def join(state: Fanout) -> dict[str, Any]:
        log_run(log, "join")
        await wait_if_blocked("join")
        return {"summary": ",".join(state["results"])}

    builder = StateGraph(Fanout)
    builder.add_node("prepare", prepare)
    builder.add_node("worker", worker)
    builder.add_node("join", join)
    builder.add_edge(START, "prepare")
    builder.add_conditional_edges("prepare", fan_out)
    builder.add_edge("worker", "join")
    builder.add_edge("join", END)
    return builder


class Nested(TypedDict):
    text: str
    steps: Annotated[list[str], operator.add]


def nested_graph(log: Path, block: set[str], *, called: bool) -> Any:
    """before → sub (s1 → s2 → s3: a compiled graph added as the node, or invoked from the
    node ``sub`` when ``called``) → after."""

    def step(name: str) -> Any:
        async def node(state: Nested) -> dict[str, Any]:
            log_run(log, name)
            if name in block:
                await asyncio.sleep(3600)
            return {"text": state["text"] + f"-{name}", "steps": [name]}

        return node

    inner = StateGraph(Nested)
    for name in ("s1", "s2", "s3"):
        inner.add_node(name, step(name))
    inner.add_edge(START, "s1").add_edge("s1", "s2").add_edge("s2", "s3")
    sub = inner.compile()

    async def call_sub(state: Nested) -> dict[str, Any]:
        out = await sub.ainvoke({"text": state["text"], "steps": []})
        return {"text": out["text"], "steps": out["steps"]}

    builder = StateGraph(Nested)
    builder.add_node("before", step("before"))
    builder.add_node("sub", call_sub if called else sub)
    builder.add_node("after", step("after"))
    builder.add_edge(START, "before").add_edge("before", "sub").add_edge("sub", "after")
    return builder


class Chain(TypedDict):
    steps: Annotated[list[str], operator.add]


CHAIN = [f"c{i}" for i in range(6)]
"""The nodes of the chain graph, in order."""


def chain_graph(log: Path, block: set[str]) -> Any:
    """c0 → c1 → … → c5, each adding its name: a run of lone tasks, whose saves a run with
    ``durability="async"`` (the default) overlaps with the next node."""

    def step(name: str) -> Any:
        async def node(state: Chain) -> dict[str, Any]:
            log_run(log, name)
            if name in block:
                await asyncio.sleep(3600)
            return {"steps": [name]}

        return node

    builder = StateGraph(Chain)
    for name in CHAIN:
        builder.add_node(name, step(name))
    builder.add_edge(START, CHAIN[0])
    for a, b in itertools.pairwise(CHAIN):
        builder.add_edge(a, b)
    return builder


def main(argv: list[str]) -> None:
    graph_name, phase, url, thread_id, log_name, *extra = argv
    log = Path(log_name)
    saver = saver_from_url(url)
    config = {"configurable": {"thread_id": thread_id}}
    if graph_name == "approval":
        # "resume-strict": a resume that refuses what LangGraph lets pass (compile strict=True)
        graph = approval_graph(log).compile(checkpointer=saver, strict=phase == "resume-strict")
        payload: Any = (
            {"plan": "deploy", "approved": "", "outcome": ""}
            if phase == "start"
            else Command(resume=extra[0])
        )
    elif graph_name in ("nested", "nested-called"):
        called = graph_name == "nested-called"
        graph = nested_graph(log, set(extra), called=called).compile(checkpointer=saver)
        payload = {"text": "t", "steps": []} if phase == "start" else None
    elif graph_name == "chain":
        graph = chain_graph(log, set(extra)).compile(checkpointer=saver)
        payload = {"steps": []} if phase == "start" else None
    else:
        graph = fanout_graph(log, set(extra)).compile(checkpointer=saver)
        payload = (
            {"job": "job", "item": -1, "results": [], "summary": ""} if phase == "start" else None
        )
    try:
        # A run killed by a test leaves its thread's lease behind: the tests give child
        # processes a short lease (LEASE_ENV), and a resume waits for the dead one to expire.
        result = graph.invoke(payload, config, wait=RESUME_WAIT)
    except (EmptyInputError, KeyError) as exc:  # KeyError: a node ran on a forgotten thread
        result = {"error": type(exc).__name__, "message": str(exc)}
    interrupts = result.pop("__interrupt__", [])
    result["interrupts"] = [{"id": i.id, "value": i.value} for i in interrupts]
    print(json.dumps(result))
    close = getattr(saver, "close", None)
    if callable(close):
        close()


if __name__ == "__main__":
    main(sys.argv[1:])
