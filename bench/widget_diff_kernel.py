"""The kernel side of the shift-click diff ``widget_values.py`` measures in the page: the same
fat thread (its ``BUILD`` cell, run here), then the widget's ``diff`` request on the newest
checkpoint and its parent, in this process; the CPU time of each of ``--rounds`` requests
after one warm-up, and the JSON size of the answer.

    python bench/widget_diff_kernel.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from widget_values import BUILD  # noqa: E402

from durable_debug import TimeTravel  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    scope: dict[str, Any] = {}
    body = "".join(f"    {line}\n" for line in BUILD.splitlines())
    cell = f"async def _build():\n{body}    return g, cfg, state\n"  # its top-level awaits
    exec(compile(cell, "BUILD", "exec", dont_inherit=True), scope)
    g, cfg, state = await scope["_build"]()
    a = state.parent_config["configurable"]["checkpoint_id"]
    b = state.config["configurable"]["checkpoint_id"]
    widget = TimeTravel(g, cfg)
    await widget.aready()
    answer = await widget._do_diff({"a": a, "b": b})
    cpus = []
    for _ in range(args.rounds):
        started = time.process_time()
        answer = await widget._do_diff({"a": a, "b": b})
        cpus.append(time.process_time() - started)
    print(
        f"diff of two fat checkpoints, kernel: {', '.join(f'{c * 1000:.0f}' for c in cpus)} ms "
        f"CPU; {len(json.dumps(answer)):,} bytes of JSON"
    )


if __name__ == "__main__":
    asyncio.run(main())
