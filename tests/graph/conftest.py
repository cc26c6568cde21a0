"""Fixtures for the engine tests."""

from __future__ import annotations

import pytest

from durable_debug import MemorySaver


@pytest.fixture
def saver() -> MemorySaver:
    """A fresh in-memory saver."""
    return MemorySaver()
