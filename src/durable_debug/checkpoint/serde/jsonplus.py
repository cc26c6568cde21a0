"""``JsonPlusSerializer``: LangGraph's serializer interface over durable_debug's serializer.

Code written for LangGraph constructs ``JsonPlusSerializer(...)`` (to hand a saver, to subclass
in a test, to round-trip a value); with its import changed it gets this class, which takes the
same keywords and speaks the same ``(type, bytes)`` tags:

* ``"null"``, ``"bytes"``, ``"bytearray"`` for None and raw bytes, as LangGraph writes them;
* ``"msgpack"`` for everything else, in durable_debug's format
  (:class:`~durable_debug.checkpoint.serde.MsgpackSerializer`: its closed set of types, its
  limits, its rules for which classes loading rebuilds);
* ``"json"`` is read (LangGraph's older checkpoints): a ``{"lc": 2, "type": "constructor"}``
  object naming ``langgraph.types.Interrupt``, ``Send`` or ``Command`` becomes ours; one naming
  a class loading trusts anyway (registered, written by this process, a LangChain message, or
  allowed by :func:`~durable_debug.allow_types`) or allowed by ``allowed_json_modules`` and
  already imported is built from its arguments; anything else stays the dict it is;
* ``"pickle"`` only with ``pickle_fallback=True``, as in LangGraph: a value the serializer
  refuses is then pickled, and a pickle is loaded. Loading a pickle runs code the bytes choose,
  so turn this on only for checkpoints no one else can write.

Nothing is ever imported by loading: ``allowed_json_modules`` and ``allowed_msgpack_modules``
allow classes whose module the process has imported already (``True``: any such class).
LangGraph's own msgpack format (its extension codes) is not read here; its savers' files are
read by :mod:`durable_debug.checkpoint.langgraph_serde`.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable
from typing import Any, Literal

from durable_debug.checkpoint import objects
from durable_debug.checkpoint.names import STORED_TYPE_NAMES
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    Limits,
    MsgpackSerializer,
    TypeRegistry,
    UnsupportedValueError,
)

__all__ = ["EMPTY_BYTES", "JsonPlusSerializer"]

EMPTY_BYTES = b""
"""The payload of a None (type ``"null"``)."""

_LANGGRAPH_TYPES = {
    ("langgraph", "types", name): stored for name, stored in STORED_TYPE_NAMES.items()
}
"""LangGraph's path of each engine value class → the name ours is registered under."""

Allowed = Iterable[tuple[str, ...] | type] | Literal[True] | None
"""What ``allowed_json_modules`` / ``allowed_msgpack_modules`` take: ``(module..., name)``
tuples or classes, True (any class already imported), or None (the built-in rules only)."""


def _allowlist(given: Allowed, what: str) -> set[tuple[str, ...]] | Literal[True]:
    if given is None:
        return set()
    if given is True:
        return True
    keys: set[tuple[str, ...]] = set()
    for item in given:
        if isinstance(item, type):
            keys.add((*item.__module__.split("."), item.__qualname__))
        elif isinstance(item, (tuple, list)) and len(item) >= 2:
            keys.add(tuple(str(part) for part in item))
        else:
            raise TypeError(f"{what} takes (module, ..., name) tuples or classes, got {item!r:.80}")
    return keys


