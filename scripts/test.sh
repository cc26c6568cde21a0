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
"$venv/bin/python" -m pip install -q -e '.[dev]'
if [ -f package.json ]; then
  npm ci --no-audit --no-fund --silent
fi

export PATH="$PWD/$venv/bin:$PATH"
ruff check src tests bench
ruff format --check src tests bench
mypy
python -m pytest "$@"
node --test tests/js/
npm run --silent lint
