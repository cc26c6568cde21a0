"""find_graph: which compiled graph in a namespace holds a thread."""

from __future__ import annotations

import pytest

from durable_debug.inspect import afind_graph


async def test_the_graph_holding_the_thread_is_found(seed):
    rerun = seed("rerun_rule")
    other = seed("accumulate")
    await rerun["g"].ainvoke({"prep": "", "decision": ""}, rerun["cfg"])
    namespace = {"other": other["g"], "graph": rerun["g"], "alias": rerun["g"], "x": 1}
    name, graph = await afind_graph(namespace, "hitl-1")
    assert (name, graph) == ("graph", rerun["g"])


async def test_graphs_sharing_a_saver_are_told_apart_by_their_nodes(seed):
    ns = seed("rerun_rule")
    g_naive, g_first = ns["g_naive"], ns["g_first"]
    shared = ns["g"].builder.compile(checkpointer=g_naive.checkpointer)
    await shared.ainvoke({"prep": "", "decision": ""}, {"configurable": {"thread_id": "t"}})
    namespace = {"naive": g_naive, "shared": shared, "first": g_first}
    assert (await afind_graph(namespace, "t", nodes=["prepare"]))[0] == "shared"


async def test_no_graph_holds_the_thread(seed):
    ns = seed("accumulate")
    with pytest.raises(LookupError, match=r"holds thread 'ghost' \(graphs looked at: g\).*--graph"):
        await afind_graph({"g": ns["g"]}, "ghost")
