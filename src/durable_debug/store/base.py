"""``BaseStore``: the interface of a store, as LangGraph's ``langgraph.store.base`` defines it.

A store implements :meth:`BaseStore.batch` and :meth:`BaseStore.abatch`, which run a list of
operations (:class:`GetOp`, :class:`SearchOp`, :class:`PutOp`, :class:`ListNamespacesOp`) and
return one result each; the methods nodes call (``get``, ``search``, ``put``, ``delete``,
``list_namespaces`` and their ``a``-prefixed twins) are built on them here, so a store written
for LangGraph runs unchanged with its imports changed:

    from durable_debug.store.base import BaseStore, GetOp, PutOp

    class DictStore(BaseStore):
        def batch(self, ops):
            ...  # one result per op: an Item or None, a list of SearchItem, None, namespaces

        async def abatch(self, ops):
            return self.batch(ops)

:class:`~durable_debug.store.memory.InMemoryStore` is a ``BaseStore`` that implements the
methods themselves (and ``batch`` on them, with :func:`apply_batch`). Unlike LangGraph's, item
TTLs are accepted and not applied (``supports_ttl`` is False, as on LangGraph's base).
"""

from __future__ import annotations

import datetime as _dt
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from typing_extensions import TypedDict

__all__ = [
    "NOT_PROVIDED",
    "BaseStore",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "TTLConfig",
    "aapply_batch",
    "aapply_op",
    "apply_batch",
    "apply_op",
    "checked_namespace",
]

Namespace = tuple[str, ...]
"""A namespace path, e.g. ``("users", "u1")``."""

NamespacePath = tuple[str, ...]
"""A namespace pattern of ``list_namespaces``: labels, ``"*"`` matching any one."""

NamespaceMatchType = Literal["prefix", "suffix"]
"""Which end of a namespace a :class:`MatchCondition` matches."""


class NotProvided:
    """The type of :data:`NOT_PROVIDED`: an argument left out (``put(..., ttl=...)``)."""

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_PROVIDED"


NOT_PROVIDED = NotProvided()
"""``put``'s ``ttl`` when not given (the store's default applies)."""


class InvalidNamespaceError(ValueError):
    """A namespace that is empty, holds a label that is not a non-empty string, contains a
    period or a NUL byte, or starts with the reserved label ``"langgraph"``."""


class Item:
    """A stored value with its namespace, key and timestamps."""

    __slots__ = ("created_at", "key", "namespace", "updated_at", "value")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: Namespace,
        created_at: _dt.datetime,
        updated_at: _dt.datetime,
    ) -> None:
        self.value = value
        """The stored dict."""
        self.key = key
        """Its key inside the namespace."""
        self.namespace = tuple(namespace)
        """The namespace path, e.g. ``("users", "u1")``."""
        self.created_at = created_at
        """When it was written (each ``put`` writes a new item)."""
        self.updated_at = updated_at
        """When it was last written."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return NotImplemented
        return self.dict() == other.dict()

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict[str, Any]:
        """The item as plain data (timestamps in ISO 8601)."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.dict().items())
        return f"{type(self).__name__}({fields})"


class SearchItem(Item):
    """An item found by :meth:`BaseStore.search`; ``score`` is its similarity to the
    query (None without a query, an index, or a vector of its own)."""

    __slots__ = ("score",)

    def __init__(self, *, score: float | None = None, **fields: Any) -> None:
        super().__init__(**fields)
        self.score = score
        """Cosine similarity to the query of a ranked search (its best field), or None."""

    def dict(self) -> dict[str, Any]:
        """The item as plain data, with its score."""
        return {**super().dict(), "score": self.score}


def checked_namespace(namespace: Iterable[str]) -> Namespace:
    """``namespace`` as a tuple; raise :class:`InvalidNamespaceError` when it is empty, holds a
    label that is not a non-empty string without periods or NUL bytes, or starts with the
    reserved label ``"langgraph"``."""
    path = _labels(namespace)
    if not path:
        raise InvalidNamespaceError("A store namespace cannot be empty")
    if path[0] == "langgraph":
        raise InvalidNamespaceError(f'A store namespace cannot start with "langgraph": {path}')
    return path


def _labels(namespace: Iterable[str]) -> Namespace:
    """``namespace`` as a tuple whose labels are checked (it may be empty: a search of every
    namespace)."""
    path = tuple(namespace)
    for label in path:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid label {label!r} in store namespace {path}: labels are non-empty "
                "strings without periods or NUL bytes"
            )
    return path


class GetOp(NamedTuple):
    """Read the item under ``key`` in ``namespace`` (result: an :class:`Item` or None)."""

    namespace: Namespace
    """Where the item lives."""
    key: str
    """Its key in the namespace."""
    refresh_ttl: bool = True
    """Whether reading refreshes the item's TTL (where the store applies TTLs)."""


