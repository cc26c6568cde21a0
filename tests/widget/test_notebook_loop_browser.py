"""The notebook loop in JupyterLab and Notebook 7, in headless Chromium with a live kernel.

One notebook builds a small chat graph (a chat node writing a conversation with a tool call,
then a node with a 100-character name), runs a thread whose id holds a right-to-left override
and 60 more characters, and three more threads that end done, paused and failed; then shows
``TimeTravel``. The test, as a person would:

- reads the names: the thread id and the long node name cut with an ellipsis, the override
  shown as the visible escape ``\\u202e``, the whole name in a tooltip and in the detail;
- reads the chat channel as a conversation, its raw value one click away;
- zooms and pans the topology, then fits it;
- opens the thread list: search and status filter narrow it, typing switches nothing;
- starts a New run from the form (a typed field per key, none of them ``null``): while its
  long node runs (it waits for a file the test writes) the node is highlighted; the open thread
  list shows the new count when the run ends;
- ticks a breakpoint and starts another run: the checkpoint it pauses at carries the marker;
- walks the thread list with the arrow keys (nothing switches) and switches with Enter.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from playwright.sync_api import expect

from durable_debug.inspect.names import short_name

pytestmark = pytest.mark.browser

WAIT_MS = 120_000
"""Generous waits on conditions: a front end and a kernel on a small shared machine."""

LONG = "summarise_" + "the_findings_" * 7 + "and_end"
THREAD = "job-\u202etxt.exe-" + "x" * 60

SETUP = r"""
import asyncio, json, operator
from pathlib import Path
from typing import Annotated
from typing_extensions import TypedDict
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from durable_debug import END, START, MemorySaver, StateGraph, TimeTravel, add_messages, interrupt

LONG = "LONG_NAME"
THREAD = "THREAD_ID"

class State(TypedDict, total=False):
    topic: str
    limit: int
    messages: Annotated[list, add_messages]
    notes: Annotated[list[str], operator.add]

def chat(state):
    if state["topic"] == "fail":
        raise RuntimeError("the model is down")
    if state["topic"] == "ask":
        interrupt("go on?")
    call = {"name": "search", "args": {"q": "capital of France"}, "id": "call-1"}
    return {"messages": [
        HumanMessage("What is the capital of France?", id="m1"),
        AIMessage("", id="m2", tool_calls=[call]),
        ToolMessage("Paris", tool_call_id="call-1", id="m3"),
        AIMessage("The capital of France is Paris.", id="m4"),
    ]}

async def summarise(state):
    while state["topic"] == "tides" and not Path("gate").exists():
        await asyncio.sleep(0.05)
    return {"notes": [f"summed up {state['topic']}"]}

g = (StateGraph(State).add_node("chat", chat).add_node(LONG, summarise)
     .add_edge(START, "chat").add_edge("chat", LONG).add_edge(LONG, END)
     .compile(checkpointer=MemorySaver()))
cfg = {"configurable": {"thread_id": THREAD}}
await g.ainvoke({"topic": "first", "limit": 3}, cfg)
for name, topic in [("user-01", "done"), ("user-02", "ask"), ("user-03", "fail")]:
    try:
        await g.ainvoke({"topic": topic}, {"configurable": {"thread_id": name}})
    except RuntimeError:
        pass
