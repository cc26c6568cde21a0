"""The first view of a big thread as a person sees it, read in the page: shared by the browser
tests of the standalone export and of the live widget in JupyterLab and Notebook 7.

The first view opens on the main run's latest checkpoint: selected (its detail shown, its mark
``aria-current``), its mark inside the DAG's visible scroll box and the window, the label under
it (the writing node) at 11 px or more on screen, it and the checkpoints leading to it carrying
the on-path class with the path's edges drawn, the thread's newest checkpoint (a fork's) not on
that path.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

__all__ = ["READABLE_PX", "check_first_view"]

READABLE_PX = 11.0
"""The smallest on-screen size of a mark's label that reads."""

# The centre of `el` inside the DAG's visible scroll box and the window.
_IN_VIEW = """
  const box = document.querySelector('.dd-dag-scroll').getBoundingClientRect();
  const inView = (el) => {
    const at = el.getBoundingClientRect();
    const x = at.left + at.width / 2, y = at.top + at.height / 2;
    return x >= Math.max(box.left, 0) && x <= Math.min(box.right, window.innerWidth)
      && y >= Math.max(box.top, 0) && y <= Math.min(box.bottom, window.innerHeight);
  };
"""

_SELECTED_IN_VIEW = f"""(selector) => {{
  const el = document.querySelector(selector);
  if (!el || !el.hasAttribute('aria-current')) return false;
  {_IN_VIEW}
  return inView(el);
}}"""

_SEEN = f"""(selector) => {{
  {_IN_VIEW}
  const svg = document.querySelector('svg.dd-dag');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const label = document.querySelector(selector + ' .dd-writers');
  const onScreen = (el) => parseFloat(getComputedStyle(el).fontSize) * scale;
  return {{
    label: onScreen(label),
    labelText: label.textContent,
    onPath: [...document.querySelectorAll('.dd-mark.dd-on-path')].filter(inView)
      .map((el) => el.dataset.id),
    onPathAnywhere: [...document.querySelectorAll('.dd-mark.dd-on-path')]
      .map((el) => el.dataset.id),
    mainOnPath: document.querySelector(selector).classList.contains('dd-on-path'),
    pathDrawn: (document.querySelector('.dd-path-edges').getAttribute('d') || '').length > 0,
  }};
}}"""


def check_first_view(page: Any, main: str, newest: str, timeout_ms: int) -> dict[str, Any]:
    """Wait until the page's widget shows its first view on checkpoint ``main`` (the main run's
    latest) and check it reads as the module says; ``newest`` (a fork's checkpoint) must not be
    on its path. Returns what was read: ``onPath``, the on-path marks in view, among others."""
    expect(page.locator(f'.dd-detail-head[data-id="{main}"]')).to_be_visible(timeout=timeout_ms)
    mark = f'.dd-mark[data-id="{main}"]'
    page.wait_for_function(_SELECTED_IN_VIEW, arg=mark, timeout=timeout_ms)
    seen: dict[str, Any] = page.evaluate(_SEEN, mark)
    # Its label (the writing node under the mark) reads at 11 px or more.
    assert seen["labelText"] and seen["label"] >= READABLE_PX, seen
    # Its path from the root is highlighted: the mark and the checkpoints leading to it.
    assert seen["mainOnPath"] and seen["pathDrawn"], seen
    assert main in seen["onPath"] and len(seen["onPath"]) >= 3, seen
    assert newest not in seen["onPathAnywhere"], seen
    return seen
