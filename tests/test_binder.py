"""Binder: binder/ installs what pyproject says, and a fresh virtualenv built from it runs the
first notebook."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def requirement_lines(path: Path) -> list[str]:
    return [
        line.strip()
        for line in path.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def normalized(requirement: str) -> str:
    match = re.match(r"([A-Za-z0-9_.\-\[\]]+)(.*)", requirement)
    assert match, requirement
    name, rest = match.groups()
    return re.sub(r"[-_.]+", "-", name).lower() + rest.replace(" ", "")


def test_binder_requirements_are_the_runtime_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(map(normalized, requirement_lines(BINDER / "requirements.txt"))) == sorted(
        map(normalized, project["dependencies"])
    )
    assert "graphviz" in requirement_lines(BINDER / "apt.txt")
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    assert "pip install --no-deps" in post_build.read_text()


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
