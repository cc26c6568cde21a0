"""A chat graph whose model types its answer a word at a time and stops half way until told to
go on: the widget's live text is seen growing, then whole, while the run still goes.

``SETUP`` defines it and runs it once (the model does not wait outside a streamed run: it
streams only when a run streams ``"messages"``, as the widget's runs do); the Python tests
run the same text, a notebook cell runs it in a real kernel. ``go`` releases the model.
"""

from __future__ import annotations

__all__ = ["ANSWER", "GO", "PARTIAL", "SETUP", "SHOW"]

ANSWER = "The capital of France is Paris."
PARTIAL = "The capital of"
"""The text written when the model stops: its first five tokens (three words, two spaces)."""

SETUP = """\
import json, threading
from typing import Annotated
from typing_extensions import TypedDict
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from durable_debug import StateGraph, START, END, MemorySaver, TimeTravel, add_messages

go = threading.Event()

class Typing(GenericFakeChatModel):
    \"\"\"Streams its message a token at a time; waits for `go` after the fifth.\"\"\"
    def _stream(self, *args, **kwargs):
        for index, chunk in enumerate(super()._stream(*args, **kwargs)):
            if index == 5:
                go.wait(timeout=300)
            yield chunk

class State(TypedDict):
    messages: Annotated[list, add_messages]

def agent(state):
    model = Typing(messages=iter([AIMessage("ANSWER")]))
    return {"messages": [model.invoke(state["messages"])]}

g = (StateGraph(State).add_node("agent", agent)
     .add_edge(START, "agent").add_edge("agent", END)
     .compile(checkpointer=MemorySaver()))
cfg = {"configurable": {"thread_id": "THREAD"}}
g.invoke({"messages": [HumanMessage("What is the capital of France?")]}, cfg)
history = list(g.get_state_history(cfg))
print("IDS " + json.dumps([s.config["configurable"]["checkpoint_id"] for s in history[::-1]]))
""".replace("ANSWER", ANSWER)

SHOW = "TimeTravel(g, cfg)"

GO = "go.set()"
