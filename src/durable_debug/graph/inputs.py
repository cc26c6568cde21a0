"""Inputs LangGraph refuses or warns about when a graph is built, refused or warned about the
same way here:

* ``compile(checkpointer=...)`` given something that is not a saver, ``True``, ``False`` or
  None: TypeError (:func:`valid_checkpointer`), where a later save would fail obscurely;
* a node, branch or entrypoint function whose ``config`` parameter is annotated other than
  ``RunnableConfig`` or ``RunnableConfig | None``: LangGraph's ``UserWarning``
  (:func:`warn_config_typing`). LangGraph then leaves that parameter out of the call; the
  engine still passes the config (docs/engine.md, ``diff-config-parameter``).

A reducer that does not take two positional arguments is refused where the state schema is
read (``graph/schema.py``).
"""

from __future__ import annotations

import inspect
import sys
import warnings
from typing import Any, Optional, TypeVar

from durable_debug.checkpoint.base import BaseCheckpointSaver, RunnableConfig
from durable_debug.checkpoint.foreign import is_langgraph_saver

__all__ = ["valid_checkpointer", "warn_config_typing"]

_Saver = TypeVar("_Saver")


def valid_checkpointer(checkpointer: _Saver) -> _Saver:
    """``checkpointer`` when it is one ``compile`` takes: a saver (ours or one of
    LangGraph's), ``True``, ``False`` or None; else the TypeError LangGraph raises, naming
    the type received."""
    if checkpointer is None or isinstance(checkpointer, (bool, BaseCheckpointSaver)):
        return checkpointer
    if is_langgraph_saver(checkpointer):
        return checkpointer
    raise TypeError(
        "Invalid checkpointer provided. Expected an instance of `BaseCheckpointSaver`, `True`, "
        f"`False`, or `None`. Received {type(checkpointer).__name__}. Pass a proper saver "
        "(e.g., InMemorySaver, AsyncPostgresSaver)."
    )


_CONFIG_ANNOTATIONS: tuple[Any, ...] = (
    inspect.Parameter.empty,
    "RunnableConfig",
    "Optional[RunnableConfig]",
    RunnableConfig,
    Optional[RunnableConfig],  # noqa: UP045  # LangGraph's list names this spelling
)
"""Annotations of a ``config`` parameter LangGraph takes without a warning (besides
LangChain's ``RunnableConfig`` and ``Optional`` of it, :func:`_langchain_config_types`);
this engine's ``RunnableConfig`` is its own spelling of the same dict."""

_INJECTABLE_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def warn_config_typing(fn: Any, params: Any) -> None:
    """Warn, as LangGraph does when it wraps a function as a node, when the ``config``
    parameter of ``fn`` (among ``params``, its signature's parameters) is annotated with
    anything but ``RunnableConfig`` or ``Optional[RunnableConfig]``; the warning points at the
    first caller outside durable_debug (the ``add_node`` line). The engine's own functions
    (the wrappers of entrypoints and prebuilt agents) are not the user's to fix."""
    param = params.get("config")
    if param is None or param.kind not in _INJECTABLE_KINDS:
        return
    if str(getattr(fn, "__module__", "")).startswith("durable_debug."):
        return
    annotation = param.annotation
    if any(_same(annotation, ok) for ok in (*_CONFIG_ANNOTATIONS, *_langchain_config_types())):
        return
    frame = sys._getframe(1)
    stacklevel = 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        "durable_debug."
    ):
        frame = frame.f_back
        stacklevel += 1
    warnings.warn(
        "The 'config' parameter should be typed as 'RunnableConfig' or "
        f"'RunnableConfig | None', not '{annotation}'. ",
        UserWarning,
        stacklevel=stacklevel,
    )


def _same(annotation: Any, accepted: Any) -> bool:
    try:
        return bool(annotation == accepted)
    except Exception:  # an annotation object whose == raises: not one of these
        return False


def _langchain_config_types() -> tuple[Any, ...]:
    """LangChain's ``RunnableConfig`` and ``Optional`` of it, when LangChain is imported (a
    function annotated with it imported it first)."""
    module = sys.modules.get("langchain_core.runnables.config")
    config_type = getattr(module, "RunnableConfig", None)
    if config_type is None:
        return ()
    return (config_type, Optional[config_type])  # noqa: UP045
