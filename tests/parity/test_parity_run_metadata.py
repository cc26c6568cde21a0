"""Run metadata on both libraries: a run's ``config["metadata"]`` and its extra
``configurable`` keys are saved with every checkpoint, and history filters can find them."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class LogState(TypedDict):
    log: Annotated[list, operator.add]


async def test_config_metadata_is_saved_with_every_checkpoint_and_filterable():
    async def scenario(api: Api, trace: Trace) -> None:
        async def step(state: LogState) -> dict:
            trace.ran("step")
            return {"log": ["step"]}

        g = (
            api.StateGraph(LogState)
            .add_node("step", step)
            .add_edge(api.START, "step")
            .compile(checkpointer=api.MemorySaver())
        )
        run_cfg = {
            "configurable": {"thread_id": "meta", "user_id": "u-7", "tries": 2},
            "metadata": {"graph_version": "1"},
        }
        cfg = {"configurable": {"thread_id": "meta"}}
        await trace.run("first run", g.ainvoke({"log": []}, run_cfg))
        await trace.run("second run", g.ainvoke({"log": []}, cfg))
        history = [s async for s in g.aget_state_history(cfg)]
        trace.history("history", history)
        found = [s async for s in g.aget_state_history(cfg, filter={"graph_version": "1"})]
        trace.history("filtered", found)

    ours = await acheck_parity(scenario)
    filtered = ours["filtered"]["checkpoints"]
    assert [c["step"] for c in filtered] == [1, 0, -1]  # the first run only
    assert all(c["metadata"]["user_id"] == "u-7" for c in filtered)
    assert all("graph_version" not in c["metadata"] for c in ours["history"]["checkpoints"][:3])
