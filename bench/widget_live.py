"""Speed of TimeTravel in a live kernel: JupyterLab + headless Debian Chromium, 2,000 checkpoints.

Starts a throwaway JupyterLab (tests/widget/labserver.py), builds a thread of 2,000 checkpoints
with 5 forks in the kernel (``aupdate_state`` on a MemorySaver, or a SqliteSaver file), shows
``TimeTravel(g, cfg)`` and prints, measured in the page:

- first render: from the moment the display cell is sent to the kernel to the frame in which
  the DAG's marks are drawn (the kernel reads the thread, sends the DAG, the page draws it);
- click-to-detail: from a click on a checkpoint to the frame showing its detail; a full round
  trip (front end → comm → kernel reads the checkpoint → reply → draw), median over
  checkpoints spread across the thread, after a few warm-up clicks.

For context it also prints the kernel-side share (``acheckpoint_detail`` alone, timed in the
kernel) and the floor under any request: a plain ``kernel_info`` round trip from the same page.

    python bench/widget_live.py                      # 2,000 checkpoints, 5 forks
    python bench/widget_live.py --saver sqlite         # the same thread in a SQLite file
    python bench/widget_live.py --checkpoints 500 --clicks 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _test_helpers import load_test_helper
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

BUILD = """\
import json, statistics, time
from typing_extensions import TypedDict
from durable_debug import StateGraph, START, END, MemorySaver, SqliteSaver, TimeTravel
from durable_debug.inspect import adag_data, acheckpoint_detail

class State(TypedDict):
    n: int
    note: str

async def step(state):
    return {{"n": state["n"] + 1}}

g = (StateGraph(State).add_node("step", step).add_edge(START, "step").add_edge("step", END)
     .compile(checkpointer={saver}))
cfg = {{"configurable": {{"thread_id": "live-bench"}}}}
await g.ainvoke({{"n": 0, "note": ""}}, cfg)                    # 3 checkpoints
configs = [(await g.aget_state(cfg)).config]
for i in range({chain}):                                          # the long branch
    configs.append(await g.aupdate_state(configs[-1], {{"n": i}}, as_node="step"))
for k in range({forks}):                                          # forks from along it
    await g.aupdate_state(configs[(k + 1) * len(configs) // ({forks} + 1)],
                          {{"note": f"fork {{k}}"}}, as_node="step")
dag = await adag_data(g, cfg)
nodes = dag["nodes"]
sample = nodes[:: max(1, len(nodes) // {clicks})][: {clicks}]
sample += [n for n in nodes if n["is_head"] and n["lane"] > 0]
kernel_ms = []
for n in sample:
    t = time.perf_counter()
    await acheckpoint_detail(g, cfg, n["id"])
    kernel_ms.append((time.perf_counter() - t) * 1000)
print("BENCH " + json.dumps({{
    "checkpoints": len(nodes), "lanes": dag["lanes"],
    "targets": [[n["id"], n["depth"], n["lane"]] for n in sample],
    "kernel_detail_ms": statistics.median(kernel_ms)}}))
"""

SHOW = "tt = TimeTravel(g, cfg)\ntt"

# Runs in the page: send the display cell to the kernel, resolve with the milliseconds until
# the frame after the DAG's marks appeared.
FIRST_RENDER = """
async (index) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const start = performance.now();
  panel.content.activeCellIndex = index;
  app.commands.execute("notebook:run-cell");
  while (!document.querySelector(".dd-root .dd-mark")) await frame();
  await frame();
  return performance.now() - start;
}
"""

# Runs in the page: scroll a checkpoint into view (not timed), click it, resolve with the
# milliseconds until the frame after its detail was drawn.
CLICK_TO_DETAIL = """
async ([id]) => {
  // The widget brings it into view (unfolded from a run of the DAG's layout if need be).
  document.querySelector(".dd-root").dispatchEvent(new CustomEvent("dd-show", { detail: id }));
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  await frame();
  await frame();
  const mark = [...document.querySelectorAll(".dd-root .dd-mark")].find((m) => m.dataset.id === id);
  if (!mark) throw new Error("checkpoint " + id + " is not drawn");
  const shown = () => document.querySelector(`.dd-root .dd-detail-head[data-id="${id}"]`);
  const start = performance.now();
  mark.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  while (!shown()) await new Promise((r) => setTimeout(r, 0));
  await frame();
  return performance.now() - start;
}
"""


# Runs in the page: the plain Jupyter round trip (kernel_info request → reply), the floor under
# any widget request in this server, kernel and browser.
KERNEL_INFO = """
async (count) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const times = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await kernel.requestKernelInfo();
    times.push(performance.now() - start);
  }
  return times;
}
"""


def load_labserver() -> Any:
    """tests/widget/labserver.py, loaded by path (the tests folder is not a package)."""
    return load_test_helper("widget", "labserver.py")


def main() -> None:
    """Start JupyterLab, build the thread, show the widget, click, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=2000)
    parser.add_argument("--forks", type=int, default=5)
    parser.add_argument("--clicks", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--saver", choices=["memory", "sqlite"], default="memory")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    labserver = load_labserver()
    chain = args.checkpoints - 3 - args.forks
    saver = "MemorySaver()" if args.saver == "memory" else 'SqliteSaver("bench.db")'
    build = BUILD.format(chain=chain, forks=args.forks, clicks=args.clicks, saver=saver)

    with (
        tempfile.TemporaryDirectory() as workdir,
        labserver.LabServer(Path(workdir)) as lab,
        sync_playwright() as playwright,
    ):
        lab.write_notebook("bench.ipynb", [build, SHOW])
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        labserver.open_notebook(page, lab, "bench.ipynb")
        started = time.perf_counter()
        labserver.run_cell(page, 0)
        page.wait_for_function(
            "() => (window.jupyterapp.shell.currentWidget.content.widgets[0].model"
            ".executionCount || 0) > 0",
            timeout=600_000,
        )
        built_s = time.perf_counter() - started
        text = labserver.cell_text(page, 0)
        if "BENCH " not in text:
            raise SystemExit(f"building the thread failed:\n{text}")
        info = json.loads(text.split("BENCH ", 1)[1].splitlines()[0])
        first_render = page.evaluate(FIRST_RENDER, 1)
        targets = info["targets"]
        for target in targets[: args.warmup]:
            page.evaluate(CLICK_TO_DETAIL, target)
        clicks = [page.evaluate(CLICK_TO_DETAIL, target) for target in targets]
        floor = page.evaluate(KERNEL_INFO, len(targets))
        version = browser.version
        browser.close()

    print(
        f"live kernel: {info['checkpoints']} checkpoints, {info['lanes']} lanes, {args.saver} "
        f"(built in {built_s:.1f} s); JupyterLab + chromium {version}"
    )
    print(
        f"first render:    {first_render:6.1f} ms  (display cell sent → DAG drawn;"
        " target < 1000 ms)"
    )
    print(
        f"click-to-detail: median {statistics.median(clicks):6.1f} ms"
        f"  (min {min(clicks):.1f}, max {max(clicks):.1f}, {len(clicks)} clicks; target < 100 ms)"
    )
    print(f"  of which the kernel's acheckpoint_detail: median {info['kernel_detail_ms']:.1f} ms")
    print(
        f"  plain Jupyter round trip (kernel_info) here: median {statistics.median(floor):.1f} ms"
    )


if __name__ == "__main__":
    main()
