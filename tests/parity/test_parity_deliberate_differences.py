"""What durable_debug does where LangGraph silently lets a likely mistake pass, and where it
still differs from LangGraph on purpose (the one list of differences is in docs/engine.md).

Where LangGraph stays silent (a write to a key the schema lacks, a resume that answers
nothing), durable_debug now does exactly what LangGraph does and records a *finding* on the
checkpoint concerned (``durable_debug.inspect.findings``); ``compile(strict=True)`` raises
the error it raised before instead. Each of those tests runs one scenario on both libraries
and asserts that they match, that ours recorded the finding, and that strict mode refuses.
The tests after them pin the differences that remain, each with its reason.
"""

from __future__ import annotations

import functools
import operator
import warnings
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, aobserve, durable_api, langgraph_api
from typing_extensions import TypedDict

from durable_debug.checkpoint.records import aread_record
from durable_debug.inspect import afindings

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]


def gate_graph(api: Api, trace: Trace, *, stray_key: bool = False, strict: bool = False) -> object:
    """START → work → gate (interrupts) → END. ``work`` also writes ``stray`` if asked;
    ``strict`` compiles durable_debug's graph with ``strict=True``."""

    async def work(state: State) -> dict:
        trace.ran("work")
        update = {"value": "worked", "log": ["work"]}
        if stray_key:
            update["stray"] = "not in the schema"
        return update

    async def gate(state: State) -> dict:
        trace.ran("gate")
        return {"value": api.interrupt("approve?"), "log": ["gate"]}

    builder = (
        api.StateGraph(State)
        .add_node("work", work)
        .add_node("gate", gate)
        .add_edge(api.START, "work")
        .add_edge("work", "gate")
    )
    return builder.compile(checkpointer=api.MemorySaver(), **({"strict": True} if strict else {}))


async def both(scenario) -> tuple[dict, dict]:
    """The traces of ``scenario`` on durable_debug and on LangGraph."""
    return await aobserve(scenario, durable_api()), await aobserve(scenario, langgraph_api())


async def strictly(scenario) -> dict:
    """The trace of ``scenario`` on durable_debug with graphs compiled ``strict=True``."""
    return await aobserve(functools.partial(scenario, strict=True), durable_api())


async def checkpoint_count(graph, config) -> int:
    """How many checkpoints the thread has."""
    return len([s async for s in graph.aget_state_history(config)])


async def note_findings(api: Api, trace: Trace, graph: Any, config: dict) -> None:
    """Record ours' findings as (code, node, key) and the step of their checkpoint."""
    if api.name == "langgraph":
        return
    steps = {
        s.config["configurable"]["checkpoint_id"]: s.metadata["step"]
        async for s in graph.aget_state_history(config)
    }
    found = await afindings(graph, config)
    trace.note(
        "findings",
        [(steps[cid], f.code, f.node, f.key) for cid, listed in found.items() for f in listed],
    )


def same(ours: dict, theirs: dict) -> None:
    """Ours and LangGraph's traces match, apart from the findings only ours records."""
    assert {k: v for k, v in ours.items() if k != "findings"} == theirs


async def test_a_node_writing_a_key_the_schema_lacks(recwarn):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        g = gate_graph(api, trace, stray_key=True, strict=strict)
        cfg = {"configurable": {"thread_id": "stray"}}
        await trace.run("run", g.ainvoke({"value": "", "log": []}, cfg))
        trace.state("state", await g.aget_state(cfg))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # the write is dropped and the run goes on to the gate
    assert theirs["state"]["next"] == ("gate",)
    assert ours["findings"] == [(1, "unknown-key", "work", "stray")]  # on work's step
    strict = await strictly(scenario)
    assert strict["run"]["raised"] == "InvalidUpdateError"
    assert "Node 'work' wrote key 'stray'" in strict["run"]["message"]
    assert strict["state"]["next"] == ("work",)


