"""Count node executions per (thread, node) while a block of code runs.

    with Recorder() as rec:                     # or: async with Recorder() as rec
        await graph.ainvoke(inputs, config)     # gate interrupts
        await graph.ainvoke(Command(resume="APPROVED"), config)
    rec.counts("hitl-1")["gate"]                # NodeCount(executions=2, reruns=1, ...)
    rec.counts_frame()                          # thread, node, executions, reruns, … summary
    #   hitl-1  prepare  1  0  …  "prepare 1"
    #   hitl-1  gate     2  1  …  "gate 2 (re-ran 1×)"

Every *execution* counts, through the engine's task hook (durable_debug) or LangGraph's
callbacks: a node that interrupts and runs again on resume, a task that failed and ran again,
a node that runs again on a fork. A *re-run* is an execution of a task that had already
executed (same thread and task id): the re-run rule of notebook 08 and retries after a
failure (notebook 02). Running a node on another branch (a fork) or again in a loop is a new
task, so it counts as an execution but not as a re-run. Tasks restored from saved writes are not
executed and are not counted. A subgraph's node is counted under its path from the top-level
node that ran it: ``parent/child`` (``call/inner/deep`` two levels down).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, NamedTuple

from durable_debug.checkpoint.names import NS_SEP
from durable_debug.graph.hooks import TaskEvent, add_task_observer
from durable_debug.graph.subgraph import recast_namespace
from durable_debug.inspect.langgraph_hook import add_langgraph_observer

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COUNT_COLUMNS", "Execution", "NodeCount", "Recorder", "node_path"]

COUNT_COLUMNS = ["thread", "node", "executions", "reruns", "errors", "interrupts", "summary"]


def node_path(checkpoint_ns: str, node: str) -> str:
    """How a node is named in counts: ``node`` at the top level, ``parent/child`` (the
    nodes of its namespace, then itself) inside a subgraph."""
    if not checkpoint_ns:
        return node
    return "/".join([*recast_namespace(checkpoint_ns).split(NS_SEP), node])


class Execution(NamedTuple):
    """One execution of a node."""

    thread_id: str | None
    checkpoint_ns: str
    node: str
    task_id: str
    step: int
    outcome: str | None
    """``"ok"``, ``"error"``, ``"interrupt"``, ``"cancelled"``, or None while running."""
    error: str | None
    rerun: bool
    """True when this task had already executed before (same thread, namespace and task id)."""


class NodeCount(NamedTuple):
    """How often a node executed in one thread."""

    executions: int
    reruns: int
    """Executions of a task that had already executed (resume after interrupt, retry)."""
    errors: int
    interrupts: int

    def summary(self, node: str) -> str:
        """``"gate 2 (re-ran 1×)"`` / ``"prepare 1"``."""
        return f"{node} {self.executions}" + (f" (re-ran {self.reruns}×)" if self.reruns else "")


class Recorder:
    """Counts node executions while active. Usable as ``with`` or ``async with``, or with
    :meth:`start` / :meth:`stop`; it can be started again and keeps counting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executions: list[Execution] = []
        self._running: dict[tuple[str | None, str, str, str], int] = {}
        self._seen: set[tuple[str | None, str, str]] = set()
        self._removers: list[Callable[[], None]] = []

    # -- activity --------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return bool(self._removers)

    def start(self) -> Recorder:
        """Begin counting (idempotent)."""
        if not self._removers:
            self._removers = [
                add_task_observer(self._observe),
                add_langgraph_observer(self._observe),
            ]
        return self

    def stop(self) -> None:
        """Stop counting; what was counted stays."""
        removers, self._removers = self._removers, []
        for remove in removers:
            remove()

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Recorder:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget everything counted so far."""
        with self._lock:
            self._executions.clear()
            self._running.clear()
            self._seen.clear()

    # -- results ---------------------------------------------------------------------------

    @property
    def executions(self) -> list[Execution]:
        """Every execution recorded, in the order they started."""
        with self._lock:
            return list(self._executions)

    @property
    def threads(self) -> list[str | None]:
        """The threads that ran a node, in the order they first did."""
        return self.threads_since(0)

    def threads_since(self, mark: int) -> list[str | None]:
        """The threads that ran a node after the first ``mark`` executions (``mark`` =
        ``len(recorder.executions)`` taken earlier), in the order they first did."""
        seen: dict[str | None, None] = {}
        for execution in self.executions[mark:]:
            seen.setdefault(execution.thread_id, None)
        return list(seen)

    def counts(self, thread_id: str | None = None) -> dict[str, NodeCount]:
        """Node → :class:`NodeCount` for one thread (all threads together when None)."""
        counted = self._count(self.executions)
        if thread_id is None:
            return self._merge(counted)
        return {node: c for (thread, node), c in counted.items() if thread == thread_id}

    def counts_frame(self, threads: Iterable[str | None] | None = None) -> pd.DataFrame:
        """One row per (thread, node), in order of first execution: executions, re-runs,
        errors, interrupts and a ``summary`` like ``gate 2 (re-ran 1×)``."""
        import pandas as pd

        wanted = None if threads is None else set(threads)
        rows = [
            {
                "thread": thread,
                "node": node,
                **count._asdict(),
                "summary": count.summary(node),
            }
            for (thread, node), count in self._count(self.executions).items()
            if wanted is None or thread in wanted
        ]
        return pd.DataFrame(rows, columns=COUNT_COLUMNS)

    # -- the observer ------------------------------------------------------------------------

    def _observe(self, event: TaskEvent) -> None:
        task = (event.thread_id, event.checkpoint_ns, event.task_id)
        with self._lock:
            if event.kind == "start":
                if (*task, event.node) in self._running:
                    # reported twice: the engine's hook and, when the run has LangChain
                    # callbacks (a run streaming "messages"), LangGraph's callback hook
                    return
                rerun = task in self._seen
                self._seen.add(task)
                self._running[(*task, event.node)] = len(self._executions)
                self._executions.append(
                    Execution(
                        event.thread_id,
                        event.checkpoint_ns,
                        event.node,
                        event.task_id,
                        event.step,
                        None,
                        None,
                        rerun,
                    )
                )
            else:
                index = self._running.pop((*task, event.node), None)
                if index is not None:
                    self._executions[index] = self._executions[index]._replace(
                        outcome=event.outcome, error=event.error
                    )

    @staticmethod
    def _count(executions: list[Execution]) -> dict[tuple[str | None, str], NodeCount]:
        counts: dict[tuple[str | None, str], NodeCount] = {}
        for e in executions:
            node = node_path(e.checkpoint_ns, e.node)
            c = counts.get((e.thread_id, node), NodeCount(0, 0, 0, 0))
            counts[(e.thread_id, node)] = NodeCount(
                c.executions + 1,
                c.reruns + e.rerun,
                c.errors + (e.outcome == "error"),
                c.interrupts + (e.outcome == "interrupt"),
            )
        return counts

    @staticmethod
    def _merge(counts: dict[tuple[str | None, str], NodeCount]) -> dict[str, NodeCount]:
        merged: dict[str, NodeCount] = {}
        for (_, node), c in counts.items():
            m = merged.get(node, NodeCount(0, 0, 0, 0))
            merged[node] = NodeCount(*(a + b for a, b in zip(m, c, strict=True)))
        return merged

    def __repr__(self) -> str:
        state = "active" if self.active else "stopped"
        executions, threads = len(self.executions), len(self.threads)
        return f"<Recorder {state}: {executions} executions in {threads} threads>"
