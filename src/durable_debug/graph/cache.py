"""Node results cached across runs: ``add_node(..., cache_policy=CachePolicy())`` with
``compile(cache=InMemoryCache())``.

A task of a node with a cache policy first looks up its input (through the policy's
``key_func``, by default a hash of the serialized input); on a hit the node does not run and
the task's writes are the cached ones, saved and streamed as if it had run (the ``updates``
chunk carries ``"__metadata__": {"cached": True}``). On a miss the node runs and its writes are
cached for ``ttl`` seconds (None: until the process ends or the cache is cleared).

    builder.add_node("search", search, cache_policy=CachePolicy(ttl=300))
    graph = builder.compile(checkpointer=MemorySaver(), cache=InMemoryCache())
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from durable_debug.checkpoint.serde import MsgpackSerializer, SerdeError

if TYPE_CHECKING:
    from durable_debug.graph.algo import Task
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "CachePolicy",
    "InMemoryCache",
    "default_cache_key",
    "lookup",
    "remember",
]

_serde = MsgpackSerializer()


def default_cache_key(value: Any) -> str:
    """A hash of ``value`` serialized the way checkpoints are (so equal states hit)."""
    return hashlib.sha256(_serde.dumps(value)).hexdigest()


KeyFuncT = TypeVar("KeyFuncT", bound=Callable[..., str | bytes])
"""The type of a :class:`CachePolicy`'s key function (``CachePolicy[MyKeyFunc]``)."""


@dataclass(frozen=True)
class CachePolicy(Generic[KeyFuncT]):
    """How a node's results are cached: by ``key_func(input)``, for ``ttl`` seconds."""

    key_func: Callable[[Any], str | bytes] = field(default=default_cache_key)
    """Turns the node's input into the cache key."""
    ttl: float | None = None
    """Seconds an entry lives; None: no expiry."""


class InMemoryCache:
    """A cache of node writes kept in memory (per process), shared by the graphs given it."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, **options: Any) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, ...], tuple[float | None, list[tuple[str, Any]]]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> list[tuple[str, Any]] | None:
        """The writes cached under ``key``, or None (missing or expired)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, writes = entry
            if expires is not None and self._clock() >= expires:
                del self._entries[key]
                return None
            return list(writes)

    def set(
        self, key: tuple[str, ...], writes: Sequence[tuple[str, Any]], ttl: float | None
    ) -> None:
        """Cache ``writes`` under ``key`` for ``ttl`` seconds (None: no expiry)."""
        expires = None if ttl is None else self._clock() + ttl
        with self._lock:
            self._entries[key] = (expires, list(writes))

    def clear(self, nodes: Sequence[str] | None = None) -> None:
        """Forget every entry, or those of ``nodes``."""
        with self._lock:
            if nodes is None:
                self._entries.clear()
            else:
                names = set(nodes)
                self._entries = {k: v for k, v in self._entries.items() if k[0] not in names}

    async def aclear(self, nodes: Sequence[str] | None = None) -> None:
        """Async twin of :meth:`clear`."""
        self.clear(nodes)

    def __len__(self) -> int:
        return len(self._entries)


def _key(task: Task, policy: CachePolicy[Any]) -> tuple[str, ...] | None:
    try:
        raw = policy.key_func(task.input)
    except SerdeError:
        return None  # an input the serializer cannot hash: run the node, cache nothing
    except Exception as exc:
        raise ValueError(
            f"The cache_policy key_func of node {task.name!r} failed on the node's input: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    text = raw.hex() if isinstance(raw, bytes) else str(raw)
    fn = task.node.fn
    ident = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
    return (task.name, ident, text)


def lookup(graph: CompiledStateGraph[Any, Any, Any, Any], task: Task) -> bool:
    """Give ``task`` its cached writes if there are any; True on a hit."""
    cache, policy = getattr(graph, "cache", None), task.node.cache_policy
    if cache is None or policy is None:
        return False
    key = _key(task, policy)
    writes = cache.get(key) if key is not None else None
    if writes is None:
        return False
    task.writes, task.status, task.cached = writes, "done", True
    return True


def remember(graph: CompiledStateGraph[Any, Any, Any, Any], task: Task) -> None:
    """Cache the writes of ``task`` if it finished and its node has a cache policy."""
    cache, policy = getattr(graph, "cache", None), task.node.cache_policy
    if cache is None or policy is None or task.status != "done" or task.cached:
        return
    key = _key(task, policy)
    if key is not None:
        cache.set(key, task.writes, policy.ttl)
