"""Big values in a live widget: what "Show all" on a 2 MB string costs the browser tab, and
what a diff of two fat checkpoints sends, in JupyterLab (or Notebook 7) and headless Chromium.

Starts a throwaway front end (tests/widget/labserver.py), runs a one-node graph in the kernel
whose state holds a 2 MB string (``blob``, unchanged by the node), a 2.8 MB document of 40,000
lines (one line changed by the node) and 10,000 rows of 200 characters (1,429 changed), shows
``TimeTravel`` on its newest checkpoint, and prints, measured in the page:

- "Show all" on ``blob``: the tab's memory before, after the first page is drawn, and after
  **Show more** was pressed until all 2,000,000 characters are drawn; "tab memory" is the
  resident memory of Chromium's renderer processes (psutil) and, beside it, the JavaScript
  heap in use after a garbage collection (Chrome DevTools Protocol);
- a shift-click diff of the newest checkpoint with its parent: the bytes the page received on
  its kernel websockets from the click until the diff is drawn (the kernel's busy/idle
  messages included), and the time.

    python bench/widget_values.py                       # JupyterLab
    python bench/widget_values.py --frontend notebook   # Notebook 7
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from _test_helpers import load_test_helper
from playwright.sync_api import sync_playwright

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
import operator
from typing import Annotated, Any
from typing_extensions import TypedDict
from durable_debug import START, MemorySaver, StateGraph, TimeTravel

class Fat(TypedDict, total=False):
    blob: str
    doc: str
    rows: list[dict[str, Any]]
    log: Annotated[list[str], operator.add]

def fat_doc(changed=None):
    lines = [f"line {i}: " + "x" * 60 for i in range(40_000)]
    if changed is not None:
        lines[changed] = f"line {changed}: CHANGED"
    return "\\n".join(lines)

rows = [{"id": i, "payload": "y" * 200} for i in range(10_000)]
edited = [dict(r) for r in rows]
for i in range(0, 10_000, 7):
    edited[i]["payload"] = "z"

def grow(state):
    return {"doc": fat_doc(changed=20_000), "rows": edited, "log": ["grew"]}

g = (StateGraph(Fat).add_node("grow", grow).add_edge(START, "grow")
     .compile(checkpointer=MemorySaver()))
cfg = {"configurable": {"thread_id": "fat"}}
await g.ainvoke({"blob": "0123456789" * 200_000, "doc": fat_doc(), "rows": rows, "log": []}, cfg)
state = await g.aget_state(cfg)
print("BUILT", state.config["configurable"]["checkpoint_id"],
      state.parent_config["configurable"]["checkpoint_id"])
"""

SHOW = "TimeTravel(g, cfg)"


def renderer_rss() -> int:
    """Resident bytes of the Chromium renderer processes started under this process."""
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            if "--type=renderer" in " ".join(child.cmdline()):
                total += child.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


def tab_memory(page: Any, cdp: Any) -> tuple[int, int]:
    """(renderer RSS, JS heap used) after a garbage collection and two frames."""
    cdp.send("HeapProfiler.collectGarbage")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return renderer_rss(), int(metrics["JSHeapUsedSize"])


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def main() -> None:
    """Start the front end, build the thread, show it, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frontend", choices=["lab", "notebook"], default="lab")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    labserver = load_test_helper("widget", "labserver.py")
    wait = 600_000
    received = [0]

    def on_socket(socket: Any) -> None:
        socket.on(
            "framereceived",
            lambda payload: received.__setitem__(
                0, received[0] + len(payload if isinstance(payload, bytes) else payload.encode())
            ),
        )

    with (
        tempfile.TemporaryDirectory() as workdir,
        labserver.LabServer(Path(workdir), frontend=args.frontend) as server,
        sync_playwright() as playwright,
    ):
        server.write_notebook("values.ipynb", [BUILD, SHOW])
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("websocket", on_socket)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        labserver.open_notebook(page, server, "values.ipynb", timeout_ms=wait)
        labserver.run_all(page)
        built = labserver.wait_for_text(page, 0, "BUILT ", timeout_ms=wait)
        newest, parent = built.split("BUILT ", 1)[1].split()[:2]
        page.wait_for_function(
            "() => document.querySelectorAll('.dd-root .dd-mark').length >= 3", timeout=wait
        )
        show_all = page.locator('.dd-root [data-action="show-all"][data-channel="blob"]')
        show_all.wait_for(timeout=wait)
        status = page.locator(".dd-root .dd-channel-row[data-channel='blob'] .dd-page-status")

        base = tab_memory(page, cdp)
        started, received[0] = time.perf_counter(), 0
        show_all.click()
        status.filter(has_text="100,000 of 2,000,000 characters").wait_for(timeout=wait)
        first_s, first_bytes = time.perf_counter() - started, received[0]
        first = tab_memory(page, cdp)
        more = page.locator(".dd-root .dd-channel-row[data-channel='blob'] .dd-show-more")
        started, received[0] = time.perf_counter(), 0
        presses = 0
        while more.is_visible():
            shown = status.inner_text()
            more.click()
            presses += 1
            page.wait_for_function(
                "([el, old]) => el.textContent !== old",
                arg=[status.element_handle(), shown],
                timeout=wait,
            )
        status.filter(has_text="2,000,000 of 2,000,000 characters").wait_for(timeout=wait)
        all_s, all_bytes = time.perf_counter() - started, received[0]
        whole = tab_memory(page, cdp)

        # A diff: the newest checkpoint (selected) shift-clicked with its parent.
        page.locator(f'.dd-root .dd-detail-head[data-id="{newest}"]').wait_for(timeout=wait)
        started, received[0] = time.perf_counter(), 0
        page.locator(f'.dd-root .dd-mark[data-id="{parent}"]').click(modifiers=["Shift"])
        page.locator(".dd-root .dd-diff-path").first.wait_for(timeout=wait)
        page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        diff_s, diff_bytes = time.perf_counter() - started, received[0]
        paths = page.locator(".dd-root .dd-diff-path").count()
        version = browser.version
        browser.close()

    name = "JupyterLab" if args.frontend == "lab" else "Notebook 7"
    print(f"{name} + chromium {version}; load average {psutil.getloadavg()[0]:.1f}")
    print("tab memory (renderer RSS; JS heap used after GC):")
    print(f"  before Show all:            {mb(base[0])}; {mb(base[1])}")
    print(
        f"  Show all (first page):      {mb(first[0])} (+{mb(first[0] - base[0])}); "
        f"{mb(first[1])} (+{mb(first[1] - base[1])}); {first_bytes:,} bytes received, "
        f"{first_s * 1000:.0f} ms  (target: ≤ +100 MB)"
    )
    print(
        f"  + Show more ×{presses} (all 2 MB): {mb(whole[0])} (+{mb(whole[0] - base[0])}); "
        f"{mb(whole[1])} (+{mb(whole[1] - base[1])}); {all_bytes:,} bytes received, "
        f"{all_s:.1f} s"
    )
    print(
        f"diff of two fat checkpoints: {diff_bytes:,} bytes received ({diff_bytes / 1024:.0f} KiB;"
        f" target ≤ 256 KiB), {paths} paths drawn, {diff_s * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
