"""Where checkpoints live: the saver protocol, the serializer and the savers."""

from __future__ import annotations
