"""The serializer on a chat's message list: durable_debug's ``MsgpackSerializer`` against
LangGraph's ``JsonPlusSerializer``, and optionally against another checkout's serializer.

Saves and loads a list of 200 LangChain messages (100 ``HumanMessage`` and 100 ``AIMessage``,
each with an id; ``--metadata`` gives each AI message a small ``response_metadata``), calling
each side in turn, and prints the fastest call of each in thread CPU time (the minimum is the
figure a loaded machine disturbs least). Run it from the repository root:

    python bench/serde_messages.py
    python bench/serde_messages.py --metadata
    python bench/serde_messages.py --before /tmp/main-tree/src   # also that checkout's serializer

It always exits 0: it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from durable_debug.checkpoint.serde import MsgpackSerializer


def messages(metadata: bool) -> list[Any]:
    """The message list measured."""
    out: list[Any] = []
    for i in range(100):
        out.append(HumanMessage(f"turn {i}", id=f"h{i}"))
        extra = {"response_metadata": {"model": "m", "n": i}} if metadata else {}
        out.append(AIMessage(f"echo {i}", id=f"a{i}", **extra))
    return out


def other_serializer(src: str) -> Any:
    """``MsgpackSerializer`` of the checkout whose ``src/`` is ``src`` (its serializer module
    loaded beside ours; the modules it imports are this checkout's)."""
    path = Path(src) / "durable_debug" / "checkpoint" / "serde" / "__init__.py"
    spec = importlib.util.spec_from_file_location("before_serde", path)
    if spec is None or spec.loader is None:
        sys.exit(f"no serializer at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["before_serde"] = module
    spec.loader.exec_module(module)
    return module.MsgpackSerializer()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", action="store_true", help="AI messages with metadata")
    parser.add_argument("--before", metavar="SRC", help="another checkout's src/ to compare")
    parser.add_argument("--calls", type=int, default=300, help="calls of each side")
    args = parser.parse_args()
    value = messages(args.metadata)
    sides: dict[str, Any] = {"durable_debug": MsgpackSerializer()}
    if args.before:
        sides = {"before": other_serializer(args.before), **sides}
    sides["langgraph"] = JsonPlusSerializer()
    calls: list[tuple[str, Callable[[], Any]]] = []
    for name, serde in sides.items():
        blob = serde.dumps_typed(value)
        assert serde.loads_typed(blob) == value, name
        calls.append((f"{name} save", lambda s=serde: s.dumps_typed(value)))
        calls.append((f"{name} load", lambda s=serde, b=blob: s.loads_typed(b)))
    clock = time.thread_time_ns
    best: dict[str, int] = {}
    gc.disable()
    for _ in range(args.calls):
        for name, call in calls:
            start = clock()
            call()
            elapsed = clock() - start
            best[name] = min(best.get(name, elapsed), elapsed)
    gc.enable()
    shape = "with response_metadata" if args.metadata else "plain"
    print(f"200 messages ({shape}), fastest of {args.calls} calls, thread CPU time")
    for name, ns in best.items():
        print(f"{name:<22} {ns / 1000:8.0f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
