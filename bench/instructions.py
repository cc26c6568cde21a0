"""Instructions one run of a ``bench/engine.py`` workload costs, counted by callgrind.

    python bench/instructions.py chain_async                   # durable_debug, this checkout
    python bench/instructions.py chain_async --lib langgraph   # LangGraph's side
    python bench/instructions.py memory_chat --tree /tmp/base  # another checkout (its src/ and
                                                               # its bench/engine.py)

The workload is a function name of ``bench/engine.py``: ``chain_async``, ``chain_sync``,
``send_fan_out``, ``messages_chat``, ``memory_chat``, ``nested_subgraphs``, ``react_agent``,
``functional_tasks``. The script runs it under ``valgrind --tool=callgrind`` twice, in fresh
processes: a warm-up run then one measured run, and a warm-up run then three; it prints the
difference of the two totals halved, so imports and set-up cancel out. The count is of
user-space instructions in every thread (not the kernel's work, such as waking a thread),
repeatable to about ±0.5 % with ``PYTHONHASHSEED=0`` whatever else the machine runs: the
steadier measure of a change to the engine when the wall and CPU clocks move by ±30 %.
It needs valgrind (``apt-get install valgrind``) and takes a minute or two per count.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def child(tree: Path, workload: str, lib: str, runs: int) -> None:
    """Run ``workload`` once to warm up, then ``runs`` times (inside callgrind)."""
    sys.path.insert(0, str(tree / "src"))
    sys.path.insert(0, str(tree / "bench"))
    import engine  # the tree's own bench/engine.py

    library = engine.durable_library() if lib == "durable_debug" else engine.langgraph_library()
    prepare = getattr(engine, workload)
    prepare(library)()
    for _ in range(runs):
        prepare(library)()


def count(tree: Path, workload: str, lib: str, runs: int) -> int:
    """Instructions callgrind collects for the whole process running the workload."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        workload,
        "--tree",
        str(tree),
        "--lib",
        lib,
        "--child",
        str(runs),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    found = re.search(r"Collected : ([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a workload function of bench/engine.py")
    parser.add_argument("--lib", choices=("durable_debug", "langgraph"), default="durable_debug")
    parser.add_argument("--tree", type=Path, default=HERE, help="the checkout to measure")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.tree, args.workload, args.lib, args.child)
        return 0
    once = count(args.tree, args.workload, args.lib, 1)
    thrice = count(args.tree, args.workload, args.lib, 3)
    print(
        f"{args.workload} {args.lib} ({args.tree}): {(thrice - once) / 2 / 1e6:.1f} M instructions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
