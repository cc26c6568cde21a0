"""A saver subclass written for LangGraph that overrides saver methods, on both libraries:
synchronous runs call its sync ``put`` / ``put_writes`` / ``get_tuple`` /
``get_next_version``, async runs its async ones, as often as LangGraph calls them; an error
one raises fails the run, and the thread resumes from what was saved."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def _chain(api: Api, saver: Any) -> Any:
    builder = api.StateGraph(State)
    for name in "abc":
        builder.add_node(name, lambda state, name=name: {"log": [name]})
    builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c")
    return builder.compile(checkpointer=saver)


def _counting_sync_saver(api: Api) -> Any:
    class Counting(api.MemorySaver):  # type: ignore[name-defined,misc]  # the library's saver class, chosen at run time
        def __init__(self) -> None:
            super().__init__()
            self.calls: dict[str, int] = {}

        def _count(self, name: str) -> None:
            self.calls[name] = self.calls.get(name, 0) + 1

        def get_tuple(self, config: Any) -> Any:
            self._count("get_tuple")
            return super().get_tuple(config)

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            self._count("put")
            return super().put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            self._count("put_writes")
            super().put_writes(config, writes, task_id, task_path)

    return Counting()


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_sync_run_calls_the_sync_methods_a_subclass_overrides(durability: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        saver = _counting_sync_saver(api)
        graph = _chain(api, saver)
        cfg = {"configurable": {"thread_id": "counted"}}
        trace.call("run", graph.invoke, {"log": []}, cfg, durability=durability)
        trace.note("saves", {k: v for k, v in saver.calls.items() if k != "get_tuple"})
        trace.note("read the thread", saver.calls.get("get_tuple", 0) > 0)

    ours = check_parity(scenario)
    assert ours["run"] == {"log": ["a", "b", "c"]}
    assert ours["saves"]["put"] >= 1


async def test_an_async_run_calls_the_async_methods_a_subclass_overrides() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        class Counting(api.MemorySaver):  # type: ignore[name-defined,misc]  # the library's saver class, chosen at run time
            calls: dict[str, int]

            def _count(self, name: str) -> None:
                self.calls[name] = self.calls.get(name, 0) + 1

            async def aput(self, *args: Any) -> Any:
                self._count("aput")
                return await super().aput(*args)

            async def aput_writes(self, *args: Any) -> None:
                self._count("aput_writes")
                await super().aput_writes(*args)

        saver = Counting()
        saver.calls = {}
        graph = _chain(api, saver)
        cfg = {"configurable": {"thread_id": "counted"}}
        trace.note("run", await graph.ainvoke({"log": []}, cfg, durability="sync"))
        trace.note("saves", dict(saver.calls))

    ours = await acheck_parity(scenario)
    assert ours["saves"]["aput"] == 5  # the input checkpoint, then one a step


@pytest.mark.parametrize("method", ["get_tuple", "put", "put_writes", "get_next_version"])
def test_an_override_that_raises_fails_a_sync_run(method: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def fail(self: Any, *args: Any) -> Any:
            raise ValueError(f"faulty {method}")

        faulty = type("Faulty", (api.MemorySaver,), {method: fail})
        builder = api.StateGraph(State).add_node("a", lambda s: {"log": ["a"]})
        builder.add_node("b", lambda s: {"log": ["b"]})
        builder.add_edge(api.START, "a").add_edge(api.START, "b")
        graph = builder.compile(checkpointer=faulty())
        cfg = {"configurable": {"thread_id": "faulty"}}
        trace.call("run", graph.invoke, {"log": []}, cfg, durability="async")

    ours = check_parity(scenario)
    assert ours["run"]["raised"] == "ValueError"


def test_a_put_failing_once_fails_the_run_and_the_thread_resumes() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        class FailsOnce(api.MemorySaver):  # type: ignore[name-defined,misc]  # the library's saver class, chosen at run time
            failed = False

            def put(self, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
                if not self.failed and checkpoint["channel_values"].get("log") == ["a"]:
                    self.failed = True
                    raise ConnectionError("the checkpoint after a was not saved")
                return super().put(config, checkpoint, metadata, versions)

        graph = _chain(api, FailsOnce())
        cfg = {"configurable": {"thread_id": "fails-once"}}
        trace.call("run", graph.invoke, {"log": []}, cfg, durability="sync")
        trace.history("after the failure", graph.get_state_history(cfg))
        trace.call("rerun", graph.invoke, None, cfg, durability="sync")
        trace.state("end", graph.get_state(cfg))

    ours = check_parity(scenario)
    assert ours["run"]["raised"] == "ConnectionError"
    assert ours["end"]["values"] == {"log": ["a", "b", "c"]}


def test_a_graph_a_node_invokes_calls_the_overrides_too() -> None:
    """A sync node (run inline on the engine's loop thread) invoking another graph on the
    same overriding saver: the inner run, on a loop of its own, calls the overrides and
    finishes (their ``super()`` calls must not wait on the loop thread the node holds)."""

    def scenario(api: Api, trace: Trace) -> None:
        saver = _counting_sync_saver(api)
        inner = _chain(api, saver)

        def outer_node(state: State) -> dict:
            done = inner.invoke({"log": []}, {"configurable": {"thread_id": "inner"}})
            return {"log": done["log"]}

        builder = api.StateGraph(State).add_node("o", outer_node).add_edge(api.START, "o")
        outer = builder.compile(checkpointer=saver)
        trace.call("run", outer.invoke, {"log": []}, {"configurable": {"thread_id": "outer"}})
        trace.note("called put", saver.calls.get("put", 0) > 0)

    ours = check_parity(scenario)
    assert ours["run"] == {"log": ["a", "b", "c"]}
    assert ours["called put"] is True