class JsonPlusSerializer(MsgpackSerializer):
    """LangGraph's ``JsonPlusSerializer`` constructor and tags over durable_debug's format
    (see the module docstring).

    ``allowed_msgpack_modules`` defaults to durable_debug's own rules (LangGraph's default
    allows every class, importing its module; ours never imports). ``__unpack_ext_hook__``
    (a hook for LangGraph's own extension codes) is refused: this format has none to hook.
    """

    def __init__(
        self,
        *,
        pickle_fallback: bool = False,
        allowed_json_modules: Allowed = None,
        allowed_msgpack_modules: Allowed = None,
        __unpack_ext_hook__: Any = None,
        registry: TypeRegistry | None = None,
        limits: Limits | None = None,
    ) -> None:
        if __unpack_ext_hook__ is not None:
            raise TypeError(
                "JsonPlusSerializer(__unpack_ext_hook__=...) hooks LangGraph's msgpack extension "
                "codes, which durable_debug's format does not use; register your classes with "
                "durable_debug.register_type instead"
            )
        super().__init__(registry, limits=limits)
        self.pickle_fallback = pickle_fallback
        """Whether values the serializer refuses are pickled, and pickles loaded."""
        self.allowed_json_modules = _allowlist(allowed_json_modules, "allowed_json_modules")
        """Classes a ``"json"`` blob may be rebuilt into, once their module is imported."""
        self.allowed_msgpack_modules = _allowlist(
            allowed_msgpack_modules, "allowed_msgpack_modules"
        )
        """Classes a ``"msgpack"`` blob may be rebuilt into beyond the built-in rules, once
        their module is imported."""

    def with_msgpack_allowlist(self, extra: Iterable[tuple[str, ...] | type]) -> JsonPlusSerializer:
        """A copy of this serializer that also rebuilds the classes ``extra`` names."""
        allowed = self.allowed_msgpack_modules
        more = _allowlist(list(extra), "extra")
        merged: Allowed = True if allowed is True or more is True else [*allowed, *more]
        return JsonPlusSerializer(
            pickle_fallback=self.pickle_fallback,
            allowed_json_modules=self.allowed_json_modules or None,
            allowed_msgpack_modules=merged,
            registry=self.registry,
            limits=self.limits,
        )

    # -- saving ------------------------------------------------------------------------------

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """``("null", b"")`` for None, ``("bytes" | "bytearray", data)`` for raw bytes, else
        ``("msgpack", data)``; a value the serializer refuses is ``("pickle", data)`` with
        ``pickle_fallback=True`` and :class:`UnsupportedValueError` without."""
        if obj is None:
            return "null", EMPTY_BYTES
        if type(obj) is bytes:
            return "bytes", obj
        if type(obj) is bytearray:
            return "bytearray", bytes(obj)
        try:
            return super().dumps_typed(obj)
        except UnsupportedValueError:
            if not self.pickle_fallback:
                raise
            return "pickle", pickle.dumps(obj)

    # -- loading -----------------------------------------------------------------------------

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """The value of a ``(type, bytes)`` pair of any tag :meth:`dumps_typed` writes, or
        ``"json"``; a ``"pickle"`` without ``pickle_fallback=True`` raises
        ``NotImplementedError`` (as LangGraph's does), loading nothing."""
        try:
            kind, payload = data
        except (TypeError, ValueError):
            raise CorruptPayloadError(f"expected a (tag, bytes) pair, got {data!r:.80}") from None
        if kind == "null":
            return None
        if kind == "bytes":
            return bytes(payload)
        if kind == "bytearray":
            return bytearray(payload)
        if kind == "json":
            return self._json(payload)
        if kind == "pickle":
            if not self.pickle_fallback:
                raise NotImplementedError(
                    "Unknown serialization type: pickle (a pickled value is loaded only by "
                    "JsonPlusSerializer(pickle_fallback=True), since unpickling runs code the "
                    "bytes choose)"
                )
            return pickle.loads(payload)  # the user opted in with pickle_fallback=True
        return super().loads_typed((kind, payload))

    def _user_type(self, name: Any, expect: Any, kind: str) -> type | None:
        cls = super()._user_type(name, expect, kind)
        if cls is None and isinstance(name, str):
            module, _, qualname = name.replace(":", ".").rpartition(".")
            found = self._allowed_class(self.allowed_msgpack_modules, module, qualname)
            if found is not None and expect(found):
                return found
        return cls

    def _allowed_class(
        self, allowed: set[tuple[str, ...]] | Literal[True], module: str, name: str
    ) -> type | None:
        if not module or not (allowed is True or (*module.split("."), name) in allowed):
            return None
        return objects.imported_class(module, name)

    def _json(self, payload: bytes) -> Any:
        size = len(payload)
        if size > self.limits.max_bytes:
            raise CorruptPayloadError(
                f"the JSON blob holds {size} bytes, more than the limit of "
                f"{self.limits.max_bytes}; {self.limits.hint('max_bytes')} if it is genuine"
            )
        try:
            return json.loads(payload, object_hook=self._revive)
        except (ValueError, RecursionError) as exc:
            raise CorruptPayloadError(f"the blob is not valid JSON ({exc})") from None

    def _revive(self, value: dict[str, Any]) -> Any:
        """``json.loads``'s object hook: a LangChain constructor object into its class, when
        the class is known (see the module docstring); any other dict as it is."""
        path = value.get("id")
        if value.get("lc") != 2 or value.get("type") != "constructor" or not isinstance(path, list):
            return value
        if len(path) < 2 or not all(isinstance(part, str) for part in path):
            return value
        *module_parts, name = path
        module = ".".join(module_parts)
        stored = _LANGGRAPH_TYPES.get(tuple(path))
        cls = (
            self.registry.lookup(stored)
            if stored is not None
            else objects.class_for_loading(self.registry, f"{module}:{name}", _any_class)
        )
        if cls is None:
            cls = self._allowed_class(self.allowed_json_modules, module, name)
        if cls is None or issubclass(cls, BaseException):
            return value
        args = value.get("args") or []
        kwargs = value.get("kwargs") or {}
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            return value
        try:
            return cls(*args, **kwargs)
        except Exception:  # LangGraph gives None for an object its class refuses to build
            return None


def _any_class(cls: type) -> bool:
    return True