class SearchOp(NamedTuple):
    """Find items under a namespace prefix (result: a list of :class:`SearchItem`)."""

    namespace_prefix: Namespace
    """The namespaces searched: every one starting with this."""
    filter: dict[str, Any] | None = None
    """``{"field": value}`` or ``{"field": {"$gt": 3}}`` conditions on the value."""
    limit: int = 10
    """Most items returned."""
    offset: int = 0
    """Items skipped first."""
    query: str | None = None
    """A text to rank by similarity (a store with an index)."""
    refresh_ttl: bool = True
    """Whether reading refreshes the items' TTLs (where the store applies TTLs)."""


class MatchCondition(NamedTuple):
    """A pattern a namespace must start (``"prefix"``) or end (``"suffix"``) with."""

    match_type: NamespaceMatchType
    """``"prefix"`` or ``"suffix"``."""
    path: NamespacePath
    """Labels, ``"*"`` matching any one."""


class ListNamespacesOp(NamedTuple):
    """List the namespaces (result: a list of namespace tuples)."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    """Patterns every namespace listed matches."""
    max_depth: int | None = None
    """Namespaces truncated to this many labels (duplicates removed)."""
    limit: int = 100
    """Most namespaces returned."""
    offset: int = 0
    """Namespaces skipped first."""


class PutOp(NamedTuple):
    """Store ``value`` under ``key`` in ``namespace``, or delete it (``value`` None)."""

    namespace: Namespace
    """Where the item lives."""
    key: str
    """Its key in the namespace."""
    value: Mapping[str, Any] | None
    """The dict stored, or None to delete."""
    index: Literal[False] | list[str] | None = None  # type: ignore[assignment]  # LangGraph's field name, which hides tuple.index
    """Fields embedded for search (None: the store's, False: none)."""
    ttl: float | None = None
    """Minutes the item lives (where the store applies TTLs)."""


Op = GetOp | SearchOp | PutOp | ListNamespacesOp
"""Any store operation."""
Result = Item | list[Item] | list[SearchItem] | list[tuple[str, ...]] | None
"""What an operation returns."""


class TTLConfig(TypedDict, total=False):
    """A store's TTL settings (LangGraph's keys)."""

    refresh_on_read: bool
    default_ttl: float | None
    sweep_interval_minutes: int | None


class IndexConfig(TypedDict, total=False):
    """A store's semantic index: vector size, embedding, fields embedded."""

    dims: int
    embed: Any
    fields: list[str] | None


class BaseStore(ABC):
    """A key-value store in namespaces, shared by every thread (see the module docstring).

    Subclasses implement :meth:`batch` and :meth:`abatch`; the other methods are built on
    them. Nodes receive the graph's store by a ``store`` parameter.
    """

    supports_ttl: bool = False
    """Whether the store applies ``ttl`` (this base: no)."""
    ttl_config: TTLConfig | None = None
    """The store's TTL settings, when it applies TTLs."""

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; one result per op."""

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch`."""

    def get(
        self, namespace: Namespace, key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item under ``key`` in ``namespace``, or None."""
        result = self.batch([_get(namespace, key, refresh_ttl)])[0]
        return result if isinstance(result, Item) else None

    def search(
        self,
        namespace_prefix: Namespace,
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under ``namespace_prefix`` matching ``filter`` (ranked by ``query`` in a
        store with an index)."""
        op = _search(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return _list(self.batch([op])[0])

    def put(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Store ``value`` (a dict) under ``key`` in ``namespace``."""
        self.batch([_put(namespace, key, value, index, ttl)])

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove ``key`` from ``namespace``."""
        self.batch([PutOp(_labels(namespace), str(key), None)])

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces matching ``prefix`` / ``suffix`` (``"*"``: any label)."""
        op = _list_namespaces(prefix, suffix, max_depth, limit, offset)
        return _list(self.batch([op])[0])

    async def aget(
        self, namespace: Namespace, key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async twin of :meth:`get`."""
        result = (await self.abatch([_get(namespace, key, refresh_ttl)]))[0]
        return result if isinstance(result, Item) else None

    async def asearch(
        self,
        namespace_prefix: Namespace,
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async twin of :meth:`search`."""
        op = _search(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return _list((await self.abatch([op]))[0])

    async def aput(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async twin of :meth:`put`."""
        await self.abatch([_put(namespace, key, value, index, ttl)])

    async def adelete(self, namespace: Namespace, key: str) -> None:
        """Async twin of :meth:`delete`."""
        await self.abatch([PutOp(_labels(namespace), str(key), None)])

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async twin of :meth:`list_namespaces`."""
        op = _list_namespaces(prefix, suffix, max_depth, limit, offset)
        return _list((await self.abatch([op]))[0])


def _get(namespace: Namespace, key: str, refresh_ttl: bool | None) -> GetOp:
    return GetOp(_labels(namespace), str(key), True if refresh_ttl is None else refresh_ttl)


def _search(
    prefix: Namespace,
    query: str | None,
    filter: dict[str, Any] | None,
    limit: int,
    offset: int,
    refresh_ttl: bool | None,
) -> SearchOp:
    refresh = True if refresh_ttl is None else refresh_ttl
    return SearchOp(_labels(prefix), filter, limit, offset, query, refresh)


def _put(
    namespace: Namespace,
    key: str,
    value: Mapping[str, Any],
    index: Literal[False] | list[str] | None,
    ttl: float | NotProvided | None,
) -> PutOp:
    namespace = checked_namespace(namespace)
    return PutOp(namespace, str(key), value, index, None if isinstance(ttl, NotProvided) else ttl)


def _list_namespaces(
    prefix: NamespacePath | None,
    suffix: NamespacePath | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> ListNamespacesOp:
    conditions = []
    if prefix:
        conditions.append(MatchCondition("prefix", tuple(prefix)))
    if suffix:
        conditions.append(MatchCondition("suffix", tuple(suffix)))
    return ListNamespacesOp(tuple(conditions), max_depth, limit, offset)


def _list(result: Result) -> list[Any]:
    return list(result) if isinstance(result, list) else []


def _conditions(op: ListNamespacesOp) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for condition in op.match_conditions or ():
        found[condition.match_type] = tuple(condition.path)
    return found


def apply_op(store: BaseStore, op: Op) -> Result:
    """Run ``op`` with ``store``'s own methods, for a store that implements those rather than
    :meth:`BaseStore.batch` (see :func:`apply_batch`)."""
    if isinstance(op, GetOp):
        return store.get(op.namespace, op.key, refresh_ttl=op.refresh_ttl)
    if isinstance(op, SearchOp):
        return store.search(
            op.namespace_prefix,
            query=op.query,
            filter=op.filter,
            limit=op.limit,
            offset=op.offset,
            refresh_ttl=op.refresh_ttl,
        )
    if isinstance(op, PutOp):
        if op.value is None:
            store.delete(op.namespace, op.key)
        else:
            store.put(op.namespace, op.key, op.value, op.index, ttl=op.ttl)
        return None
    if isinstance(op, ListNamespacesOp):
        return store.list_namespaces(
            **_conditions(op), max_depth=op.max_depth, limit=op.limit, offset=op.offset
        )
    raise TypeError(f"not a store operation: {op!r:.80}")


async def aapply_op(store: BaseStore, op: Op) -> Result:
    """Async twin of :func:`apply_op`."""
    if isinstance(op, GetOp):
        return await store.aget(op.namespace, op.key, refresh_ttl=op.refresh_ttl)
    if isinstance(op, SearchOp):
        return await store.asearch(
            op.namespace_prefix,
            query=op.query,
            filter=op.filter,
            limit=op.limit,
            offset=op.offset,
            refresh_ttl=op.refresh_ttl,
        )
    if isinstance(op, PutOp):
        if op.value is None:
            await store.adelete(op.namespace, op.key)
        else:
            await store.aput(op.namespace, op.key, op.value, op.index, ttl=op.ttl)
        return None
    if isinstance(op, ListNamespacesOp):
        return await store.alist_namespaces(
            **_conditions(op), max_depth=op.max_depth, limit=op.limit, offset=op.offset
        )
    raise TypeError(f"not a store operation: {op!r:.80}")


def apply_batch(store: BaseStore, ops: Iterable[Op]) -> list[Result]:
    """Run ``ops`` with :func:`apply_op` as LangGraph's in-memory store runs a batch: reads
    see the store as it was before the batch, and writes are applied after them, the last one
    for a namespace and key winning."""
    results: list[Result] = []
    writes: dict[tuple[Namespace, str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            writes[(op.namespace, op.key)] = op
            results.append(None)
        else:
            results.append(apply_op(store, op))
    for write in writes.values():
        apply_op(store, write)
    return results


async def aapply_batch(store: BaseStore, ops: Iterable[Op]) -> list[Result]:
    """Async twin of :func:`apply_batch`."""
    results: list[Result] = []
    writes: dict[tuple[Namespace, str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            writes[(op.namespace, op.key)] = op
            results.append(None)
        else:
            results.append(await aapply_op(store, op))
    for write in writes.values():
        await aapply_op(store, write)
    return results
