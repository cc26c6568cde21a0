"""Engine benchmark: the same workloads on durable_debug and on LangGraph, in one process.

Each round runs every workload once on each library, alternating (A B A B …) so that both
see the same machine noise; the report is the median per workload and the ratio
durable_debug / LangGraph (lower is faster, 1.0 is parity). Run it from the repository root:

    python bench/engine.py            # 7 rounds
    python bench/engine.py --quick    # 3 rounds, for a smoke check
    python bench/engine.py --only chat --rounds 9   # the workloads whose name has "chat"
    python bench/engine.py --cpu      # CPU time of the process instead of the wall clock

It always exits 0: it is a measurement, not a test. The targets come from the engine issue.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import operator
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

# Measure the checkout this script lives in, not whatever version happens to be installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import durable_debug

CHAIN_LENGTH = 10
CHAIN_THREADS = 50
FAN_OUT = 200
FAN_OUT_RUNS = 5
CHAT_TURNS = 100
NESTED_THREADS = 30
REACT_THREADS = 20
REACT_TOOL_ROUNDS = 3
FUNC_TASKS = 10
FUNC_THREADS = 30


class ChainState(TypedDict):
    value: int
    trail: Annotated[list, operator.add]


class FanState(TypedDict):
    items: list
    results: Annotated[list, operator.add]


@dataclass(frozen=True)
class Library:
    """The names a workload needs from one library."""

    name: str
    StateGraph: Any
    START: str
    END: str
    MemorySaver: Any
    Send: Any
    MessagesState: Any
    sqlite_saver: Callable[[str], Any]
    """A checkpointer on a new SQLite file at the given path."""
    create_react_agent: Callable[..., Any]
    """The library's prebuilt ReAct agent."""
    entrypoint: Any
    task: Any


@dataclass(frozen=True)
class Workload:
    """One measured workload: ``prepare(lib)`` returns a callable that does one timed run."""

    name: str
    target: float
    """Highest acceptable ratio durable_debug / LangGraph."""
    prepare: Callable[[Library], Callable[[], None]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    parser.add_argument("--rounds", type=int, help="number of measured rounds")
    parser.add_argument(
        "--only", metavar="TEXT", help="run only the workloads whose name contains TEXT"
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time the process's CPU (all its threads) instead of the wall clock: steadier on "
        "a loaded machine, but blind to time spent waiting (LangGraph's SQLite syncs)",
    )
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    workloads = [w for w in WORKLOADS if args.only is None or args.only in w.name]
    if not workloads:
        names = ", ".join(repr(w.name) for w in WORKLOADS)
        parser.error(f"no workload name contains {args.only!r}; the workloads are {names}")

    clock = time.process_time if args.cpu else time.perf_counter
    libraries = [durable_library(), langgraph_library()]
    timings: dict[tuple[str, str], list[float]] = {}
    for workload in workloads:
        for lib in libraries:  # warm-up: imports, caches, first-call costs
            workload.prepare(lib)()
        for _ in range(rounds):
            for lib in libraries:
                run = workload.prepare(lib)
                gc.collect()
                start = clock()
                run()
                elapsed = clock() - start
                timings.setdefault((workload.name, lib.name), []).append(elapsed)

    print_report(timings, rounds, workloads, "CPU" if args.cpu else "wall clock")
    return 0


# -- workloads -------------------------------------------------------------------------------


def chain_async(lib: Library) -> Callable[[], None]:
    """A 10-node chain of async nodes, ``ainvoke`` on 50 threads one after another."""
    graph = _chain(lib, asynchronous=True)

    async def runs() -> None:
        for thread in range(CHAIN_THREADS):
            cfg = {"configurable": {"thread_id": f"t{thread}"}}
            out = await graph.ainvoke({"value": 0, "trail": []}, cfg)
            assert out["value"] == CHAIN_LENGTH, out

    return lambda: asyncio.run(runs())


def chain_sync(lib: Library) -> Callable[[], None]:
    """The same chain with sync nodes, ``invoke`` on 50 threads one after another."""
    graph = _chain(lib, asynchronous=False)

    def runs() -> None:
        for thread in range(CHAIN_THREADS):
            cfg = {"configurable": {"thread_id": f"t{thread}"}}
            out = graph.invoke({"value": 0, "trail": []}, cfg)
            assert out["value"] == CHAIN_LENGTH, out

    return runs


def send_fan_out(lib: Library) -> Callable[[], None]:
    """Runs (5, on 5 threads) that fan out 200 Sends each to an async worker and merge
    the results."""

    def route(state: FanState) -> list:
        return [lib.Send("worker", {"item": i}) for i in state["items"]]

    async def worker(state: dict) -> dict:
        return {"results": [state["item"]]}

    graph = (
        lib.StateGraph(FanState)
        .add_node("worker", worker)
        .add_conditional_edges(lib.START, route, ["worker"])
        .add_edge("worker", lib.END)
        .compile(checkpointer=lib.MemorySaver())
    )
    items = list(range(FAN_OUT))

    async def runs() -> None:
        for thread in range(FAN_OUT_RUNS):
            cfg = {"configurable": {"thread_id": f"fan{thread}"}}
            out = await graph.ainvoke({"items": items}, cfg)
            assert out["results"] == items

    return lambda: asyncio.run(runs())


def messages_chat(lib: Library) -> Callable[[], None]:
    """A chatbot on MessagesState with a SQLite checkpointer: 100 turns on one thread, each
    appending a user message and the bot's answer (LangChain messages)."""
    from langchain_core.messages import AIMessage

    def bot(state: Any) -> dict:
        return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}

    directory = tempfile.mkdtemp(prefix="dd-bench-chat-")
    graph = (
        lib.StateGraph(lib.MessagesState)
        .add_node("bot", bot)
        .add_edge(lib.START, "bot")
        .add_edge("bot", lib.END)
        .compile(checkpointer=lib.sqlite_saver(str(Path(directory) / "chat.db")))
    )

    def runs() -> None:
        cfg = {"configurable": {"thread_id": "chat"}}
        for turn in range(CHAT_TURNS):
            out = graph.invoke({"messages": [("user", f"turn {turn}")]}, cfg)
        assert len(out["messages"]) == 2 * CHAT_TURNS, len(out["messages"])

    return runs