async def test_resume_when_nothing_is_pending(recwarn):
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "done"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        await g.ainvoke(api.Command(resume="yes"), cfg)
        trace.note("checkpoints before", await checkpoint_count(g, cfg))
        await trace.run("extra resume", g.ainvoke(api.Command(resume="again"), cfg))
        trace.note("checkpoints after", await checkpoint_count(g, cfg))
        trace.state("state", await g.aget_state(cfg))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # the value is ignored and the finished state returned
    assert theirs["extra resume"] == {"value": "yes", "log": ["work", "gate"]}
    assert theirs["checkpoints after"] == theirs["checkpoints before"]
    assert ours["findings"] == [(2, "resume-nothing-pending", None, None)]


async def test_resume_when_nothing_is_pending_under_strict(recwarn):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        saver = api.MemorySaver()
        cfg = {"configurable": {"thread_id": "done"}}
        loose = gate_graph(api, trace)
        loose.checkpointer = saver
        await loose.ainvoke({"value": "", "log": []}, cfg)
        await loose.ainvoke(api.Command(resume="yes"), cfg)
        g = gate_graph(api, trace, strict=strict)
        g.checkpointer = saver
        await trace.run("extra resume", g.ainvoke(api.Command(resume="again"), cfg))
        trace.note("checkpoints", await checkpoint_count(g, cfg))

    strict = await strictly(scenario)
    assert strict["extra resume"]["raised"] == "ValueError"
    assert "has no pending interrupt" in strict["extra resume"]["message"]
    assert strict["checkpoints"] == 4


