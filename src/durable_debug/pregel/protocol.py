"""LangGraph's ``langgraph.pregel.protocol.StreamProtocol``, at the same path under
``durable_debug``: the stream a LangGraph run hands a node when it streams subgraphs (the
node's config carries it), which a :class:`~durable_debug.pregel.remote.RemoteGraph` run as
that node forwards its chunks to.

    seen = []
    stream = StreamProtocol(seen.append, {"updates"})
    stream(((), "updates", {"node": {"x": 1}}))   # seen == [((), "updates", {...})]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["StreamChunk", "StreamProtocol"]

StreamChunk = tuple[tuple[str, ...], str, Any]
"""One chunk: ``(namespace, mode, data)``."""


class StreamProtocol:
    """A callable taking each :data:`StreamChunk` of the modes in :attr:`modes`."""

    __slots__ = ("_send", "modes")

    def __init__(self, send: Callable[[StreamChunk], None], modes: set[str]) -> None:
        self._send = send
        self.modes = modes
        """The stream modes the run streams (a node forwards only chunks of these)."""

    def __call__(self, chunk: StreamChunk) -> None:
        """Send ``chunk`` on."""
        self._send(chunk)
