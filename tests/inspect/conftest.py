"""Fixtures for the inspect tests: the notebooks' example graphs on every engine available."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from support.seed_graphs import ENGINES, load


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """The engine a test runs on."""
    return str(request.param)


@pytest.fixture
def seed(engine: str) -> Callable[[str], dict[str, Any]]:
    """Load a seed scenario on the current engine: ``ns = seed("resume")``."""
    return lambda name: load(engine, name)
