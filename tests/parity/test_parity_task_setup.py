"""What one task sees and writes, on both libraries: its config (metadata, namespace, the
map of the checkpoints above it), the writes of its plain edges, joins and conditional
edges in order, and what happens to a returned key the schema lacks or a managed value.

The engine takes shortcuts for the common task (a plain dict of schema keys, a node without
conditional edges, a runtime given the task's execution info): these scenarios hold it to
LangGraph's behaviour on both sides of each shortcut."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from parity_harness import Api, Trace, check_parity
from typing_extensions import NotRequired, TypedDict

from durable_debug.graph.calls import ExecutionInfo, Runtime

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: int
    log: Annotated[list, operator.add]


def _seen(config: RunnableConfig) -> dict[str, Any]:
    """The parts of a node's config both libraries give it (ids replaced by their shape)."""
    metadata = config["metadata"]
    configurable = config["configurable"]
    own_ns = metadata["langgraph_checkpoint_ns"]
    return {
        "step": metadata["langgraph_step"],
        "node": metadata["langgraph_node"],
        "triggers": list(metadata["langgraph_triggers"]),
        "path": list(metadata["langgraph_path"]),
        "thread": metadata.get("thread_id"),
        "own namespace": own_ns.split(":")[0],
        "configurable namespace is own": configurable["checkpoint_ns"] == own_ns,
        "parents": sorted(configurable.get("checkpoint_map", {})),
        "user key": configurable.get("user"),
        "user key in metadata": "user" in metadata,
        "tag": metadata.get("tag"),
    }


def test_a_task_config_and_the_order_of_its_writes_match_langgraph() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        configs: list[dict[str, Any]] = []

        def node(name: str) -> Any:
            def run(state: State, config: RunnableConfig) -> dict:
                trace.ran(name)
                configs.append(_seen(config))
                return {"value": state["value"] + 1, "log": [name]}

            return run

        def route(state: State) -> str:
            return "c" if state["value"] < 3 else api.END

        builder = (
            api.StateGraph(State)
            .add_node("a", node("a"))
            .add_node("b", node("b"))
            .add_node("c", node("c"))
            .add_node("d", node("d"))
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .add_edge(["a", "b"], "d")
            .add_conditional_edges("d", route, ["c", api.END])
            .add_edge("c", "d")
        )
        graph = builder.compile(checkpointer=api.MemorySaver())
        config = {"configurable": {"thread_id": "t", "user": "u"}, "metadata": {"tag": "x"}}
        trace.call("result", graph.invoke, {"value": 0, "log": []}, config)
        trace.call(
            "updates",
            graph.stream,
            {"value": 0, "log": []},
            {"configurable": {"thread_id": "t2"}},
            stream_mode="updates",
        )
        trace.note("configs", sorted(configs, key=repr))

    check_parity(scenario)


def test_unknown_keys_and_managed_values_in_a_returned_dict_match_langgraph() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        if api.name == "langgraph":
            from langgraph.managed import RemainingSteps
        else:
            from durable_debug.managed import RemainingSteps

        Managed = TypedDict(  # noqa: UP013
            "Managed",
            {"value": int, "remaining": NotRequired[RemainingSteps]},
        )

        def extra(state: Any) -> dict:
            return {"value": state["value"] + 1, "typo": 1}

        def managed(state: Any) -> dict:
            return {"value": state["value"] + 1, "remaining": 99}

        for label, schema, fn in (("extra", State, extra), ("managed", Managed, managed)):
            graph = (
                api.StateGraph(schema)
                .add_node("n", fn)
                .add_edge(api.START, "n")
                .compile(checkpointer=api.MemorySaver())
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ours warns of the dropped key (a finding)
                config = {"configurable": {"thread_id": label}}
                trace.call(label, graph.invoke, {"value": 0}, config)

    check_parity(scenario)


def test_a_runtime_override_is_a_copy_with_the_fields_replaced() -> None:
    base: Runtime[Any] = Runtime(context={"user": "ada"}, store="store")
    info = ExecutionInfo("c1", "node:t1", "t1", "thread")
    copy = base.override(execution_info=info)
    assert copy == Runtime(context={"user": "ada"}, store="store", execution_info=info)
    assert base.execution_info is None  # the original is left as it was
    assert type(copy) is Runtime
    with pytest.raises(AttributeError):
        copy.store = "other"  # type: ignore[misc]  # frozen, as the dataclass it copies
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        base.override(bogus=1)


def test_a_runtime_subclass_overrides_into_its_own_class() -> None:
    class Tagged(Runtime[Any]):
        pass

    copy = Tagged(context=1).override(previous=2)
    assert type(copy) is Tagged
    assert (copy.context, copy.previous) == (1, 2)
