"""A graph that test_leases.py runs in many child processes at once on one thread.

``ask`` interrupts for an answer; once answered it appends ``effect <pid>`` to the log (the
side effect), then waits until the *release* file exists (so the run holds its thread while
the test looks), and returns. Run as a script:

    python lease_workers.py start  <saver-url> <thread> <log>
    python lease_workers.py resume <saver-url> <thread> <log> <go-file> <release-file> <wait>

``resume`` appends ``ready <pid>`` to the log once its saver is open, waits for the go file,
then resumes with ``Command(resume="yes")``, waiting up to ``wait`` seconds for the thread.
It prints one JSON object: ``{"pid", "result"}`` or ``{"pid", "busy": {thread, holder, since}}``.
``start-failing`` and ``resume-none`` do the same with the *work* graph, whose node fails in
``start-failing`` and is resumed with ``invoke(None)``.

The *charge* graph (``once`` across processes) charges a customer with ``once()``, then asks
for approval with ``interrupt()``; after the answer it logs ``after <pid>`` and, in phase
``resume-and-hang``, hangs (to be killed):

    python lease_workers.py charge <saver-url> <thread> <log> start|resume-and-hang|continue
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

from durable_debug import END, START, Command, StateGraph, ThreadBusyError, interrupt, once
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


def work_graph(log: Path, release: Path | None, *, fail: bool) -> Any:
    """START → work (the side effect, then hold the thread until *release*) → END; with
    ``fail`` the node raises first, leaving a failed step that ``invoke(None)`` resumes."""

    def work(state: Ask) -> dict[str, Any]:
        if fail:
            raise RuntimeError("the service is down")
        append(log, f"effect {os.getpid()}")
        if release is not None:
            wait_for(release)
        return {"answer": "done"}

    return StateGraph(Ask).add_node("work", work).add_edge(START, "work").add_edge("work", END)


class Charge(TypedDict):
    receipt: str
    approved: str


def charge_graph(log: Path, hang: bool) -> Any:
    """START → charge (once(charge_customer), then interrupt) → END."""

    def charge_customer(amount: int) -> str:
        append(log, f"charged {os.getpid()}")
        return f"receipt-{os.getpid()}-{amount}"

    def charge(state: Charge) -> dict[str, Any]:
        receipt = once(charge_customer, 42)
        approved = interrupt({"receipt": receipt})
        append(log, f"after {os.getpid()}")
        if hang:
            wait_for(log.with_suffix(".never"), timeout=3600)
        return {"receipt": receipt, "approved": approved}

    return StateGraph(Charge).add_node("charge", charge).add_edge(START, "charge")


def charge_main(url: str, thread_id: str, log: Path, phase: str) -> None:
    saver = saver_from_url(url)
    graph = charge_graph(log, phase == "resume-and-hang").compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    payload: Any = {
        "start": {"receipt": "", "approved": ""},
        "resume-and-hang": Command(resume="yes"),
        "continue": None,
    }[phase]
    result = graph.invoke(payload, config, wait=60)
    interrupts = result.pop("__interrupt__", [])
    print(json.dumps({"pid": os.getpid(), "result": result, "interrupts": len(interrupts)}))
    saver.close()


def main(argv: list[str]) -> None:
    if argv[0] == "charge":
        charge_main(argv[1], argv[2], Path(argv[3]), argv[4])
        return
    phase, url, thread_id, log_name, *extra = argv
    log = Path(log_name)
    saver = saver_from_url(url)
    saver.setup()
    config = {"configurable": {"thread_id": thread_id}}
    out: dict[str, Any] = {"pid": os.getpid()}
    if phase == "start":
        graph = ask_graph(log, None).compile(checkpointer=saver)
        graph.invoke({"question": "charge?", "answer": ""}, config)
    elif phase == "start-failing":
        graph = work_graph(log, None, fail=True).compile(checkpointer=saver)
        try:
            graph.invoke({"question": "charge?", "answer": ""}, config)
        except RuntimeError as exc:
            out["error"] = str(exc)
    else:
        go, release, wait = Path(extra[0]), Path(extra[1]), float(extra[2])
        if phase == "resume":
            graph, payload = (
                ask_graph(log, release).compile(checkpointer=saver),
                Command(resume="yes"),
            )
        else:  # "resume-none": invoke(None) after the failure
            graph, payload = work_graph(log, release, fail=False).compile(checkpointer=saver), None
        append(log, f"ready {os.getpid()}")
        wait_for(go)
        try:
            out["result"] = graph.invoke(payload, config, wait=wait)
        except ThreadBusyError as exc:
            since = exc.since.isoformat() if exc.since else None
            out["busy"] = {"thread": exc.thread_id, "holder": exc.holder, "since": since}
            out["message"] = str(exc)
    print(json.dumps(out))
    saver.close()


if __name__ == "__main__":
    main(sys.argv[1:])
