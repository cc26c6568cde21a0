"""Write binder/requirements.txt and binder/runtime.txt from requirements/dev.lock.

Binder installs what the notebooks need at the versions the tests ran with: durable_debug's
runtime dependencies (pyproject.toml's ``[project] dependencies``) and the packages the
notebooks import besides (``NOTEBOOK_EXTRAS``), with everything those need in turn, each pinned
at requirements/dev.lock's version; and it runs the Python the lock was written for.

The dependency tree is read from the packages installed for the Python running this script,
which must be the environment installed from requirements/dev.lock (scripts/lock.sh calls it
from the environment it locks; tests/test_binder.py compares its output with binder/).

    python scripts/binder_requirements.py          # rewrite binder/requirements.txt, runtime.txt
    python scripts/binder_requirements.py --check  # exit 1 when binder/ differs from the lock
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "dev.lock"
BINDER = ROOT / "binder"

# What the notebooks import besides durable_debug: LangGraph side by side with durable_debug
# (notebook 11), LangGraph's own SQLite saver (notebook 12), LangChain's messages and chat models.
NOTEBOOK_EXTRAS = ("langgraph", "langgraph-checkpoint-sqlite", "langchain-core")

HEADER = (
    "# Written by scripts/binder_requirements.py from requirements/dev.lock: durable_debug's\n"
    "# runtime dependencies and the packages its notebooks import, with all they need, at the\n"
    "# versions the tests run with. postBuild installs durable_debug itself. Do not edit.\n"
)


def lock_pins() -> dict[str, str]:
    """requirements/dev.lock as ``{canonical name: 'Name==version'}``."""
    pins = {}
    for line in LOCK.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = f"{name}=={version}"
    return pins


def lock_python() -> str:
    """The Python version (``3.11``) requirements/dev.lock was written for, from its header."""
    match = re.search(r"\(Python (\d+\.\d+)\b", LOCK.read_text())
    if not match:
        raise SystemExit(f"{LOCK}: the header names no Python version")
    return match.group(1)


def roots() -> list[str]:
    """pyproject.toml's runtime dependencies, then the notebooks' extra packages."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    if not block:
        raise SystemExit("pyproject.toml: no [project] dependencies list")
    return [*re.findall(r'"([^"]+)"', block.group(1)), *NOTEBOOK_EXTRAS]


def closure(requirements: list[str]) -> set[str]:
    """The canonical names of ``requirements`` and of everything they need in turn, as the
    installed packages' metadata says (markers evaluated for this Python, no extras)."""
    environment = {k: str(v) for k, v in default_environment().items()}
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            raise SystemExit(f"{req.name} is not installed: run this from the locked env") from None
        for text in needs:
            dep = Requirement(text)
            wanted = [{**environment, "extra": e} for e in [*req.extras, ""]]
            if dep.marker is None or any(dep.marker.evaluate(env) for env in wanted):
                todo.append(dep)
    return seen


def requirements_text() -> str:
    """binder/requirements.txt as it should be."""
    pins = lock_pins()
    names = closure(roots())
    missing = sorted(names - pins.keys())
    if missing:
        raise SystemExit(f"requirements/dev.lock lacks {', '.join(missing)}")
    lines = sorted((pins[name] for name in names), key=str.lower)
    return HEADER + "\n".join(lines) + "\n"


def runtime_text() -> str:
    """binder/runtime.txt as it should be."""
    return f"python-{lock_python()}\n"


def main(argv: list[str]) -> int:
    """Rewrite binder/ (or with ``--check``, report whether it differs from the lock)."""
    wanted = {
        BINDER / "requirements.txt": requirements_text(),
        BINDER / "runtime.txt": runtime_text(),
    }
    if "--check" in argv:
        stale = [p.name for p, text in wanted.items() if not p.exists() or p.read_text() != text]
        if stale:
            print(f"binder/ differs from requirements/dev.lock: {', '.join(stale)}")
            return 1
        return 0
    for path, text in wanted.items():
        path.write_text(text)
        print(f"{path.relative_to(ROOT)}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
