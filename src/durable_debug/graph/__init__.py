"""The engine: state graphs, super-steps, checkpoints, resume, fork, reducers, Send, interrupts."""

from __future__ import annotations
