"""A ``create_react_agent`` thread under the debugger: its history as data, the command's tree,
and a fork from the checkpoint before the tools ran, rerun with the same scripted model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from durable_debug import Command, SqliteSaver, interrupt
from durable_debug.cli import main
from durable_debug.inspect import history_frame
from durable_debug.prebuilt import create_react_agent


class ScriptedModel(GenericFakeChatModel):
    """A fake chat model whose replies are scripted; ``bind_tools`` keeps it as it is."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


@tool
def approve(plan: str) -> str:
    """Ask a person to approve ``plan``."""
    return f"{plan}: {interrupt({'approve': plan})}"


def test_a_react_agent_thread_is_inspected_forked_and_shown_by_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "agent.db"
    replies = [
        AIMessage(
            "", id="ai-1", tool_calls=[{"name": "approve", "args": {"plan": "v2"}, "id": "c1"}]
        ),
        AIMessage("shipping v2", id="ai-2"),
        AIMessage("shipping v2 after all", id="ai-3"),
    ]
    with SqliteSaver(db) as saver:
        agent = create_react_agent(
            ScriptedModel(messages=iter(replies)), [approve], checkpointer=saver
        )
        cfg = {"configurable": {"thread_id": "agent-1"}}
        paused = agent.invoke({"messages": [HumanMessage("ship v2?", id="q")]}, cfg)
        assert paused["__interrupt__"][0].value == {"approve": "v2"}
        done = agent.invoke(Command(resume="yes"), cfg)
        assert [m.content for m in done["messages"]][-2:] == ["v2: yes", "shipping v2"]

        frame = history_frame(agent, cfg)
        assert list(frame["step"]) == [-1, 0, 1, 2, 3]
        assert [tuple(n) for n in frame["next"]] == [
            ("__start__",),
            ("agent",),
            ("tools",),
            ("agent",),
            (),
        ]

        # Fork at the checkpoint where the tool call waits, answer it differently, rerun.
        before_tools = next(s for s in agent.get_state_history(cfg) if s.next == ("tools",))
        fork = agent.update_state(before_tools.config, {"messages": []})
        assert agent.invoke(None, fork)["__interrupt__"][0].value == {"approve": "v2"}
        rerun = agent.invoke(Command(resume="no"), cfg)
        assert [m.content for m in rerun["messages"]][-2:] == ["v2: no", "shipping v2 after all"]
        branches = {s.config["configurable"]["checkpoint_id"] for s in agent.get_state_history(cfg)}
        assert len(branches) == 8  # 5 on the first branch, the fork and two steps after it

    code = main(["inspect", str(db), "--thread", "agent-1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "thread 'agent-1': 8 checkpoints, 2 branches" in out
    assert re.search(r"\btools\b", out) and re.search(r"\bagent\b", out)
