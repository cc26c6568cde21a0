// Hostile names and drawings: node names, checkpoint ids, channel names,
// values and errors are shown as text; the topology's SVG is rebuilt through an allowlist.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, test } from "node:test";

import widget, { importSvg } from "../../js/widget.js";
import { createFakeModel, detailOf, setupDom, smallDag } from "./support.mjs";

const HTML_LABEL = '<<TABLE HREF="javascript&#58;alert(1)"><TR><TD>click me</TD></TR></TABLE>>';
const SCRIPT_END = "</script><script>alert(1)</script>";
const IMG = '<img src=x onerror="window.__pwned=1">';
const SVG_NS = "http://www.w3.org/2000/svg";

/** @type {ReturnType<typeof setupDom>} */
let dom;
/** @type {() => void} */
let cleanup;

beforeEach(() => {
  dom = setupDom();
});

afterEach(async () => {
  if (cleanup) cleanup();
  cleanup = null;
  await dom.close();
});

/** Every element under `root` that could run script or navigate. */
function active(root) {
  const found = [];
  for (const el of root.querySelectorAll("*")) {
    const tag = el.localName.toLowerCase();
    if (["script", "a", "foreignobject", "iframe", "img", "image", "use", "style", "object"].includes(tag)) {
      found.push(tag);
    }
    for (const attr of el.attributes) {
      if (/^on/i.test(attr.name) || /href/i.test(attr.name)) found.push(`${tag}[${attr.name}]`);
      if (/javascript:/i.test(attr.value) && attr.name !== "data-node" && attr.name !== "data-id") {
        found.push(`${tag}[${attr.name}=${attr.value}]`);
      }
    }
  }
  return found;
}

test("widget.js never parses strings as markup", () => {
  const source = readFileSync(new URL("../../js/widget.js", import.meta.url), "utf8");
  for (const sink of [
    "innerHTML",
    "outerHTML",
    "insertAdjacentHTML",
    "document.write",
    "createContextualFragment",
  ]) {
    assert.ok(!source.includes(sink), `widget.js uses ${sink}`);
  }
});

test("hostile node names, ids, channels, values and errors show as text", () => {
  const dag = smallDag();
  dag.thread_id = IMG;
  dag.nodes[2].writers = [HTML_LABEL];
  dag.nodes[4].writers = [SCRIPT_END];
  const detail = detailOf("f1");
  detail.values = { [IMG]: [SCRIPT_END], count: HTML_LABEL };
  detail.editable = [IMG, "count"];
  detail.tasks[0].name = HTML_LABEL;
  detail.tasks[0].error = `ValueError: ${SCRIPT_END}`;
  detail.next = [SCRIPT_END];
  const model = createFakeModel({
    _thread_id: IMG,
    _dag: dag,
    _selected: "f1",
    _detail: detail,
    _status: IMG,
    _error: SCRIPT_END,
    _code: [{ action: "fork", code: `await graph.aupdate_state({}, {${JSON.stringify(IMG)}: 1})` }],
    _topology: {
      nodes: [
        { id: HTML_LABEL, x: 100, y: 20, count: 2, reruns: 1 },
        { id: SCRIPT_END, x: 100, y: 80, count: 1, reruns: 0 },
      ],
      edges: [{ source: HTML_LABEL, target: SCRIPT_END, conditional: false }],
      width: 200,
      height: 100,
      svg: null,
    },
  });
  cleanup = widget.render({ model, el: dom.el });
  const el = dom.el;
  assert.deepEqual(active(el), []);
  const page = el.textContent;
  for (const hostile of [IMG, SCRIPT_END, HTML_LABEL]) assert.ok(page.includes(hostile), hostile);
  const topo = [...el.querySelectorAll(".dd-topo-node")].map((n) => n.getAttribute("data-node"));
  assert.deepEqual(topo, [HTML_LABEL, SCRIPT_END]);
  assert.ok(el.querySelector(".dd-topo-node").textContent.startsWith(HTML_LABEL));
  assert.equal(el.querySelector('.dd-mark[data-id="c2"] .dd-writers').textContent, "<<TABLE H…");
});

test("the graphviz drawing is rebuilt from an allowlist: text stays, anything active goes", () => {
  const hostile = `<svg xmlns="${SVG_NS}" xmlns:xlink="http://www.w3.org/1999/xlink" width="10pt" onload="alert(1)">
<script>window.__pwned = 1</script><style>* { background: url(http://evil/) }</style>
<g class="node" data-node="${HTML_LABEL.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;")}" onclick="alert(3)" style="x">
<a xlink:href="javascript:alert(4)" href="javascript:alert(5)"><text>click me</text></a>
<text x="1" fill="url(http://evil/x)" font-family="java&#10;script:x">&lt;b&gt;kept&lt;/b&gt;</text>
<foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onclick="alert(6)">x</div></foreignObject>
<set attributeName="href" to="javascript:alert(7)"/><image href="http://evil/pixel.png"/><use href="#n"/>
</g></svg>`;
  const svg = importSvg(dom.document, hostile);
  assert.ok(svg);
  assert.equal(svg.namespaceURI, SVG_NS);
  assert.deepEqual(active(svg), []);
  assert.equal(svg.getAttribute("width"), "10pt");
  const group = svg.querySelector("g");
  assert.equal(group.getAttribute("data-node"), HTML_LABEL);
  assert.equal(group.getAttribute("class"), "node");
  const texts = [...svg.querySelectorAll("text")];
  assert.equal(texts.length, 1);
  assert.equal(texts[0].textContent, "<b>kept</b>");
  assert.equal(texts[0].getAttribute("fill"), null);
  assert.equal(texts[0].getAttribute("font-family"), null);
  assert.ok(!svg.textContent.includes("click me") && !svg.textContent.includes("__pwned"));
});

test("a drawing that is not SVG is not used: the topology is drawn from its positions", () => {
  assert.equal(importSvg(dom.document, "<html><body>hi</body></html>"), null);
  assert.equal(importSvg(dom.document, "<svg><g></svg>"), null);
  const model = createFakeModel({
    _topology: {
      nodes: [{ id: "a", x: 20, y: 20, count: 1, reruns: 0 }],
      edges: [],
      width: 40,
      height: 40,
      svg: `<div xmlns="http://www.w3.org/1999/xhtml"><script>window.__pwned=1</script></div>`,
    },
  });
  cleanup = widget.render({ model, el: dom.el });
  assert.ok(dom.el.querySelector(".dd-topology svg.dd-topology-svg .dd-topo-node"));
  assert.deepEqual(active(dom.el), []);
});
