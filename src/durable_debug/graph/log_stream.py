"""``astream_log`` and ``astream_events(version="v1")``: LangChain's run-log streams of a run.

LangGraph's graph is a LangChain ``Runnable`` and inherits both from it: a
``LogStreamCallbackHandler`` joins the run's callbacks, the run reports its graph run, node
runs (with each node's output as its streamed chunk) and the runs under them to it
(``callbacks.py``), and the handler turns those reports into JSON patches of a run log
(``astream_log``) or into the v1 event dicts. Ours does the same by running LangChain's own
``Runnable`` implementations on a ``Runnable`` whose ``astream`` is the graph's (called
with the caller's keyword arguments exactly as given) and whose name is the graph's.
LangChain is imported when one of them is called; it is then required.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

__all__ = ["astream_events_v1", "astream_log"]


def _as_runnable(graph: Any) -> Any:
    """``graph`` as a LangChain ``Runnable`` whose ``astream`` is the graph's (looked up on
    each call, so a patched ``graph.astream`` is the one run) and whose name is the graph's."""
    try:
        from langchain_core.runnables import Runnable
    except ImportError as exc:  # pragma: no cover - LangChain is a dev dependency
        raise ImportError(
            "astream_log and astream_events(version='v1') need langchain-core installed"
        ) from exc

    class GraphRunnable(Runnable[Any, Any]):
        """The compiled graph seen through LangChain's ``Runnable`` interface."""

        name = graph.get_name()

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return graph.invoke(input, config, **kwargs)

        async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return await graph.ainvoke(input, config, **kwargs)

        async def astream(
            self, input: Any, config: Any = None, **kwargs: Any
        ) -> AsyncIterator[Any]:
            async for chunk in graph.astream(input, config, **kwargs):
                yield chunk

    return GraphRunnable()


async def astream_log(graph: Any, input: Any, config: Any, **kwargs: Any) -> AsyncIterator[Any]:
    """LangChain's ``Runnable.astream_log`` of ``graph``'s run: ``RunLogPatch`` objects (or
    ``RunLog`` states with ``diff=False``), ``**kwargs`` (the filters, ``diff``, and the
    run's own keyword arguments) as LangChain takes them."""
    async for item in _as_runnable(graph).astream_log(input, config, **kwargs):
        yield item


async def astream_events_v1(
    graph: Any, input: Any, config: Any, **kwargs: Any
) -> AsyncIterator[dict[str, Any]]:
    """LangChain's ``astream_events(version="v1")`` events of ``graph``'s run (built on its
    run log; the filters and the run's keyword arguments in ``**kwargs``)."""
    async for event in _as_runnable(graph).astream_events(input, config, version="v1", **kwargs):
        yield event
