"""A throwaway JupyterLab or Notebook 7 for the live-kernel browser tests and benchmark.

Starts ``python -m jupyterlab`` (or, with ``frontend="notebook"``, ``python -m notebook``) on a
free local port, token-less, with its root, config, data, runtime, settings and workspaces in a
temp directory, kernels running this Python with ``src/`` on ``PYTHONPATH``. Both front ends are
JupyterLab applications: the page helpers drive either through ``window.jupyterapp`` (exposed
with ``--LabApp.expose_app_in_browser`` or ``--JupyterNotebookApp.expose_app_in_browser``),
which is steadier than clicking menus. Only the address of a notebook differs:
``/lab/tree/<name>`` in JupyterLab, ``/notebooks/<name>`` in Notebook 7.

    with LabServer(tmp_path) as lab:       # or LabServer(tmp_path, frontend="notebook")
        lab.write_notebook("t.ipynb", ["x = 1", "print(x)"])
        page = browser.new_page()
        open_notebook(page, lab, "t.ipynb")
        run_all(page)
        outputs(page, 1)            # [{'output_type': 'stream', 'text': '1\\n', ...}]
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

__all__ = [
    "Frontend",
    "LabServer",
    "LabUnavailable",
    "cell_text",
    "execution_count",
    "open_notebook",
    "outputs",
    "run_all",
    "run_cell",
    "wait_for_text",
    "watch_errors",
    "widget_errors",
]

SRC = Path(__file__).resolve().parents[2] / "src"
START_TIMEOUT = 180.0
"""Seconds JupyterLab or Notebook 7 may take to answer on a small, busy machine."""

Frontend = Literal["lab", "notebook"]


class LabUnavailable(RuntimeError):
    """JupyterLab (or Notebook 7) could not be started here (the message says why)."""


class LabServer:
    """A JupyterLab (``frontend="lab"``) or Notebook 7 (``frontend="notebook"``) server in
    ``workdir``; a context manager that stops it (and its kernels)."""

    def __init__(self, workdir: Path, frontend: Frontend = "lab") -> None:
        if frontend not in ("lab", "notebook"):
            raise ValueError(f"frontend must be 'lab' or 'notebook', not {frontend!r}")
        self.frontend = frontend
        self.name = "JupyterLab" if frontend == "lab" else "Notebook 7"
        self.module = "jupyterlab" if frontend == "lab" else "notebook"
        self.workdir = workdir
        self.root = workdir / "notebooks"
        self.log_path = workdir / f"{self.module}.log"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def notebook_url(self, name: str) -> str:
        """Where the front end opens notebook ``name`` (a path relative to the root)."""
        if self.frontend == "lab":
            return f"{self.url}/lab/tree/{name}"
        return f"{self.url}/notebooks/{name}"

    def __enter__(self) -> LabServer:
        self._check_installed()
        self.root.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
            "JUPYTER_CONFIG_DIR": str(self.workdir / "config"),
            "JUPYTER_DATA_DIR": str(self.workdir / "data"),  # kernels and extensions: sys.prefix
            "IPYTHONDIR": str(self.workdir / "ipython"),
            "JUPYTER_RUNTIME_DIR": str(self.workdir / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(self.workdir / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.workdir / "workspaces"),
        }
        # Notebook 7 serves its pages itself but loads the jupyterlab server extension too, which
        # answers both front ends' update and news requests: the LabApp options apply to both.
        app = "LabApp" if self.frontend == "lab" else "JupyterNotebookApp"
        command = [
            sys.executable,
            "-m",
            self.module,
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            f"--ServerApp.root_dir={self.root}",
            f"--{app}.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=",
            "--LabApp.extension_manager=readonly",  # never asks PyPI about extensions
            "--ServerApp.terminals_enabled=False",
            "--ServerApp.allow_root=True",  # CI runs as root
        ]
        log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root
        )
        log.close()
        self._wait_until_up()
        return self

    def _check_installed(self) -> None:
        """Raise LabUnavailable unless this front end can be imported here."""
        try:
            import jupyterlab  # noqa: F401
        except ImportError as error:
            raise LabUnavailable(
                f"JupyterLab is not installed ({error}): pip install jupyterlab"
            ) from error
        if self.frontend == "lab":
            return
        try:
            import notebook
        except ImportError as error:
            raise LabUnavailable(
                f"Notebook 7 is not installed ({error}): pip install 'notebook>=7'"
            ) from error
        version = str(getattr(notebook, "__version__", "0"))
        if int(version.split(".", 1)[0] or 0) < 7:
            raise LabUnavailable(
                f"notebook {version} is installed, not Notebook 7: pip install 'notebook>=7'"
            )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the server; it shuts its kernels down on SIGTERM."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        """Write a notebook of code cells (python3 kernel) into the server's root."""
        notebook = {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"cell-{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": source,
                }
                for i, source in enumerate(cells)
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        path = self.root / name
        path.write_text(json.dumps(notebook), encoding="utf-8")
        return path

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log, for failure messages."""
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise LabUnavailable(
                    f"{self.name} exited with code {self._process.returncode}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.25)
        self.stop()
        raise LabUnavailable(
            f"{self.name} did not answer on {self.url} within {START_TIMEOUT:.0f} s:\n"
            f"{self.log_tail()}"
        )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- page helpers (Playwright sync API) ---------------------------------------------------------

_KERNEL_READY = """
async () => {
  const app = window.jupyterapp;
  if (!app) return "no app";
  const panel = app.shell.currentWidget;
  if (!panel || !panel.sessionContext) return "no notebook";
  await panel.context.ready;
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return kernel ? kernel.status : "no kernel";
}
"""


def open_notebook(page: Any, lab: LabServer, name: str, timeout_ms: int = 180_000) -> None:
    """Open ``name`` in the server's front end (JupyterLab or Notebook 7) and wait until its
    kernel is idle. Either way ``window.jupyterapp.shell.currentWidget`` is then the notebook's
    panel, which the other helpers use."""
    # Navigation only: the page's "load" event (every script and style fetched) can take
    # minutes on a loaded machine, and what follows waits for what the helpers need anyway.
    page.goto(lab.notebook_url(name), timeout=timeout_ms, wait_until="commit")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=timeout_ms)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    status = ""
    while time.monotonic() < deadline:
        status = page.evaluate(_KERNEL_READY)
        if status == "idle":
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"the notebook's kernel never became idle (last status: {status})")


def run_all(page: Any) -> None:
    """Run every cell of the current notebook (returns once they are queued)."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def run_cell(page: Any, index: int) -> int:
    """Run cell ``index`` of the current notebook; return its execution count before the run."""
    return int(
        page.evaluate(
            """async (index) => {
              const panel = window.jupyterapp.shell.currentWidget;
              const before = panel.content.widgets[index].model.executionCount || 0;
              panel.content.activeCellIndex = index;
              await window.jupyterapp.commands.execute('notebook:run-cell');
              return before;
            }""",
            index,
        )
    )


