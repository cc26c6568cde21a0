"""Findings: what a run let pass as LangGraph does, although it is likely a mistake.

Where LangGraph silently accepts something (a node writing a key its schema lacks, a resume
with nothing pending, a thread resumed by a changed graph), the engine does what LangGraph
does and records a :class:`Finding` on the checkpoint it concerns: the debugger marks that
checkpoint (widget, ``%checkpoints``, ``durable-debug inspect --thread``) and lists the
finding, and one :class:`~durable_debug.DurableDebugWarning` is warned per graph, code and
node or key (not once per step). A graph compiled with ``strict=True`` raises the error the
finding describes instead.

Findings are kept in the checkpoint's debug record (``checkpoint/records.py``), never in a
value LangGraph shows (metadata, tasks, writes, stream chunks).

Codes:

==========================  ==================================================================
``unknown-key``             a node, the run input, ``Command(update=...)`` or ``update_state``
                            wrote a key the state schema lacks; the write was dropped
``resume-nothing-pending``  ``Command(resume=...)`` on a thread with no pending interrupt
``resume-unknown-id``       a resume map naming ids that match no pending interrupt
``resume-empty-thread``     a resume on a thread with no checkpoint (the graph ran from START)
``unknown-print-mode``      a ``print_mode`` that names no stream mode (nothing printed for it)
``unknown-durability``      a ``durability`` LangGraph does not know (treated as ``"async"``)
``unknown-stream-version``  a ``version`` of ``stream`` / ``invoke`` other than ``"v1"`` / ``"v2"``
                            (output in the default format, ``"v1"``)
``graph-changed``           the thread was resumed by a graph of another structure
``interrupt-no-saver``      a node called ``interrupt()`` in a graph with no checkpointer: the
                            run ended with ``__interrupt__``, which nothing can resume
==========================  ==================================================================
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.errors import DurableDebugWarning
from durable_debug.checkpoint.records import FINDINGS

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["Finding", "RunFindings", "finding_from_dict", "findings_of"]


@dataclass(frozen=True)
class Finding:
    """One finding on a checkpoint: what was let pass, and where."""

    code: str
    """What kind of finding (``unknown-key``, ``graph-changed``…, see the module's table)."""
    message: str
    """What happened, in a sentence that names the node, key or value concerned."""
    node: str | None = None
    """The node concerned, when one is."""
    key: str | None = None
    """The state key (or other name: a print mode, an interrupt id) concerned, when one is."""

    def as_dict(self) -> dict[str, Any]:
        """The finding as stored in a debug record."""
        return asdict(self)


def finding_from_dict(data: Any) -> Finding | None:
    """A finding read back from a debug record (None when ``data`` is not one)."""
    if not isinstance(data, dict) or not isinstance(data.get("code"), str):
        return None
    node, key = data.get("node"), data.get("key")
    return Finding(
        data["code"],
        str(data.get("message", "")),
        None if node is None else str(node),
        None if key is None else str(key),
    )


def findings_of(record: Mapping[str, Any] | None) -> list[Finding]:
    """The findings a checkpoint's debug record holds, in the order they were found."""
    found = [finding_from_dict(item) for item in (record or {}).get(FINDINGS) or ()]
    return [f for f in found if f is not None]


_WARNED_LOCK = threading.Lock()


def _warn_once(graph: CompiledStateGraph[Any, Any, Any, Any], finding: Finding) -> None:
    """Warn about ``finding`` unless this graph already warned about its code and place."""
    site = (finding.code, finding.node, finding.key)
    with _WARNED_LOCK:
        warned: set[tuple[str, str | None, str | None]] = graph.__dict__.setdefault(
            "_warned_findings", set()
        )
        if site in warned:
            return
        warned.add(site)
    warnings.warn(finding.message, DurableDebugWarning, stacklevel=2)


class RunFindings:
    """The findings of one run that wait for the checkpoint they belong to (the next one the
    run saves; :meth:`take` hands them over)."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any]) -> None:
        self.graph = graph
        self.strict: bool = bool(getattr(graph, "strict", False))
        """``compile(strict=True)``: raise instead of recording."""
        self.pending: list[Finding] = []
        self._lock = threading.Lock()  # nodes report from worker threads too

    def report(self, finding: Finding, error: BaseException | None = None) -> None:
        """Record ``finding`` (and warn once per site); with ``strict``, raise ``error``."""
        if self.strict and error is not None:
            raise error
        _warn_once(self.graph, finding)
        with self._lock:
            self.pending.append(finding)

    def on_unknown_key(
        self, node: str | None, *, quiet: bool = False
    ) -> Callable[[str, str, BaseException], None]:
        """What ``StateSchema.updates_from`` calls for a key the schema lacks, written by
        ``node`` (None: the input or an update): a finding, or nothing when ``quiet`` (a
        subgraph's boundary, where dropping the parent's other keys is the design)."""

        def unknown(key: str, what: str, error: BaseException) -> None:
            if not quiet:
                self.report(Finding("unknown-key", what, node, key), error)

        return unknown

    def take(self) -> list[dict[str, Any]]:
        """The pending findings as stored in a record, and forget them."""
        with self._lock:
            taken, self.pending = self.pending, []
        return [f.as_dict() for f in taken]
