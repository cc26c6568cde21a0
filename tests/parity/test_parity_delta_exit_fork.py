"""A ``DeltaChannel`` graph run with ``durability="exit"`` on a new thread, on both libraries:
the thread keeps an empty checkpoint (step -2) under the one saved at exit, and a fork from
it — a run that writes the delta key again, or one that does not — starts from the empty
state, not from the first run's values."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def _append(current: list | None, writes: Sequence[Any]) -> list:
    return [*(current or []), *(item for write in writes for item in write)]


def _delta_channel(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.channels.delta import DeltaChannel as LangGraphDeltaChannel

        return LangGraphDeltaChannel
    from durable_debug.channels.delta import DeltaChannel

    return DeltaChannel


def _graph(api: Api, saver: Any, key: str, tag: str) -> Any:
    delta = _delta_channel(api)(_append, snapshot_frequency=1000)
    state = TypedDict(  # noqa: UP013  # the channel is made at run time, from either library
        "State",
        {
            "log": Annotated[list, delta],
            "plain": Annotated[list, operator.add],
            "other": Annotated[list, operator.add],
        },
    )

    def node(state: dict) -> dict:
        return {key: [f"{tag}-out"], **({"plain": [f"{tag}-out"]} if key == "log" else {})}

    builder = api.StateGraph(state).add_node("n", node)
    builder.add_edge(api.START, "n").add_edge("n", api.END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("fork_writes", ["log", "other"])
def test_a_fork_from_before_the_first_input_under_exit_durability(fork_writes: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        saver = api.MemorySaver()
        cfg = {"configurable": {"thread_id": "exit-fork"}}
        first = _graph(api, saver, "log", "first")
        trace.call("first run", first.invoke, {"log": ["in-1"], "plain": ["in-1"]}, cfg,
                   durability="exit")  # fmt: skip
        root = trace.history("saved at exit", first.get_state_history(cfg))[-1]
        fork_input = {"log": ["in-9"], "plain": ["in-9"]} if fork_writes == "log" else {}
        fork_input["other"] = ["in-9"]
        trace.call("fork", _graph(api, saver, fork_writes, "third").invoke, fork_input,
                   root.config, durability="exit")  # fmt: skip
        trace.history("after the fork", first.get_state_history(cfg))
        trace.state("head", first.get_state(cfg))

    ours = check_parity(scenario)
    assert "in-1" not in ours["head"]["values"]["log"]
