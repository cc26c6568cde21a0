"""A thread paused in one process is resumed by another (notebooks 06 and 09).

Process 1 runs ``prepare → gate`` to the interrupt and exits; process 2, a fresh interpreter,
resumes the thread by its id with ``Command(resume=...)``. ``prepare`` is not run again (only
the interrupting node re-runs from its top). With ``memory://`` process 2 finds no thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from durable_graphs import LEASE_ENV, runs

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"


def run_graph(*args: str, timeout: float = 120) -> dict[str, Any]:
    """Run ``durable_graphs.py`` in a fresh interpreter and return the JSON it prints."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env.update(LEASE_ENV)
    env.pop("DURABLE_DEBUG_DB", None)
    result = subprocess.run(
        [sys.executable, str(HERE / "durable_graphs.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ]
)
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.db'}"
    if request.param == "redis":
        return request.getfixturevalue("redis_db")
    return request.getfixturevalue("postgres_db")


def test_interrupted_thread_resumes_in_another_process(durable_url: str, tmp_path: Path):
    log = tmp_path / "runs.log"
    first = run_graph("approval", "start", durable_url, "hitl-1", str(log))
    assert first["interrupts"] == [
        {
            "id": first["interrupts"][0]["id"],
            "value": {"question": "approve this plan?", "plan": "deploy v2"},
        }
    ]
    assert first["outcome"] == ""
    assert runs(log) == {"prepare": 1, "gate": 1}

    second = run_graph("approval", "resume", durable_url, "hitl-1", str(log), "APPROVED")

    assert second["approved"] == "APPROVED"
    assert second["outcome"] == "deploy v2: APPROVED"
    assert second["interrupts"] == []
    assert runs(log) == {"prepare": 1, "gate": 2, "finish": 1}


def test_other_threads_are_not_touched_by_a_resume(durable_url: str, tmp_path: Path):
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    run_graph("approval", "start", durable_url, "thread-a", str(log_a))
    run_graph("approval", "start", durable_url, "thread-b", str(log_b))
    done = run_graph("approval", "resume", durable_url, "thread-b", str(log_b), "NO")
    assert done["outcome"] == "deploy v2: NO"
    still = run_graph("approval", "resume", durable_url, "thread-a", str(log_a), "YES")
    assert still["outcome"] == "deploy v2: YES"
    assert runs(log_a) == runs(log_b) == {"prepare": 1, "gate": 2, "finish": 1}


def test_memory_saver_forgets_the_thread_when_the_process_exits(tmp_path: Path):
    log = tmp_path / "runs.log"
    first = run_graph("approval", "start", "memory://", "hitl-1", str(log))
    assert len(first["interrupts"]) == 1

    strict = run_graph("approval", "resume-strict", "memory://", "hitl-1", str(log), "APPROVED")
    assert strict["error"] == "EmptyInputError"
    assert "hitl-1" in strict["message"]
    assert runs(log) == {"prepare": 1, "gate": 1}

    # As LangGraph: the resume on the forgotten thread runs the graph from START with no
    # input, so `prepare` runs again and fails on the state it never got.
    second = run_graph("approval", "resume", "memory://", "hitl-1", str(log), "APPROVED")
    assert second["error"] == "KeyError"
    assert runs(log) == {"prepare": 2, "gate": 1}
