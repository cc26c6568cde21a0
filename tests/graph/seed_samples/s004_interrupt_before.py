# The production notebook's "Human-in-the-Loop: Interrupt, Review, Resume" with the sync API. Scaffolding: the
# state, the two nodes, the builder, the ticket, the checkpointer and the config (the seed's
# checkpointer comes from PostgresSaver; any saver does here).
from typing_extensions import TypedDict                               # scaffolding
from durable_debug import StateGraph, START, MemorySaver              # scaffolding

class Ticket(TypedDict, total=False):                                 # scaffolding
    ticket: str                                                       # scaffolding
    draft: str                                                        # scaffolding
    approved: bool                                                    # scaffolding
    reviewer: str                                                     # scaffolding
    sent: str                                                         # scaffolding

outbox = []                                                           # scaffolding
def draft_response(state): return {"draft": f"Re: {state['ticket']}"} # scaffolding
def send_response(state):                                             # scaffolding
    outbox.append((state["draft"], state.get("approved"), state.get("reviewer")))  # scaffolding
    return {"sent": state["draft"]}                                   # scaffolding
builder = StateGraph(Ticket)                                          # scaffolding
builder.add_edge(START, "draft_response")                             # scaffolding
checkpointer = MemorySaver()                                          # scaffolding
ticket = "printer on fire"                                            # scaffolding
config = {"configurable": {"thread_id": "job-42"}}                    # scaffolding

builder.add_node("draft_response", draft_response)
builder.add_node("send_response", send_response)

# Interrupt BEFORE the irreversible node
builder.add_edge("draft_response", "send_response")
graph = builder.compile(
    checkpointer=checkpointer,
    interrupt_before=["send_response"],
)

# First pass: runs draft_response, stops at send_response
state = graph.invoke({"ticket": ticket}, config=config)
print("paused:", state, graph.get_state(config).next, outbox)         # scaffolding

# ... hours later, a reviewer approves in your UI ...
graph.update_state(config, {"approved": True, "reviewer": "josh"})
result = graph.invoke(None, config=config)  # resumes at send_response
print("done:", result["sent"], outbox)                                # scaffolding
