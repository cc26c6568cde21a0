# Notebook 06 "human-in-the-loop with interrupt" (scaffolding: the graph around gate).
from typing_extensions import TypedDict                               # scaffolding
from durable_debug import StateGraph, START, MemorySaver              # scaffolding
from durable_debug import interrupt, Command

class State(TypedDict):                                               # scaffolding
    plan: str                                                         # scaffolding
    approved: str                                                     # scaffolding

async def gate(state):
    decision = interrupt({"question": "approve this plan?", "plan": state["plan"]})
    return {"approved": decision}

g = (StateGraph(State).add_node("gate", gate).add_edge(START, "gate") # scaffolding
     .compile(checkpointer=MemorySaver()))                            # scaffolding

cfg = {"configurable": {"thread_id": "hitl-1"}}

# first invoke: runs until interrupt, then stops
r1 = await g.ainvoke({"plan": "deploy", "approved": ""}, cfg)
print(r1["__interrupt__"])
# [Interrupt(value={'question': 'approve this plan?', 'plan': 'deploy'}, id='a1b2c3...', response_schema=None)]

snap = await g.aget_state(cfg)
print(snap.next)      # ('gate',)  -> paused at the node, awaiting input

# later (possibly a different request, hours later), resume with the decision
r2 = await g.ainvoke(Command(resume="APPROVED"), cfg)
print(r2["approved"])  # APPROVED
