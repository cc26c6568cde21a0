"""``import durable_debug.inspect`` stays light: pandas and networkx load when first needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_pandas_and_networkx_load_only_when_a_frame_or_dag_is_asked_for() -> None:
    script = (
        "import sys\n"
        "import durable_debug.inspect as ddi\n"
        "heavy = ('pandas', 'networkx')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "from durable_debug import MemorySaver\n"
        "from durable_debug.inspect.stored import SaverView\n"
        "cfg = {'configurable': {'thread_id': 't'}}\n"
        "ddi.history_frame(SaverView(MemorySaver()), cfg)\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "ddi.checkpoint_dag(SaverView(MemorySaver()), cfg)\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    ran = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        check=True,
    )
    at_import, after_frame, after_dag = ran.stdout.split("\n")[:3]
    assert at_import == "[]"
    assert "'pandas'" in after_frame and after_dag == "['pandas', 'networkx']"
