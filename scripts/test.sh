#!/usr/bin/env bash
# Install everything the tests need, then run all of them: lint, formatting, types, the Python
# tests (real SQLite files, a PostgreSQL and a Redis server started by the tests, a Jupyter
# kernel, headless Chromium), LangGraph's own test suite run on durable_debug
# (scripts/langgraph-suite.sh) and the widget's JS tests and lint; then the core suite
# (storage, engine, inspect layer) and README's tour again on Python 3.10 and 3.13, where those
# Pythons are found.
#
# The install steps stop at the first failure. The test stages all run, even after one fails;
# the script then exits non-zero and names every stage that failed.
#
#   scripts/test.sh              # everything
#   scripts/test.sh -k interrupt # extra arguments go to pytest
set -uo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "scripts/test.sh: $*; no test ran." >&2
  exit 1
}

scripts/install-system-deps.sh || die "installing the system packages failed"
venv="${DURABLE_DEBUG_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || die "creating the virtualenv $venv failed"
fi
"$venv/bin/python" -m pip install -q --upgrade pip || die "upgrading pip failed"
# The exact packages of requirements/dev.lock (written by scripts/lock.sh), then this checkout
# itself without resolving anything again: every machine tests with the same packages.
"$venv/bin/python" -m pip install -q -r requirements/dev.lock ||
  die "pip install -r requirements/dev.lock failed"
"$venv/bin/python" -m pip install -q --no-deps -e . ||
  die "pip install --no-deps -e . failed"
if [ -f package.json ]; then
  npm ci --no-audit --no-fund --silent || die "npm ci failed"
fi
export PATH="$PWD/$venv/bin:$PATH"

failed=()
stage() {  # stage NAME COMMAND...: run one stage, remember it if it fails, go on
  local name="$1"
  shift
  echo "==> $name: $*"
  if ! "$@"; then
    failed+=("$name")
    echo "==> $name FAILED" >&2
  fi
}

stage "ruff check" ruff check src tests bench
stage "ruff format" ruff format --check src tests bench
stage "mypy" mypy
# Coverage of the lines run in the pytest process; the floor is fail_under in pyproject.toml.
# It holds for the whole suite: a run narrowed by extra pytest arguments reports coverage but
# is not held to the floor.
floor=()
[ "$#" -eq 0 ] || floor=(--cov-fail-under=0)
stage "pytest" python -m pytest --cov=durable_debug --cov-report=term:skip-covered "${floor[@]}" "$@"
# LangGraph's own test suite on durable_debug, compared with tests/langgraph_suite/expectations.txt
# (it starts its own PostgreSQL server; under CI=1 that server is required). A run narrowed by
# extra pytest arguments leaves it out.
if [ "$#" -eq 0 ]; then
  stage "langgraph suite" scripts/langgraph-suite.sh
fi
stage "node tests" node --test tests/js/
stage "npm lint" npm run --silent lint

# The core suite (tests/checkpoint, tests/graph, tests/inspect, tests/test_sync.py: no browser) and README's tour
# in a Jupyter kernel on the oldest and the newest Python supported, each in a virtualenv of its own installed from its
# lock (scripts/pythons.sh says where the Pythons come from and why they are not installed here).
source scripts/pythons.sh
core_suite() {  # core_suite VERSION PYTHON [PYTEST ARGS]: install, then run the core suite
  local version="$1" python="$2" env=".venv-py${1//./}" lock
  shift 2
  lock=$(lock_for "$version")
  if [ ! -x "$env/bin/python" ]; then
    "$python" -m venv "$env" || return 1
  fi
  "$env/bin/python" -m pip install -q --upgrade pip &&
    "$env/bin/python" -m pip install -q -r "$lock" &&
    "$env/bin/python" -m pip install -q --no-deps -e . || {
    echo "installing $lock into $env failed" >&2
    return 1
  }
  "$env/bin/python" -m pytest -p no:cacheprovider tests/checkpoint tests/graph tests/inspect tests/test_sync.py \
    tests/test_readme.py::test_the_tour_runs_in_a_kernel_and_the_inspect_command_reads_it "$@"
}
not_run=()
for version in 3.10 3.13; do
  if python=$(find_python "$version"); then
    stage "core suite on Python $version" core_suite "$version" "$python" "$@"
  else
    not_run+=("core suite on Python $version")
    echo "==> core suite on Python $version NOT RUN: no Python $version found (pyenv's" \
      "versions, python$version on PATH, DURABLE_DEBUG_PYTHON_${version//./_})" >&2
  fi
done

if [ "${#not_run[@]}" -gt 0 ]; then
  echo "scripts/test.sh: NOT RUN for want of the Python: ${not_run[*]}" >&2
fi
if [ "${#failed[@]}" -gt 0 ]; then
  list="${failed[0]}"
  for name in "${failed[@]:1}"; do list="$list, $name"; done
  echo "scripts/test.sh: ${#failed[@]} stage(s) failed: $list" >&2
  exit 1
fi
echo "scripts/test.sh: every stage passed."
