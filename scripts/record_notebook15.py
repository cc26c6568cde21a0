"""Make the recording notebook 15 ships: its agent run once, the model answering from a script.

    python scripts/record_notebook15.py      # writes notebooks/data/15_agent.db

The notebook's first code cell (the agent) is executed here as it is, with ``call_api`` — the
stand-in for a paid model API, which refuses without a key — replaced by scripted answers, so
the recording holds answers that the notebook then replays with no key and no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

NOTEBOOK = ROOT / "notebooks" / "15_record_and_replay.ipynb"
DB = ROOT / "notebooks" / "data" / "15_agent.db"
SCRIPTED = {
    "Plan the answer in one line.": "Plan: look the tides up, then answer in one sentence.",
    "Summarize the facts.": "Tides: two highs and two lows a day, driven by the Moon.",
    "Answer in one sentence.": "The Moon's pull raises two tides a day.",
}


def scripted_api(messages: list[Any]) -> str:
    """The answer the recorded run got: by the system prompt of the call."""
    return SCRIPTED[str(messages[0].content)]


def main() -> int:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    agent_cell = next(
        c for c in cells if c["cell_type"] == "code" and "def call_api" in "".join(c["source"])
    )
    namespace: dict[str, Any] = {"__name__": "notebook15"}
    exec(compile("".join(agent_cell["source"]), str(NOTEBOOK), "exec"), namespace)
    namespace["call_api"] = scripted_api  # the model's call goes here in the recorded run
    DB.unlink(missing_ok=True)
    from durable_debug import SqliteSaver

    saver = SqliteSaver(DB)
    try:
        graph = namespace["build_agent"](saver)
        config = {"configurable": {"thread_id": "tides"}}
        out = graph.invoke({"messages": [("user", "Why are there two tides a day?")]}, config)
        print(out["messages"][-1].content)
    finally:
        saver.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{DB}{suffix}").unlink(missing_ok=True)
    print(f"wrote {DB.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
