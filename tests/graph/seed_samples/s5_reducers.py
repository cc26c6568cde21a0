# Notebook 05 "concurrency and reducers" (scaffolding: the graph around route/worker, and the
# variant that writes the plain key from parallel tasks).
import asyncio                                                        # scaffolding
from typing import Annotated
from typing_extensions import TypedDict                               # scaffolding
import operator
from durable_debug import StateGraph, START, MemorySaver              # scaffolding
from durable_debug import InvalidUpdateError                          # scaffolding

class State(TypedDict):
    items:      list                                                  # scaffolding
    merged:     Annotated[dict, lambda l, r: {**(l or {}), **(r or {})}]  # dict-merge
    collected:  Annotated[list, operator.add]                            # list-concat
    single:     str                                                       # NO reducer

from durable_debug import Send

def route(state):
    return [Send("worker", {"item": it}) for it in state["items"]]

async def worker(state):
    await asyncio.sleep({"x": 0.03, "y": 0.0, "z": 0.015}[state["item"]])  # scaffolding: z, y finish first
    return {"merged": {state["item"]: "done"}, "collected": [state["item"]]}

g = (StateGraph(State).add_node("worker", worker)                     # scaffolding
     .add_conditional_edges(START, route).compile(checkpointer=MemorySaver()))  # scaffolding
out = await g.ainvoke({"items": ["x", "y", "z"]}, {"configurable": {"thread_id": "fan"}})  # scaffolding
print("merged    :", out["merged"])                                   # scaffolding
print("collected :", out["collected"])                                # scaffolding

async def bad_worker(state):                                          # scaffolding
    return {"single": state["item"]}                                  # scaffolding
bad = (StateGraph(State).add_node("worker", bad_worker)               # scaffolding
       .add_conditional_edges(START, route).compile(checkpointer=MemorySaver()))  # scaffolding
try:                                                                  # scaffolding
    await bad.ainvoke({"items": ["x", "y", "z"]}, {"configurable": {"thread_id": "race"}})  # scaffolding
except InvalidUpdateError as exc:                                     # scaffolding
    print(f"InvalidUpdateError: {exc}")                               # scaffolding
