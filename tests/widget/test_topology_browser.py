"""The topology panel and a chat channel in headless Chromium, against a live model.

The page renders the built widget (``widget.js`` and ``widget.css``, as the export inlines
them) against a small in-page model that answers like a kernel (select, breakpoints) and that
the test drives as Python would: ``_running`` on and off with a new checkpoint, breakpoints
set. The topology is the real one of a graph of a dozen nodes (tool node, conditional edge,
END), drawn by graphviz and by the Python layout.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from playwright.sync_api import expect

from durable_debug.graph import END, START, StateGraph, add_messages
from durable_debug.inspect.detail import reducer_name
from durable_debug.inspect.html import widget_assets
from durable_debug.inspect.topology import Renderer, dot_available, topology_data

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
STEPS = ["plan", "search", "read", "draft", "check", "revise", "format", "publish"]


class ChatState(TypedDict):
    messages: Annotated[list[Any], add_messages]
    notes: Annotated[list[str], operator.add]


def tall_graph() -> Any:
    """agent ⇄ tools, then a chain of eight steps to END: taller than the panel."""
    graph: Any = StateGraph(ChatState)
    for name in ["agent", "tools", *STEPS]:
        graph.add_node(name, lambda state: {})
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", lambda state: "tools", {"tools": "tools", "plan": "plan"})
    graph.add_edge("tools", "agent")
    for a, b in itertools.pairwise(STEPS):
        graph.add_edge(a, b)
    graph.add_edge(STEPS[-1], END)
    return graph.compile()


def node(cid: str, parent: str | None, step: int, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": cid,
        "parent": parent,
        "step": step,
        "source": "loop" if parent else "input",
        "next": [],
        "writers": [],
        "interrupts": 0,
        "errors": 0,
        "is_head": False,
        "is_latest": False,
        "depth": step + 1,
        "lane": 0,
    }
    return {**base, **extra}


CONVERSATION = [
    {"type": "human", "content": "What is the capital of France?", "id": "m1"},
    {
        "type": "ai",
        "content": "",
        "id": "m2",
        "tool_calls": [{"name": "search", "args": {"q": "capital of France"}, "id": "call-1"}],
    },
    {"type": "tool", "content": "Paris", "tool_call_id": "call-1", "id": "m3"},
    {"type": "ai", "content": "The capital of France is Paris.", "id": "m4"},
]

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>__CSS__</style></head>
<body><div id="root"></div>
<script type="application/json" id="source">__JS__</script>
<script type="application/json" id="data">__DATA__</script>
<script type="module">
const read = (id) => JSON.parse(document.getElementById(id).textContent);
const data = read("data");
const url = URL.createObjectURL(new Blob([read("source")], { type: "text/javascript" }));
const widget = await import(url);
const state = { _thread_id: "t", _dag: data.dag, _selected: "", _detail: null,
  _topology: data.topology, _running: false, _status: "", _error: "", _code: [],
  _readonly: false, _breakpoints: { before: [], after: [] } };
const handlers = new Map();
const emit = (name, ...args) => { for (const fn of [...(handlers.get(name) || [])]) fn(...args); };
const answer = (message) => {
  if (message.kind === "select") {
    model.set("_selected", message.checkpoint_id);
    model.set("_detail", data.details[message.checkpoint_id]);
    return { result: { checkpoint_id: message.checkpoint_id } };
  }
  if (message.kind === "breakpoints") {
    model.set("_breakpoints", { before: message.before, after: message.after });
    return { result: model.get("_breakpoints") };
  }
  if (message.kind === "subgraphs") return { result: { namespaces: [] } };
  return { error: `not in this test: ${message.kind}` };
};
const model = {
  get: (name) => state[name],
  set(name, value) { state[name] = value; emit(`change:${name}`, model, value); },
  on(name, fn) {
    if (!handlers.has(name)) handlers.set(name, new Set());
    handlers.get(name).add(fn);
  },
  off(name, fn) { if (fn) handlers.get(name)?.delete(fn); else if (name) handlers.delete(name); },
  send(message) {
    const reply = () => emit("msg:custom", { uuid: message.uuid, ...answer(message) }, []);
    setTimeout(reply, 0);
  },
  save_changes() {},
};
window.ddModel = model;
widget.default.render({ model, el: document.getElementById("root") });
document.documentElement.dataset.ddRendered = "1";
</script></body></html>
"""


