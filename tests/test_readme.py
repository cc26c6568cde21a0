"""README's and docs/' commands work as written: README's Python blocks run in a real Jupyter
kernel (the magics included) and its ``durable-debug inspect`` line reads what they saved; its
shell blocks run in a copy of the repository; every shell block of docs/ is run by a test."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def section(title: str) -> str:
    """README's section under the heading ``## {title}``, up to the next such heading."""
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def kernel_env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }


def test_the_tour_runs_in_a_kernel_and_the_inspect_command_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tour = blocks("python", section("A ten-line tour in Jupyter"))
    assert len(tour) == 3 and "%%graph" in tour[1] and ".close()" in tour[2]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in tour])
    nb.cells.insert(
        2, nbformat.v4.new_code_cell("print(runs.set_index('node')['summary'].to_dict())")
    )
    # CI runs this test on every supported Python: the kernel must be the one running pytest.
    nb.cells.insert(0, nbformat.v4.new_code_cell("import sys; print(sys.version_info[:2])"))
    monkeypatch.setenv("PYTHONPATH", kernel_env()["PYTHONPATH"])  # the kernel imports src/
    resources = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=180, kernel_name="python3", resources=resources).execute()
    kernel_python = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert kernel_python.strip() == str(sys.version_info[:2])
    printed = "".join(o.get("text", "") for o in nb.cells[3].outputs)
    assert printed.strip() == "{'prepare': 'prepare 1', 'gate': 'gate 2 (re-ran 1×)'}"
    widget_shown = any(
        "<TimeTravel thread 'job-1'>" in str(o.get("data", {}).get("text/plain", ""))
        for o in nb.cells[2].outputs
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
    # The tour closes its saver: SQLite folded its write-ahead log back into the file.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job-1.html", "runs.db"]


def test_the_scripts_it_names_exist_and_are_executable() -> None:
    for script in re.findall(r"^(scripts/\w+\.sh)", "\n".join(blocks("bash")), re.M):
        assert os.access(ROOT / script, os.X_OK), script


def commands(block: str) -> list[tuple[str, str]]:
    """The commands of a shell block, each with the comment that follows it on its line."""
    found = []
    for line in block.splitlines():
        code, _, comment = line.partition("#")
        if code.strip():
            found.append((code.strip(), comment.strip()))
    return found


def repository_copy(dest: Path) -> Path:
    """The files git tracks (and new ones it does not ignore), copied to ``dest``: a fresh
    clone, without the developer's virtualenv, node_modules or build output."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def test_every_shell_command_of_the_readme_runs_in_a_fresh_copy(tmp_path: Path) -> None:
    """README's shell blocks, run as a newcomer would in a fresh clone: the demo script, then
    installing from the clone, building a wheel and installing it, and ``--version``.
    ``scripts/test.sh`` is the one command not run here: it is the command running this test."""
    clone = repository_copy(tmp_path / "durable_debug")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join([str(clone / ".venv" / "bin"), env["PATH"]])
    ran = []
    for block in blocks("bash"):
        for command, comment in commands(block):
            if command == "scripts/test.sh":
                continue
            proc = subprocess.run(
                command, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=900
            )
            assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
            ran.append(command)
            if command == "scripts/demo.sh":
                assert "node executions:" in proc.stdout, proc.stdout
                assert (clone / "durable-debug-demo.html").is_file()
            if comment.startswith("prints: "):
                assert proc.stdout.strip() == comment.removeprefix("prints: "), command
    assert ran[0] == "scripts/demo.sh" and ran[-1] == "durable-debug --version", ran
    wheels = [p.name for p in (clone / "dist").iterdir()]
    assert any(w in "\n".join(blocks("bash")) for w in wheels), wheels  # the name README shows


def test_every_shell_block_of_the_docs_is_run_by_a_test() -> None:
    """Each ``sh``/``bash`` block of docs/*.md follows a ``<!-- name -->`` marker that a test
    looks up, so a documented command that stops working fails a test."""
    tests_text = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    for doc in sorted((ROOT / "docs").glob("*.md")):
        text = doc.read_text()
        for match in re.finditer(r"```(?:sh|bash)\n", text):
            before = text[: match.start()].rstrip().splitlines()[-1]
            marker = re.fullmatch(r"<!-- (.+) -->", before)
            assert marker, f"{doc.name}: a shell block without a marker, after {before!r}"
            assert f"<!-- {marker.group(1)} -->" in tests_text, (
                f"{doc.name}: {before} is run by no test"
            )


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
