#!/usr/bin/env bash
# Run LangGraph's own test suite (the tests/ of the langgraph sdist pinned in
# requirements/dev.lock, downloaded once into .cache/langgraph-suite/) on durable_debug and
# compare the outcome with tests/langgraph_suite/expectations.txt; fails on an unexpected
# failure and on an unexpected pass. durable_debug is imported from wherever Python finds it,
# PYTHONPATH first, so PYTHONPATH=/path/to/tree/src points it at another source tree.
#
#   scripts/langgraph-suite.sh                      # the whole suite
#   scripts/langgraph-suite.sh --update             # rewrite expectations.txt from this run
#   scripts/langgraph-suite.sh --reference --update # re-measure what fails on LangGraph itself
#   scripts/langgraph-suite.sh -k interrupt tests/test_pregel.py   # a partial run
set -euo pipefail
cd "$(dirname "$0")/.."
# The virtualenv scripts/test.sh makes, when there is one; else the first python on PATH.
python="${DURABLE_DEBUG_VENV:-.venv}/bin/python"
[ -x "$python" ] || python=python
exec "$python" tests/langgraph_suite/run.py "$@"
