"""``get_delta_channel_history`` / ``aget_delta_channel_history`` on both libraries' in-memory
savers, for a reducer key and a key never written: at every checkpoint of a thread (and of a
fork), the same writes since the nearest ancestor holding the key's value, and that value."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict, total=False):
    log: Annotated[list, operator.add]
    untouched: Annotated[list, operator.add]


CHANNELS = ["log", "untouched"]


def _graph(api: Api, saver: Any) -> Any:
    builder = api.StateGraph(State)
    builder.add_node("a", lambda state: {"log": ["a"]})
    builder.add_node("b", lambda state: {"log": ["b"]})
    builder.add_edge(api.START, "a").add_edge("a", "b")
    return builder.compile(checkpointer=saver)


def _shown(history: dict[str, Any]) -> dict[str, Any]:
    """A history without its task ids (each library makes its own)."""
    return {
        ch: {"writes": [w[1:] for w in entry["writes"]], "seed": entry.get("seed", "absent")}
        for ch, entry in history.items()
    }


def test_the_history_of_every_checkpoint_and_of_a_fork() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        saver = api.MemorySaver()
        graph = _graph(api, saver)
        cfg = {"configurable": {"thread_id": "walk"}}
        graph.invoke({"log": ["in"]}, cfg)
        snapshots = list(graph.get_state_history(cfg))
        trace.note(
            "each checkpoint",
            [_shown(saver.get_delta_channel_history(config=s.config, channels=CHANNELS))
             for s in snapshots],
        )  # fmt: skip
        graph.invoke({"log": ["fork"]}, snapshots[1].config)
        head = graph.get_state(cfg).config
        trace.note(
            "fork head", _shown(saver.get_delta_channel_history(config=head, channels=CHANNELS))
        )
        trace.note("no channels", saver.get_delta_channel_history(config=head, channels=[]))

    ours = check_parity(scenario)
    assert "fork" in ours["fork head"]["log"]["seed"]


async def test_the_async_twin() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        saver = api.MemorySaver()
        graph = _graph(api, saver)
        cfg = {"configurable": {"thread_id": "walk"}}
        await graph.ainvoke({"log": ["in"]}, cfg)
        head = (await graph.aget_state(cfg)).config
        history = await saver.aget_delta_channel_history(config=head, channels=CHANNELS)
        trace.note("head", _shown(history))

    ours = await acheck_parity(scenario)
    assert ours["head"]["log"] == {"writes": [("log", ["b"])], "seed": ["in", "a"]}
