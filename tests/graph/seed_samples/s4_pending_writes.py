# Notebook 04 "checkpoint_writes and crash recovery": parallel tasks A and B where A finished
# and B did not; only B re-runs. The seed describes it in prose; this is its smallest program.
import asyncio, operator                                              # scaffolding
from typing import Annotated                                          # scaffolding
from typing_extensions import TypedDict                               # scaffolding
from durable_debug import StateGraph, START, MemorySaver              # scaffolding

class State(TypedDict):                                               # scaffolding
    results: Annotated[list, operator.add]                            # scaffolding

calls = {"A": 0, "B": 0}                                              # scaffolding
b_fails = True                                                        # scaffolding
async def task_a(state):                                              # scaffolding
    calls["A"] += 1                                                   # scaffolding
    return {"results": ["A"]}                                         # scaffolding
async def task_b(state):                                              # scaffolding
    calls["B"] += 1                                                   # scaffolding
    await asyncio.sleep(0.05)   # A finishes first                    # scaffolding
    if b_fails: raise ConnectionError("B lost its connection")        # scaffolding
    return {"results": ["B"]}                                         # scaffolding

saver = MemorySaver()                                                 # scaffolding
g = (StateGraph(State).add_node("A", task_a).add_node("B", task_b)    # scaffolding
     .add_edge(START, "A").add_edge(START, "B")                       # scaffolding
     .compile(checkpointer=saver))                                    # scaffolding
cfg = {"configurable": {"thread_id": "par-1"}}                        # scaffolding
try:                                                                  # scaffolding
    await g.ainvoke({"results": []}, cfg)                             # scaffolding
except ConnectionError as exc:                                        # scaffolding
    print("step failed:", exc)                                        # scaffolding
pending = (await saver.aget_tuple(cfg)).pending_writes                # scaffolding
print("pending writes:", [(ch, v) for _, ch, v in pending])           # scaffolding
b_fails = False                                                       # scaffolding
result = await g.ainvoke(None, cfg)                                   # scaffolding
print("after resume:", result["results"], calls)                      # scaffolding
