"""render_html: one self-contained page, data embedded safely (no browser needed)."""

from __future__ import annotations

import json
import re
from types import ModuleType

import pytest

from durable_debug.inspect.html import (
    DATA_ELEMENT_ID,
    MODULE_ELEMENT_ID,
    render_html,
    widget_assets,
)


def embedded(page: str, element_id: str) -> object:
    """The JSON held by one ``<script type="application/json">`` element of the page."""
    match = re.search(
        rf'<script type="application/json" id="{element_id}">(.*?)</script>', page, re.DOTALL
    )
    assert match, f"no #{element_id} in the page"
    return json.loads(match.group(1))


def test_page_inlines_the_widget_and_embeds_the_data(widget_fixtures: ModuleType) -> None:
    data = widget_fixtures.small_export()
    page = render_html(data, title="demo <thread>")
    js, css = widget_assets()
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>demo &lt;thread&gt;</title>" in page
    assert embedded(page, DATA_ELEMENT_ID) == data
    assert embedded(page, MODULE_ELEMENT_ID) == js
    assert ".dd-root" in css and css in page


def test_page_loads_nothing_from_the_network(widget_fixtures: ModuleType) -> None:
    page = render_html(widget_fixtures.small_export())
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page
    assert "cdn" not in page.lower()


def test_hostile_values_cannot_end_the_data_script(widget_fixtures: ModuleType) -> None:
    data = widget_fixtures.small_export()
    hostile = "</script><script>alert(1)</script><!-- & \u2028"
    data["details"][widget_fixtures.SMALL["tools"]]["values"]["messages"] = [hostile]
    page = render_html(data)
    body = page.split(f'id="{DATA_ELEMENT_ID}">', 1)[1].split("</script>", 1)[0]
    assert "<" not in body and ">" not in body and "&" not in body
    assert embedded(page, DATA_ELEMENT_ID) == data


def test_non_json_data_is_a_clear_error(widget_fixtures: ModuleType) -> None:
    data = widget_fixtures.small_export()
    data["details"][widget_fixtures.SMALL["tools"]]["values"]["count"] = float("nan")
    with pytest.raises(ValueError, match="to_jsonable"):
        render_html(data)
