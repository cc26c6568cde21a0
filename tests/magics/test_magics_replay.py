"""``%replay_check THREAD`` in a real in-process IPython shell."""

from __future__ import annotations

from IPython.utils.capture import capture_output

EXTENSION = "durable_debug"

AGENT = """
from durable_debug import MemorySaver
from support.replay_graphs import Agent
agent = Agent(MemorySaver())
g = agent.graph
cfg = {"configurable": {"thread_id": "chat-1"}}
"""


def test_replay_check_line_magic_reports_and_returns_the_check(ip):
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(AGENT)
    with capture_output(display=False):
        ip.run_cell('%%graph --no-widget\ng.invoke({"messages": [("user", "tides")]}, cfg)\n')
    with capture_output(display=False) as out:
        report = ip.run_line_magic("replay_check", "chat-1")
    assert report.ok and report.checked == 2
    assert "thread 'chat-1': 2 tasks write what they recorded" in out.stdout
    ip.user_ns["agent"].prompts["plan"] = "Plan at length."
    with capture_output(display=False) as out:
        report = ip.run_line_magic("replay_check", "")  # the last thread by default
    assert [d["node"] for d in report.diverged] == ["plan"]
    assert "  plan (task " in out.stdout
    with capture_output(display=False) as out:
        ip.run_cell("%replay_check ghost-thread")
    assert "ghost-thread" in out.stdout + out.stderr
