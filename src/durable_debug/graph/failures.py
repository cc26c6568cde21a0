"""What the engine records about a failed task, so the failure can be classified later.

A task that fails leaves its error text on the checkpoint (the ``__error__`` write, as
LangGraph saves it). When it fails *again* on the same checkpoint — a resume that did not
help — the engine also saves a ``__failures__`` write there: every failure of that task on
that checkpoint, oldest first, each ``{"error": repr, "type": exception type name,
"transient": bool}``. A single failure adds nothing to what LangGraph stores, so a thread
that failed once looks the same to LangGraph code; the inspect layer classifies it from the
error text (see ``durable_debug.inspect.failures``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from durable_debug.graph.types import RetryPolicy

__all__ = [
    "TRANSIENT_NAME_PARTS",
    "error_type_name",
    "failure_entry",
    "failure_history",
    "is_transient",
    "transient_name",
]

TRANSIENT_NAME_PARTS = ("timeout", "connection", "ratelimit", "toomanyrequests", "unavailable")
"""Lower-cased parts of an exception type's name that mark it transient (``ReadTimeout``,
``RateLimitError``, ``ServiceUnavailable``…), for libraries whose errors do not derive from the
builtin ``TimeoutError`` / ``ConnectionError``."""

_REPR_NAME = re.compile(r"^\s*([A-Za-z_][\w.]*)\(")


def transient_name(name: str) -> bool:
    """True when an exception type called ``name`` (dotted or not) looks transient."""
    short = name.rsplit(".", 1)[-1].lower().replace("_", "")
    return any(part in short for part in TRANSIENT_NAME_PARTS)


def error_type_name(error_text: str) -> str:
    """The exception type's name in a saved error text (``"ValueError('x')"`` → ``ValueError``);
    ``""`` when the text is not such a repr."""
    match = _REPR_NAME.match(str(error_text))
    return match.group(1) if match else ""


def is_transient(exc: BaseException, policies: Sequence[RetryPolicy] = ()) -> bool:
    """True for an error worth retrying later: timeouts, connection and rate-limit errors, or
    what one of the node's ``RetryPolicy.retry_on`` retries."""
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    if any(transient_name(cls.__name__) for cls in type(exc).__mro__):
        return True
    for policy in policies:
        try:
            if policy.should_retry(exc):
                return True
        except Exception:  # a user's predicate that fails says nothing about the error
            continue
    return False


def failure_entry(exc: BaseException, policies: Sequence[RetryPolicy] = ()) -> dict[str, Any]:
    """One entry of the ``__failures__`` write for ``exc``."""
    return {
        "error": repr(exc),
        "type": type(exc).__qualname__,
        "transient": is_transient(exc, policies),
    }


def failure_history(
    saved_error: str | None, saved_failures: list[dict[str, Any]], entry: dict[str, Any]
) -> list[dict[str, Any]] | None:
    """The ``__failures__`` list to save after a task failed with ``entry``, given what the
    checkpoint already held for it; None on a first failure (nothing to add)."""
    if saved_failures:
        return [*saved_failures, entry]
    if saved_error is None:
        return None
    name = error_type_name(saved_error)
    first = {"error": saved_error, "type": name, "transient": transient_name(name)}
    return [first, entry]