def page_data(renderer: Renderer) -> dict[str, Any]:
    """Three checkpoints: input, agent (written by it, next tools), and its answer."""
    topology = topology_data(tall_graph(), {"agent": 2, "tools": 1}, renderer=renderer)
    nodes = [
        node("c0", None, -1, next=["__start__"]),
        node("c1", "c0", 0, writers=["__start__"], next=["agent"]),
        node("c2", "c1", 1, writers=["agent"], next=["tools"], is_head=True, is_latest=True),
    ]
    reducers = {
        "messages": reducer_name(add_messages),
        "notes": reducer_name(operator.add),
    }
    details = {
        n["id"]: {
            "id": n["id"],
            "parent": n["parent"],
            "step": n["step"],
            "source": n["source"],
            "next": n["next"],
            "values": {"messages": CONVERSATION, "notes": ["looked it up"]},
            "reducers": reducers,
            "editable": ["messages", "notes"],
            "nodes": ["agent", "tools", *STEPS],
            "tasks": [],
            "writes": [],
            "blobs": [],
            "interrupts": [],
            "metadata": {},
            "config": {"configurable": {"thread_id": "t", "checkpoint_id": n["id"]}},
        }
        for n in nodes
    }
    return {
        "dag": {"thread_id": "t", "checkpoint_ns": "", "nodes": nodes, "depth": 3, "lanes": 1},
        "topology": topology,
        "details": details,
    }


def script_json(value: Any) -> str:
    return json.dumps(value).replace("</", "<\\/")


@pytest.fixture(params=["graphviz", "python"])
def page(request: Any, browser: Any, tmp_path: Path) -> Any:
    if request.param == "graphviz" and not dot_available():
        pytest.skip("graphviz's dot is not installed")
    js, css = widget_assets()
    html = (
        PAGE.replace("__CSS__", css)
        .replace("__JS__", script_json(js))
        .replace("__DATA__", script_json(page_data(request.param)))
    )
    path = tmp_path / "topology.html"
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-dd-rendered]", timeout=WAIT_MS)
    yield page
    page.close()
    assert errors == [], errors


INSIDE = """([picture, selector]) => {
  const box = document.querySelector(picture).getBoundingClientRect();
  const el = document.querySelector(selector);
  if (!el) return false;
  const at = el.getBoundingClientRect();
  return at.width > 0 && at.left >= box.left - 1 && at.right <= box.right + 1
    && at.top >= box.top - 1 && at.bottom <= box.bottom + 1;
}"""


def test_the_topology_pans_and_zooms_instead_of_clipping(page: Any, artifacts: Path) -> None:
    picture = ".dd-topology-picture"
    # Too tall to read whole in its box: it opens readable, on its start (agent).
    page.wait_for_function(INSIDE, arg=[picture, f'{picture} [data-node="agent"]'], timeout=WAIT_MS)
    label = page.locator(f'{picture} [data-node="agent"] text').first.bounding_box()
    assert label["height"] >= 10, label
    # Dragging the drawing up brings its end into view: END and the last step.
    frame = page.locator(picture).bounding_box()
    for _ in range(10):
        if page.evaluate(INSIDE, [picture, f'{picture} [data-node="__end__"]']):
            break
        page.mouse.move(frame["x"] + frame["width"] / 2, frame["y"] + frame["height"] - 10)
        page.mouse.down()
        page.mouse.move(frame["x"] + frame["width"] / 2, frame["y"] + 10, steps=5)
        page.mouse.up()
    for name in ["__end__", "publish"]:
        assert page.evaluate(INSIDE, [picture, f'{picture} [data-node="{name}"]']), name
    # Fit: every node, END and the tool node too, inside the box at once.
    page.click('[data-topo-zoom="fit"]')
    for name in ["__end__", "tools", "publish", "agent"]:
        page.wait_for_function(
            INSIDE, arg=[picture, f'{picture} [data-node="{name}"]'], timeout=WAIT_MS
        )
    # The breakpoints below the drawing are reachable: the last step's checkbox can be ticked.
    page.click(".dd-breakpoints summary")
    box = page.locator('.dd-breakpoints input[data-node="publish"][data-when="before"]')
    box.check()
    expect(box).to_be_checked()
    # Zoomed in, the drawing is larger than its box: it scrolls, and dragging pans it.
    before = page.locator(f'{picture} [data-node="agent"]').bounding_box()
    for _ in range(4):
        page.click('[data-topo-zoom="in"]')
    after = page.locator(f'{picture} [data-node="agent"]').bounding_box()
    assert after["width"] > before["width"] * 1.5, (before, after)
    scroll = page.eval_on_selector(
        picture, "el => [el.scrollTop, el.scrollHeight, el.clientHeight]"
    )
    assert scroll[1] > scroll[2]
    page.mouse.move(frame["x"] + frame["width"] / 2, frame["y"] + frame["height"] - 10)
    page.mouse.down()
    page.mouse.move(frame["x"] + frame["width"] / 2, frame["y"] + 10, steps=5)
    page.mouse.up()
    moved = page.eval_on_selector(picture, "el => el.scrollTop")
    assert moved > scroll[0]
    # A step later the counts change and the topology is drawn again: the view stays put.
    page.evaluate(
        """() => {
             const topology = structuredClone(window.ddModel.get('_topology'));
             topology.nodes.find((n) => n.id === 'tools').count = 2;
             window.ddModel.set('_topology', topology);
           }"""
    )
    expect(page.locator('.dd-count-table tr[data-node="tools"]')).to_contain_text("×2")
    page.wait_for_function(
        "(top) => document.querySelector('.dd-topology-picture').scrollTop === top", arg=moved
    )
    page.click('[data-topo-zoom="fit"]')
    page.wait_for_function(INSIDE, arg=[picture, f'{picture} [data-node="__end__"]'])
    page.screenshot(path=str(artifacts / "topology-fitted.png"))