async def test_resume_map_with_ids_that_match_no_pending_interrupt(recwarn):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        g = gate_graph(api, trace, strict=strict)
        cfg = {"configurable": {"thread_id": "unknown-id"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        trace.note("checkpoints before", await checkpoint_count(g, cfg))
        stale = {"0123456789abcdef0123456789abcdef": "yes"}
        await trace.run("resume", g.ainvoke(api.Command(resume=stale), cfg))
        trace.note("checkpoints after", await checkpoint_count(g, cfg))
        trace.state("state", await g.aget_state(cfg))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # the unknown id is ignored: the gate runs again and interrupts again
    assert [i["Interrupt"] for i in theirs["resume"]["__interrupt__"]] == ["approve?"]
    assert theirs["executions"] == {"work": 1, "gate": 2}
    assert ours["findings"] == [(1, "resume-unknown-id", None, "0123456789abcdef0123456789abcdef")]
    strict = await strictly(scenario)
    assert strict["resume"]["raised"] == "ValueError"
    assert "0123456789abcdef0123456789abcdef" in strict["resume"]["message"]
    assert strict["checkpoints after"] == strict["checkpoints before"]
    assert strict["executions"] == {"work": 1, "gate": 1}


async def test_resume_on_an_empty_thread(recwarn):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        g = gate_graph(api, trace, strict=strict)
        cfg = {"configurable": {"thread_id": "empty"}}
        await trace.run("resume", g.ainvoke(api.Command(resume="yes"), cfg))
        trace.note("checkpoints", await checkpoint_count(g, cfg))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # the graph runs from START with no input
    assert theirs["executions"].get("work") == 1
    assert theirs["checkpoints"] > 0
    assert ours["findings"] == [(-1, "resume-empty-thread", None, None)]
    strict = await strictly(scenario)
    assert strict["resume"]["raised"] == "EmptyInputError"
    assert "'empty' has no checkpoint" in strict["resume"]["message"]
    assert strict["checkpoints"] == 0
    assert strict["executions"] == {}


async def test_graph_input_with_unknown_keys(recwarn):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        g = gate_graph(api, trace, strict=strict)
        cfg = {"configurable": {"thread_id": "typo"}}
        await trace.run("run", g.ainvoke({"valeu": "typo", "log": []}, cfg))
        trace.note("checkpoints", await checkpoint_count(g, cfg))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # the unknown key is dropped and the graph runs
    assert "valeu" not in theirs["run"]
    assert theirs["executions"]["work"] == 1
    assert ours["findings"] == [(-1, "unknown-key", None, "valeu")]
    strict = await strictly(scenario)
    assert strict["run"]["raised"] == "InvalidUpdateError"
    assert "'valeu'" in strict["run"]["message"]
    assert strict["checkpoints"] == 0


class Parent(TypedDict):
    query: str
    results: Annotated[list, operator.add]


class Sub(TypedDict):
    query: str
    answer: str
    results: Annotated[list, operator.add]


class Item(TypedDict):
    item: str
    results: Annotated[list, operator.add]


async def test_subgraphs_share_some_keys_with_their_parent():
    """A compiled subgraph added as a node gets the parent's state and keeps its own keys;
    its keys the parent lacks are dropped, and so are the keys of a Send's argument the
    subgraph lacks: the usual pattern, so no finding, no warning (and none under strict)."""

    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        def ask(state: Sub) -> dict:
            trace.ran("ask")
            return {"answer": state["query"] + "!", "results": [state["query"]]}

        def work(state: Item) -> dict:
            trace.ran("work")
            return {"results": [state["item"] + "?"]}

        extra = {"strict": True} if strict else {}
        sub = api.StateGraph(Sub).add_node("ask", ask).add_edge(api.START, "ask").compile(**extra)
        worker = (
            api.StateGraph(Item).add_node("work", work).add_edge(api.START, "work").compile(**extra)
        )
        fan = [
            api.Send("worker", {"item": "x", "query": "extra"}),
            api.Send("worker", {"item": "y"}),
        ]
        g = (
            api.StateGraph(Parent)
            .add_node("sub", sub)
            .add_node("worker", worker)
            .add_edge(api.START, "sub")
            .add_conditional_edges("sub", lambda s: fan)
            .compile(checkpointer=api.MemorySaver(), **extra)
        )
        cfg = {"configurable": {"thread_id": "shared"}}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await trace.run("run", g.ainvoke({"query": "q", "results": []}, cfg))
        trace.note("warnings", [str(w.message) for w in caught if "durable" in str(w.category)])
        trace.history("history", [s async for s in g.aget_state_history(cfg)])
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)
    assert theirs["run"] == {"query": "q", "results": ["q", "x?", "y?"]}
    assert ours["findings"] == [] and ours["warnings"] == []
    strict = await strictly(scenario)
    assert {k: v for k, v in strict.items() if k != "findings"} == theirs


async def test_update_checkpoints_keep_as_node_in_the_debug_record():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "meta"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        await g.aupdate_state(cfg, {"value": "edited"}, as_node="gate")
        snap = await g.aget_state(cfg)
        trace.note("metadata", snap.metadata)
        if api.name != "langgraph":
            conf = snap.config["configurable"]
            record = await aread_record(
                g.checkpointer, "meta", conf["checkpoint_ns"], conf["checkpoint_id"]
            )
            trace.note("as_node in the record", (record or {}).get("as_node"))

    ours, theirs = await both(scenario)
    assert ours["metadata"] == theirs["metadata"]  # LangGraph's metadata exactly
    assert theirs["metadata"] == {"source": "update", "step": 2, "parents": {}}
    assert ours["as_node in the record"] == "gate"  # the writer the debugger shows, beside it


class PlainState(TypedDict):
    single: str


async def test_get_state_after_two_writes_to_a_plain_key():
    async def scenario(api: Api, trace: Trace) -> None:
        def write(name: str):
            async def node(state: PlainState) -> dict:
                trace.ran(name)
                return {"single": name}

            return node

        g = (
            api.StateGraph(PlainState)
            .add_node("a", write("a"))
            .add_node("b", write("b"))
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "conflict"}}
        await trace.run("run", g.ainvoke({"single": "start"}, cfg), message=False)
        try:
            snap = await g.aget_state(cfg)
        except Exception as exc:
            trace.note("get_state", exc)
        else:
            trace.state("get_state", snap)
        await trace.run("resume", g.ainvoke(None, cfg), message=False)

    ours, theirs = await both(scenario)
    assert ours["run"] == theirs["run"] == {"raised": "InvalidUpdateError"}
    # LangGraph raises the InvalidUpdateError again
    assert theirs["get_state"]["raised"] == "InvalidUpdateError"
    # durable_debug shows the state before the conflicting writes; the step never completed
    # (a resume fails the same way in both), so both tasks are still next
    assert ours["resume"] == theirs["resume"] == {"raised": "InvalidUpdateError"}
    assert ours["get_state"]["values"] == {"single": "start"}
    assert ours["get_state"]["next"] == ("a", "b")