def memory_chat(lib: Library) -> Callable[[], None]:
    """The messages chat with each library's in-memory saver: 100 turns on one thread."""
    from langchain_core.messages import AIMessage

    def bot(state: Any) -> dict:
        return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}

    graph = (
        lib.StateGraph(lib.MessagesState)
        .add_node("bot", bot)
        .add_edge(lib.START, "bot")
        .add_edge("bot", lib.END)
        .compile(checkpointer=lib.MemorySaver())
    )

    def runs() -> None:
        cfg = {"configurable": {"thread_id": "chat"}}
        for turn in range(CHAT_TURNS):
            out = graph.invoke({"messages": [("user", f"turn {turn}")]}, cfg)
        assert len(out["messages"]) == 2 * CHAT_TURNS, len(out["messages"])

    return runs


def nested_subgraphs(lib: Library) -> Callable[[], None]:
    """Three levels of subgraphs (each a compiled graph added as a node of the one above,
    two steps per level) under a graph with a MemorySaver, 30 threads: every level saves
    its own checkpoints under its namespace."""

    def level(depth: int) -> Any:
        builder = lib.StateGraph(ChainState)
        builder.add_node("work", _sync_step(f"work{depth}"))
        builder.add_edge(lib.START, "work")
        if depth < 3:
            builder.add_node("deeper", level(depth + 1))
            builder.add_edge("work", "deeper")
        return builder.compile()

    top = lib.StateGraph(ChainState).add_node("sub", level(1)).add_edge(lib.START, "sub")
    graph = top.compile(checkpointer=lib.MemorySaver())

    def runs() -> None:
        for thread in range(NESTED_THREADS):
            cfg = {"configurable": {"thread_id": f"n{thread}"}}
            out = graph.invoke({"value": 0, "trail": []}, cfg)
        assert out["value"] == 3, out

    return runs


def react_agent(lib: Library, configurable: dict[str, Any] | None = None) -> Callable[[], None]:
    """A prebuilt ReAct agent (``create_react_agent``, version v2) with a MemorySaver and a
    scripted fake chat model: per thread, three rounds of one tool call each, then the answer
    (8 steps); 20 threads. ``configurable``: more keys for each run's config."""
    import itertools
    import warnings

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    def script() -> Any:
        for n in itertools.count():  # new messages each time: add_messages keys them by id
            for r in range(REACT_TOOL_ROUNDS):
                call = {"name": "add", "args": {"a": 1, "b": 2}, "id": f"call-{n}-{r}"}
                yield AIMessage("", tool_calls=[call])
            yield AIMessage("3")

    model = Scripted(messages=script())
    with warnings.catch_warnings():  # LangGraph's points users at langchain.agents
        warnings.simplefilter("ignore")
        agent = lib.create_react_agent(model, [add], checkpointer=lib.MemorySaver())

    def runs() -> None:
        for thread in range(REACT_THREADS):
            cfg = {"configurable": {"thread_id": f"r{thread}", **(configurable or {})}}
            out = agent.invoke({"messages": [("user", "1+2?")]}, cfg)
        assert len(out["messages"]) == 2 + 2 * REACT_TOOL_ROUNDS, len(out["messages"])

    return runs


