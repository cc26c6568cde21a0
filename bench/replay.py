"""Record-and-replay benchmark: what recording costs a run, and what replaying saves a rerun.

Run it from the repository root:

    python bench/replay.py              # 7 rounds of the recording cost, 3 of the replay
    python bench/replay.py --quick      # 3 and 1, for a smoke check
    python bench/replay.py --cpu        # the recording cost in CPU time
    python bench/replay.py --cpu --no-replay --rounds 9   # the recording cost only

Workloads, all on durable_debug, 100 turns on one thread, `invoke`:

* **chat** (SQLite): the engine bench's messages chat (the bot appends a message, no model),
  recording on (the default) vs off (``configurable.record_calls=False``), rounds alternating;
* **model chat**: the same with the bot calling a LangChain chat model that answers at once
  (every turn records one model call), on vs off;
* **ReAct agent** (the engine bench's: ``create_react_agent`` v2, MemorySaver, a scripted fake
  model, three rounds of one tool call then the answer, 20 threads): on vs off;
* **replay** (MemorySaver, then SQLite): the model sleeps 50 ms a call; the live run records
  a thread, then the same 100 turns on a new thread inside ``replaying(graph, recorded
  thread)`` answer every call from the recording.

It prints medians and ratios; it always exits 0: a measurement, not a test.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import durable_debug as dd
from durable_debug.inspect.replay import replaying

TURNS = 100
SLEEP = 0.05


def _model(sleep: float) -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class SleepyModel(BaseChatModel):
        """Answers with the number of messages it saw, after ``sleep`` seconds."""

        @property
        def _llm_type(self) -> str:
            return "sleepy"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
            if sleep:
                time.sleep(sleep)
            text = f"echo {len(messages)}"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    return SleepyModel()


def chat_graph(path: str | None, model: Any = None) -> Any:
    """The messages chat: a bot node on MessagesState, calling ``model`` when given, saved in
    a SQLite file at ``path`` (in memory when None)."""
    from langchain_core.messages import AIMessage

    def bot(state: Any) -> dict:
        if model is None:
            return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}
        return {"messages": [model.invoke(state["messages"])]}

    return (
        dd.StateGraph(dd.MessagesState)
        .add_node("bot", bot)
        .add_edge(dd.START, "bot")
        .add_edge("bot", dd.END)
        .compile(checkpointer=dd.MemorySaver() if path is None else dd.SqliteSaver(path))
    )


def turns(graph: Any, thread: str, *, record: bool = True) -> None:
    cfg: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if not record:
        cfg["configurable"]["record_calls"] = False
    for turn in range(TURNS):
        out = graph.invoke({"messages": [("user", f"turn {turn}")]}, cfg)
    assert len(out["messages"]) == 2 * TURNS, len(out["messages"])


CLOCK: list[Callable[[], float]] = [time.perf_counter]
"""The clock :func:`timed` reads (``--cpu``: the process's CPU time)."""


def timed(run: Callable[[], None]) -> float:
    clock = CLOCK[0]
    gc.collect()
    start = clock()
    run()
    return clock() - start


def recording_cost(rounds: int, with_model: bool) -> tuple[float, float]:
    """Median seconds of the 100 turns with recording on and off (a fresh file each run)."""
    on: list[float] = []
    off: list[float] = []
    model = _model(0.0) if with_model else None
    for n in range(rounds + 1):  # the first round warms up
        for record, into in ((True, on), (False, off)):
            directory = tempfile.mkdtemp(prefix="dd-bench-replay-")
            graph = chat_graph(str(Path(directory) / "chat.db"), model)
            seconds = timed(lambda graph=graph, record=record: turns(graph, "c", record=record))
            graph.checkpointer.close()
            if n:
                into.append(seconds)
    return statistics.median(on), statistics.median(off)


def react_agent(record: bool) -> Callable[[], None]:
    """The engine bench's ReAct agent (``bench/engine.py``, ``react_agent``) on durable_debug,
    with recording on or off: 20 threads of three tool rounds and the answer."""
    import engine  # bench/engine.py: this script's folder is first on sys.path

    return engine.react_agent(engine.durable_library(), None if record else {"record_calls": False})


def react_cost(rounds: int) -> tuple[float, float]:
    """Median seconds of the ReAct agent's 20 threads with recording on and off, alternating
    (a fresh agent and saver each run)."""
    on: list[float] = []
    off: list[float] = []
    for n in range(rounds + 1):  # the first round warms up
        for record, into in ((True, on), (False, off)):
            seconds = timed(react_agent(record))
            if n:
                into.append(seconds)
    return statistics.median(on), statistics.median(off)


def replay_speed(rounds: int, sqlite: bool) -> tuple[float, float]:
    """Median seconds (wall clock) of the live 100 turns (model sleeping 50 ms) and of the
    same 100 turns replayed from that recording on a new thread."""
    live: list[float] = []
    replayed: list[float] = []
    model = _model(SLEEP)
    for n in range(rounds):
        directory = tempfile.mkdtemp(prefix="dd-bench-replay-")
        graph = chat_graph(str(Path(directory) / "chat.db") if sqlite else None, model)
        live.append(timed(lambda graph=graph: turns(graph, "live")))

        def rerun(graph: Any = graph, n: int = n) -> None:
            with replaying(graph, {"configurable": {"thread_id": "live"}}) as replay:
                turns(graph, f"replay-{n}")
            assert not replay.live and len(replay.replayed) == TURNS, replay.live

        replayed.append(timed(rerun))
        if sqlite:
            graph.checkpointer.close()
    return statistics.median(live), statistics.median(replayed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke check")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time the recording cost in CPU time of the process (steadier on a loaded machine)",
    )
    parser.add_argument(
        "--no-replay", action="store_true", help="the recording cost only, not the replay"
    )
    parser.add_argument("--rounds", type=int, help="rounds of the recording cost (default 7)")
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    if args.cpu:
        CLOCK[0] = time.process_time
    on, off = recording_cost(rounds, with_model=False)
    print(f"chat, {TURNS} turns: recording on {on:.3f} s, off {off:.3f} s, on/off {on / off:.3f}")
    on, off = recording_cost(rounds, with_model=True)
    print(
        f"model chat, {TURNS} turns: recording on {on:.3f} s, off {off:.3f} s, "
        f"on/off {on / off:.3f}"
    )
    import engine  # bench/engine.py: this script's folder is first on sys.path

    on, off = react_cost(rounds)
    print(
        f"ReAct agent, {engine.REACT_THREADS} threads: recording on {on:.3f} s, off {off:.3f} s, "
        f"on/off {on / off:.3f}"
    )
    if args.no_replay:
        return 0
    CLOCK[0] = time.perf_counter  # the model's sleep is wall-clock time
    for sqlite in (False, True):
        live, replayed = replay_speed(1 if args.quick else 3, sqlite)
        print(
            f"replay, {TURNS} turns, {'SQLite' if sqlite else 'MemorySaver'}, model sleeping "
            f"{SLEEP * 1000:.0f} ms: live {live:.3f} s, replayed {replayed:.3f} s, "
            f"live/replayed {live / replayed:.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