async def test_thread_ids_ints_as_strings_and_other_types_refused():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        await g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": 7}})
        by_str = await g.aget_state({"configurable": {"thread_id": "7"}})
        trace.note("int thread, read by its string", by_str.values)
        trace.note("thread id in the config", by_str.config["configurable"]["thread_id"])
        for label, bad in [("list", [1]), ("bytes", b"x"), ("bool", True), ("nul", "a\x00b")]:
            await trace.run(
                label, g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": bad}})
            )

    ours, theirs = await both(scenario)
    # ints: as LangGraph, the thread is named by the int's decimal string
    assert ours["int thread, read by its string"] == theirs["int thread, read by its string"]
    assert ours["thread id in the config"] == theirs["thread id in the config"] == "7"
    for label, what in [("list", "list"), ("bytes", "bytes"), ("bool", "bool"), ("nul", "NUL")]:
        assert ours[label]["raised"] == "InvalidConfigError"
        assert "['thread_id']" in ours[label]["message"] and what in ours[label]["message"]
        # LangGraph runs the thread under the value's str() (or keeps the NUL)
        assert "raised" not in (theirs[label] or {})


async def test_store_lists_namespaces_and_compares_as_langgraph():
    """Once a difference, now LangGraph's behaviour: a namespace read or emptied is listed, and
    a comparison filter on a field an item lacks raises TypeError."""

    async def scenario(api: Api, trace: Trace) -> None:
        if api.name == "langgraph":
            from langgraph.store.memory import InMemoryStore
        else:
            from durable_debug.store.memory import InMemoryStore
        store = InMemoryStore()
        store.put(("a",), "k", {"n": 1})
        store.put(("b",), "k", {"other": 1})
        store.get(("never", "written"), "k")
        store.delete(("b",), "k")
        trace.note("namespaces", store.list_namespaces())
        store.put(("b",), "k", {"other": 1})
        trace.call("filter", store.search, (), filter={"n": {"$gt": 0}}, message=False)

    ours, theirs = await both(scenario)
    assert ours == theirs
    assert theirs["namespaces"] == [("a",), ("b",), ("never", "written")]
    assert theirs["filter"] == {"raised": "TypeError"}


