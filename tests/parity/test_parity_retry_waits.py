"""The waits between a node's retries on both libraries: a sync run's lone task waits with
``time.sleep`` (initial interval, then times the backoff factor), so code patching it sees
each wait."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    foo: str


def test_a_sync_runs_retry_waits_go_through_time_sleep():
    def scenario(api: Api, trace: Trace) -> None:
        attempts: list[int] = []

        def flaky(state: State) -> dict[str, Any]:
            attempts.append(len(attempts))
            if len(attempts) < 3:
                raise ValueError("not yet")
            return {"foo": "done"}

        policy = api.RetryPolicy(
            max_attempts=3,
            initial_interval=0.01,
            backoff_factor=2.0,
            jitter=False,
            retry_on=ValueError,
        )
        graph = (
            api.StateGraph(State)
            .add_node("flaky", flaky, retry_policy=policy)
            .add_edge(api.START, "flaky")
            .compile()
        )
        with patch("time.sleep") as sleep:
            trace.note("result", graph.invoke({"foo": ""}))
        trace.note("waits", [c.args[0] for c in sleep.call_args_list])

    ours = check_parity(scenario)
    assert ours["waits"] == [0.01, 0.02]
