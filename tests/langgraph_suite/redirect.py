"""Make ``langgraph.*`` imports resolve to durable_debug's modules of the same public names.

``install()`` puts a finder first on ``sys.meta_path``, so in the process that calls it (the
suite's own pytest process, never the normal test run) ``import langgraph.X`` gives a facade
of ``durable_debug.X`` (or of the module :data:`OVERRIDES` names) instead of the installed
LangGraph:

* a public name durable_debug's module has is that object itself;
* a public name it lacks (or a whole module it lacks) is a placeholder that raises
  :class:`MissingLangGraphAPI` naming ``langgraph.X.name`` when used (called, subscripted,
  read from, ``isinstance``), so only the tests that use it fail, and they say what is missing;
* a private module (a dotted part starting with ``_``) or a private name imports as such
  placeholders that raise :class:`PrivateLangGraphImport` when used, and patching one raises
  it: LangGraph's internals have no counterpart here, and the tests that use them say so.

Both errors derive from ``BaseException`` so that no ``pytest.raises(Exception)`` or engine
error handling can turn a missing API into a pass.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

PREFIX = "langgraph"
TARGET = "durable_debug"

OVERRIDES: dict[str, str] = {
    # Our savers keep the sync and async classes in one module (AsyncSqliteSaver is an alias).
    "langgraph.checkpoint.sqlite.aio": "durable_debug.checkpoint.sqlite",
    "langgraph.checkpoint.postgres.aio": "durable_debug.checkpoint.postgres",
}
"""LangGraph modules whose durable_debug counterpart is not the same dotted path."""


class MissingLangGraphAPI(BaseException):
    """A public LangGraph name durable_debug does not have was used; the message is its
    dotted name (``langgraph.func.entrypoint``)."""


class PrivateLangGraphImport(BaseException):
    """A private LangGraph module or name was imported; the message is its dotted name."""


def is_private(dotted: str) -> bool:
    """Whether a dotted ``langgraph`` name has a private part (one starting with ``_``)."""
    return any(part.startswith("_") for part in dotted.split(".")[1:])


def target_of(name: str) -> str:
    """The durable_debug module a ``langgraph`` module name resolves to."""
    return OVERRIDES.get(name, TARGET + name[len(PREFIX) :])


class _PlaceholderMeta(type):
    """Metaclass of the placeholders: any use of the class raises its error."""

    _lg_name: str
    _lg_private: bool
    _lg_error: BaseException | None

    def _lg_raise(cls) -> Any:
        if cls._lg_error is not None:
            raise cls._lg_error
        error = PrivateLangGraphImport if cls._lg_private else MissingLangGraphAPI
        raise error(cls._lg_name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._lg_raise()

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_") or name == "pytestmark":
            raise AttributeError(name)
        return cls._lg_raise()

    def __getitem__(cls, item: Any) -> Any:
        return cls._lg_raise()

    def __instancecheck__(cls, obj: Any) -> bool:
        return bool(cls._lg_raise())

    def __subclasscheck__(cls, sub: Any) -> bool:
        return bool(cls._lg_raise())

    def __or__(cls, other: Any) -> Any:
        return cls._lg_raise()

    def __ror__(cls, other: Any) -> Any:
        return cls._lg_raise()

    def __iter__(cls) -> Any:
        return cls._lg_raise()

    def __len__(cls) -> int:
        return int(cls._lg_raise())

    def __contains__(cls, item: Any) -> bool:
        return bool(cls._lg_raise())

    def __str__(cls) -> str:
        return str(cls._lg_raise())

    def __format__(cls, spec: str) -> str:
        return str(cls._lg_raise())

    def __add__(cls, other: Any) -> Any:
        return cls._lg_raise()

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __add__
    __lt__ = __le__ = __gt__ = __ge__ = __add__

    def __int__(cls) -> int:
        return int(cls._lg_raise())

    def __index__(cls) -> int:
        return int(cls._lg_raise())

    def __float__(cls) -> float:
        return float(cls._lg_raise())

    def __repr__(cls) -> str:
        # What a failure shows when a placeholder is compared or used as a key.
        if cls._lg_error is not None:
            return f"<broken {cls._lg_name}: {cls._lg_error!r}>"
        return f"<{'private' if cls._lg_private else 'missing'} {cls._lg_name}>"


def placeholder(dotted: str, *, private: bool = False, error: BaseException | None = None) -> type:
    """A stand-in for the LangGraph name ``dotted`` (a class, so it can be subclassed; the
    subclass cannot be instantiated). Using it raises ``error`` when given, else
    PrivateLangGraphImport or MissingLangGraphAPI naming ``dotted``."""
    short = dotted.rsplit(".", 1)[-1]
    attrs = {"_lg_name": dotted, "_lg_private": private, "_lg_error": error}
    return _PlaceholderMeta(short, (), attrs)


class _Facade(types.ModuleType):
    """``langgraph.X`` as the tests see it: durable_debug's module's public names, with
    placeholders for the rest. A private module's facade has only placeholders, and setting
    an attribute on it (patching LangGraph's internals) raises PrivateLangGraphImport."""

    def __init__(self, name: str, real: types.ModuleType | None, private: bool) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package, so every submodule comes through here
        self.__lg_real__ = real
        self.__lg_private__ = private

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        dotted = f"{self.__name__}.{name}"
        private = self.__lg_private__ or name.startswith("_")
        real = self.__lg_real__
        if not private and real is not None and hasattr(real, name):
            return getattr(real, name)
        stand_in = placeholder(dotted, private=private)
        self.__dict__[name] = stand_in
        return stand_in

    def __setattr__(self, name: str, value: Any) -> None:
        private = self.__dict__.get("__lg_private__") or name.startswith("_")
        if private and not name.startswith("__") and not isinstance(value, types.ModuleType):
            raise PrivateLangGraphImport(f"{self.__name__}.{name}")
        super().__setattr__(name, value)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: Any = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != PREFIX and not fullname.startswith(PREFIX + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if is_private(spec.name):
            return _Facade(spec.name, None, private=True)
        target = target_of(spec.name)
        try:
            real: types.ModuleType | None = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name is None or not target.startswith(exc.name):
                raise  # durable_debug's module exists but needs something absent
            real = None
        return _Facade(spec.name, real, private=False)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


_FINDER = _Finder()


def install() -> None:
    """Put the redirection first on ``sys.meta_path`` (idempotent). Raises when the real
    LangGraph was imported already: its modules would stay in ``sys.modules``."""
    if _FINDER in sys.meta_path:
        return
    loaded = sorted(m for m in sys.modules if m == PREFIX or m.startswith(PREFIX + "."))
    if loaded:
        raise RuntimeError(
            f"the real LangGraph is imported already ({', '.join(loaded[:3])}); install the "
            "redirection before anything imports langgraph"
        )
    sys.meta_path.insert(0, _FINDER)
