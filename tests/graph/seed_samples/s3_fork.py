# Notebook 03 "forking", run on the graph of notebook 01 (scaffolding: that graph and one run).
from typing import Annotated                                          # scaffolding
from typing_extensions import TypedDict                               # scaffolding
import operator                                                       # scaffolding
from durable_debug import StateGraph, START, END, MemorySaver         # scaffolding

class State(TypedDict):                                               # scaffolding
    value: str                                                        # scaffolding
    log: Annotated[list, operator.add]                                # scaffolding

async def step_a(state): return {"value": "A", "log": ["ran A"]}      # scaffolding
async def step_b(state): return {"value": "B", "log": ["ran B"]}      # scaffolding
g = (StateGraph(State).add_node("a", step_a).add_node("b", step_b)    # scaffolding
     .add_edge(START, "a").add_edge("a", "b").add_edge("b", END)      # scaffolding
     .compile(checkpointer=MemorySaver()))                            # scaffolding
cfg = {"configurable": {"thread_id": "demo-1"}}                       # scaffolding
await g.ainvoke({"value": "", "log": []}, cfg)                        # scaffolding

# 1. find an old checkpoint (say step 1)
target = None
async for snap in g.aget_state_history(cfg):
    if snap.metadata["step"] == 1:
        target = snap.config
        break

# 2. write a modified value onto that historical point -> a new child checkpoint
new_cfg = await g.aupdate_state(target, {"value": "FORKED"})

# 3. run forward from the fork
await g.ainvoke(None, new_cfg)

async for snap in g.aget_state_history(cfg):                          # scaffolding
    print(snap.metadata["step"], snap.metadata["source"], snap.values["value"] if "value" in snap.values else "-")  # scaffolding