def test_a_fresh_process_does_not_import_the_classes_a_blob_names(tmp_path):
    """LangGraph's serializer imports a stored dataclass's module to rebuild it; ours gives a
    dict tagged with the class name and imports nothing."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "shop.py").write_text(
        "import dataclasses\n\n@dataclasses.dataclass\nclass Item:\n    sku: str\n"
    )
    serializers = (
        "from durable_debug.checkpoint.serde import MsgpackSerializer\n"
        "from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer\n"
        "libs = {'ours': MsgpackSerializer(), 'theirs': JsonPlusSerializer()}\n"
        "names = sys.argv[2].split(',')\n"
    )
    write = (
        "import sys, shop\n" + serializers + "for name in names:\n"
        "    kind, blob = libs[name].dumps_typed({'item': shop.Item('a1')})\n"
        "    open(sys.argv[1] + '/' + name, 'wb').write(kind.encode() + b'\\n' + blob)\n"
    )
    read = (
        "import sys, json\n" + serializers + "out = {}\n"
        "for name in names:\n"
        "    kind, blob = open(sys.argv[1] + '/' + name, 'rb').read().split(b'\\n', 1)\n"
        "    value = libs[name].loads_typed((kind.decode(), blob))['item']\n"
        "    out[name] = value if isinstance(value, dict) else type(value).__name__\n"
        "out['imported'] = 'shop' in sys.modules\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}

    def run(script: str, names: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path), names],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(done.stdout) if done.stdout.strip() else {}

    run(write, "ours,theirs")
    assert run(read, "ours") == {
        "ours": {"__type__": "shop.Item", "sku": "a1"},
        "imported": False,
    }
    assert run(read, "theirs") == {"theirs": "Item", "imported": True}  # LangGraph imported it


class Count(TypedDict):
    n: int


def count_graph(api: Api, trace: Trace, node: Any, *, strict: bool = False) -> Any:
    """START → a → b, ``a`` being ``node`` (``strict``: durable_debug's ``strict=True``)."""

    def b(state: Count) -> dict:
        trace.ran("b")
        return {"n": state["n"] + 10}

    return (
        api.StateGraph(Count)
        .add_node("a", node)
        .add_node("b", b)
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=api.MemorySaver(), **({"strict": True} if strict else {}))
    )


async def test_a_config_parameter_annotated_dict_still_gets_the_config():
    async def scenario(api: Api, trace: Trace) -> None:
        def a(state: Count, config: dict) -> dict:
            trace.ran("a")
            return {"n": len(config["configurable"]["thread_id"])}

        cfg = {"configurable": {"thread_id": "typed"}}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # both warn about the annotation, the same way
            g = count_graph(api, trace, a)
            await trace.run("run", g.ainvoke({"n": 0}, cfg))
        trace.note("warned", [str(w.message) for w in caught if w.category is UserWarning])

    ours, theirs = await both(scenario)
    assert ours["warned"] == theirs["warned"] != []
    assert ours["run"] == {"n": 15}
    # LangGraph passes nothing for a `config: dict` parameter (it warns), so the call fails
    assert theirs["run"]["raised"] == "TypeError"


async def test_durability_exit_and_an_unknown_durability(recwarn):
    """durability="exit" saves only the checkpoint the run ends on, as LangGraph does (a
    finding of a step passed over moves to it); an unknown durability runs as LangGraph runs
    it (as "async"), with a finding."""

    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        def a(state: Count) -> dict:
            trace.ran("a")
            return {"n": state["n"] + 1, "stray": "dropped"}

        g = count_graph(api, trace, a, strict=strict)
        cfg = {"configurable": {"thread_id": "exit"}}
        await trace.run("run", g.ainvoke({"n": 0}, cfg, durability="exit"))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])
        await note_findings(api, trace, g, cfg)
        trace.note("exit findings", trace.observations.pop("findings", None))
        cfg = {"configurable": {"thread_id": "bogus"}}
        await trace.run("unknown", g.ainvoke({"n": 0}, cfg, durability="bogus"))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    assert {k: v for k, v in ours.items() if k not in ("findings", "exit findings")} == {
        k: v for k, v in theirs.items() if k != "exit findings"
    }
    assert theirs["run"] == theirs["unknown"] == {"n": 11}
    assert len(theirs["history"]["checkpoints"]) == 1  # the last one only
    assert ours["exit findings"] == [(2, "unknown-key", "a", "stray")]
    assert ours["findings"] == [
        (-1, "unknown-durability", None, "bogus"),
        (1, "unknown-key", "a", "stray"),
    ]
    strict = await strictly(scenario)
    assert strict["unknown"]["raised"] == "ValueError"
    assert "Unknown durability 'bogus'" in strict["unknown"]["message"]


