"""Where durable_debug differs from LangGraph on purpose, pinned as differences.

LangGraph stays silent in these cases and the user's intent is lost; durable_debug raises a
clear error instead and leaves the thread as it was. Each test runs one scenario on both
libraries and asserts what each of them does.
"""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, aobserve, durable_api, langgraph_api
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]


def gate_graph(api: Api, trace: Trace, *, stray_key: bool = False) -> object:
    """START → work → gate (interrupts) → END. ``work`` also writes ``stray`` if asked."""

    async def work(state: State) -> dict:
        trace.ran("work")
        update = {"value": "worked", "log": ["work"]}
        if stray_key:
            update["stray"] = "not in the schema"
        return update

    async def gate(state: State) -> dict:
        trace.ran("gate")
        return {"value": api.interrupt("approve?"), "log": ["gate"]}

    return (
        api.StateGraph(State)
        .add_node("work", work)
        .add_node("gate", gate)
        .add_edge(api.START, "work")
        .add_edge("work", "gate")
        .compile(checkpointer=api.MemorySaver())
    )


async def both(scenario) -> tuple[dict, dict]:
    """The traces of ``scenario`` on durable_debug and on LangGraph."""
    return await aobserve(scenario, durable_api()), await aobserve(scenario, langgraph_api())


async def checkpoint_count(graph, config) -> int:
    """How many checkpoints the thread has."""
    return len([s async for s in graph.aget_state_history(config)])


async def test_a_node_writing_a_key_the_schema_lacks():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace, stray_key=True)
        cfg = {"configurable": {"thread_id": "stray"}}
        await trace.run("run", g.ainvoke({"value": "", "log": []}, cfg))
        trace.state("state", await g.aget_state(cfg))

    ours, theirs = await both(scenario)
    assert ours["run"]["raised"] == "InvalidUpdateError"
    assert "Node 'work' wrote key 'stray'" in ours["run"]["message"]
    assert ours["state"]["next"] == ("work",)
    # LangGraph drops the write and runs on to the gate
    assert "stray" not in theirs["run"]
    assert theirs["state"]["next"] == ("gate",)


async def test_resume_when_nothing_is_pending():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "done"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        await g.ainvoke(api.Command(resume="yes"), cfg)
        trace.note("checkpoints before", await checkpoint_count(g, cfg))
        await trace.run("extra resume", g.ainvoke(api.Command(resume="again"), cfg))
        trace.note("checkpoints after", await checkpoint_count(g, cfg))
        trace.state("state", await g.aget_state(cfg))

    ours, theirs = await both(scenario)
    assert ours["extra resume"]["raised"] == "ValueError"
    assert "has no pending interrupt" in ours["extra resume"]["message"]
    assert ours["checkpoints after"] == ours["checkpoints before"]
    # LangGraph ignores the value and returns the finished state
    assert theirs["extra resume"] == {"value": "yes", "log": ["work", "gate"]}
    assert ours["state"]["values"] == theirs["state"]["values"]
    assert ours["executions"] == theirs["executions"] == {"work": 1, "gate": 2}


async def test_resume_map_with_ids_that_match_no_pending_interrupt():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "unknown-id"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        trace.note("checkpoints before", await checkpoint_count(g, cfg))
        stale = {"0123456789abcdef0123456789abcdef": "yes"}
        await trace.run("resume", g.ainvoke(api.Command(resume=stale), cfg))
        trace.note("checkpoints after", await checkpoint_count(g, cfg))
        trace.state("state", await g.aget_state(cfg))

    ours, theirs = await both(scenario)
    assert ours["resume"]["raised"] == "ValueError"
    assert "0123456789abcdef0123456789abcdef" in ours["resume"]["message"]
    assert ours["checkpoints after"] == ours["checkpoints before"]
    assert ours["executions"] == {"work": 1, "gate": 1}
    # LangGraph ignores the unknown id: the gate runs again and interrupts again
    assert [i["Interrupt"] for i in theirs["resume"]["__interrupt__"]] == ["approve?"]
    assert theirs["executions"] == {"work": 1, "gate": 2}
    assert ours["state"]["next"] == theirs["state"]["next"] == ("gate",)


async def test_resume_on_an_empty_thread():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "empty"}}
        await trace.run("resume", g.ainvoke(api.Command(resume="yes"), cfg))
        trace.note("checkpoints", await checkpoint_count(g, cfg))

    ours, theirs = await both(scenario)
    assert ours["resume"]["raised"] == "EmptyInputError"
    assert "'empty' has no checkpoint" in ours["resume"]["message"]
    assert ours["checkpoints"] == 0
    assert ours["executions"] == {}
    # LangGraph runs the graph from START with no input
    assert theirs["executions"].get("work") == 1
    assert theirs["checkpoints"] > 0


