"""LangGraph code runs with only its imports changed: the same source, once as written for
LangGraph and once with ``langgraph`` replaced by ``durable_debug`` in its imports, prints
the same lines."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

pytestmark = pytest.mark.parity

SOURCE = """
import operator
from dataclasses import dataclass
from typing import Annotated

from langchain_core.messages import AIMessage
from typing_extensions import TypedDict

from langgraph.cache.memory import InMemoryCache
from langgraph.channels import EphemeralValue, Topic
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config, get_store, get_stream_writer
from langgraph.errors import GraphRecursionError, InvalidUpdateError
from langgraph.func import entrypoint, task
from langgraph.managed import IsLastStep, RemainingSteps
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.runtime import Runtime, get_runtime
from langgraph.store.memory import InMemoryStore
from langgraph.types import CachePolicy, Command, Overwrite, RetryPolicy, Send, interrupt


@dataclass
class Ctx:
    user: str


class State(MessagesState):
    tally: Annotated[list, operator.add]


def chat(state: State, runtime: Runtime[Ctx]) -> dict:
    get_stream_writer()({"step": "chat"})
    store = get_store()
    store.put(("users", runtime.context.user), "seen", {"n": len(state["messages"])})
    thread = get_config()["configurable"]["thread_id"]
    return {"messages": [AIMessage(f"hi {runtime.context.user} on {thread}")], "tally": [1]}


def fan(state: State):
    return [Send("work", {"messages": [], "tally": [i]}) for i in range(3)]


def work(state: State) -> dict:
    return {"tally": [10 * state["tally"][0]]}


def reset(state: State) -> dict:
    return {"tally": Overwrite([sum(state["tally"])])}


def ask(state: State) -> dict:
    return {"messages": [("user", interrupt("name?"))]}


builder = StateGraph(State, context_schema=Ctx)
builder.add_node("chat", chat, retry_policy=RetryPolicy(max_attempts=2))
builder.add_node("work", work, cache_policy=CachePolicy())
builder.add_node("reset", reset, defer=True)
builder.add_node("ask", ask)
builder.add_edge(START, "chat")
builder.add_conditional_edges("chat", fan, ["work"])
builder.add_edge("work", "reset")
builder.add_edge("reset", "ask")
builder.add_edge("ask", END)
store = InMemoryStore()
graph = builder.compile(checkpointer=InMemorySaver(), store=store, cache=InMemoryCache())
cfg = {"configurable": {"thread_id": "t1"}}
for mode, chunk in graph.stream(
    {"messages": [("user", "hello")]}, cfg, context=Ctx("ada"), stream_mode=["custom", "updates"]
):
    print(mode, sorted(chunk) if isinstance(chunk, dict) else chunk)
result = graph.invoke(Command(resume="Ada"), cfg, context=Ctx("ada"))
print([m.content for m in result["messages"]], result["tally"])
print(store.get(("users", "ada"), "seen").value)
print(REMOVE_ALL_MESSAGES, len(add_messages([], [("user", "x")])))
try:
    StateGraph(State).add_node("a", lambda s: {"bogus": 1})
    raise GraphRecursionError("never")
except InvalidUpdateError:
    print("invalid")
except GraphRecursionError:
    print("built")


@task
def shout(word: str) -> str:
    return word.upper()


@entrypoint(checkpointer=InMemorySaver())
def greet(name: str, *, previous=None) -> str:
    return entrypoint.final(value=shout(name).result(), save=(previous or 0) + 1)


class Looping(TypedDict):
    n: Annotated[list, operator.add]
    left: RemainingSteps
    last: IsLastStep


loop = (
    StateGraph(Looping)
    .add_node("tick", lambda s: {"n": [s["left"]]})
    .add_edge(START, "tick")
    .add_conditional_edges("tick", lambda s: END if s["left"] <= 2 or s["last"] else "tick")
    .compile()
)
print(loop.invoke({"n": []}, {"recursion_limit": 5}))
class Chan(TypedDict):
    seen: Annotated[list, Topic(str, accumulate=True)]
    tmp: Annotated[str, EphemeralValue(str)]


chan = StateGraph(Chan).add_node("w", lambda s: {"seen": ["w"], "tmp": "t"})
print(chan.add_edge(START, "w").compile().invoke({"seen": ["in"]}))
fcfg = {"configurable": {"thread_id": "f1"}}
print(list(greet.stream("ada", fcfg)), greet.invoke("bo", fcfg), greet.get_state(fcfg).values)
"""


def run(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<tutorial>", "exec", dont_inherit=True), {"__name__": "__main__"})
    return out.getvalue()


def test_the_same_source_runs_with_only_its_imports_changed():
    pytest.importorskip("langgraph")
    ours = re.sub(r"\bfrom langgraph\b", "from durable_debug", SOURCE)
    assert "langgraph" not in ours
    lines = run(ours)
    assert lines == run(SOURCE)
    assert "['hello', 'hi ada on t1', 'Ada'] [31]" in lines  # the run did what it says


def test_constants_have_langgraphs_values() -> None:
    import langgraph.constants as theirs

    import durable_debug.constants as ours

    for name in ours.__all__:
        assert getattr(ours, name) == getattr(theirs, name), name
