#!/usr/bin/env bash
# Install durable_debug into .venv and run the demo on the embedded default (a SQLite file):
# a fan-out, a failure and resume, an interrupt answered, a fork. It prints the thread's
# checkpoint tree and writes durable-debug-demo.html, a page you can open in any browser.
#
#   scripts/demo.sh                  # extra arguments go to `durable-debug demo`
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${DURABLE_DEBUG_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -e .
exec "$venv/bin/durable-debug" demo "$@"
