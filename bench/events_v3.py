"""What a v3 event stream costs over the v2 parts it is built on: a 10-node chain (no saver).

    python bench/events_v3.py            # 6 rounds of 20 runs per variant
    python bench/events_v3.py --rounds 2

``v2``: ``list(graph.stream(x, stream_mode=["values", "messages", "tasks"], subgraphs=True,
version="v2"))`` — the parts a default v3 run requests. ``v3``: ``graph.stream_events(x,
version="v3").output``, which pulls the same parts through the run stream's built-in
transformers (values, messages, lifecycle, subgraphs). Rounds alternate which variant goes
first; the report is each variant's mean time per run and their ratio (v3 / v2). It always
exits 0: it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import operator
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from durable_debug import START, StateGraph


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def chain(length: int = 10) -> Any:
    """A chain of ``length`` nodes, each adding one item."""
    builder = StateGraph(State)
    previous = START
    for i in range(length):
        builder.add_node(f"n{i}", lambda s, i=i: {"items": [str(i)]})
        builder.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    return builder.compile()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=20, help="runs per variant per round")
    args = parser.parse_args()
    graph = chain()
    start = {"items": []}

    def v2() -> None:
        modes = ["values", "messages", "tasks"]
        list(graph.stream(start, stream_mode=modes, subgraphs=True, version="v2"))

    def v3() -> None:
        _ = graph.stream_events(start, version="v3").output

    variants: dict[str, Callable[[], None]] = {"v2": v2, "v3": v3}
    for run in variants.values():
        run()  # warm up
    total = dict.fromkeys(variants, 0.0)
    for round_ in range(args.rounds):
        order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
        for name in order:
            began = time.perf_counter()
            for _ in range(args.runs):
                variants[name]()
            total[name] += time.perf_counter() - began
    count = args.rounds * args.runs
    for name, seconds in total.items():
        print(f"{name}: {seconds / count * 1000:.2f} ms per run")
    print(f"v3 / v2: {total['v3'] / total['v2']:.3f}")


if __name__ == "__main__":
    main()
