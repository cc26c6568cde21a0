"""Run LangGraph's own test suite on durable_debug (``scripts/langgraph-suite.sh``).

LangGraph's ``tests/`` come from the pinned sdist at run time (nothing of them is kept here).
``redirect`` makes ``langgraph.*`` imports resolve to durable_debug's modules of the same
names, ``plugin`` is the pytest plugin that replaces LangGraph's conftest (fixtures bound to our
savers), ``expectations`` reads and writes ``expectations.txt`` (every test not expected to
pass, grouped by reason) and ``run`` drives a run and compares it with the expectations.
None of these files is collected by the normal ``pytest`` run (no ``test_*.py`` here).
"""
