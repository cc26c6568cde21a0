"""Names as the debugger shows them: invisible and direction-changing characters made visible,
and long names cut with an ellipsis (the full, escaped name goes in a tooltip or the detail).

    display_name("exe.txt\u202e")   # 'exe.txt\\u202e': a right-to-left override cannot turn the
                                    # text around ("txt.exe")
    short_name("n" * 10_000)        # 39 characters and '…'

The widget's front end does the same (``js/src/names.js``, with the same ``NAME_MAX``).
"""

from __future__ import annotations

import re

__all__ = ["NAME_MAX", "display_name", "short_name"]

NAME_MAX = 40
"""Characters of a name shown in a label, its ellipsis included (js/src/names.js: NAME_MAX)."""

_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
"""Control characters, and the format characters that hide text or change its direction."""


def display_name(name: str) -> str:
    """``name`` with every control, bidi and zero-width character written as ``\\uXXXX``."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", name)


def short_name(name: str, limit: int = NAME_MAX) -> str:
    """:func:`display_name`, cut to ``limit`` characters with an ellipsis when longer."""
    shown = display_name(name)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
