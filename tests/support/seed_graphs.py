"""The notebooks' example graphs as source text, run on either engine.

The same text is executed in-process by the inspect tests and sent to a real IPython shell or
Jupyter kernel by the magics tests, so every scenario is written once. Each snippet defines the
graph(s), a ``cfg`` and the seed's side-effect counters; the runs themselves are in the tests.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

IMPORTS = {
    "durable_debug": """
        from durable_debug import StateGraph, START, END, MemorySaver, interrupt, Command, Send
    """,
    "langgraph": """
        from langgraph.graph import StateGraph, START, END
        from langgraph.checkpoint.memory import MemorySaver
        from langgraph.types import interrupt, Command, Send
    """,
}
"""Import lines per engine: the seeds run on both with only these lines changed."""

ENGINES = list(IMPORTS)

COMMON = """
    import operator
    from typing import Annotated
    from typing_extensions import TypedDict
"""

SOURCES = {
    # notebook 01: value is overwritten, log accumulates.
    "accumulate": """
        class State(TypedDict):
            value: str
            log: Annotated[list, operator.add]

        async def step_a(state): return {"value": "A", "log": ["ran A"]}
        async def step_b(state): return {"value": "B", "log": ["ran B"]}

        g = (StateGraph(State)
             .add_node("a", step_a).add_node("b", step_b)
             .add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "demo-1"}}
    """,
    # notebook 02: c fails on the first run, is fixed, and the thread resumes with None.
    "resume": """
        class State(TypedDict):
            log: Annotated[list, operator.add]

        calls = {"a": 0, "b": 0, "c": 0}
        broken = {"c": True}

        async def a(state):
            calls["a"] += 1
            return {"log": ["a"]}
        async def b(state):
            calls["b"] += 1
            return {"log": ["b"]}
        async def c(state):
            calls["c"] += 1
            if broken["c"]:
                raise RuntimeError("c is broken")
            return {"log": ["c"]}

        g = (StateGraph(State)
             .add_node("a", a).add_node("b", b).add_node("c", c)
             .add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "resume-1"}}
    """,
    # notebook 04: query and options never change, partial and result are written once each.
    "pointers": """
        class State(TypedDict):
            query: str
            options: dict
            partial: str
            result: str
            log: Annotated[list, operator.add]

        async def plan(state): return {"log": ["plan"]}
        async def draft(state): return {"partial": state["query"].upper(), "log": ["draft"]}
        async def finish(state): return {"result": state["partial"] + "!", "log": ["finish"]}

        g = (StateGraph(State)
             .add_node("plan", plan).add_node("draft", draft).add_node("finish", finish)
             .add_edge(START, "plan").add_edge("plan", "draft").add_edge("draft", "finish")
             .add_edge("finish", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "pointers-1"}}
        first_input = {"query": "find x" * 20, "options": {"k": 3, "deep": True},
                       "partial": "", "result": "", "log": []}
    """,
    # notebook 05: Send fan-out, reducers merge deterministically.
    "fanout": """
        class State(TypedDict):
            items: list
            merged: Annotated[dict, lambda l, r: {**(l or {}), **(r or {})}]
            collected: Annotated[list, operator.add]

        def route(state):
            return [Send("worker", {"item": it}) for it in state["items"]]

        async def worker(state):
            return {"merged": {state["item"]: "done"}, "collected": [state["item"]]}

        g = (StateGraph(State)
             .add_node("worker", worker)
             .add_conditional_edges(START, route, ["worker"])
             .add_edge("worker", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "fanout-1"}}
    """,
    # notebook 07 (a): two sequential interrupts in one node.
    "two_gates": """
        class State(TypedDict):
            a: str
            b: str

        async def two_gates(state):
            first = interrupt({"ask": "A?"})
            second = interrupt({"ask": "B?"})
            return {"a": first, "b": second}

        g = (StateGraph(State).add_node("two_gates", two_gates)
             .add_edge(START, "two_gates").add_edge("two_gates", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "gates-1"}}
    """,
    # notebook 07 (b): parallel interrupts through Send, answered in one resume keyed by id.
    "reviews": """
        class State(TypedDict):
            items: list
            approvals: Annotated[list, operator.add]

        def fan(state):
            return [Send("review", {"item": it}) for it in state["items"]]

        async def review(state):
            d = interrupt({"review_item": state["item"]})
            return {"approvals": [f"{state['item']}={d}"]}

        g = (StateGraph(State).add_node("review", review)
             .add_conditional_edges(START, fan, ["review"]).add_edge("review", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "reviews-1"}}
    """,
    # notebook 08: the re-run rule; naive, interrupt first (fix A), own upstream node (fix B).
    "rerun_rule": """
        class State(TypedDict):
            prep: str
            decision: str

        charges = {"naive": 0, "interrupt_first": 0, "prepare": 0}

        async def naive(state):
            charges["naive"] += 1
            d = interrupt({"ask": "ok?"})
            return {"decision": d}

        async def interrupt_first(state):
            d = interrupt({"ask": "ok?"})
            charges["interrupt_first"] += 1
            return {"decision": d}

        async def prepare(state):
            charges["prepare"] += 1
            return {"prep": "expensive"}

        async def gate(state):
            d = interrupt({"ask": "ok?", "prep": state["prep"]})
            return {"decision": d}

        def single(name, fn):
            return (StateGraph(State).add_node(name, fn)
                    .add_edge(START, name).add_edge(name, END)
                    .compile(checkpointer=MemorySaver()))

        g_naive = single("node", naive)
        g_first = single("node", interrupt_first)
        g = (StateGraph(State).add_node("prepare", prepare).add_node("gate", gate)
             .add_edge(START, "prepare").add_edge("prepare", "gate").add_edge("gate", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "hitl-1"}}
    """,
    # Sync nodes, run with the sync invoke (on the engine's worker threads).
    "sync_nodes": """
        class State(TypedDict):
            value: str

        def first(state): return {"value": "1"}
        def second(state): return {"value": state["value"] + "2"}

        g = (StateGraph(State).add_node("first", first).add_node("second", second)
             .add_edge(START, "first").add_edge("first", "second").add_edge("second", END)
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "sync-1"}}
    """,
    # A loop with a conditional edge, for the topology drawings.
    "loop": """
        class State(TypedDict):
            n: int

        async def agent(state): return {"n": state["n"] + 1}
        async def tools(state): return {}

        def should_continue(state):
            return "tools" if state["n"] < 3 else END

        g = (StateGraph(State).add_node("agent", agent).add_node("tools", tools)
             .add_edge(START, "agent")
             .add_conditional_edges("agent", should_continue, ["tools", END])
             .add_edge("tools", "agent")
             .compile(checkpointer=MemorySaver()))
        cfg = {"configurable": {"thread_id": "loop-1"}}
    """,
}


def source(engine: str, name: str) -> str:
    """The full source of scenario ``name`` on ``engine``: imports, then the snippet."""
    parts = [IMPORTS[engine], COMMON, SOURCES[name]]
    return "\n".join(textwrap.dedent(part).strip() for part in parts) + "\n"


def load(engine: str, name: str, sqlite: Path | None = None) -> dict[str, Any]:
    """Execute scenario ``name`` and return its namespace (``g``, ``cfg``, counters…).

    ``sqlite``: on durable_debug's engine, every graph saves to this SQLite file instead of
    a ``MemorySaver``."""
    text = source(engine, name)
    if sqlite is not None:
        if engine != "durable_debug":
            raise ValueError(f"sqlite= is for durable_debug's engine, not {engine!r}")
        text = "from durable_debug import SqliteSaver\n" + text.replace(
            "MemorySaver()", f"SqliteSaver({str(sqlite)!r})"
        )
    namespace: dict[str, Any] = {"__name__": f"seed_{name}"}
    # dont_inherit: this module's `from __future__ import annotations` must not leak into the
    # seed, whose TypedDicts LangGraph reads at run time.
    code = compile(text, f"<seed {name}>", "exec", dont_inherit=True)
    exec(code, namespace)
    return namespace


def empty_state(ns: dict[str, Any]) -> dict[str, Any]:
    """An input for a loaded scenario's ``State`` with every key empty: ``[]`` for a list,
    ``""`` for a string, ``0`` otherwise."""
    return {
        k: [] if "list" in str(t) else ("" if t is str else 0)
        for k, t in ns["State"].__annotations__.items()
    }
