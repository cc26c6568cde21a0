"""``InMemoryStore``: the store of :mod:`durable_debug.store`, held in a dict (per process)."""

from __future__ import annotations

import datetime as _dt
import inspect
import json
import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from durable_debug.store.base import (
    NOT_PROVIDED,
    BaseStore,
    InvalidNamespaceError,
    Item,
    Namespace,
    NotProvided,
    Op,
    Result,
    SearchItem,
    aapply_batch,
    apply_batch,
)
from durable_debug.store.base import checked_namespace as _checked

__all__ = ["InMemoryStore", "InvalidNamespaceError", "Item", "SearchItem"]

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


class InMemoryStore(BaseStore):
    """A store kept in memory: fast, shared by every graph given it, gone with the process.

    Values are dicts; ``put(namespace, key, None)`` deletes like ``delete``.

    ``index={"dims": n, "embed": e, "fields": ["$"]}`` turns on semantic search: ``e`` is a
    LangChain ``Embeddings`` (anything with ``embed_documents`` / ``embed_query``) or a
    function from a list of texts to their vectors (sync or async). ``put`` embeds the text at
    each of ``fields`` (``"$"``: the whole value as JSON; ``"a.b"``, ``"a[0]"``, ``"a[*]"``,
    ``"*"``; ``put(..., index=[...])`` overrides them, ``index=False`` embeds nothing), and
    ``search(..., query=...)`` ranks items by the cosine similarity of their best field.
    """

    def __init__(self, *, index: Mapping[str, Any] | None = None) -> None:
        self._data: dict[Namespace, dict[str, Item]] = {}
        self._vectors: dict[tuple[Namespace, str], list[list[float]]] = {}
        self._lock = threading.Lock()
        self._index: _Index | None = None if index is None else _Index(index)

    # -- writing -----------------------------------------------------------------------------

    def put(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any] | None,
        index: Any = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
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
        vectors = None
        if self._index is not None:
            texts = self._index.texts(value, index, namespace, key)
            vectors = self._index.embed_documents(texts, namespace, key) if texts else []
        self._write(namespace, key, value, vectors)

    def _write(
        self,
        namespace: Namespace,
        key: str,
        value: Mapping[str, Any],
        vectors: list[list[float]] | None,
    ) -> None:
        now = _dt.datetime.now(_dt.timezone.utc)
        item = Item(value=dict(value), key=key, namespace=namespace, created_at=now, updated_at=now)
        with self._lock:
            self._data.setdefault(namespace, {})[key] = item
            if vectors:
                self._vectors[(namespace, key)] = vectors
            else:
                self._vectors.pop((namespace, key), None)

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove ``key`` from ``namespace`` (nothing happens if it is not there)."""
        namespace = _checked(namespace)
        with self._lock:
            self._vectors.pop((namespace, key), None)
            # as in LangGraph, the namespace is known from then on, even emptied
            self._data.setdefault(namespace, {}).pop(key, None)

    # -- reading -----------------------------------------------------------------------------

    def get(
        self, namespace: Namespace, key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item under ``key`` in ``namespace``, or None. As in LangGraph, reading a
        namespace makes it known: ``list_namespaces()`` lists it from then on."""
        return self._data.setdefault(tuple(namespace), {}).get(key)

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
        ``$gte``, ``$lt``, ``$lte``), in the order they were first stored. With ``query=``
        and an ``index``, ranked by similarity to the query (best first; items with no vector
        of their own come last, unscored)."""
        vector = None
        if query and self._index is not None:
            vector = self._index.embed_query(query)
        return self._search(namespace_prefix, vector, filter, limit, offset)

    def _search(
        self,
        namespace_prefix: Namespace,
        vector: list[float] | None,
        filter: Mapping[str, Any] | None,
        limit: int,
        offset: int,
    ) -> list[SearchItem]:
        prefix = tuple(namespace_prefix)
        found = []
        with self._lock:
            snapshot = [(ns, list(items.values())) for ns, items in self._data.items()]
            vectors = dict(self._vectors) if vector is not None else {}
        for namespace, items in snapshot:
            if namespace[: len(prefix)] != prefix:
                continue
            found += [item for item in items if _matches(item.value, filter or {})]
        if vector is None:
            return [_search_item(item, None) for item in found[offset : offset + limit]]
        scored = []
        unscored = []
        for item in found:
            own = vectors.get((item.namespace, item.key))
            if own:
                scored.append((max(_cosine(vector, v) for v in own), item))
            else:
                unscored.append(item)
        scored.sort(key=lambda pair: pair[0], reverse=True)
        kept: list[tuple[float | None, Item]] = list(scored[offset : offset + limit])
        if len(kept) < limit:
            kept += [(None, item) for item in unscored[: limit - len(kept)]]
        return [_search_item(item, score) for score, item in kept]

    def list_namespaces(
        self,
        *,
        prefix: Namespace | None = None,
        suffix: Namespace | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Namespace]:
        """The namespaces written, read or emptied (as LangGraph lists them), sorted;
        ``prefix`` / ``suffix`` may use ``"*"`` for any label; ``max_depth`` truncates them
        (duplicates removed)."""
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
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async twin of :meth:`put` (an async embedding function is awaited)."""
        if self._index is None or value is None or not isinstance(value, Mapping):
            self.put(namespace, key, value, index, ttl=ttl)
            return
        namespace = _checked(namespace)
        if not isinstance(key, str):
            raise TypeError(f"store key must be a string, got {key!r} (namespace {namespace})")
        texts = self._index.texts(value, index, namespace, key)
        vectors = await self._index.aembed_documents(texts, namespace, key) if texts else []
        self._write(namespace, key, value, vectors)

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
        """Async twin of :meth:`search` (an async embedding function is awaited)."""
        vector = None
        if query and self._index is not None:
            vector = await self._index.aembed_query(query)
        return self._search(namespace_prefix, vector, filter, limit, offset)

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

    # -- LangGraph's batch interface ---------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph's store operations, as its in-memory store does: reads first, on
        the store as it was, then the writes (see :func:`~durable_debug.store.base.apply_batch`)."""
        return apply_batch(self, ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch`."""
        return await aapply_batch(self, ops)

    def __repr__(self) -> str:
        count = sum(len(items) for items in self._data.values())
        return f"<InMemoryStore {len(self._data)} namespaces, {count} items>"


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        value=item.value,
        key=item.key,
        namespace=item.namespace,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=False))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norms if norms else 0.0


