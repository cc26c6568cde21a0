"""README's commands work as written: its Python blocks run in a real Jupyter kernel (the
magics included), and its ``durable-debug inspect`` line reads what they saved."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def kernel_env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }


def test_the_tour_runs_in_a_kernel_and_the_inspect_command_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tour = [b for b in blocks("python") if "%load_ext durable_debug" in b or "%%graph" in b]
    assert len(tour) == 2
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in tour])
    nb.cells.append(nbformat.v4.new_code_cell("print(runs.set_index('node')['summary'].to_dict())"))
    monkeypatch.setenv("PYTHONPATH", kernel_env()["PYTHONPATH"])  # the kernel imports src/
    resources = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=180, kernel_name="python3", resources=resources).execute()
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert printed.strip() == "{'prepare': 'prepare 1', 'gate': 'gate 2 (re-ran 1×)'}"
    widget_shown = any(
        "<TimeTravel thread 'job-1'>" in str(o.get("data", {}).get("text/plain", ""))
        for o in nb.cells[1].outputs
    )
    assert widget_shown
    line = re.search(r"`(durable-debug inspect runs\.db[^`]*)`", README)
    assert line, "README shows how to inspect the tour's store"
    command = shlex.split(line.group(1))
    proc = subprocess.run(
        [sys.executable, "-m", "durable_debug.cli", *command[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=kernel_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "thread 'job-1': 4 checkpoints, 1 branch" in proc.stdout
    assert (tmp_path / "job-1.html").exists()


def test_the_scripts_it_names_exist_and_are_executable() -> None:
    for script in re.findall(r"^(scripts/\w+\.sh)", "\n".join(blocks("bash")), re.M):
        assert os.access(ROOT / script, os.X_OK), script


def test_nothing_cites_documents_outside_the_repository() -> None:
    """Code, docs, notebooks and tests say what they mean in the repository's own words or
    point at docs/*.md: no design document, sibling folder or numbered section kept elsewhere."""
    cites = re.compile(r"DESIGN\.md|\.\./shared|[Ss]eed 00\d|§")
    found = []
    for folder in ("src", "docs", "notebooks", "tests", "bench", "scripts", "js"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in {".py", ".md", ".ipynb", ".js", ".sh", ".cfg", ".toml"}:
                continue
            if "node_modules" in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if cites.search(line) and path != Path(__file__).resolve():
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    for name in ("README.md", "CHANGELOG.md", "pyproject.toml"):
        for number, line in enumerate((ROOT / name).read_text().splitlines(), 1):
            if cites.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []
