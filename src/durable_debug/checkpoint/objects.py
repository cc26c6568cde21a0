"""User classes in checkpoints: which dataclasses, pydantic models and Enums are saved under
which name, and which ones a reading process rebuilds.

Saving needs no registration: the writing process trusts the classes it writes. A class
registered with :func:`~durable_debug.register_type` is saved under its registered name; any
other under its qualified name ``module:QualName`` (the colon tells the two apart), and the
process remembers it, so its own reads rebuild it.

Loading never imports a module a blob names and never looks a class up unless the name is
trusted (the one import it may do is ``langchain_core.messages`` itself, a fixed module, to
reach the safe set). A stored class is rebuilt when it is

* registered (by its registered name, or by its qualified name), or
* one this process saved, or
* in the built-in safe set: LangChain's message classes (``langchain_core.messages``), when
  langchain-core is installed, or
* already imported (its module is in ``sys.modules``) *and* allowed by name or module prefix:
  :func:`allow_types` or the environment variable ``DURABLE_DEBUG_ALLOWED_TYPES`` (comma
  separated, e.g. ``myapp.models,billing.Invoice``).

Anything else loads as a plain dict of its fields tagged with the class name under
:data:`TYPE_KEY` (an Enum member as ``{TYPE_KEY: name, "value": value}``):

    {"__type__": "myapp.models.Ticket", "id": 1, "title": "x"}
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.names import TYPE_KEY

if TYPE_CHECKING:
    from durable_debug.checkpoint.serde import TypeRegistry

__all__ = [
    "ALLOW_ENV",
    "TYPE_KEY",
    "allow_types",
    "allowed_types",
    "class_for_loading",
    "display_name",
    "imported_class",
    "name_for_saving",
    "qualified_name",
    "unloaded",
]

ALLOW_ENV = "DURABLE_DEBUG_ALLOWED_TYPES"
"""Environment variable: comma-separated class names or module prefixes that loading may
rebuild when their module is already imported."""

_SAFE_MODULE = "langchain_core.messages"
"""The built-in safe set: message classes of this module (langchain-core installed)."""

_lock = threading.Lock()
_allowed: set[str] = set()
_written: dict[str, type] = {}
"""Qualified name → class, for every unregistered class this process saved."""


PYDANTIC_CLASSES: set[type] = set()
"""Pydantic model classes saved before: the serializer encodes them first, without testing
every other kind."""


def model_fields(obj: Any) -> dict[str, Any]:
    """The fields of a pydantic model instance (extra fields included), as ``dict(obj)``
    gives them; the instance's own ``__dict__`` when it has no extra fields (read, never
    modify it)."""
    fields = obj.__dict__
    extra = getattr(obj, "__pydantic_extra__", None)
    return {**fields, **extra} if extra else fields


def allow_types(*names: str) -> None:
    """Let loading rebuild classes named ``names`` (``"pkg.mod.Class"``) or living under a
    module prefix (``"pkg"`` allows ``pkg.mod.Class``), once their module is imported."""
    for name in names:
        if not isinstance(name, str) or not name.strip(".").strip():
            raise ValueError(f"allow_types expects class names or module prefixes, got {name!r}")
    with _lock:
        _allowed.update(n.strip() for n in names)


def allowed_types() -> frozenset[str]:
    """The names and prefixes allowed now: :func:`allow_types` plus the environment variable."""
    from_env = {n.strip() for n in os.environ.get(ALLOW_ENV, "").split(",") if n.strip()}
    with _lock:
        return frozenset(_allowed | from_env)


def qualified_name(cls: type) -> str:
    """``module:QualName``: how an unregistered class is named in a blob."""
    return f"{cls.__module__}:{cls.__qualname__}"


def name_for_saving(registry: TypeRegistry, cls: type) -> str:
    """The name ``cls`` is saved under; the process trusts it for loading from now on."""
    registered = registry.name_of(cls)
    if registered is not None:
        return registered
    name = qualified_name(cls)
    if _written.get(name) is not cls:
        with _lock:
            _written[name] = cls
    return name


def class_for_loading(
    registry: TypeRegistry, name: str, expect: Callable[[type], bool]
) -> type | None:
    """The class to rebuild a stored object with, or None to load it as a tagged dict.

    Raises nothing, and imports nothing but the safe set's own module; a name that resolves to
    a class of the wrong kind (``expect`` false) gives None too.
    """
    cls = registry.lookup(name)
    if cls is None and ":" in name:
        cls = _written.get(name) or _registered_by_qualname(registry, name)
        if cls is None:
            cls = _safe(name) or _imported_and_allowed(name)
    if cls is None or not isinstance(cls, type) or not expect(cls):
        return None
    return cls


def display_name(name: str) -> str:
    """``module.QualName`` for a stored name (registered names are returned unchanged)."""
    return name.replace(":", ".", 1)


def unloaded(name: str, fields: Any, *, enum_value: bool = False) -> dict[str, Any]:
    """The tagged dict an object of a class that is not rebuilt loads as."""
    if enum_value or not isinstance(fields, dict):
        return {TYPE_KEY: display_name(name), "value": fields}
    return {TYPE_KEY: display_name(name), **{k: v for k, v in fields.items() if k != TYPE_KEY}}


def _registered_by_qualname(registry: TypeRegistry, name: str) -> type | None:
    for cls in list(registry._by_type):
        if qualified_name(cls) == name:
            return cls
    return None


def _find(module_name: str, qualname: str) -> Any:
    """The object ``qualname`` of an already imported module, read from namespaces only (no
    module ``__getattr__``, no import)."""
    module = sys.modules.get(module_name)
    if module is None:
        return None
    target: Any = module
    for part in qualname.split("."):
        try:
            target = vars(target).get(part)
        except TypeError:  # an object without a namespace of its own
            return None
        if target is None:
            return None
    return target


def imported_class(module_name: str, qualname: str) -> type | None:
    """The class ``qualname`` of the already imported module ``module_name``, or None; read
    from namespaces only: nothing is imported and no module ``__getattr__`` runs."""
    found = _find(module_name, qualname)
    return found if isinstance(found, type) else None


def _safe(name: str) -> type | None:
    module_name, _, qualname = name.partition(":")
    if module_name != _SAFE_MODULE and not module_name.startswith(_SAFE_MODULE + "."):
        return None
    try:  # a fixed, known module: the blob cannot choose what is imported
        messages = importlib.import_module(_SAFE_MODULE)
    except ImportError:
        return None
    # The package's public names (it imports its submodules lazily), checked against the
    # module the blob names.
    cls = getattr(messages, qualname, None) if qualname.isidentifier() else None
    if (
        isinstance(cls, type)
        and issubclass(cls, messages.BaseMessage)
        and cls.__module__ == module_name
    ):
        return cls
    return None


def _imported_and_allowed(name: str) -> type | None:
    module_name, _, qualname = name.partition(":")
    dotted = f"{module_name}.{qualname}"
    allowed = allowed_types()
    if not any(dotted == entry or dotted.startswith(entry.rstrip(".") + ".") for entry in allowed):
        return None
    found = _find(module_name, qualname)
    return found if isinstance(found, type) else None
