"""Fixtures for the magics tests: a real in-process IPython shell, and the notebooks'
example graphs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# The seed scenarios are shared with the inspect tests.
from support.seed_graphs import ENGINES

EXTENSION = "durable_debug"


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def ip() -> Iterator[object]:
    """IPython's in-process shell, with the extension unloaded and the namespace reset after."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    yield shell
    if EXTENSION in shell.extension_manager.loaded:
        shell.run_line_magic("unload_ext", EXTENSION)
    shell.reset(new_session=False)
