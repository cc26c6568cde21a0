"""One self-contained HTML page that shows a thread in the time-travel widget, read-only.

The page inlines ``widget.js`` and ``widget.css``, embeds the export data as JSON and renders the
widget against the in-page model ``createStaticModel(data)``: no kernel, no network, no CDN. The
data is collected by ``inspect.export_html``; this module only turns it into a page::

    from durable_debug.inspect.html import render_html

    page = render_html({"thread_id": "t1", "dag": dag, "details": details, "topology": None})
    Path("thread.html").write_text(page, encoding="utf-8")

The data's shape is the "Standalone export" section of docs/widget-protocol.md.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

__all__ = [
    "DATA_ELEMENT_ID",
    "MODULE_ELEMENT_ID",
    "render_html",
    "widget_asset_paths",
    "widget_assets",
]

DATA_ELEMENT_ID = "durable-debug-data"
"""Id of the ``<script type="application/json">`` element that holds the export data."""

MODULE_ELEMENT_ID = "durable-debug-module"
"""Id of the element that holds widget.js's source, as a JSON string."""

# The bootstrap imports the widget from a Blob URL (a module cannot import inline text), renders
# it against the in-page model, and marks <html data-dd-rendered> once the first frame is painted
# (bench/widget_render.py reads that mark).
_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="durable_debug">
<title>$title</title>
<style>
:root { color-scheme: light dark; }
body { margin: 0; padding: 12px; background: Canvas; color: CanvasText; }
.dd-page-failure { font-family: system-ui, sans-serif; color: #c62828; white-space: pre-wrap; }
</style>
<style>
$css
</style>
</head>
<body>
<div id="durable-debug-root"></div>
<script type="application/json" id="$module_id">$module_source</script>
<script type="application/json" id="$data_id">$data</script>
<script type="module">
const root = document.getElementById("durable-debug-root");
const readJson = (id) => JSON.parse(document.getElementById(id).textContent);
try {
  const source = readJson("$module_id");
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const widget = await import(url);
  URL.revokeObjectURL(url);
  const model = widget.createStaticModel(readJson("$data_id"));
  widget.default.render({ model, el: root });
  requestAnimationFrame(() => setTimeout(() => {
    document.documentElement.dataset.ddRendered = String(performance.now());
  }));
} catch (error) {
  root.className = "dd-page-failure";
  root.textContent = "This durable_debug export could not be shown: " + error;
  document.documentElement.dataset.ddFailed = String(error);
}
</script>
</body>
</html>
""")


def render_html(data: Mapping[str, Any], title: str = "durable_debug") -> str:
    """Return one self-contained HTML document that browses ``data`` in the widget, read-only.

    ``data`` is ``{thread_id, dag, details, topology}`` as in docs/widget-protocol.md; it must be
    plain JSON (``inspect.to_jsonable`` makes channel values so). ``title`` is the page title.
    """
    js, css = widget_assets()
    return _PAGE.substitute(
        title=html.escape(title),
        css=_STYLE_END.sub(r"<\\/", css),
        module_id=MODULE_ELEMENT_ID,
        module_source=_script_json(js),
        data_id=DATA_ELEMENT_ID,
        data=_script_json(data),
    )


def widget_assets() -> tuple[str, str]:
    """Return the text of ``(widget.js, widget.css)`` (see :func:`widget_asset_paths`)."""
    js, css = widget_asset_paths()
    return js.read_text(encoding="utf-8"), css.read_text(encoding="utf-8")


def widget_asset_paths() -> tuple[Path, Path]:
    """Return the paths of ``(widget.js, widget.css)``.

    From the installed package's ``durable_debug/static/`` (the wheel ships them there), else from
    the ``js/`` directory of a source checkout. The widget's ``_esm`` is this path, so
    ``ANYWIDGET_HMR=1`` reloads the front end when the file changes.
    """
    static = resources.files("durable_debug") / "static"
    if static.joinpath("widget.js").is_file():
        return Path(str(static / "widget.js")), Path(str(static / "widget.css"))
    checkout = Path(__file__).resolve().parents[3] / "js"
    if (checkout / "widget.js").is_file():
        return checkout / "widget.js", checkout / "widget.css"
    raise FileNotFoundError(
        "durable_debug's widget.js was found neither in the installed package "
        f"({static}) nor in a source checkout ({checkout}): reinstall durable-debug."
    )


_STYLE_END = re.compile(r"</(?=style)", re.IGNORECASE)


def _script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` survive raw."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as error:
        raise ValueError(
            f"The export data is not plain JSON ({error}): convert channel values with "
            "durable_debug.inspect.to_jsonable before rendering."
        ) from error
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
