# Notebook 07 "multiple interrupts and id matching" (a) sequential and (b) parallel via Send.
# Scaffolding: the graphs, and reading the ids the first invoke returns (the seed writes
# 'id-x' for them).
import operator                                                       # scaffolding
from typing import Annotated                                          # scaffolding
from typing_extensions import TypedDict                               # scaffolding
from durable_debug import StateGraph, START, MemorySaver, interrupt, Command, Send  # scaffolding

class Two(TypedDict):                                                 # scaffolding
    a: str                                                            # scaffolding
    b: str                                                            # scaffolding

async def two_gates(state):
    first  = interrupt({"ask": "A?"})   # stops here on run 1
    second = interrupt({"ask": "B?"})   # stops here after first is resumed
    return {"a": first, "b": second}

g = (StateGraph(Two).add_node("two_gates", two_gates)                 # scaffolding
     .add_edge(START, "two_gates").compile(checkpointer=MemorySaver()))  # scaffolding
cfg = {"configurable": {"thread_id": "seq"}}                          # scaffolding
r = await g.ainvoke({"a": "", "b": ""}, cfg)                          # scaffolding: invoke
print("invoke    ->", [i.value for i in r["__interrupt__"]])          # scaffolding
r = await g.ainvoke(Command(resume="A-VALUE"), cfg)                   # scaffolding: resume 1
print("resume A  ->", [i.value for i in r["__interrupt__"]])          # scaffolding
r = await g.ainvoke(Command(resume="B-VALUE"), cfg)                   # scaffolding: resume 2
print("resume B  ->", r)                                              # scaffolding

class Reviews(TypedDict):                                             # scaffolding
    items: list                                                       # scaffolding
    approvals: Annotated[list, operator.add]                          # scaffolding

def fan(state):
    return [Send("review", {"item": it}) for it in state["items"]]

async def review(state):
    d = interrupt({"review_item": state["item"]})
    return {"approvals": [f"{state['item']}={d}"]}

g = (StateGraph(Reviews).add_node("review", review)                   # scaffolding
     .add_conditional_edges(START, fan).compile(checkpointer=MemorySaver()))  # scaffolding
cfg = {"configurable": {"thread_id": "par"}}                          # scaffolding
first = await g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"]}, cfg)  # scaffolding
ids = {i.value["review_item"]: i.id for i in first["__interrupt__"]}  # scaffolding
print("pending   ->", sorted(ids))                                    # scaffolding

result = await g.ainvoke(Command(resume={
    ids["doc-X"]: "APPROVE",
    ids["doc-Y"]: "REJECT",
    ids["doc-Z"]: "APPROVE",
}), cfg)
print("approvals ->", result["approvals"])                            # scaffolding
