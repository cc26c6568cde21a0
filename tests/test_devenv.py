"""The development environment is reproducible: requirements/dev.lock pins every package the
dev extra needs, at versions pyproject.toml accepts, and scripts/test.sh installs from it."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def locked() -> dict[str, str]:
    """The lock file as ``{canonical name: version}``."""
    pins = {}
    for line in (ROOT / "requirements" / "dev.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep, f"requirements/dev.lock: {line!r} is not pinned with =="
            pins[canonicalize_name(name)] = version.strip()
    return pins


def dev_requirements() -> list[Requirement]:
    """The requirements of the ``dev`` extra, with the package's own extras expanded."""
    project = pyproject()["project"]
    own = canonicalize_name(project["name"])
    extras = project["optional-dependencies"]
    found: list[Requirement] = [Requirement(r) for r in project["dependencies"]]
    todo, seen = ["dev"], set()
    while todo:
        extra = todo.pop()
        seen.add(extra)
        for text in extras[extra]:
            req = Requirement(text)
            if canonicalize_name(req.name) == own:
                todo += [e for e in req.extras if e not in seen]
            else:
                found.append(req)
    return found


def test_the_lock_pins_every_dev_requirement_at_a_version_pyproject_accepts() -> None:
    pins = locked()
    for req in dev_requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} (pyproject.toml) is missing from requirements/dev.lock"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements/dev.lock pins {req.name}=={pins[name]}, pyproject.toml wants {req}"
        )


def test_the_linters_and_the_type_checker_are_pinned_exactly() -> None:
    lint = {
        Requirement(r).name: Requirement(r)
        for r in pyproject()["project"]["optional-dependencies"]["lint"]
    }
    for tool in ("ruff", "mypy"):
        (spec,) = lint[tool].specifier
        assert spec.operator == "==", f"{tool} must be pinned exactly, not {spec}"
        assert locked()[tool] == spec.version


def test_the_test_command_installs_from_the_lock_and_measures_coverage() -> None:
    script = (ROOT / "scripts" / "test.sh").read_text()
    installs = re.findall(r"pip install ([^\n|]*?)\s*(?:\|\||$)", script, re.M)
    assert any("-r requirements/dev.lock" in line for line in installs), installs
    own = [line for line in installs if line.rstrip().endswith("-e .")]
    assert own and all("--no-deps" in line for line in own), own  # nothing resolved again
    assert not any(".[dev]" in line for line in installs), installs
    pytest_line = next(line for line in script.splitlines() if "-m pytest" in line)
    assert "--cov=durable_debug" in pytest_line
    floor = pyproject()["tool"]["coverage"]["report"]["fail_under"]
    assert floor > 0, "set the coverage floor from a measured figure"
