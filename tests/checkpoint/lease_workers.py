"""A graph that test_leases.py runs in many child processes at once on one thread.

``ask`` interrupts for an answer; once answered it appends ``effect <pid>`` to the log (the
side effect), then waits until the *release* file exists (so the run holds its thread while
the test looks), and returns. Run as a script:

    python lease_workers.py start  <saver-url> <thread> <log>
    python lease_workers.py resume <saver-url> <thread> <log> <go-file> <release-file> <wait>

``resume`` appends ``ready <pid>`` to the log once its saver is open, waits for the go file,
then resumes with ``Command(resume="yes")``, waiting up to ``wait`` seconds for the thread.
It prints one JSON object: ``{"pid", "result"}`` or ``{"pid", "busy": {thread, holder, since}}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

from durable_debug import END, START, Command, StateGraph, ThreadBusyError, interrupt
from durable_debug.checkpoint.url import saver_from_url


class Ask(TypedDict):
    question: str
    answer: str


def append(log: Path, line: str) -> None:
    """One short append: atomic between processes."""
    with open(log, "a") as f:
        f.write(line + "\n")


def wait_for(path: Path, timeout: float = 120.0) -> None:
    """Wait until ``path`` exists (bounded, so a broken lease cannot hang the test)."""
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def ask_graph(log: Path, release: Path | None) -> Any:
    """START → ask (interrupt, then the side effect) → END."""

    def ask(state: Ask) -> dict[str, Any]:
        answer = interrupt({"question": state["question"]})
        append(log, f"effect {os.getpid()}")
        if release is not None:
            wait_for(release)
        return {"answer": answer}

    return StateGraph(Ask).add_node("ask", ask).add_edge(START, "ask").add_edge("ask", END)


def main(argv: list[str]) -> None:
    phase, url, thread_id, log_name, *extra = argv
    log = Path(log_name)
    saver = saver_from_url(url)
    saver.setup()
    config = {"configurable": {"thread_id": thread_id}}
    out: dict[str, Any] = {"pid": os.getpid()}
    if phase == "start":
        graph = ask_graph(log, None).compile(checkpointer=saver)
        graph.invoke({"question": "charge?", "answer": ""}, config)
    else:
        go, release, wait = Path(extra[0]), Path(extra[1]), float(extra[2])
        graph = ask_graph(log, release).compile(checkpointer=saver)
        append(log, f"ready {os.getpid()}")
        wait_for(go)
        try:
            out["result"] = graph.invoke(Command(resume="yes"), config, wait=wait)
        except ThreadBusyError as exc:
            since = exc.since.isoformat() if exc.since else None
            out["busy"] = {"thread": exc.thread_id, "holder": exc.holder, "since": since}
            out["message"] = str(exc)
    print(json.dumps(out))
    saver.close()


if __name__ == "__main__":
    main(sys.argv[1:])
