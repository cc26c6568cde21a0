# Notebook 02 "resume (partial replay)": the scenario (a ok -> b ok -> c raises, fix, resume)
# and the classic bug. The seed shows fragments; lines marked "scaffolding" complete them.
import operator                                                       # scaffolding
from typing import Annotated                                          # scaffolding
from typing_extensions import TypedDict                               # scaffolding
from durable_debug import StateGraph, START, END, MemorySaver         # scaffolding

class State(TypedDict):                                               # scaffolding
    value: str                                                        # scaffolding
    log: Annotated[list, operator.add]                                # scaffolding

runs = []                                                             # scaffolding
broken = True                                                         # scaffolding
async def a(state): runs.append("a"); return {"log": ["a ok"]}        # scaffolding
async def b(state): runs.append("b"); return {"log": ["b ok"]}        # scaffolding
async def c(state):                                                   # scaffolding
    runs.append("c")                                                  # scaffolding
    if broken: raise RuntimeError("c raises")                         # scaffolding
    return {"log": ["c ok"], "value": "done"}                         # scaffolding

g = (StateGraph(State).add_sequence([("a", a), ("b", b), ("c", c)])  # scaffolding
     .add_edge(START, "a").compile(checkpointer=MemorySaver()))       # scaffolding
cfg = {"configurable": {"thread_id": "job-1"}}                        # scaffolding
fresh_state = {"value": "", "log": []}                                # scaffolding

# run 1: a ok -> b ok -> c raises
try:                                                                  # scaffolding
    await g.ainvoke(fresh_state, cfg)                                 # scaffolding
except RuntimeError as exc:                                           # scaffolding
    print("run 1 failed:", exc)                                       # scaffolding
print("next =", (await g.aget_state(cfg)).next)                       # scaffolding

# fix the cause, then resume — the seed's RIGHT way:
broken = False                                                        # scaffolding
runs.clear()                                                          # scaffolding
snap = await g.aget_state(cfg)
graph_input = None if snap.next else fresh_state
result = await g.ainvoke(graph_input, config=cfg)
print("run 2 ran:", runs, "log:", result["log"])                      # scaffolding

# The classic bug, on a second thread that failed the same way:
broken = True                                                         # scaffolding
cfg = {"configurable": {"thread_id": "job-2"}}                        # scaffolding
try:                                                                  # scaffolding
    await g.ainvoke(fresh_state, cfg)                                 # scaffolding
except RuntimeError:                                                  # scaffolding
    pass                                                              # scaffolding
broken = False                                                        # scaffolding
runs.clear()                                                          # scaffolding
# WRONG on the resume path: passing a fresh state re-runs from the top,
# even though a checkpoint exists.
result = await g.ainvoke(fresh_state, cfg)
print("classic bug ran:", runs, "log:", result["log"])                # scaffolding
