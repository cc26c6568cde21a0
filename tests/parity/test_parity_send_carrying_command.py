"""A ``Send`` whose argument is a ``Command`` (itself going to another ``Send``) on both
libraries: the run saves the pending Sends in its checkpoints, pauses before a node, resumes,
and the result and history match. The Command's unset ``resume`` is no data and is not
saved; a fresh process loading the checkpoint rebuilds the Send and the Command."""

from __future__ import annotations

import operator
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity

import durable_debug
from durable_debug.checkpoint.serde import MsgpackSerializer

pytestmark = pytest.mark.parity

SRC = Path(__file__).resolve().parents[2] / "src"


def test_a_send_carrying_a_command_is_saved_and_resumed() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def node(name: str) -> Any:
            def run(state: Any) -> Any:
                update = [name] if isinstance(state, list) else [f"{name}|{state}"]
                if isinstance(state, api.Command):
                    return replace(state, update=update)
                return update

            return run

        def fan_out(state: list[str]) -> list[Any]:
            return [
                api.Send("2", api.Command(goto=api.Send("2", 3))),
                api.Send("2", api.Command(goto=api.Send("2", 4))),
                "3.1",
            ]

        builder = api.StateGraph(Annotated[list, operator.add])
        for name in ("1", "2", "3", "3.1"):
            builder.add_node(name, node(name))
        builder.add_edge(api.START, "1")
        builder.add_conditional_edges("1", fan_out)
        builder.add_conditional_edges("2", lambda s: "3", ["3"])
        graph = builder.compile(checkpointer=api.MemorySaver(), interrupt_before=["3.1"])
        config = {"configurable": {"thread_id": "t"}}
        trace.note("paused", graph.invoke(["0"], config))
        trace.note("next", graph.get_state(config).next)
        trace.note("resumed", graph.invoke(None, config))
        trace.history("history", graph.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["resumed"] == [
        "0",
        "1",
        "3.1",
        "2|Command(goto=Send(node='2', arg=3))",
        "2|Command(goto=Send(node='2', arg=4))",
        "3",
        "2|3",
        "2|4",
        "3",
    ]


def test_a_saved_send_carrying_a_command_loads_in_a_fresh_process() -> None:
    send = durable_debug.Send("2", durable_debug.Command(goto=durable_debug.Send("flaky", 4)))
    _, payload = MsgpackSerializer().dumps_typed([send])
    code = (
        "import sys\n"
        "import durable_debug\n"
        "from durable_debug.checkpoint.serde import MsgpackSerializer\n"
        "[send] = MsgpackSerializer().loads_typed(('msgpack', bytes.fromhex(sys.argv[1])))\n"
        "assert type(send) is durable_debug.Send, type(send)\n"
        "assert type(send.arg) is durable_debug.Command, type(send.arg)\n"
        "assert not send.arg.has_resume\n"
        "print(repr(send))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code, payload.hex()],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Send(node='2', arg=Command(goto=Send(node='flaky', arg=4)))"


def test_langgraphs_send_carrying_its_command_runs_on_our_engine_too() -> None:
    import langgraph.graph as lg_graph
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command as LangGraphCommand
    from langgraph.types import Send as LangGraphSend

    def run(api: Any, saver: Any) -> list[Any]:
        builder = api.StateGraph(Annotated[list, operator.add])
        builder.add_node("one", lambda s: ["one"])
        builder.add_node("two", lambda s: [f"two {s}"])
        builder.add_edge(api.START, "one")
        builder.add_conditional_edges(
            "one",
            lambda s: [
                LangGraphSend("two", LangGraphCommand(goto=LangGraphSend("two", 1))),
                LangGraphSend("two", 5),
            ],
        )
        graph = builder.compile(checkpointer=saver, interrupt_before=["two"])
        config = {"configurable": {"thread_id": "t"}}
        return [graph.invoke(["0"], config), graph.invoke(None, config)]

    ours = run(durable_debug, durable_debug.MemorySaver())
    assert ours == run(lg_graph, InMemorySaver())
    assert ours[1][-2:] == ["two Command(goto=Send(node='two', arg=1))", "two 5"]
