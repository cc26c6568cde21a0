#!/usr/bin/env bash
# Install everything the tests need, then run all of them: lint, formatting, types, the Python
# tests (real SQLite files, a PostgreSQL and a Redis server started by the tests, a Jupyter
# kernel, headless Chromium) and the widget's JS tests. Exits non-zero if anything fails.
#
#   scripts/test.sh              # everything
#   scripts/test.sh -k interrupt # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-system-deps.sh

venv="${DURABLE_DEBUG_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
# The exact packages of requirements/dev.lock (written by scripts/lock.sh), then this checkout
# itself without resolving anything again: every machine tests with the same packages.
"$venv/bin/python" -m pip install -q -r requirements/dev.lock
"$venv/bin/python" -m pip install -q --no-deps --no-build-isolation -e .
if [ -f package.json ]; then
  npm ci --no-audit --no-fund --silent
fi

export PATH="$PWD/$venv/bin:$PATH"
ruff check src tests bench
ruff format --check src tests bench
mypy
# Coverage of the lines run in the pytest process; the floor is fail_under in pyproject.toml.
python -m pytest --cov=durable_debug --cov-report=term:skip-covered "$@"
node --test tests/js/
npm run --silent lint