def test_the_running_node_and_a_breakpoint_pause_are_shown(page: Any, artifacts: Path) -> None:
    picture = ".dd-topology-picture"
    tools = f'{picture} [data-node="tools"]'
    expect(page.locator(tools)).not_to_have_class("dd-running")
    # Zoomed in and looking at the end of the graph, tools is out of view.
    for _ in range(3):
        page.click('[data-topo-zoom="in"]')
    page.eval_on_selector(picture, "el => { el.scrollTop = el.scrollHeight; }")
    assert not page.evaluate(INSIDE, [picture, tools])
    # A run starts: the newest checkpoint's next node (tools) is running, live, and in view.
    page.evaluate("() => window.ddModel.set('_running', true)")
    expect(page.locator(tools)).to_have_class(re.compile(r"\bdd-running\b"))
    page.wait_for_function(INSIDE, arg=[picture, tools], timeout=WAIT_MS)
    expect(page.locator(".dd-topology-hint")).to_have_text("running: tools")
    page.evaluate("() => window.ddModel.set('_running', false)")
    expect(page.locator(tools)).not_to_have_class(re.compile(r"\bdd-running\b"))
    # A breakpoint before tools: the newest checkpoint waits there, its mark says so.
    page.click(".dd-breakpoints summary")
    page.locator('.dd-breakpoints input[data-node="tools"][data-when="before"]').check()
    marker = page.locator(".dd-paused-marker")
    expect(marker).to_have_attribute("visibility", "visible", timeout=WAIT_MS)
    expect(marker).to_have_text("paused before tools")
    mark = page.locator('.dd-mark[data-id="c2"]').bounding_box()
    tag = marker.bounding_box()
    assert abs(tag["y"] + tag["height"] / 2 - (mark["y"] + mark["height"] / 2)) < 60
    expect(page.locator(tools)).to_have_class(re.compile(r"\bdd-paused\b"))
    page.screenshot(path=str(artifacts / "topology-paused.png"))


def test_a_chat_channel_reads_as_a_conversation(page: Any, artifacts: Path) -> None:
    row = page.locator('.dd-channel-row[data-channel="messages"]')
    expect(row.locator(".dd-message")).to_have_count(4, timeout=WAIT_MS)
    roles = row.locator(".dd-message-role").all_inner_texts()
    assert [r.split()[0].lower() for r in roles] == ["user", "assistant", "tool", "assistant"]
    expect(row.locator(".dd-message").nth(0)).to_contain_text("What is the capital of France?")
    expect(row.locator(".dd-tool-call")).to_contain_text('search({"q":"capital of France"})')
    expect(row.locator(".dd-message").nth(3)).to_contain_text("The capital of France is Paris.")
    # The raw value is one click away.
    raw = row.locator(".dd-raw")
    expect(raw.get_by_text("tool_call_id").first).to_be_hidden()
    raw.locator("summary").first.click()
    expect(raw.get_by_text("tool_call_id").first).to_be_visible()
    # Reducers are named as the user wrote them.
    expect(row.locator(".dd-reducer")).to_have_text("reducer: add_messages")
    notes = page.locator('.dd-channel-row[data-channel="notes"] .dd-reducer')
    expect(notes).to_have_text("reducer: operator.add")
    page.screenshot(path=str(artifacts / "conversation.png"))
