#!/usr/bin/env bash
# Rewrite requirements/dev.lock: install the dev extra into a throwaway virtualenv and record
# the exact version of every package in it. Run after changing a dependency in pyproject.toml,
# and commit the result; scripts/test.sh installs from the lock, so every machine tests with
# the same packages.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --upgrade pip
"$tmp/venv/bin/python" -m pip install -q '.[dev]'
{
  echo "# The development environment, pinned: written by scripts/lock.sh from pyproject.toml's"
  echo "# dev extra (Python $("$tmp/venv/bin/python" -c 'import sys; print(*sys.version_info[:2], sep=".")'), Linux x86_64). Do not edit by hand."
  "$tmp/venv/bin/python" -m pip freeze --exclude durable-debug | LC_ALL=C sort -f
} > requirements/dev.lock
echo "requirements/dev.lock: $(grep -vc '^#' requirements/dev.lock) packages"
