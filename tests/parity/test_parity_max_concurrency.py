"""``config["max_concurrency"]``, on both libraries: the tasks of a step run at most that many
at once (all at once without it)."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    done: Annotated[list, operator.add]


async def test_max_concurrency_limits_a_steps_tasks() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        running = {"now": 0, "most": 0}

        async def work(item: int) -> dict:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
            for _ in range(5):  # let every other started task start too
                await asyncio.sleep(0)
            running["now"] -= 1
            return {"done": [item]}

        graph = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_conditional_edges(
                api.START, lambda s: [api.Send("work", i) for i in range(12)], ["work"]
            )
            .compile()
        )
        for limit in (None, 3):
            running["most"] = 0
            config = {} if limit is None else {"max_concurrency": limit}
            result = await graph.ainvoke({"done": []}, config)
            trace.note(f"result with {limit}", sorted(result["done"]))
            trace.note(f"at once with {limit}", running["most"])

    await acheck_parity(scenario)
