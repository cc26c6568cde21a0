"""Speed of the standalone widget page on a big thread, in headless Chromium.

Prints, for a synthetic thread (``large_export``: one long run, evenly spaced forks, every
50th checkpoint paused on an interrupt, every 97th failed):

- first render: from navigation start to the first frame painted after ``render()`` returned,
  with the first marks on screen (HTML parse, JSON parse, module import, layout and drawing
  included), median over several loads;
- relayout: a click on a folded run, to the next frame: the whole thread laid out and drawn
  again (the front end's share of the first render, without parsing the data);
- click-to-detail: from a click on a checkpoint to the frame that shows its detail, measured in
  the page (no Playwright round trip in the figure), median over checkpoints across the thread,
  warm (a second pass), and the first pass right after the load;
- zoom and pan: a zoom step and a scroll of one screen, each to the next painted frame.

    python bench/widget_render.py                                  # 2,000 checkpoints, 5 forks
    python bench/widget_render.py --checkpoints 50000 --forks 50   # the big-thread size

``--details-every K`` embeds the detail of every K-th checkpoint only (default: all below
10,000 checkpoints, else every 10th), so that the page measures the front end rather than the
size of 50,000 embedded states; the clicks go to checkpoints that have one.
"""

from __future__ import annotations

import argparse
import os
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

# Runs in the page: scroll to a fraction of the thread, click the drawn checkpoint nearest the
# middle of the view that has an embedded detail, and resolve with [id, milliseconds until the
# frame after its detail appeared].
CLICK_TO_DETAIL = """
async (fraction) => {
  const box = document.querySelector(".dd-dag-scroll");
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  box.scrollLeft = fraction * (box.scrollWidth - box.clientWidth);
  box.scrollTop = 0;
  await frame();
  await frame();
  const view = box.getBoundingClientRect();
  const middle = view.left + view.width / 2;
  let best = null;
  for (const mark of document.querySelectorAll(".dd-mark")) {
    if (!window.ddBenchDetails.has(mark.dataset.id)) continue;
    const at = mark.getBoundingClientRect();
    const outside = at.left < view.left || at.right > view.right;
    if (outside || at.top < view.top || at.bottom > view.bottom) continue;
    const distance = Math.abs(at.left + at.width / 2 - middle);
    if (!best || distance < best[0]) best = [distance, mark];
  }
  if (!best) return null;
  const mark = best[1];
  const id = mark.dataset.id;
  const shown = () => document.querySelector(`.dd-detail-head[data-id="${id}"]`);
  const start = performance.now();
  mark.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  while (!shown()) await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return [id, performance.now() - start];
}
"""

# Runs in the page: one zoom-out click and one screen of scrolling, each to the next frame.
ZOOM_AND_PAN = """
async () => {
  const box = document.querySelector(".dd-dag-scroll");
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  let start = performance.now();
  document.querySelector('[data-nav="zoom-out"]').click();
  await frame();
  const zoom = performance.now() - start;
  start = performance.now();
  box.scrollLeft = Math.max(0, box.scrollLeft - box.clientWidth);
  box.dispatchEvent(new Event("scroll"));
  await frame();
  await frame();
  return [zoom, performance.now() - start];
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
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--clicks", type=int, default=20)
    parser.add_argument("--details-every", type=int, default=0)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    data = load_fixtures().large_export(args.checkpoints, forks=args.forks)
    nodes = data["dag"]["nodes"]
    every = args.details_every or (1 if len(nodes) < 10_000 else 10)
    if every > 1:
        keep = {node["id"] for node in nodes[::every]}
        keep |= {node["id"] for node in nodes if node["is_latest"]}
        data["details"] = {k: v for k, v in data["details"].items() if k in keep}
    page_path = Path(tempfile.mkdtemp()) / "large.html"
    page_path.write_text(render_html(data), encoding="utf-8")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        renders = []
        walls = []
        first_marks = []
        for _ in range(args.loads):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            started = time.perf_counter()
            page.goto(page_path.as_uri())
            page.wait_for_selector("html[data-dd-rendered]", timeout=60_000)
            walls.append((time.perf_counter() - started) * 1000)
            renders.append(float(page.get_attribute("html", "data-dd-rendered") or "nan"))
            first_marks.append(page.locator(".dd-mark, .dd-run").count())
            page.close()

        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_path.as_uri())
        page.wait_for_selector("html[data-dd-rendered]", timeout=60_000)
        # The ids that have a detail, handed over once (parsing the page's data in the page
        # would leave 20 MB of garbage to collect during the clicks).
        page.evaluate("(ids) => { window.ddBenchDetails = new Set(ids); }", list(data["details"]))
        layouts = [
            page.evaluate(
                """async () => {
                     // Expand one folded run: the whole thread laid out and drawn again.
                     const run = document.querySelector(".dd-run .dd-run-shape");
                     if (!run) return NaN;
                     const start = performance.now();
                     run.dispatchEvent(new MouseEvent("click", { bubbles: true }));
                     await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
                     return performance.now() - start;
                   }"""
            )
            for _ in range(args.loads)
        ]
        # Two passes over the same positions: right after the load (the page still digests its
        # data: garbage collection, first styles of the detail pane), then warm.
        passes: list[list[float]] = [[], []]
        for clicks in passes:
            for k in range(args.clicks):
                answer = page.evaluate(CLICK_TO_DETAIL, (k + 0.5) / args.clicks)
                if answer:
                    clicks.append(answer[1])
        cold, clicks = passes
        moves = [page.evaluate(ZOOM_AND_PAN) for _ in range(args.loads)]
        version = browser.version
        browser.close()

    size = page_path.stat().st_size / 1e6
    print(
        f"widget page: {len(nodes)} checkpoints, {data['dag']['lanes']} branches, "
        f"{len(data['details'])} details embedded, {size:.1f} MB"
    )
    print(f"chromium {version}, {args.loads} loads, {len(clicks)} clicks a pass; {machine()}")
    print(
        f"first render:    median {statistics.median(renders):7.1f} ms"
        f"  (min {min(renders):.1f}, max {max(renders):.1f};"
        f" wall incl. Playwright {statistics.median(walls):.0f} ms;"
        f" {statistics.median(first_marks):.0f} marks in the DOM)"
    )
    expanded = [ms for ms in layouts if ms == ms]  # NaN: no folded run left in view
    relayout = (
        f"{statistics.median(expanded):7.1f} ms" if expanded else "    (no folded run in view)"
    )
    print(f"relayout:        median {relayout}")
    print(
        f"click-to-detail: median {statistics.median(clicks):7.1f} ms"
        f"  (min {min(clicks):.1f}, max {max(clicks):.1f}; target < 100 ms);"
        f" first pass after the load: median {statistics.median(cold):.1f} ms"
    )
    print(
        f"zoom step:       median {statistics.median(m[0] for m in moves):7.1f} ms;"
        f" pan one screen: median {statistics.median(m[1] for m in moves):.1f} ms"
    )


def machine() -> str:
    """CPU count and load average, for the record."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs, load average {load}"


if __name__ == "__main__":
    main()
