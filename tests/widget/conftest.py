"""Fixtures for the widget's tests: export data, headless Chromium, JupyterLab, Notebook 7, the
artifacts folder.

Chromium is Debian's (``apt-get install chromium``), driven by Python Playwright through
``executable_path``; Playwright's own browser downloads are never used. When Chromium cannot
start, the browser tests fail under CI (``CI`` set) and are skipped, with the reason, elsewhere;
so do the live-kernel tests when JupyterLab or Notebook 7 cannot start.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = os.environ.get("DURABLE_DEBUG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def load_fixtures() -> ModuleType:
    """tests/widget/fixtures.py under a name no other test folder's ``fixtures`` can shadow."""
    return _load("durable_debug_widget_fixtures", "fixtures.py")


def load_labserver() -> ModuleType:
    """tests/widget/labserver.py (the throwaway JupyterLab), under a unique module name."""
    return _load("durable_debug_widget_labserver", "labserver.py")


def _load(name: str, filename: str) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(filename))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def in_ci() -> bool:
    """True when running under CI, where a browser test must never be skipped."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def widget_fixtures() -> ModuleType:
    """The export-data builders (``small_export``, ``large_export``, ``SMALL``)."""
    return load_fixtures()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The folder where browser tests leave their screenshots."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium; fails (under CI) or skips (elsewhere) when it cannot start.

    Module-scoped: Playwright's sync API keeps an event loop running in this thread while it is
    started, which would stop every async test that runs after it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        _unavailable(f"Python Playwright is not installed ({error}): pip install playwright")
    try:
        manager = sync_playwright().start()
    except Exception as error:
        _unavailable(f"Playwright could not start: {error}")
    try:
        chromium = manager.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    except Exception as error:
        manager.stop()
        _unavailable(
            f"Chromium at {CHROMIUM} could not start ({error}); "
            "install it with: apt-get install -y chromium"
        )
    try:
        yield chromium
    finally:
        chromium.close()
        manager.stop()


@pytest.fixture(scope="module")
def labserver() -> ModuleType:
    """The JupyterLab helpers (``LabServer``, ``open_notebook``, ``run_all``, ``cell_text``…)."""
    return load_labserver()


@pytest.fixture(scope="module")
def lab(labserver: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A JupyterLab on a free local port, token-less, in a temp dir; fails (under CI) or skips
    (elsewhere) when it cannot start."""
    yield from _serve(labserver, tmp_path_factory, "lab")


@pytest.fixture(scope="module", params=["lab", "notebook"])
def frontend(
    request: pytest.FixtureRequest, labserver: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """JupyterLab, then Notebook 7 (one at a time), each as ``lab`` is: a test taking it runs in
    both front ends."""
    yield from _serve(labserver, tmp_path_factory, request.param)


def _serve(
    labserver: ModuleType, tmp_path_factory: pytest.TempPathFactory, frontend: str
) -> Iterator[Any]:
    workdir = tmp_path_factory.mktemp("jupyterlab" if frontend == "lab" else "notebook7")
    try:
        server = labserver.LabServer(workdir, frontend=frontend).__enter__()
    except labserver.LabUnavailable as error:
        _unavailable(str(error))
    try:
        yield server
    finally:
        server.stop()


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"browser test cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)