async def test_graph_input_with_unknown_keys():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "typo"}}
        await trace.run("run", g.ainvoke({"valeu": "typo", "log": []}, cfg))
        trace.note("checkpoints", await checkpoint_count(g, cfg))

    ours, theirs = await both(scenario)
    assert ours["run"]["raised"] == "InvalidUpdateError"
    assert "'valeu'" in ours["run"]["message"]
    assert ours["checkpoints"] == 0
    # LangGraph drops the unknown key and runs
    assert "valeu" not in theirs["run"]
    assert theirs["executions"]["work"] == 1


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


async def test_update_checkpoints_carry_as_node_metadata():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "meta"}}
        await g.ainvoke({"value": "", "log": []}, cfg)
        await g.aupdate_state(cfg, {"value": "edited"}, as_node="gate")
        trace.note("metadata", (await g.aget_state(cfg)).metadata)

    ours, theirs = await both(scenario)
    assert ours["metadata"] == {"source": "update", "step": 2, "parents": {}, "as_node": "gate"}
    assert theirs["metadata"] == {"source": "update", "step": 2, "parents": {}}


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


async def test_store_lists_only_namespaces_that_hold_items():
    """LangGraph's InMemoryStore lists a namespace once it was read or emptied; ours lists
    the namespaces that hold items. A comparison filter on a field an item lacks does not
    match it; LangGraph raises TypeError."""

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
    assert ours["namespaces"] == [("a",)]
    assert theirs["namespaces"] == [("a",), ("b",), ("never", "written")]
    assert len(ours["filter"]) == 1
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


def count_graph(api: Api, trace: Trace, node: Any) -> Any:
    """START → a → b, ``a`` being ``node``."""

    def b(state: Count) -> dict:
        trace.ran("b")
        return {"n": state["n"] + 10}

    return (
        api.StateGraph(Count)
        .add_node("a", node)
        .add_node("b", b)
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=api.MemorySaver())
    )


async def test_a_config_parameter_annotated_dict_still_gets_the_config():
    async def scenario(api: Api, trace: Trace) -> None:
        def a(state: Count, config: dict) -> dict:
            trace.ran("a")
            return {"n": len(config["configurable"]["thread_id"])}

        cfg = {"configurable": {"thread_id": "typed"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LangGraph warns about the annotation
            g = count_graph(api, trace, a)
            await trace.run("run", g.ainvoke({"n": 0}, cfg))

    ours, theirs = await both(scenario)
    assert ours["run"] == {"n": 15}
    # LangGraph passes nothing for a `config: dict` parameter (it warns), so the call fails
    assert theirs["run"]["raised"] == "TypeError"


async def test_durability_exit_still_saves_every_step():
    async def scenario(api: Api, trace: Trace) -> None:
        def a(state: Count) -> dict:
            trace.ran("a")
            return {"n": state["n"] + 1}

        g = count_graph(api, trace, a)
        cfg = {"configurable": {"thread_id": "exit"}}
        await trace.run("run", g.ainvoke({"n": 0}, cfg, durability="exit"))
        trace.note("checkpoints", await checkpoint_count(g, cfg))
        cfg = {"configurable": {"thread_id": "bogus"}}
        await trace.run("unknown", g.ainvoke({"n": 0}, cfg, durability="bogus"))

    ours, theirs = await both(scenario)
    assert ours["run"] == theirs["run"] == {"n": 11}
    # the debugger needs every step: durability="exit" saves them all, as "async" does
    assert ours["checkpoints"] == 4
    assert theirs["checkpoints"] == 1
    assert ours["unknown"]["raised"] == "ValueError"
    assert "Unknown durability 'bogus'" in ours["unknown"]["message"]
    assert theirs["unknown"] == {"n": 11}


async def test_an_unknown_print_mode_is_refused():
    async def scenario(api: Api, trace: Trace) -> None:
        g = gate_graph(api, trace)
        cfg = {"configurable": {"thread_id": "print"}}
        await trace.run("run", g.ainvoke({"value": "", "log": []}, cfg, print_mode="udpates"))

    ours, theirs = await both(scenario)
    assert ours["run"]["raised"] == "ValueError"
    assert "'udpates'" in ours["run"]["message"]
    assert ours["executions"].get("work", 0) == 0
    # LangGraph prints nothing for the misspelt mode and runs
    assert theirs["executions"]["work"] == 1


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
