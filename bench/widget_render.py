"""Speed of the standalone widget page on a thread of 2,000 checkpoints with 5 forks.

Prints two figures measured in headless Debian Chromium (targets from issue 5):

- first render: from navigation start to the first frame painted after ``render()`` returned
  (HTML parse, JSON parse, module import and drawing included), median over several loads;
- click-to-detail: from a click on a checkpoint to the frame that shows its detail, measured in
  the page (no Playwright round trip in the figure), median over checkpoints across the thread.

    python bench/widget_render.py            # 2,000 checkpoints, 5 forks
    python bench/widget_render.py --checkpoints 10000 --loads 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from _test_helpers import load_test_helper  # noqa: E402 (bench/ is on sys.path as the script's folder)

from durable_debug.inspect.html import render_html  # noqa: E402

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

# Runs in the page: click one checkpoint's mark and resolve with the milliseconds until the
# frame after its detail appeared.
CLICK_TO_DETAIL = """
async (id) => {
  const box = document.querySelector(".dd-dag-scroll");
  // Positions come from the embedded data, parsed once (not inside the measured window).
  window.ddBenchNodes ||= new Map(JSON.parse(document.getElementById("durable-debug-data")
    .textContent).dag.nodes.map((n) => [n.id, n]));
  const node = window.ddBenchNodes.get(id);
  const geometry = document.querySelector("svg.dd-dag").dataset;
  box.scrollLeft = Math.max(0, +geometry.pad + node.depth * geometry.col - box.clientWidth / 2);
  box.scrollTop = Math.max(0, +geometry.pad + node.lane * geometry.row - box.clientHeight / 2);
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  await frame();
  await frame();
  const mark = [...document.querySelectorAll(".dd-mark")].find((m) => m.dataset.id === id);
  if (!mark) throw new Error("checkpoint " + id + " is not drawn");
  const shown = () => document.querySelector(`.dd-detail-head[data-id="${id}"]`);
  const start = performance.now();
  mark.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  while (!shown()) await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - start;
}
"""


def load_fixtures() -> Any:
    """tests/widget/fixtures.py, loaded by path (the tests folder is not a package)."""
    return load_test_helper("widget", "fixtures.py")


def main() -> None:
    """Build the page, load it several times, click checkpoints, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=2000)
    parser.add_argument("--forks", type=int, default=5)
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--clicks", type=int, default=40)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    data = load_fixtures().large_export(args.checkpoints, forks=args.forks)
    page_path = Path(tempfile.mkdtemp()) / "large.html"
    page_path.write_text(render_html(data), encoding="utf-8")
    nodes = data["dag"]["nodes"]
    step = max(1, len(nodes) // args.clicks)
    targets = [node["id"] for node in nodes[::step]][: args.clicks]

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        renders = []
        walls = []
        for _ in range(args.loads):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            started = time.perf_counter()
            page.goto(page_path.as_uri())
            page.wait_for_selector("html[data-dd-rendered]", timeout=30_000)
            walls.append((time.perf_counter() - started) * 1000)
            renders.append(float(page.get_attribute("html", "data-dd-rendered") or "nan"))
            page.close()

        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_path.as_uri())
        page.wait_for_selector("html[data-dd-rendered]", timeout=30_000)
        clicks = [page.evaluate(CLICK_TO_DETAIL, target) for target in targets]
        version = browser.version
        browser.close()

    size = page_path.stat().st_size / 1e6
    print(f"widget page: {len(nodes)} checkpoints, {data['dag']['lanes']} lanes, {size:.1f} MB")
    print(f"chromium {version}, {args.loads} loads, {len(clicks)} clicks")
    print(
        f"first render:    median {statistics.median(renders):6.1f} ms"
        f"  (min {min(renders):.1f}, max {max(renders):.1f}; target < 1000 ms;"
        f" wall incl. Playwright {statistics.median(walls):.0f} ms)"
    )
    print(
        f"click-to-detail: median {statistics.median(clicks):6.1f} ms"
        f"  (min {min(clicks):.1f}, max {max(clicks):.1f}; target < 100 ms)"
    )


if __name__ == "__main__":
    main()
