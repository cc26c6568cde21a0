"""The compiled graph's other public methods, as LangGraph gives them: the JSON schemas of its
input, output and context, ``copy(update=...)``, ``clear_cache`` and ``task.clear_cache``."""

# No ``from __future__ import annotations``: the entrypoints' schemas come from their
# annotations as objects, not strings.
import dataclasses
import operator
from typing import Annotated, Any, Optional

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict

pytestmark = pytest.mark.parity


@dataclasses.dataclass
class DataState:
    a: int
    b: Annotated[list[str], operator.add] = dataclasses.field(default_factory=list)
    c: Optional[str] = None  # noqa: UP045 (LangGraph's test states are written this way too)
    d: str = "x"


class DictState(TypedDict):
    a: int
    b: NotRequired[Annotated[list[str], operator.add]]


class ModelState(BaseModel):
    a: int


class PlainState:
    a: int
    b: Optional[str]  # noqa: UP045


class Context(TypedDict):
    user: str


def one_node(api: Api, schema: Any, **kwargs: Any) -> Any:
    builder = api.StateGraph(schema, **kwargs).add_node("n", lambda s: None)
    return builder.add_edge(api.START, "n")


def test_the_json_schemas_of_input_output_and_context():
    def scenario(api: Api, trace: Trace) -> None:
        for schema in (DataState, DictState, ModelState, PlainState, int):
            g = one_node(api, schema, context_schema=Context).compile()
            name = getattr(schema, "__name__", str(schema))
            trace.note(f"input {name}", g.get_input_jsonschema())
            trace.note(f"output {name}", g.get_output_jsonschema())
            trace.note(f"context {name}", g.get_context_jsonschema())
        split = one_node(api, DictState, input_schema=ModelState, output_schema=DataState)
        g = split.compile(name="splitter")
        trace.note("split input", g.get_input_jsonschema())
        trace.note("split output", g.get_output_jsonschema())
        trace.note("no context", g.get_context_jsonschema())
        entrypoint = entrypoint_of(api)

        @entrypoint()
        def typed(numbers: list[int]) -> entrypoint.final[list[str], int]:
            return entrypoint.final(value=[str(n) for n in numbers], save=len(numbers))

        @entrypoint()
        def untyped(inputs):  # type: ignore[no-untyped-def]
            return inputs

        for label, flow in (("typed", typed), ("untyped", untyped)):
            trace.note(f"{label} in", flow.get_input_jsonschema())
            trace.note(f"{label} out", flow.get_output_jsonschema())

    ours = check_parity(scenario)
    assert ours["input DataState"]["title"] == "LangGraphInput"
    assert ours["split output"]["title"] == "splitter_output"
    assert ours["typed out"] == {
        "items": {"type": "string"},
        "title": "LangGraphOutput",
        "type": "array",
    }


def entrypoint_of(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.func import entrypoint
    else:
        from durable_debug.func import entrypoint
    return entrypoint


def cache_names(api: Api) -> tuple[Any, Any, Any]:
    if api.name == "langgraph":
        from langgraph.cache.memory import InMemoryCache
        from langgraph.func import task
        from langgraph.types import CachePolicy
    else:
        from durable_debug.cache.memory import InMemoryCache
        from durable_debug.func import task
        from durable_debug.types import CachePolicy
    return InMemoryCache, CachePolicy, task


def test_clear_cache_runs_cached_nodes_again():
    def scenario(api: Api, trace: Trace) -> None:
        InMemoryCache, CachePolicy, _ = cache_names(api)

        def slow(state: DictState) -> dict[str, Any]:
            trace.ran("slow")
            return {"b": ["slow"]}

        g = (
            api.StateGraph(DictState)
            .add_node("slow", slow, cache_policy=CachePolicy())
            .add_edge(api.START, "slow")
        )
        trace.call("without a cache", g.compile().clear_cache)
        g = g.compile(cache=InMemoryCache())
        trace.note("first", g.invoke({"a": 1}))
        trace.note("cached", list(g.stream({"a": 1})))
        g.clear_cache()
        trace.note("after clear", list(g.stream({"a": 1})))
        g.clear_cache(["no such node"])
        trace.note("after clearing another node", list(g.stream({"a": 1})))

    ours = check_parity(scenario)
    assert ours["executions"] == {"slow": 2}
    assert ours["without a cache"]["raised"] == "ValueError"


async def test_task_clear_cache_and_aclear_cache():
    async def scenario(api: Api, trace: Trace) -> None:
        InMemoryCache, CachePolicy, task = cache_names(api)
        entrypoint = entrypoint_of(api)
        cache = InMemoryCache()

        @task(cache_policy=CachePolicy())
        def double(x: int) -> int:
            trace.ran("double")
            return 2 * x

        @entrypoint(cache=cache)
        def flow(x: int) -> int:
            return double(x).result()

        trace.note("first", flow.invoke(2))
        trace.note("cached", flow.invoke(2))
        double.clear_cache(cache)
        trace.note("after clear", flow.invoke(2))
        await double.aclear_cache(cache)
        trace.note("after aclear", await flow.ainvoke(2))
        await flow.aclear_cache()
        trace.note("after the graph's aclear", flow.invoke(2))

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"double": 3}


def test_copy_replaces_attributes_and_copies_nodes():
    def scenario(api: Api, trace: Trace) -> None:
        g = one_node(api, DictState).compile()
        renamed = g.copy(update={"name": "renamed"})
        trace.note("names", (g.get_name(), renamed.get_name()))
        trace.note("copy runs", g.copy().invoke({"a": 1}))
        node = g.nodes["n"].copy({})
        trace.note(
            "node copy", (type(node).__name__ == type(g.nodes["n"]).__name__, node is g.nodes["n"])
        )

    check_parity(scenario)
