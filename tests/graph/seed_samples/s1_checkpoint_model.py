# Notebook 01 "watch state accumulate" — verbatim but for the import lines.
from typing import Annotated
from typing_extensions import TypedDict
import operator
from durable_debug import StateGraph, START, END
from durable_debug import MemorySaver

class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]   # append-only (see notebook 05)

async def step_a(state): return {"value": "A", "log": ["ran A"]}
async def step_b(state): return {"value": "B", "log": ["ran B"]}

g = (StateGraph(State)
     .add_node("a", step_a).add_node("b", step_b)
     .add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
     .compile(checkpointer=MemorySaver()))

cfg = {"configurable": {"thread_id": "demo-1"}}
await g.ainvoke({"value": "", "log": []}, cfg)

async for snap in g.aget_state_history(cfg):
    print(snap.metadata["step"], snap.next, snap.values.get("value"), snap.values["log"])