_PATH_TOKEN = re.compile(r"\[[^\]]*\]|[^.\[\]]+")


class _Index:
    """A store's embedding index settings: the fields to embed and how to embed texts."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        if not isinstance(config, Mapping) or "embed" not in config or "dims" not in config:
            raise ValueError(
                'InMemoryStore(index=...) takes {"dims": n, "embed": embeddings or function, '
                f'"fields": [...]}}; got {config!r:.120}'
            )
        self.dims = int(config["dims"])
        embed = config["embed"]
        if isinstance(embed, str):
            raise TypeError(
                f"InMemoryStore(index=...): embed={embed!r} names a provider model; pass the "
                "Embeddings object (e.g. langchain's init_embeddings(...)) or a function"
            )
        if not callable(embed) and not hasattr(embed, "embed_documents"):
            raise TypeError(
                "InMemoryStore(index=...): embed must be a LangChain Embeddings or a function "
                f"from a list of texts to vectors, got {type(embed).__name__}"
            )
        self.embed = embed
        self.fields = [str(f) for f in config.get("fields") or ["$"]]
        for field in self.fields:
            _path_tokens(field)

    def texts(
        self, value: Mapping[str, Any], index: Any, namespace: Namespace, key: str
    ) -> list[str]:
        """The texts of ``value`` to embed (``index``: None, False or a list of paths)."""
        if index is False:
            return []
        if index is None or index is True:
            fields = self.fields
        elif isinstance(index, (list, tuple)):
            fields = [str(f) for f in index]
        else:
            raise TypeError(
                f"store put index= must be None, False or a list of paths, got {index!r} "
                f"(namespace {namespace}, key {key!r})"
            )
        return [text for field in fields for text in _texts_at(value, field)]

    def _checked(
        self, vectors: Any, count: int, namespace: Namespace | None, key: str | None
    ) -> list[list[float]]:
        rows = [list(map(float, v)) for v in vectors]
        where = "the query" if namespace is None else f"namespace {namespace}, key {key!r}"
        if len(rows) != count:
            raise ValueError(
                f"The store's embed function returned {len(rows)} vectors for {count} texts "
                f"({where})"
            )
        for row in rows:
            if len(row) != self.dims:
                raise ValueError(
                    f"The store's embed function returned a vector of {len(row)} dimensions; "
                    f"index dims is {self.dims} ({where})"
                )
        return rows

    def embed_documents(
        self, texts: list[str], namespace: Namespace | None = None, key: str | None = None
    ) -> list[list[float]]:
        """The vectors of ``texts``, from a sync call."""
        if hasattr(self.embed, "embed_documents"):
            vectors = self.embed.embed_documents(texts)
        else:
            vectors = self.embed(texts)
            if inspect.isawaitable(vectors):
                vectors.close()  # type: ignore[attr-defined]  # an un-awaited coroutine; Awaitable does not declare close
                raise TypeError(
                    "The store's embed function is async: use aput / asearch (namespace "
                    f"{namespace}, key {key!r})"
                )
        return self._checked(vectors, len(texts), namespace, key)

    async def aembed_documents(
        self, texts: list[str], namespace: Namespace | None = None, key: str | None = None
    ) -> list[list[float]]:
        """The vectors of ``texts``, awaiting an async embedding function."""
        if hasattr(self.embed, "aembed_documents"):
            vectors = await self.embed.aembed_documents(texts)
        else:
            vectors = self.embed(texts)
            if inspect.isawaitable(vectors):
                vectors = await vectors
        return self._checked(vectors, len(texts), namespace, key)

    def embed_query(self, query: str) -> list[float]:
        """The vector of a search query."""
        if hasattr(self.embed, "embed_query"):
            return self._checked([self.embed.embed_query(query)], 1, None, None)[0]
        return self.embed_documents([query])[0]

    async def aembed_query(self, query: str) -> list[float]:
        """The vector of a search query, awaiting an async embedding function."""
        if hasattr(self.embed, "aembed_query"):
            return self._checked([await self.embed.aembed_query(query)], 1, None, None)[0]
        return (await self.aembed_documents([query]))[0]


def _path_tokens(path: str) -> list[str]:
    """``"a.b[0]"`` → ``["a", "b", "[0]"]``; raises ValueError for a form not supported."""
    if "{" in path or "}" in path:
        raise ValueError(
            f"Store index field {path!r}: multi-field selection {{a,b}} is not supported; "
            "list the fields separately"
        )
    return _PATH_TOKEN.findall(path)


def _leaf_text(value: Any) -> list[str]:
    if isinstance(value, (str, int, float, bool)):
        return [str(value)]
    if isinstance(value, (list, dict)):
        return [json.dumps(value, sort_keys=True, ensure_ascii=False)]
    return []


def _texts_at(value: Any, path: str) -> list[str]:
    """The texts at ``path`` in ``value`` (``"$"``: the whole value as JSON)."""
    if not path or path == "$":
        return [json.dumps(dict(value), sort_keys=True, ensure_ascii=False)]
    nodes = [value]
    for token in _path_tokens(path):
        following: list[Any] = []
        for node in nodes:
            if token.startswith("["):
                if not isinstance(node, list):
                    continue
                inner = token[1:-1]
                if inner == "*":
                    following += node
                else:
                    try:
                        following.append(node[int(inner)])
                    except (ValueError, IndexError):
                        continue
            elif token == "*":
                if isinstance(node, dict):
                    following += list(node.values())
                elif isinstance(node, list):
                    following += node
            elif isinstance(node, dict) and token in node:
                following.append(node[token])
        nodes = following
    return [text for node in nodes for text in _leaf_text(node)]


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
    # As LangGraph: a field an item lacks (None) or holds text raises (TypeError, ValueError).
    left, right = float(value), float(operand)
    if operator == "$gt":
        return left > right
    if operator == "$gte":
        return left >= right
    if operator == "$lt":
        return left < right
    return left <= right