def functional_tasks(lib: Library) -> Callable[[], None]:
    """An async ``@entrypoint`` calling ``@task``s (half one after another, half at once,
    each saved as it finishes) with a MemorySaver, 30 threads, ``ainvoke``."""

    @lib.task
    async def step(x: int) -> int:
        return x + 1

    @lib.entrypoint(checkpointer=lib.MemorySaver())
    async def workflow(x: int) -> int:
        for _ in range(FUNC_TASKS // 2):
            x = await step(x)
        return sum(await asyncio.gather(*(step(x) for _ in range(FUNC_TASKS // 2))))

    async def runs() -> None:
        for thread in range(FUNC_THREADS):
            out = await workflow.ainvoke(0, {"configurable": {"thread_id": f"f{thread}"}})
        assert out == (FUNC_TASKS // 2 + 1) * (FUNC_TASKS // 2), out

    return lambda: asyncio.run(runs())


WORKLOADS = [
    Workload(f"{CHAIN_LENGTH}-node chain × {CHAIN_THREADS} threads, ainvoke", 0.25, chain_async),
    Workload(f"{CHAIN_LENGTH}-node chain × {CHAIN_THREADS} threads, invoke", 0.25, chain_sync),
    Workload(f"{FAN_OUT}-way Send fan-out × {FAN_OUT_RUNS} threads, ainvoke", 0.5, send_fan_out),
    Workload(f"messages chat, {CHAT_TURNS} turns, SQLite, invoke", 0.5, messages_chat),
    Workload(f"messages chat, {CHAT_TURNS} turns, in memory, invoke", 0.4, memory_chat),
    Workload(
        f"3-level nested subgraphs × {NESTED_THREADS} threads, invoke", 0.25, nested_subgraphs
    ),
    Workload(
        f"ReAct agent, {REACT_TOOL_ROUNDS} tool rounds × {REACT_THREADS} threads", 0.5, react_agent
    ),
    Workload(
        f"@entrypoint with {FUNC_TASKS} @task calls × {FUNC_THREADS} threads, ainvoke",
        0.5,
        functional_tasks,
    ),
]


def _chain(lib: Library, *, asynchronous: bool) -> Any:
    builder = lib.StateGraph(ChainState)
    previous = lib.START
    for i in range(CHAIN_LENGTH):
        name = f"n{i}"
        builder.add_node(name, _async_step(name) if asynchronous else _sync_step(name))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, lib.END)
    return builder.compile(checkpointer=lib.MemorySaver())


def _async_step(name: str) -> Callable[[ChainState], Any]:
    async def step(state: ChainState) -> dict:
        return {"value": state["value"] + 1, "trail": [name]}

    return step


def _sync_step(name: str) -> Callable[[ChainState], dict]:
    def step(state: ChainState) -> dict:
        return {"value": state["value"] + 1, "trail": [name]}

    return step


# -- libraries and report --------------------------------------------------------------------


def durable_library() -> Library:
    """durable_debug's names."""
    from durable_debug.func import entrypoint, task
    from durable_debug.prebuilt import create_react_agent

    dd = durable_debug
    return Library(
        "durable_debug",
        dd.StateGraph,
        dd.START,
        dd.END,
        dd.MemorySaver,
        dd.Send,
        dd.MessagesState,
        dd.SqliteSaver,
        create_react_agent,
        entrypoint,
        task,
    )


def langgraph_library() -> Library:
    """LangGraph's names (installed by the dev extra)."""
    try:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.func import entrypoint, task
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.prebuilt import create_react_agent
        from langgraph.types import Send
    except ImportError as exc:
        sys.exit(f"LangGraph is needed to compare against ({exc}): pip install -e '.[dev]'")

    def sqlite_saver(path: str) -> Any:
        return SqliteSaver(sqlite3.connect(path, check_same_thread=False))

    return Library(
        "langgraph",
        StateGraph,
        START,
        END,
        InMemorySaver,
        Send,
        MessagesState,
        sqlite_saver,
        create_react_agent,
        entrypoint,
        task,
    )


def print_report(
    timings: dict[tuple[str, str], list[float]],
    rounds: int,
    workloads: list[Workload],
    clock: str = "wall clock",
) -> None:
    """A table of medians, ratios and targets."""
    from importlib.metadata import version

    print(
        f"durable_debug {durable_debug.__version__} vs langgraph {version('langgraph')}, "
        f"Python {sys.version.split()[0]}, median of {rounds} alternating rounds, {clock}\n"
    )
    header = f"{'workload':<44} {'durable_debug':>14} {'langgraph':>11} {'ratio':>7}  target"
    print(header)
    print("-" * len(header))
    for workload in workloads:
        ours = statistics.median(timings[(workload.name, "durable_debug")])
        theirs = statistics.median(timings[(workload.name, "langgraph")])
        ratio = ours / theirs
        verdict = "met" if ratio <= workload.target else "MISSED"
        print(
            f"{workload.name:<44} {ours * 1000:>11.1f} ms {theirs * 1000:>8.1f} ms "
            f"{ratio:>7.2f}  ≤ {workload.target:<4} {verdict}"
        )


if __name__ == "__main__":
    sys.exit(main())
