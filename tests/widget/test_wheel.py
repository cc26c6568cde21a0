"""The wheel ships the widget's front end, and an installed TimeTravel finds it there.

Builds the wheel with pip (``pip wheel . --no-deps``; without build isolation when hatchling is
already installed, else pip fetches it from PyPI), checks that ``durable_debug/static/`` holds
``widget.js`` and ``widget.css`` byte for byte, then imports the package from the unpacked
wheel alone (no ``src/`` on the path) and checks where ``TimeTravel`` loads its module from.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

INSTALLED_CHECK = """
import json, durable_debug
from durable_debug import TimeTravel
from durable_debug.inspect.html import widget_asset_paths
js, css = widget_asset_paths()
print(json.dumps({"package": durable_debug.__file__, "js": str(js), "css": str(css),
                  "esm": str(TimeTravel._esm), "css_text": str(TimeTravel._css)}))
"""


def test_the_wheel_ships_the_widget_and_timetravel_loads_it_from_there(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out)]
    if importlib.util.find_spec("hatchling") is not None:
        command.append("--no-build-isolation")
    built = subprocess.run(
        [*command, str(REPO)], capture_output=True, text=True, timeout=600, check=False
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("durable_debug-*.whl")

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {"durable_debug/static/widget.js", "durable_debug/static/widget.css"} <= names
        assert "durable_debug/widget.py" in names
        shipped_js = archive.read("durable_debug/static/widget.js")
        shipped_css = archive.read("durable_debug/static/widget.css")
        archive.extractall(tmp_path / "site")
    assert shipped_js == (REPO / "js" / "widget.js").read_bytes()
    assert shipped_css == (REPO / "js" / "widget.css").read_bytes()

    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    ran = subprocess.run(
        [sys.executable, "-c", INSTALLED_CHECK],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    static = tmp_path / "site" / "durable_debug" / "static"
    assert Path(found["package"]).is_relative_to(tmp_path / "site")
    assert Path(found["js"]) == static / "widget.js"
    assert Path(found["css"]) == static / "widget.css"
    assert re.search(r"\bas default\b", found["esm"])  # the bundle's anywidget entry point
    assert found["esm"] == shipped_js.decode("utf-8")
    assert found["css_text"] == shipped_css.decode("utf-8")