async def test_an_unknown_print_mode(recwarn, capsys):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        g = gate_graph(api, trace, strict=strict)
        cfg = {"configurable": {"thread_id": "print"}}
        await trace.run("run", g.ainvoke({"value": "", "log": []}, cfg, print_mode="udpates"))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # nothing printed for the misspelt mode, and the graph runs
    assert theirs["executions"]["work"] == 1
    assert capsys.readouterr().out == ""
    assert ours["findings"] == [(-1, "unknown-print-mode", None, "udpates")]
    strict = await strictly(scenario)
    assert strict["run"]["raised"] == "ValueError"
    assert "'udpates'" in strict["run"]["message"]
    assert strict["executions"].get("work", 0) == 0


async def test_an_unknown_stream_version(recwarn):
    async def scenario(api: Api, trace: Trace, strict: bool = False) -> None:
        g = gate_graph(api, trace, strict=strict)
        cfg = {"configurable": {"thread_id": "version"}}
        await trace.run("run", g.ainvoke({"value": "", "log": []}, cfg, version="v3"))
        await note_findings(api, trace, g, cfg)

    ours, theirs = await both(scenario)
    same(ours, theirs)  # the v1 output: a dict with the pending interrupt
    assert theirs["run"]["value"] == "worked"
    assert ours["findings"] == [(-1, "unknown-stream-version", None, "v3")]
    strict = await strictly(scenario)
    assert strict["run"]["raised"] == "ValueError"
    assert "'v3'" in strict["run"]["message"]
    assert strict["executions"].get("work", 0) == 0


async def test_a_store_embedding_of_the_wrong_size_is_refused():
    def two_dims(texts: list[str]) -> list[list[float]]:
        return [[1.0, float(len(t))] for t in texts]

    async def scenario(api: Api, trace: Trace) -> None:
        if api.name == "langgraph":
            from langgraph.store.memory import InMemoryStore
        else:
            from durable_debug.store.memory import InMemoryStore
        store = InMemoryStore(index={"dims": 3, "embed": two_dims})
        try:
            store.put(("n",), "k", {"text": "hello"})
            trace.note("put", "stored")
        except ValueError as exc:
            trace.note("put", str(exc))
        trace.note("stored", store.get(("n",), "k") is not None)

    ours, theirs = await both(scenario)
    assert "index dims is 3" in ours["put"]
    assert ours["stored"] is False
    # LangGraph stores the item with its 2-dimensional vector
    assert theirs["put"] == "stored" and theirs["stored"] is True


async def test_a_branch_value_missing_from_its_path_map():
    """LangGraph raises KeyError; ours is a KeyError too, naming the edge and its map."""

    async def scenario(api: Api, trace: Trace) -> None:
        g = (
            api.StateGraph(Count)
            .add_node("a", lambda s: {"n": 1})
            .add_node("b", lambda s: {"n": 2})
            .add_edge(api.START, "a")
            .add_conditional_edges("a", lambda s: "nowhere", {"there": "b"})
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "map"}}
        try:
            await g.ainvoke({"n": 0}, cfg)
        except KeyError as exc:
            trace.note("raised KeyError", isinstance(exc, api.InvalidUpdateError))
            trace.note("message", str(exc))
        trace.state("state", await g.aget_state(cfg))

    ours, theirs = await both(scenario)
    assert theirs["message"] == "'nowhere'"
    assert ours["raised KeyError"] is True  # and an InvalidUpdateError, as before
    assert "returned 'nowhere', which is not a key of its path map" in ours["message"]
    # Not aligned yet: LangGraph saves a's write and nothing next; ours keeps the step
    # unfinished (a's task failed, a resume runs it again).
    assert (theirs["state"]["values"], theirs["state"]["next"]) == ({"n": 1}, ())
    assert (ours["state"]["values"], ours["state"]["next"]) == ({"n": 0}, ("a",))
