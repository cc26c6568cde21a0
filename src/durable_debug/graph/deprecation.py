"""LangGraph's deprecation warnings (``durable_debug.warnings`` gives them at LangGraph's
path), and the helper that gives one for a renamed argument."""

from __future__ import annotations

import warnings

__all__ = [
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
    "warn_renamed",
]


class LangGraphDeprecationWarning(DeprecationWarning):
    """LangGraph's deprecation warning: ``since`` is the LangGraph version that deprecated
    the feature, ``expected_removal`` the one expected to remove it."""

    def __init__(
        self,
        message: str,
        *args: object,
        since: tuple[int, int],
        expected_removal: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal or (since[0] + 1, 0)

    def __str__(self) -> str:
        return (
            f"{self.message}. Deprecated in LangGraph V{self.since[0]}.{self.since[1]}"
            f" to be removed in V{self.expected_removal[0]}.{self.expected_removal[1]}."
        )


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 0.5, to be removed in 2.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.0, to be removed in 2.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.1, to be removed in 3.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))


def warn_renamed(old: str, new: str, since: type[LangGraphDeprecationWarning]) -> None:
    """Warn, as LangGraph does, that the argument ``old`` was given where ``new`` is meant;
    the warning points at the caller of the function that calls this."""
    warnings.warn(
        f"`{old}` is deprecated and will be removed. Please use `{new}` instead.",
        since,
        stacklevel=3,
    )
