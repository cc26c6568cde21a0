"""Load a helper module of the test suite (tests/widget/…) from a benchmark script.

fixtures = load_test_helper("widget", "fixtures.py")
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def load_test_helper(folder: str, filename: str) -> ModuleType:
    """``tests/<folder>/<filename>`` as a module, under a name no test module uses."""
    path = REPO / "tests" / folder / filename
    name = f"durable_debug_{folder}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
