"""The LangGraph suite stage's per-test timeout: a hanging test fails, named, with its threads'
stacks, and the stage goes on with the other tests instead of hanging until CI's own limit.

The runner (``tests/langgraph_suite/run.py``, as ``scripts/langgraph-suite.sh`` runs it) is run
on a few test files of this test's own (``--tests``) with a one-second timeout: one test
sleeps (the timeout stops it), one swallows the timeout and hangs again (the process is ended
and run again for the tests left), the others pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

RUNNER = Path(__file__).resolve().parent / "langgraph_suite" / "run.py"

HANGING = textwrap.dedent(
    """
    import time


    def test_before():
        pass


    def test_sleeps_forever():
        time.sleep(10_000)


    def test_swallows_the_timeout_and_hangs_again():
        while True:
            try:
                time.sleep(10_000)
            except BaseException:
                pass


    def test_after():
        pass
    """
)


def run_stage(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the runner on ``tmp_path/own/tests`` with a 1 s timeout and no expectations."""
    source = tmp_path / "own"
    source.mkdir()
    (source / "test_hanging.py").write_text(HANGING)
    expectations = tmp_path / "expectations.txt"
    expectations.write_text("")
    env = {**os.environ, "LANGGRAPH_SUITE_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, str(RUNNER), "--tests", str(source), "--no-postgres"]
    command += ["--timeout", "1", "--expectations", str(expectations)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def test_a_hanging_test_fails_named_with_its_stacks_and_the_stage_goes_on(tmp_path):
    done = run_stage(tmp_path)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    # Both hanging tests are named among the unexpected failures, with what happened.
    failures = out.split("unexpected failures: 2", 1)[1].split("unexpected passes", 1)[0]
    sleeps = "tests/test_hanging.py::test_sleeps_forever"
    swallows = "tests/test_hanging.py::test_swallows_the_timeout_and_hangs_again"
    assert f"{sleeps}  langgraph_suite.plugin.SuiteTimeout: ran longer than 1 s" in failures
    assert f"{swallows}  SuiteTimeout: ran longer than 1 s and did not stop" in failures
    # Their stacks are printed: each shows the line it hung on.
    assert f"{swallows} outlived its 1 s and did not stop: pytest was ended" in out
    assert f"=== {sleeps}: ran longer than 1 s" in out
    assert 'test_hanging.py", line 10 in test_sleeps_forever' in out
    assert 'test_hanging.py", line 16 in test_swallows_the_timeout_and_hangs_again' in out
    # The tests before and after them ran and passed.
    assert "  passed: 2\n" in out
    assert "langgraph-suite: 4 tests ran" in out
