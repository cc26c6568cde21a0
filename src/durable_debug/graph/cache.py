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
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from durable_debug.checkpoint.names import CACHE_NS_WRITES
from durable_debug.checkpoint.serde import MsgpackSerializer, SerdeError

if TYPE_CHECKING:
    from durable_debug.graph.algo import Task
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "BaseCache",
    "CachePolicy",
    "FullKey",
    "InMemoryCache",
    "Namespace",
    "call_namespace",
    "default_cache_key",
    "identifier",
    "lookup",
    "node_namespace",
    "remember",
]

_serde = MsgpackSerializer()


def default_cache_key(value: Any) -> str:
    """A hash of ``value`` serialized the way checkpoints are (so equal states hit)."""
    return hashlib.sha256(_serde.dumps(value)).hexdigest()


ValueT = TypeVar("ValueT")
"""What a cache holds (the engine keeps a task's writes, a list of ``(channel, value)``)."""
KeyFuncT = TypeVar("KeyFuncT", bound=Callable[..., str | bytes])
"""The type of a :class:`CachePolicy`'s key function (``CachePolicy[MyKeyFunc]``)."""


@dataclass(frozen=True)
class CachePolicy(Generic[KeyFuncT]):
    """How a node's results are cached: by ``key_func(input)``, for ``ttl`` seconds."""

    key_func: Callable[[Any], str | bytes] = field(default=default_cache_key)
    """Turns the node's input into the cache key."""
    ttl: float | None = None
    """Seconds an entry lives; None: no expiry."""


Namespace = tuple[str, ...]
"""Where a cache groups its entries: ``(CACHE_NS_WRITES, function, node)`` for a node."""
FullKey = tuple[Namespace, str]
"""A cache entry's address: its namespace and its key within it."""


class BaseCache(ABC, Generic[ValueT]):
    """What the engine needs of a node cache, as LangGraph's ``langgraph.cache.base.BaseCache``
    declares it: batch ``get``, ``set`` of a mapping, ``clear`` by namespace, and their async
    twins. Subclass it (or LangGraph's, or pass one of LangGraph's caches) for another store;
    ``serde`` is there for caches that serialize what they keep."""

    serde: Any = None

    def __init__(self, *, serde: Any = None) -> None:
        self.serde = serde if serde is not None else self.serde

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The values cached under ``keys`` (missing and expired ones left out)."""

    @abstractmethod
    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Async twin of :meth:`get`."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | float | None]]) -> None:
        """Cache each value under its key for its ttl in seconds (None: no expiry)."""

    @abstractmethod
    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | float | None]]) -> None:
        """Async twin of :meth:`set`."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Forget the entries of ``namespaces`` (None: every entry)."""

    @abstractmethod
    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Async twin of :meth:`clear`."""


class InMemoryCache(BaseCache[ValueT]):
    """A cache of node writes kept in memory (per process), shared by the graphs given it.
    ``clock`` gives the time expiry is measured on (seconds)."""

    def __init__(self, *, serde: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(serde=serde)
        self._clock = clock
        self._entries: dict[Namespace, dict[str, tuple[float | None, Any]]] = {}
        self._lock = threading.RLock()

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The values cached under ``keys`` (missing and expired ones left out)."""
        found: dict[FullKey, ValueT] = {}
        with self._lock:
            now = self._clock()
            for ns, key in keys:
                space = self._entries.get(tuple(ns), {})
                entry = space.get(key)
                if entry is None:
                    continue
                expires, value = entry
                if expires is not None and now >= expires:
                    del space[key]
                    continue
                found[(tuple(ns), key)] = _copy(value)
        return found

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Async twin of :meth:`get`."""
        return self.get(keys)

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | float | None]]) -> None:
        """Cache each value under its key for its ttl in seconds (None: no expiry)."""
        with self._lock:
            now = self._clock()
            for (ns, key), (value, ttl) in pairs.items():
                expires = None if ttl is None else now + ttl
                self._entries.setdefault(tuple(ns), {})[key] = (expires, _copy(value))

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | float | None]]) -> None:
        """Async twin of :meth:`set`."""
        self.set(pairs)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Forget the entries of ``namespaces`` (None: every entry)."""
        with self._lock:
            if namespaces is None:
                self._entries.clear()
            else:
                for ns in namespaces:
                    self._entries.pop(tuple(ns), None)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Async twin of :meth:`clear`."""
        self.clear(namespaces)

    def __len__(self) -> int:
        return sum(len(space) for space in self._entries.values())


def _copy(value: Any) -> Any:
    """A list's own copy (the writes a task gets are its own to extend), else the value."""
    return list(value) if isinstance(value, list) else value


def identifier(fn: Any) -> str:
    """The name a function's cache entries are kept under: its module and qualified name, as
    LangGraph names it (``__dynamic__`` for one without them)."""
    fn = getattr(fn, "func", fn)  # a runnable wrapping a function
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if name and module else "__dynamic__"


def node_namespace(name: str, fn: Any) -> Namespace:
    """The namespace of a graph node's cached writes."""
    return (CACHE_NS_WRITES, identifier(fn), name)


def call_namespace(fn: Any) -> Namespace:
    """The namespace of a ``@task`` function's cached results."""
    return (CACHE_NS_WRITES, identifier(fn))


def _key(task: Task, policy: CachePolicy[Any], call: bool) -> FullKey | None:
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
    ns = call_namespace(fn) if call else node_namespace(task.name, fn)
    return (ns, text)


def lookup(
    graph: CompiledStateGraph[Any, Any, Any, Any], task: Task, *, call: bool = False
) -> bool:
    """Give ``task`` its cached writes if there are any; True on a hit. ``call``: the task is
    a ``@task`` call (its entries are the function's, not a node's)."""
    cache, policy = getattr(graph, "cache", None), task.node.cache_policy
    if cache is None or policy is None:
        return False
    key = _key(task, policy, call)
    if key is None:
        return False
    writes = cache.get([key]).get(key)
    if writes is None:
        return False
    task.writes, task.status, task.cached = list(writes), "done", True
    return True


def remember(
    graph: CompiledStateGraph[Any, Any, Any, Any], task: Task, *, call: bool = False
) -> None:
    """Cache the writes of ``task`` if it finished and its node has a cache policy."""
    cache, policy = getattr(graph, "cache", None), task.node.cache_policy
    if cache is None or policy is None or task.status != "done" or task.cached:
        return
    key = _key(task, policy, call)
    if key is not None:
        cache.set({key: (list(task.writes), policy.ttl)})
