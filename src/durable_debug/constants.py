"""LangGraph's ``langgraph.constants`` names, at the same path under ``durable_debug``
(``from langgraph.constants import START, END`` becomes
``from durable_debug.constants import START, END``). ``Send`` and ``Interrupt``, and the
constants LangGraph made private, are still found here with LangGraph's deprecation
warning."""

from __future__ import annotations

import warnings
from typing import Any

from durable_debug.checkpoint import names
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10
from durable_debug.graph.types import END, START, TAG_HIDDEN, TAG_NOSTREAM

__all__ = ["END", "START", "TAG_HIDDEN", "TAG_NOSTREAM"]


def __getattr__(name: str) -> Any:
    if name in ("Send", "Interrupt"):
        from durable_debug.graph import types

        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            f"Please use 'from langgraph.types import {name}' instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return getattr(types, name)
    if name.isupper() and hasattr(names, name):
        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. This constant is now "
            "private and should not be used directly. Please let the LangGraph team know if "
            "you need this value.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return getattr(names, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