def outputs(page: Any, index: int) -> list[dict[str, Any]]:
    """The outputs of cell ``index``, as nbformat dicts."""
    return list(
        page.evaluate(
            """(index) => {
              const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
              return { count: cell.model.executionCount, outputs: cell.model.outputs.toJSON() };
            }""",
            index,
        )["outputs"]
    )


def execution_count(page: Any, index: int) -> int:
    """The execution count of cell ``index`` (0 before it ran)."""
    return int(
        page.evaluate(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount"
            " || 0",
            index,
        )
    )


def cell_text(page: Any, index: int) -> str:
    """Everything cell ``index`` printed (streams and plain-text results), joined; tracebacks
    are included so a failing cell explains itself."""
    parts: list[str] = []
    for output in outputs(page, index):
        if output.get("output_type") == "stream":
            text = output.get("text", "")
            parts.append("".join(text) if isinstance(text, list) else str(text))
        elif output.get("output_type") == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
            parts.extend(output.get("traceback", []))
        else:
            plain = output.get("data", {}).get("text/plain", "")
            parts.append("".join(plain) if isinstance(plain, list) else str(plain))
    return "\n".join(parts)


def wait_for_text(
    page: Any, index: int, marker: str, after: int = 0, timeout_ms: int = 180_000
) -> str:
    """Wait until cell ``index`` has run since execution count ``after`` (what ``run_cell``
    returns) and printed ``marker``; return all it printed. Fails at once, with the traceback,
    when the cell raised instead."""
    deadline = time.monotonic() + timeout_ms / 1000
    text = ""
    while time.monotonic() < deadline:
        if execution_count(page, index) > after:
            text = cell_text(page, index)
            if marker in text:
                return text
            if any(output.get("output_type") == "error" for output in outputs(page, index)):
                raise AssertionError(f"cell {index} failed:\n{text}")
        page.wait_for_timeout(250)
    raise AssertionError(f"cell {index} never printed {marker!r}; it printed:\n{text}")


def notebook_shape(page: Any) -> dict[str, Any]:
    """The current notebook's cell count and active cell: what the notebook's own keyboard
    shortcuts change."""
    return dict(
        page.evaluate(
            """() => { const nb = window.jupyterapp.shell.currentWidget.content;
                       return { cells: nb.widgets.length, active: nb.activeCellIndex }; }"""
        )
    )


NOTEBOOK7_OWN_ERRORS = ("Cannot read properties of undefined (reading 'schema')",)
"""Page errors Notebook 7 raises by itself, with or without the widget (its /tree page too):
its keyboard-shortcuts plugin sometimes reads a plugin's settings before they are loaded
(jupyter/notebook#7862). Tolerated only when thrown from Notebook 7's own bundle."""


def watch_errors(page: Any) -> list[tuple[str, str]]:
    """The page's uncaught errors (message, stack), as they happen."""
    errors: list[tuple[str, str]] = []
    page.on("pageerror", lambda error: errors.append((error.message, error.stack or "")))
    return errors


def widget_errors(errors: list[tuple[str, str]]) -> list[str]:
    """The page errors that are not Notebook 7's own known ones."""
    return [
        f"{message}\n{stack}"
        for message, stack in errors
        if not (message in NOTEBOOK7_OWN_ERRORS and "/static/notebook/notebook_core." in stack)
    ]


def check_keys_stay_in_widget(page: Any, widget: Any, here: str, parent: str, wait_ms: int) -> None:
    """With checkpoint ``here`` selected (the DAG focused by the click), type the notebook's
    command-mode shortcuts ``d d`` (delete cell), ``a`` / ``b`` (insert), ``x`` (cut), ``m``
    (markdown) and ``Enter`` into the widget: the notebook must not change. Arrow keys move the
    widget's selection (left → ``parent``, right → back to ``here``), not the notebook's
    active cell."""
    before = notebook_shape(page)
    graph = widget.locator(".dd-dag-scroll")
    for key in ["d", "d", "a", "b", "x", "m", "Enter"]:
        graph.press(key)
    graph.press("ArrowLeft")
    page.wait_for_selector(f'.dd-detail-head[data-id="{parent}"]', timeout=wait_ms)
    graph.press("ArrowRight")
    page.wait_for_selector(f'.dd-detail-head[data-id="{here}"]', timeout=wait_ms)
    assert notebook_shape(page) == before, "a key typed in the widget reached the notebook"
    assert widget.count() == 1
