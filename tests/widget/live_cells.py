"""The notebook the live-kernel browser tests run, in JupyterLab and in Notebook 7.

A two-node graph runs once and ``TimeTravel`` shows its thread; the first cell prints the
checkpoint ids (``IDS [...]``), the last one prints every checkpoint read back from the saver
(``REPORT [...]``) so a test can check what the page did against what was written.
"""

from __future__ import annotations

__all__ = ["REPORT", "SHOW", "cells"]

SETUP = """\
import json, operator
from typing import Annotated
from typing_extensions import TypedDict
from durable_debug import StateGraph, START, END, MemorySaver, TimeTravel

class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]

async def a(state):
    return {"value": "A", "log": ["a ran"]}

async def b(state):
    return {"value": state["value"] + "+B", "log": [f"b saw {state['value']}"]}

g = (StateGraph(State).add_node("a", a).add_node("b", b)
     .add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
     .compile(checkpointer=MemorySaver()))
cfg = {"configurable": {"thread_id": "THREAD"}}
await g.ainvoke({"value": "", "log": []}, cfg)
history = [s async for s in g.aget_state_history(cfg)]
print("IDS " + json.dumps([s.config["configurable"]["checkpoint_id"] for s in history[::-1]]))
"""

SHOW = "TimeTravel(g, cfg)"

REPORT = """\
rows = [{"id": s.config["configurable"]["checkpoint_id"],
         "parent": (s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
         "source": s.metadata["source"], "values": s.values}
        async for s in g.aget_state_history(cfg)]
print("REPORT " + json.dumps(rows))
"""


def cells(thread_id: str) -> list[str]:
    """The notebook's code cells for a thread called ``thread_id``."""
    return [SETUP.replace("THREAD", thread_id), SHOW, REPORT]
