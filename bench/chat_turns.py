"""The messages chat of ``engine.py``, measured turn by turn: a figure a loaded machine
disturbs less than the median of whole runs.

Runs the chat (a one-node bot on ``MessagesState`` appending one ``AIMessage`` per turn, 100
turns on one thread, sync ``invoke``, default durability) on each library's in-memory saver,
or with ``--sqlite`` on each library's ``SqliteSaver`` over a new file, for several rounds,
alternating the libraries; keeps each turn's fastest CPU time (process time, all threads)
over the rounds and prints their sums and the ratio durable_debug / LangGraph. Run it from the
repository root:

    python bench/chat_turns.py
    python bench/chat_turns.py --sqlite --rounds 5

It always exits 0: it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine  # puts this checkout's src/ first on sys.path


def chat(lib: engine.Library, sqlite: bool) -> Any:
    """A new chat graph on ``lib``'s saver."""
    from langchain_core.messages import AIMessage

    def bot(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}

    if sqlite:
        saver = lib.sqlite_saver(str(Path(tempfile.mkdtemp(prefix="dd-bench-turns-")) / "c.db"))
    else:
        saver = lib.MemorySaver()
    builder = lib.StateGraph(lib.MessagesState).add_node("bot", bot)
    builder = builder.add_edge(lib.START, "bot").add_edge("bot", lib.END)
    return builder.compile(checkpointer=saver)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlite", action="store_true", help="each library's SqliteSaver")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds")
    args = parser.parse_args()
    libraries = [engine.durable_library(), engine.langgraph_library()]
    turns = engine.CHAT_TURNS
    best = {lib.name: [float("inf")] * turns for lib in libraries}
    clock = time.process_time
    for measured in [False] + [True] * args.rounds:  # one warm-up round first
        for lib in libraries:
            graph = chat(lib, args.sqlite)
            gc.collect()
            cfg = {"configurable": {"thread_id": "chat"}}
            for turn in range(turns):
                start = clock()
                graph.invoke({"messages": [("user", f"turn {turn}")]}, cfg)
                elapsed = clock() - start
                if measured:
                    best[lib.name][turn] = min(best[lib.name][turn], elapsed)
    ours, theirs = sum(best["durable_debug"]), sum(best["langgraph"])
    saver = "SQLite" if args.sqlite else "in memory"
    print(
        f"messages chat, {turns} turns, {saver}: durable_debug {ours * 1000:.1f} ms, "
        f"langgraph {theirs * 1000:.1f} ms, ratio {ours / theirs:.2f} "
        f"(sum of each turn's fastest of {args.rounds} rounds, CPU)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
