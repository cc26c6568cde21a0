"""durable_debug: a Jupyter-native time-travel debugger for durable graph execution."""

from __future__ import annotations

__version__ = "0.1.0"
