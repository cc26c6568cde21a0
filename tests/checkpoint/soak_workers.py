"""Roles for the side-by-side test: writers, a reader, a sweeper, a pruner, a deleter and a
recoverer on one store at once, each for a number of seconds.

    python soak_workers.py <role> <url> <seconds> <index>

Each prints one JSON line ``{"role", "ops", "errors": [...]}``: every error it met, one line
each (a writer or deleter refused with ThreadBusyError after waiting is not an error: that is
the lease doing its job, and it is counted apart as ``busy``).
"""

from __future__ import annotations

import datetime as dt
import json
import operator
import sys
import time
from typing import Annotated, Any, TypedDict

THREADS = 6
"""Threads the writers share (``soak-0`` … ``soak-5``)."""


class Log(TypedDict):
    items: Annotated[list, operator.add]


def graph(saver: Any) -> Any:
    from durable_debug import START, StateGraph

    builder = StateGraph(Log)
    for name in ("a", "b", "c"):
        builder.add_node(name, lambda s, name=name: {"items": [name]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    return builder.compile(checkpointer=saver)


def asker(saver: Any) -> Any:
    from durable_debug import START, StateGraph, interrupt

    builder = StateGraph(Log)
    builder.add_node("ask", lambda s: {"items": [interrupt("ok?")]})
    builder.add_edge(START, "ask")
    return builder.compile(checkpointer=saver)


def run(role: str, url: str, seconds: float, index: int) -> dict[str, Any]:
    from durable_debug import ThreadBusyError
    from durable_debug.checkpoint.url import saver_from_url
    from durable_debug.graph import recover
    from durable_debug.inspect.retention import delete_thread, prune, sweep

    saver = saver_from_url(url)
    errors: list[str] = []
    ops = busy = 0
    deadline = time.monotonic() + seconds
    g = graph(saver)
    try:
        while time.monotonic() < deadline:
            ops += 1
            try:
                if role == "writer":
                    config = {"configurable": {"thread_id": f"soak-{(index + ops) % THREADS}"}}
                    out = g.invoke({"items": [f"w{index}"]}, config, wait=30)
                    assert out["items"][-3:] == ["a", "b", "c"], out  # (a deleter may follow)
                elif role == "asker":
                    config = {"configurable": {"thread_id": f"ask-{index}-{ops % 3}"}}
                    asker(saver).invoke({"items": []}, config, wait=30)
                elif role == "reader":
                    for thread_id in saver.list_threads():
                        config = {"configurable": {"thread_id": thread_id}}
                        saver.get_tuple(config)
                        list(saver.list(config, limit=20))
                elif role == "sweeper":
                    frame = sweep(saver, older_than=dt.timedelta(0), policy="fail")
                    errors += [a for a in frame["action"] if a.startswith(("damaged", "error"))]
                elif role == "pruner":
                    frame = prune(saver, keep_last=2, wait=30)
                    errors += [a for a in frame["action"] if a.startswith(("damaged", "error"))]
                elif role == "deleter":
                    delete_thread(saver, f"soak-{ops % THREADS}")
                elif role == "recoverer":
                    for item in recover(g):
                        if item.outcome == "failed":
                            errors.append(f"recover {item.thread_id}: {item.error}")
                else:
                    raise ValueError(f"no role {role!r}")
            except ThreadBusyError:
                busy += 1
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {' '.join(str(exc).split())}")
    finally:
        saver.close()
    return {"role": role, "ops": ops, "busy": busy, "errors": errors}


if __name__ == "__main__":
    role, url, seconds, index = sys.argv[1:5]
    print(json.dumps(run(role, url, float(seconds), int(index))), flush=True)
