"""Binder: binder/ installs the locked versions on the locked Python, and a fresh virtualenv
built from it runs the first notebook."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import venv
from pathlib import Path
from types import ModuleType

import tomllib

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def binder_script() -> ModuleType:
    """scripts/binder_requirements.py, which writes binder/ from requirements/dev.lock."""
    spec = importlib.util.spec_from_file_location(
        "binder_requirements", ROOT / "scripts" / "binder_requirements.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_binder_installs_the_locked_versions_on_the_locked_python() -> None:
    script = binder_script()
    # Every line of requirements.txt is a pin of requirements/dev.lock, and together they are
    # the runtime dependencies and the notebooks' packages with all they need in turn.
    assert (BINDER / "requirements.txt").read_text() == script.requirements_text(), (
        "binder/requirements.txt differs from requirements/dev.lock: "
        "run python scripts/binder_requirements.py"
    )
    pins = script.lock_pins()
    lines = [
        line
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert all(line in pins.values() for line in lines), lines
    names = {line.partition("==")[0].lower().replace("_", "-") for line in lines}
    for package in ("langgraph", "langgraph-checkpoint-sqlite", "langchain-core", "anywidget"):
        assert package in names, package
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dependency in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.\-]+", dependency)
        assert name and name.group(0).lower().replace("_", "-") in names, dependency
    # The Python the lock was written for, as Binder spells it.
    assert (BINDER / "runtime.txt").read_text() == f"python-{script.lock_python()}\n"
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    # postBuild adds durable_debug alone: it resolves nothing again.
    installs = re.findall(r"pip install ([^|\n]*)", post_build.read_text())
    assert installs and all("--no-deps" in line for line in installs), installs


def test_a_fresh_virtualenv_from_binder_runs_notebook_1(tmp_path: Path) -> None:
    env_dir = tmp_path / "binder-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"

    def pip(*args: str) -> None:
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
            check=True,
            cwd=ROOT,
            timeout=900,
        )

    pip("-r", str(BINDER / "requirements.txt"))
    # what postBuild does (it runs from the repository's root on Binder)
    subprocess.run(
        ["bash", str(BINDER / "postBuild")],
        check=True,
        cwd=ROOT,
        timeout=900,
        env={**os.environ, "PATH": f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"},
    )
    pip("nbclient", "ipykernel")  # Binder's image provides Jupyter itself
    notebook = ROOT / "notebooks" / "01_checkpoint_model.ipynb"
    out = tmp_path / "executed.ipynb"
    run = subprocess.run(
        [
            str(python),
            "-c",
            "import sys, nbformat\n"
            "from nbclient import NotebookClient\n"
            "nb = nbformat.read(sys.argv[1], as_version=4)\n"
            "NotebookClient(nb, timeout=300, kernel_name='python3',\n"
            "               resources={'metadata': {'path': sys.argv[3]}}).execute()\n"
            "nbformat.write(nb, sys.argv[2])\n",
            str(notebook),
            str(out),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    import nbformat

    executed = nbformat.read(out, as_version=4)
    texts = [
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for cell in executed.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    ]
    assert not any(o.output_type == "error" for c in executed.cells for o in c.get("outputs", []))
    assert "2 loop () {'value': 'B', 'log': ['ran A', 'ran B']}" in "".join(texts)
    assert "<TimeTravel thread 'demo-1'>" in texts
    assert sys.version_info >= (3, 10)
