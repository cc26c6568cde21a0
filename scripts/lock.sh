#!/usr/bin/env bash
# Rewrite requirements/dev.lock: install the dev extra into a throwaway virtualenv and record
# the exact version of every package in it. Run after changing a dependency in pyproject.toml,
# and commit the result; scripts/test.sh installs from the lock, so every machine tests with
# the same packages.
#
# The same for Python 3.10 into requirements/dev-py310.lock (some of the newest releases need
# 3.11, so 3.10 gets a lock of its own, resolved at the same moment), when a Python 3.10 is
# found (scripts/pythons.sh), and binder/ from the main lock (scripts/binder_requirements.py).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

lock() {  # lock PYTHON FILE FIRST-HEADER-LINE: resolve the dev extra with PYTHON into FILE
  local python="$1" file="$2" title="$3" version
  rm -rf "$tmp/venv"
  "$python" -m venv "$tmp/venv"
  "$tmp/venv/bin/python" -m pip install -q --upgrade pip
  "$tmp/venv/bin/python" -m pip install -q '.[dev]'
  version=$("$tmp/venv/bin/python" -c 'import sys; print(*sys.version_info[:2], sep=".")')
  {
    echo "# $title, pinned: written by scripts/lock.sh from pyproject.toml's"
    echo "# dev extra (Python $version, Linux x86_64). Do not edit by hand."
    "$tmp/venv/bin/python" -m pip freeze --exclude durable-debug | LC_ALL=C sort -f
  } > "$file"
  echo "$file: $(grep -vc '^#' "$file") packages"
}

source scripts/pythons.sh
if py310=$(find_python 3.10); then
  lock "$py310" requirements/dev-py310.lock "The development environment for Python 3.10"
else
  echo "scripts/lock.sh: no Python 3.10 found; requirements/dev-py310.lock left as it is" >&2
fi
lock python3 requirements/dev.lock "The development environment"
"$tmp/venv/bin/python" scripts/binder_requirements.py
