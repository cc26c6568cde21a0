"""``InMemoryStore``: the store of :mod:`durable_debug.store`, held in a dict (per process)."""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["InMemoryStore", "InvalidNamespaceError", "Item", "SearchItem"]

Namespace = tuple[str, ...]

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


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
    """An item found by :meth:`InMemoryStore.search`; ``score`` is None (no ranking)."""

    __slots__ = ("score",)

    def __init__(self, *, score: float | None = None, **fields: Any) -> None:
        super().__init__(**fields)
        self.score = score
        """Relevance score of a ranked search (always None here)."""

    def dict(self) -> dict[str, Any]:
        """The item as plain data, with its score."""
        return {**super().dict(), "score": self.score}


class InMemoryStore:
    """A store kept in memory: fast, shared by every graph given it, gone with the process.

    Values are dicts; ``put(namespace, key, None)`` deletes like ``delete``.
    """

    def __init__(self, **options: Any) -> None:
        if options.get("index") is not None:
            raise NotImplementedError(
                "InMemoryStore(index=...) (semantic search with embeddings) is not supported; "
                "search filters by namespace prefix and filter= instead"
            )
        self._data: dict[Namespace, dict[str, Item]] = {}
        self._lock = threading.Lock()

    # -- writing -----------------------------------------------------------------------------

    def put(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any] | None,
        index: Any = None,
        *,
        ttl: float | None = None,
    ) -> None:
        """Store ``value`` (a dict) under ``key`` in ``namespace``, replacing what was there."""
        namespace = _checked(namespace)
        if not isinstance(key, str):
            raise TypeError(f"store key must be a string, got {key!r} (namespace {namespace})")
        if value is None:
            self.delete(namespace, key)
            return
        if not isinstance(value, Mapping):
            raise TypeError(
                f"store values are dicts; got {type(value).__name__} for key {key!r} in "
                f"namespace {namespace}"
            )
        now = _dt.datetime.now(_dt.timezone.utc)
        item = Item(value=dict(value), key=key, namespace=namespace, created_at=now, updated_at=now)
        with self._lock:
            self._data.setdefault(namespace, {})[key] = item

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove ``key`` from ``namespace`` (nothing happens if it is not there)."""
        namespace = _checked(namespace)
        with self._lock:
            items = self._data.get(namespace)
            if items is not None:
                items.pop(key, None)
                if not items:
                    del self._data[namespace]

    # -- reading -----------------------------------------------------------------------------

    def get(
        self, namespace: Namespace, key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item under ``key`` in ``namespace``, or None."""
        return self._data.get(tuple(namespace), {}).get(key)

    def search(
        self,
        namespace_prefix: Namespace,
        /,
        *,
        query: str | None = None,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items whose namespace starts with ``namespace_prefix`` and whose value matches
        ``filter`` (``{"field": value}`` or ``{"field": {"$gt": 3}}``; also ``$eq``, ``$ne``,
        ``$gte``, ``$lt``, ``$lte``), in the order they were first stored."""
        prefix = tuple(namespace_prefix)
        found = []
        with self._lock:
            snapshot = [(ns, list(items.values())) for ns, items in self._data.items()]
        for namespace, items in snapshot:
            if namespace[: len(prefix)] != prefix:
                continue
            found += [item for item in items if _matches(item.value, filter or {})]
        return [
            SearchItem(
                value=item.value,
                key=item.key,
                namespace=item.namespace,
                created_at=item.created_at,
                updated_at=item.updated_at,
            )
            for item in found[offset : offset + limit]
        ]

    def list_namespaces(
        self,
        *,
        prefix: Namespace | None = None,
        suffix: Namespace | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Namespace]:
        """The namespaces holding items, sorted; ``prefix`` / ``suffix`` may use ``"*"`` for
        any label; ``max_depth`` truncates them (duplicates removed)."""
        with self._lock:
            namespaces = list(self._data)
        if prefix is not None:
            namespaces = [ns for ns in namespaces if _labels_match(ns, tuple(prefix))]
        if suffix is not None:
            namespaces = [
                ns
                for ns in namespaces
                if _labels_match(tuple(reversed(ns)), tuple(reversed(suffix)))
            ]
        if max_depth is not None:
            namespaces = list({ns[:max_depth] for ns in namespaces})
        return sorted(namespaces)[offset : offset + limit]

    # -- async twins -------------------------------------------------------------------------

    async def aput(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any] | None,
        index: Any = None,
        *,
        ttl: float | None = None,
    ) -> None:
        """Async twin of :meth:`put`."""
        self.put(namespace, key, value, index, ttl=ttl)

    async def aget(
        self, namespace: Namespace, key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async twin of :meth:`get`."""
        return self.get(namespace, key)

    async def adelete(self, namespace: Namespace, key: str) -> None:
        """Async twin of :meth:`delete`."""
        self.delete(namespace, key)

    async def asearch(
        self,
        namespace_prefix: Namespace,
        /,
        *,
        query: str | None = None,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async twin of :meth:`search`."""
        return self.search(namespace_prefix, query=query, filter=filter, limit=limit, offset=offset)

    async def alist_namespaces(
        self,
        *,
        prefix: Namespace | None = None,
        suffix: Namespace | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Namespace]:
        """Async twin of :meth:`list_namespaces`."""
        return self.list_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    def __repr__(self) -> str:
        count = sum(len(items) for items in self._data.values())
        return f"<InMemoryStore {len(self._data)} namespaces, {count} items>"


def _checked(namespace: Iterable[str]) -> Namespace:
    path = tuple(namespace)
    if not path:
        raise InvalidNamespaceError("A store namespace cannot be empty")
    for label in path:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid label {label!r} in store namespace {path}: labels are non-empty "
                "strings without periods or NUL bytes"
            )
    if path[0] == "langgraph":
        raise InvalidNamespaceError(f'A store namespace cannot start with "langgraph": {path}')
    return path


def _labels_match(namespace: Namespace, pattern: Namespace) -> bool:
    if len(namespace) < len(pattern):
        return False
    return all(p == "*" or n == p for n, p in zip(namespace, pattern, strict=False))


def _matches(value: Any, condition: Any) -> bool:
    """``value`` matches a filter: nested dicts field by field, lists item by item,
    ``{"$op": x}`` by comparison."""
    if isinstance(condition, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in condition):
            return all(_compare(value, op, operand) for op, operand in condition.items())
        if not isinstance(value, Mapping):
            return False
        return all(_matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(_matches(v, c) for v, c in zip(value, condition, strict=True))
        )
    return bool(value == condition)


def _compare(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    if operator not in _OPERATORS:
        raise ValueError(
            f"Unknown filter operator {operator!r}; use one of {', '.join(_OPERATORS)}"
        )
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    if operator == "$gt":
        return left > right
    if operator == "$gte":
        return left >= right
    if operator == "$lt":
        return left < right
    return left <= right
