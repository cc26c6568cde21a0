"""One LangChain callback handler that every run of this process gets, and the functions it
hands its events to.

The inspect layer watches runs it did not start (a LangGraph graph's tasks, a chat model's
tokens) through ``langchain_core``'s configure hook: a handler registered there joins every
callback manager made afterwards, in every context. It is registered once per process, the
first time a listener is added, and stays; with no listener it does nothing.

    tokens = ProcessCallbacks[ChunkListener]("durable_debug_chunk_listener", make_handler)
    remove = tokens.add(listener)   # the handler calls each of tokens.listeners
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

__all__ = ["ProcessCallbacks"]

ListenerT = TypeVar("ListenerT")


class ProcessCallbacks(Generic[ListenerT]):
    """The listeners of one process-wide callback handler (``make_handler()`` builds it, on
    the first :meth:`add`; ``name`` names its context variable)."""

    def __init__(self, name: str, make_handler: Callable[[], Any]) -> None:
        self.name = name
        self._make_handler = make_handler
        self.listeners: list[ListenerT] = []
        """The functions the handler calls, in the order they were added."""
        self._registered = False
        self._lock = threading.Lock()

    def add(self, listener: ListenerT) -> Callable[[], None]:
        """Register the handler if it is not yet, add ``listener``; returns the function that
        removes it. Needs ``langchain_core``."""
        self._register_once()
        self.listeners.append(listener)

        def remove() -> None:
            if listener in self.listeners:
                self.listeners.remove(listener)

        return remove

    def _register_once(self) -> None:
        with self._lock:
            if self._registered:
                return
            from langchain_core.tracers.context import register_configure_hook

            handler = self._make_handler()
            # The variable's default is the handler itself, so every run in every context
            # gets it.
            register_configure_hook(ContextVar(self.name, default=handler), True)
            self._registered = True
