# Notebook 08 "the re-run rule": the naive node, Fix A and Fix B, with the seed's counters.
# Scaffolding: counters standing in for the side effects, and the graphs.
from typing_extensions import TypedDict                               # scaffolding
from durable_debug import StateGraph, START, END, MemorySaver, interrupt, Command  # scaffolding

class State(TypedDict, total=False):                                  # scaffolding
    decision: str                                                     # scaffolding
    prep: str                                                         # scaffolding

charges = []                                                          # scaffolding
def charge_customer(*args): charges.append(args)                      # scaffolding
def expensive(): return "prepared"                                    # scaffolding
executed = {"prepare": 0, "gate": 0}                                  # scaffolding

async def run(node_fn, name):                                         # scaffolding
    charges.clear()                                                   # scaffolding
    g = (StateGraph(State).add_node("node", node_fn).add_edge(START, "node")  # scaffolding
         .compile(checkpointer=MemorySaver()))                        # scaffolding
    cfg = {"configurable": {"thread_id": name}}                       # scaffolding
    await g.ainvoke({"decision": ""}, cfg)                            # scaffolding: first invoke
    await g.ainvoke(Command(resume="yes"), cfg)                       # scaffolding: resume
    print(f"{name}: charge_customer ran {len(charges)}x")             # scaffolding

async def node(state):
    charge_customer()               # SIDE EFFECT
    d = interrupt({"ask": "ok?"})   # stops here
    return {"decision": d}

await run(node, "naive")                                              # scaffolding

# Fix A: put the interrupt first, side effects after
async def node(state):
    d = interrupt({"ask": "ok?"})   # stop first
    charge_customer(d)              # runs once, only after resume
    return {"decision": d}

await run(node, "fix-a")                                              # scaffolding

# Fix B: move the work into its own upstream node
async def prepare(state):           # its own node -> its own checkpoint
    executed["prepare"] += 1                                          # scaffolding: counter
    charge_customer()               # side effect
    return {"prep": expensive()}

async def gate(state):              # interrupt isolated here
    executed["gate"] += 1                                             # scaffolding: counter
    d = interrupt({"ask": "ok?", "prep": state["prep"]})
    return {"decision": d}
# edges: START -> prepare -> gate -> END

charges.clear()                                                       # scaffolding
g = (StateGraph(State).add_node("prepare", prepare).add_node("gate", gate)  # scaffolding
     .add_edge(START, "prepare").add_edge("prepare", "gate").add_edge("gate", END)  # scaffolding
     .compile(checkpointer=MemorySaver()))                            # scaffolding
cfg = {"configurable": {"thread_id": "fix-b"}}                        # scaffolding
await g.ainvoke({"decision": ""}, cfg)                                # scaffolding
final = await g.ainvoke(Command(resume="yes"), cfg)                   # scaffolding
print(f"prepare executed : {executed['prepare']}")                    # scaffolding
print(f"gate    executed : {executed['gate']}")                       # scaffolding
print(f"final prep       : {final['prep']}")                          # scaffolding
