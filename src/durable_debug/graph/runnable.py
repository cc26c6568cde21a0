"""A compiled graph at the head of a LangChain chain: ``graph | RunnablePassthrough()``,
``graph.pipe(step, ...)``.

LangGraph's compiled graphs are LangChain ``Runnable`` objects; ours are not (a subclass would
tie every graph to LangChain's machinery and import it with the engine). ``graph | other``
gives LangChain's ``RunnableSequence`` whose first step is :func:`as_runnable`'s adapter: a
``Runnable`` whose ``invoke``, ``ainvoke``, ``stream``, ``astream`` (and so ``batch`` and
``transform``) run the graph with the chain's config, so the chain's callbacks see the graph's
run as its first step and ``chain.stream`` yields the graph's chunks. langchain-core is
imported on the first such call, never by ``import durable_debug``.

``other | graph`` is LangChain's ``Runnable.__or__``, which refuses an object that is not a
``Runnable``: write ``other | as_runnable(graph)`` there.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

__all__ = ["as_runnable", "pipe"]


@functools.cache
def _adapter_class() -> type:
    """The adapter class, made once langchain-core is needed."""
    from langchain_core.runnables import Runnable

    class GraphRunnable(Runnable[Any, Any]):
        """A compiled graph as a LangChain ``Runnable`` (see the module docstring)."""

        def __init__(self, graph: Any) -> None:
            self.graph = graph
            self.name = graph.get_name()  # what the chain names its step's run

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return self.graph.invoke(input, config, **kwargs)

        async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return await self.graph.ainvoke(input, config, **kwargs)

        def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
            yield from self.graph.stream(input, config, **kwargs)

        async def astream(
            self, input: Any, config: Any = None, **kwargs: Any
        ) -> AsyncIterator[Any]:
            async for chunk in self.graph.astream(input, config, **kwargs):
                yield chunk

        def __repr__(self) -> str:
            return f"as_runnable({self.name!r})"

    return GraphRunnable


def as_runnable(graph: Any) -> Any:
    """``graph`` (a compiled graph) as a LangChain ``Runnable`` that runs it: for
    ``runnable | as_runnable(graph)``, or anywhere LangChain wants a ``Runnable``."""
    return _adapter_class()(graph)


def pipe(graph: Any, *others: Any, name: str | None = None) -> Any:
    """LangChain's ``RunnableSequence`` of ``graph`` then ``others`` (runnables, callables or
    dicts, as ``Runnable.pipe`` takes them)."""
    from langchain_core.runnables import RunnableSequence

    return RunnableSequence(as_runnable(graph), *others, name=name)
