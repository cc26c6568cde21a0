"""Recovery on start: resume the threads whose run died mid-step.

A run holds its thread's lease (:mod:`durable_debug.checkpoint.lease`) and gives it back when it
ends — finished, stopped on an interrupt, or failed with its error saved. A lease whose holder
died (SIGKILL, a lost machine, a lost database connection) is left behind and expires; those
threads are the ones to recover. :func:`recover` resumes each one with ``invoke(None)`` under a
fresh lease, taken only while the dead run's lease is still there (one conditional statement),
so many workers may call it at once: each abandoned thread is resumed by exactly one of them;
the others see it busy, or already recovered, and skip it.

    graph = builder.compile(checkpointer=PostgresSaver(url))
    for item in recover(graph):          # at worker start, or in a loop
        print(item.thread_id, item.outcome)

Tasks that saved their writes before the crash do not run again; the others re-run from their
top, so effects inside them should go through :func:`durable_debug.graph.effects.once`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from durable_debug._sync import run_sync
from durable_debug.checkpoint.errors import ThreadBusyError
from durable_debug.checkpoint.lease import NoAbandonedLeaseError, thread_lease
from durable_debug.checkpoint.names import INTERRUPT
from durable_debug.graph.types import EmptyInputError

if TYPE_CHECKING:
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["Recovered", "arecover", "recover"]

Outcome = Literal["finished", "interrupted", "failed", "busy", "empty"]


@dataclass(frozen=True)
class Recovered:
    """What :func:`recover` did with one abandoned thread."""

    thread_id: str
    outcome: Outcome
    """``finished`` (ran to its end), ``interrupted`` (now waits on an interrupt), ``failed``
    (a node raised again; its error is saved as for any run), ``busy`` (another worker took
    it first), ``empty`` (the dead run had saved no checkpoint: nothing to resume)."""
    error: str | None = None
    """The error of a ``failed`` thread, as one line."""


async def arecover(
    graph: CompiledStateGraph[Any, Any, Any, Any], *, limit: int | None = None
) -> list[Recovered]:
    """Resume every thread of ``graph``'s saver whose last run died mid-step (at most
    ``limit`` of them), each under its lease; return what happened to each."""
    saver = graph._require_saver("recover")
    threads = await saver.alist_abandoned_threads()
    done: list[Recovered] = []
    for thread_id in threads:
        if limit is not None and len(done) >= limit:
            break
        config = {"configurable": {"thread_id": thread_id}}
        try:
            # Only a lease still left behind: the list may be stale, and a thread another
            # worker recovered meanwhile (now finished, waiting or failed) is not run again.
            async with thread_lease(saver, thread_id, wait=0.0, only_abandoned=True):
                out = await graph.ainvoke(None, config)  # shares the lease taken above
        except NoAbandonedLeaseError:
            continue
        except ThreadBusyError:
            done.append(Recovered(thread_id, "busy"))
        except EmptyInputError:
            done.append(Recovered(thread_id, "empty"))
        except Exception as exc:
            done.append(Recovered(thread_id, "failed", f"{type(exc).__name__}: {exc}"))
        else:
            outcome: Outcome = "interrupted" if out.get(INTERRUPT) else "finished"
            done.append(Recovered(thread_id, outcome))
    return done


def recover(
    graph: CompiledStateGraph[Any, Any, Any, Any], *, limit: int | None = None
) -> list[Recovered]:
    """Sync twin of :func:`arecover`."""
    return run_sync(arecover(graph, limit=limit))