print("CHECKPOINTS", len([s async for s in g.aget_state_history(cfg)]))
"""

INSIDE = """([picture, selector]) => {
  const box = document.querySelector(picture).getBoundingClientRect();
  const el = document.querySelector(selector);
  if (!el) return false;
  const at = el.getBoundingClientRect();
  return at.width > 0 && at.left >= box.left - 1 && at.right <= box.right + 1
    && at.top >= box.top - 1 && at.bottom <= box.bottom + 1;
}"""


def count_marks(count: int) -> str:
    return f"() => document.querySelectorAll('.dd-root .dd-mark').length === {count}"


def test_names_chat_topology_thread_list_and_new_run(
    browser: Any, frontend: Any, labserver: ModuleType, artifacts: Path
) -> None:
    setup = SETUP.replace("LONG_NAME", LONG).replace(
        "THREAD_ID", THREAD.replace("\u202e", r"\u202e")
    )
    frontend.write_notebook("loop.ipynb", [setup, "TimeTravel(g, cfg)"])
    gate = frontend.root / "gate"
    shot = f"loop-{frontend.frontend}"
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors = labserver.watch_errors(page)
    try:
        labserver.open_notebook(page, frontend, "loop.ipynb", timeout_ms=WAIT_MS)
        labserver.run_all(page)
        printed = labserver.wait_for_text(page, 0, "CHECKPOINTS ", timeout_ms=WAIT_MS)
        checkpoints = int(printed.split("CHECKPOINTS ", 1)[1].split()[0])
        page.wait_for_function(count_marks(checkpoints), timeout=WAIT_MS)
        widget = page.locator(".dd-root")
        widget.scroll_into_view_if_needed()

        # Names: cut with an ellipsis, the override a visible escape, the whole in a tooltip.
        header = widget.locator(".dd-thread")
        shown = THREAD.replace("\u202e", "\\u202e")
        expect(header).to_contain_text(f"thread {short_name(THREAD)} · {checkpoints} checkpoints")
        assert "\u202e" not in header.inner_text() and "…" in short_name(THREAD)
        expect(header).to_have_attribute("title", f"thread {shown}")
        picture = widget.locator(".dd-topology-picture")
        expect(picture).to_contain_text(short_name(LONG), timeout=WAIT_MS)
        assert short_name(LONG).endswith("…") and LONG not in picture.inner_text()

        # The newest checkpoint: its detail names the long node whole, and the chat channel
        # reads as a conversation with its raw value one click away.
        newest = widget.locator(".dd-detail-head").get_attribute("data-id")
        assert newest, "the newest checkpoint is selected at first"
        expect(widget.locator(".dd-detail")).to_contain_text(LONG, timeout=WAIT_MS)
        row = widget.locator('.dd-channel-row[data-channel="messages"]')
        expect(row.locator(".dd-message")).to_have_count(4, timeout=WAIT_MS)
        roles = row.locator(".dd-message-role").all_inner_texts()
        assert [r.split()[0].lower() for r in roles] == ["user", "assistant", "tool", "assistant"]
        expect(row.locator(".dd-tool-call")).to_contain_text('search({"q":"capital of France"})')
        expect(row.locator(".dd-message").nth(3)).to_contain_text("The capital of France is Paris.")
        raw = row.locator(".dd-raw")
        expect(raw.get_by_text("tool_call_id").first).to_be_hidden()
        raw.locator("summary").first.click()
        expect(raw.get_by_text("tool_call_id").first).to_be_visible()
        page.screenshot(path=str(artifacts / f"{shot}-1-names-chat.png"))

        # The topology zooms and pans in its box, and Fit shows it whole again.
        topo = ".dd-topology-picture"
        long_node = f'{topo} [data-node="{LONG}"]'
        before = page.locator(long_node).bounding_box()
        for _ in range(4):
            widget.locator('[data-topo-zoom="in"]').click()
        page.wait_for_function(
            "([sel, w]) => document.querySelector(sel).getBoundingClientRect().width > w * 1.5",
            arg=[long_node, before["width"]],
            timeout=WAIT_MS,
        )
        sizes = page.eval_on_selector(
            topo, "el => [el.scrollWidth, el.clientWidth, el.scrollHeight, el.clientHeight]"
        )
        assert sizes[0] > sizes[1] or sizes[2] > sizes[3], sizes
        frame = picture.bounding_box()
        start = page.eval_on_selector(topo, "el => el.scrollLeft + el.scrollTop")
        page.mouse.move(frame["x"] + frame["width"] - 20, frame["y"] + frame["height"] - 20)
        page.mouse.down()
        page.mouse.move(frame["x"] + 20, frame["y"] + 20, steps=5)
        page.mouse.up()
        page.wait_for_function(
            "([sel, start]) => { const el = document.querySelector(sel);"
            " return el.scrollLeft + el.scrollTop > start; }",
            arg=[topo, start],
            timeout=WAIT_MS,
        )
        widget.locator('[data-topo-zoom="fit"]').click()
        for name in ["__end__", "chat", LONG]:
            page.wait_for_function(
                INSIDE, arg=[topo, f'{topo} [data-node="{name}"]'], timeout=WAIT_MS
            )

        # The thread list: search and status filter narrow it; typing switches nothing.
        widget.locator('[data-action="threads"]').click()
        options = widget.locator(".dd-thread-option")
        expect(options).to_have_count(4, timeout=WAIT_MS)
        search = widget.locator(".dd-thread-search")
        search.fill("user-0")
        expect(options).to_have_count(3)
        expect(widget.locator(".dd-thread-count")).to_have_text("3 of 4 threads")
        expect(header).to_contain_text(short_name(THREAD))
        search.fill("")
        status = widget.locator(".dd-thread-filter")
        for kind, thread in [("paused", "user-02"), ("failed", "user-03")]:
            status.select_option(kind)
            expect(options).to_have_count(1)
            expect(options.first).to_have_attribute("data-thread", thread)
        status.select_option("")
        ours = widget.locator(".dd-thread-option.dd-current")  # the thread shown
        expect(ours).to_have_attribute("title", shown)
        expect(ours).to_contain_text(f"{short_name(THREAD)} · {checkpoints} checkpoints")

        # New run: a typed field per key of the input, none of them null.
        widget.locator('[data-action="new-run"]').click()
        fields = widget.locator(".dd-run-form .dd-run-field")
        expect(fields).to_have_count(4, timeout=WAIT_MS)
        keys = fields.evaluate_all("fs => fs.map(f => f.dataset.key)")
        assert keys == ["topic", "limit", "messages", "notes"], keys
        expect(fields.nth(0).locator(".dd-run-type")).to_have_text("str")
        expect(fields.nth(1).locator(".dd-run-type")).to_have_text("int")
        values = widget.locator(".dd-run-form .dd-run-value").evaluate_all(
            "cs => cs.map(c => c.value)"
        )
        assert "null" not in values, values
        page.screenshot(path=str(artifacts / f"{shot}-2-run-form.png"))
        widget.locator('.dd-run-field[data-key="topic"] .dd-run-value').fill("tides")
        widget.locator(".dd-run-form .dd-primary").click()

        # While the long node runs (it waits for the gate file), it is highlighted live.
        expect(page.locator(long_node)).to_have_class(
            re.compile(r"\bdd-running\b"), timeout=WAIT_MS
        )
        hint = widget.locator(".dd-topology-hint")
        expect(hint).to_have_text(f"running: {short_name(LONG)}")
        page.screenshot(path=str(artifacts / f"{shot}-3-running.png"))
        gate.write_text("go", encoding="utf-8")
        expect(widget.locator("span.dd-running")).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator(long_node)).not_to_have_class(re.compile(r"\bdd-running\b"))
        after_run = 2 * checkpoints  # a new run writes as many checkpoints as the first
        page.wait_for_function(count_marks(after_run), timeout=WAIT_MS)
        expect(widget.locator(".dd-state")).to_contain_text("summed up tides", timeout=WAIT_MS)
        # The open thread list was asked again when the run ended.
        expect(ours).to_contain_text(f"{after_run} checkpoints", timeout=WAIT_MS)

        # A breakpoint before the long node: the next run pauses there, its checkpoint marked.
        widget.locator(".dd-breakpoints summary").click()
        widget.locator(f'.dd-breakpoints input[data-node="{LONG}"][data-when="before"]').check()
        widget.locator('[data-action="new-run"]').click()
        expect(fields).to_have_count(4, timeout=WAIT_MS)
        widget.locator('.dd-run-field[data-key="topic"] .dd-run-value').fill("again")
        widget.locator(".dd-run-form .dd-primary").click()
        page.wait_for_function(
            count_marks(after_run + checkpoints - 1), timeout=WAIT_MS
        )  # all but one
        marker = widget.locator(".dd-paused-marker")
        expect(marker).to_have_attribute("visibility", "visible", timeout=WAIT_MS)
        expect(marker).to_have_text(f"paused before {short_name(LONG)}")
        expect(hint).to_have_text(f"paused before {short_name(LONG)}")
        page.wait_for_function(INSIDE, arg=[".dd-dag-scroll", ".dd-paused-marker"], timeout=WAIT_MS)
        expect(page.locator(long_node)).to_have_class(re.compile(r"\bdd-paused\b"))
        # The status line names the node it waits for as the other labels do: cut, escaped.
        expect(widget.locator(".dd-status")).to_have_text(
            f"wrote {checkpoints - 1} checkpoints from step {after_run - 2}; "
            f"next: {short_name(LONG)}"
        )
        page.screenshot(path=str(artifacts / f"{shot}-4-paused.png"))

        # Arrow keys in the thread list move the highlight only; Enter switches.
        expect(options.first).to_be_visible()  # the list stayed open through both runs
        search.click()
        page.keyboard.type("user-0")
        expect(options).to_have_count(3)
        expect(options.first).to_have_attribute("aria-selected", "true")
        page.keyboard.press("ArrowDown")
        expect(options.nth(1)).to_have_attribute("aria-selected", "true")
        expect(options.first).to_have_attribute("aria-selected", "false")
        expect(header).to_contain_text(short_name(THREAD))
        chosen = options.nth(1).get_attribute("data-thread")
        page.keyboard.press("Enter")
        expect(header).to_contain_text(f"thread {chosen} ·", timeout=WAIT_MS)
        page.screenshot(path=str(artifacts / f"{shot}-5-switched.png"))
    finally:
        page.screenshot(path=str(artifacts / f"{shot}-last.png"))
        page.close()
    assert labserver.widget_errors(errors) == []
