"""The Python the widget shows for each action (``durable_debug.widget_code``): what each
action's code says, sync or awaited by the saver, and that it does what the action did when
run on a graph."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from durable_debug import END, START, Command, InMemorySaver, Overwrite, StateGraph, interrupt
from durable_debug.widget_code import ActionCode, config_code

CONFIG = {
    "configurable": {
        "thread_id": "t-1",
        "checkpoint_ns": "",
        "checkpoint_id": "1f0a",
        "user_key": "left out",
    }
}
SHOWN = "{'configurable': {'thread_id': 't-1', 'checkpoint_ns': '', 'checkpoint_id': '1f0a'}}"


def test_the_code_awaits_for_an_async_saver_and_calls_sync_methods_for_a_sync_one() -> None:
    awaited, plain = ActionCode("graph", awaits=True), ActionCode("graph", awaits=False)

    assert awaited.rerun(CONFIG, {}) == f"await graph.ainvoke(None, {SHOWN})"
    assert plain.rerun(CONFIG, {}) == f"graph.invoke(None, {SHOWN})"
    assert awaited.fork(CONFIG, {"x": 1}) == f"await graph.aupdate_state({SHOWN}, {{'x': 1}})"
    assert plain.fork(CONFIG, {"x": 1}) == f"graph.update_state({SHOWN}, {{'x': 1}})"


def test_the_config_names_the_thread_namespace_and_checkpoint_only() -> None:
    assert config_code(CONFIG) == SHOWN
    namespaced = {
        "configurable": {"thread_id": "t", "checkpoint_ns": "review:9", "checkpoint_id": "c"}
    }
    assert config_code(namespaced) == repr(namespaced)
    # An empty namespace stays: LangGraph's savers look the config up by it.
    assert config_code({"configurable": {"thread_id": "t", "checkpoint_id": "c"}}) == (
        "{'configurable': {'thread_id': 't', 'checkpoint_ns': '', 'checkpoint_id': 'c'}}"
    )


def test_a_fork_says_which_reducer_channels_it_replaces_and_which_go_through_the_reducer() -> None:
    code = ActionCode("app", awaits=True).fork(
        CONFIG,
        {"log": ["x"], "notes": ["n"], "value": "v"},
        replace={"log"},
        reducers={"log": "operator.add", "notes": "add_messages"},
        as_node="a",
    )

    assert code.split("\n") == [
        "# 'log' has a reducer (operator.add): the value is replaced (Overwrite)",
        "# 'notes' has a reducer (add_messages): the value is appended through it",
        f"await app.aupdate_state({SHOWN}, {{'log': Overwrite(['x']), 'notes': ['n'], "
        "'value': 'v'}, as_node='a')",
    ]


def test_an_entrypoint_fork_writes_the_return_value_or_final_when_previous_is_edited() -> None:
    code = ActionCode("workflow", awaits=True)
    current = {"__end__": 40, "__previous__": 80}

    assert code.fork_entrypoint(CONFIG, {"__end__": 60}, current) == (
        f"await workflow.aupdate_state({SHOWN}, 60)"
    )
    assert code.fork_entrypoint(CONFIG, {"__previous__": 100}, current) == (
        f"await workflow.aupdate_state({SHOWN}, entrypoint.final(value=40, save=100))"
    )


def test_runs_carry_the_breakpoints_and_a_replayed_rerun_is_wrapped_in_replaying() -> None:
    code = ActionCode("bot", awaits=True)
    breaks = {"before": ["review"], "after": ["draft"]}
    tail = ", interrupt_before=['review'], interrupt_after=['draft'])"

    assert code.rerun(CONFIG, breaks) == f"await bot.ainvoke(None, {SHOWN}{tail}"
    assert code.resume(CONFIG, {"i-1": "yes"}, breaks) == (
        f"await bot.ainvoke(Command(resume={{'i-1': 'yes'}}), {SHOWN}{tail}"
    )
    assert code.run("t-1", {"topic": "cats"}, {}) == (
        "await bot.ainvoke({'topic': 'cats'}, {'configurable': {'thread_id': 't-1', "
        "'checkpoint_ns': ''}})"
    )
    assert code.rerun(CONFIG, {}, replay_thread="t-1") == (
        "with durable_debug.replaying(bot, {'configurable': {'thread_id': 't-1'}}):\n"
        f"    await bot.ainvoke(None, {SHOWN})"
    )


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    answer: str


def _graph() -> Any:
    def ask(state: State) -> dict[str, Any]:
        return {"answer": interrupt("approve?"), "log": ["asked"]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=InMemorySaver())


async def test_the_code_does_what_the_action_did_when_run_awaited_or_sync() -> None:
    """Pasted into a cell, each piece of code runs: a fork replacing a reducer channel, a rerun
    from the fork (which pauses on the interrupt again) and the resume that answers it, awaited
    and sync."""
    for awaits in (True, False):
        graph = _graph()
        thread = {"configurable": {"thread_id": f"t-{awaits}"}}
        await graph.ainvoke({"log": ["start"], "answer": ""}, thread)
        paused = await graph.aget_state(thread)
        code = ActionCode("graph", awaits=awaits)
        cell = {"graph": graph, "Overwrite": Overwrite, "Command": Command}

        fork = code.fork(
            paused.config, {"log": ["edited"]}, replace={"log"}, reducers={"log": "operator.add"}
        )
        forked = await _run(fork.split("\n")[-1], cell)
        assert (await graph.aget_state(forked)).values["log"] == ["edited"]

        await _run(code.rerun(forked, {}), cell)
        rerun = await graph.aget_state(thread)
        (pending,) = rerun.interrupts
        assert rerun.values["log"] == ["edited"] and pending.value == "approve?"

        await _run(code.resume(rerun.config, {pending.id: "yes"}, {}), cell)
        assert (await graph.aget_state(thread)).values == {
            "log": ["edited", "asked"],
            "answer": "yes",
        }


async def _run(line: str, cell: dict[str, Any]) -> Any:
    """Run one line of generated code as a notebook cell would (awaiting it if it awaits)."""
    exec(compile(f"async def cell():\n    return {line}", "code", "exec"), cell)
    return await cell["cell"]()
