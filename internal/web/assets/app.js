// gwdev web view: reads /ui/state (the Session's State), /ui/events (a
// notice per reload) and the admin API's /traces/stream. No framework, no
// build: plain DOM, every text set with textContent.
"use strict";

const maxTraces = 500; // rows kept on the page; older ones go
let state = null;
let selectedNode = null;
let traces = [];
let dropped = 0;

const $ = (sel) => document.querySelector(sel);
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
  }
  for (const c of children) if (c != null) e.append(c instanceof Node ? c : String(c));
  return e;
}

// Tabs.
for (const b of document.querySelectorAll("#tabs button")) {
  b.addEventListener("click", () => showView(b.dataset.view));
}
function showView(name) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.view === name);
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + name;
  document.body.dataset.view = name;
}
if (location.hash.length > 1) showView(location.hash.slice(1));

// State.
async function loadState() {
  try {
    const r = await fetch("/ui/state", { cache: "no-store" });
    if (!r.ok) { setStatus((await r.text()).trim(), true); return; }
    state = await r.json();
    render();
  } catch (e) {
    setStatus("cannot reach gwdev: " + e.message, true);
  }
}

function setStatus(text, bad) {
  const s = $("#status");
  s.textContent = text;
  s.className = bad ? "bad" : "muted";
}

function objectKey(o) { return o.kind + "/" + (o.namespace ? o.namespace + "/" : "") + o.name; }

function items() { return (state && state.objects && state.objects.items) || []; }
function findObject(key) {
  return items().find((it) => it.kind === key.kind && it.metadata.name === key.name &&
    (it.metadata.namespace || "") === (key.namespace || ""));
}

function render() {
  document.body.dataset.reload = state.reload;
  $("#dir").textContent = state.dir;
  setStatus("reload " + state.reload + " at " + new Date(state.time).toLocaleTimeString(), false);
  renderBanner();
  renderGraph();
  renderObjects();
  renderFindings();
  renderMigration();
}

function renderBanner() {
  const lines = [];
  if (state.root) lines.push(state.root);
  if (state.empty) lines.push(state.empty);
  if (state.loadProblems > 0) {
    let l = "The folder does not load cleanly: " + state.loadProblems + (state.loadProblems === 1 ? " load problem" : " load problems") + " (see Findings).";
    if (state.stale && state.stale.length) l += " Still serving the last good version of " + state.stale.join(", ") + ".";
    const bound = (state.ports || []).filter((p) => p.bound).map((p) => p.bound);
    l += bound.length ? " Serving on " + bound.join(", ") + "." : " Nothing is served.";
    lines.push(l);
  }
  const b = $("#banner");
  b.hidden = lines.length === 0;
  b.textContent = lines.join("\n");
}

// Topology: the graph's DOT (as `gwdev graph --format dot` prints it) laid
// out by Graphviz compiled to WebAssembly (viz-global.js, @viz-js/viz);
// each node's <title> is its graph ID. One Graphviz instance for the page;
// a drawing finished after a newer State came is thrown away.
let viz = null;
let drawn = 0;
async function renderGraph() {
  const g = $("#graph");
  const mine = ++drawn;
  let svg;
  try {
    if (!viz) viz = await Viz.instance();
    svg = viz.renderSVGElement(state.dot);
  } catch (e) {
    if (mine !== drawn) return;
    g.replaceChildren(el("p", { class: "bad" }, "no drawing: Graphviz (in the page): " + (e && e.message || e)));
    return;
  }
  if (mine !== drawn) return;
  g.replaceChildren();
  const nodes = new Map(state.graph.nodes.map((n) => [n.id, n]));
  for (const ge of svg.querySelectorAll("g.node")) {
    const id = ge.querySelector("title").textContent;
    const n = nodes.get(id);
    if (!n) continue;
    ge.setAttribute("data-id", id);
    ge.setAttribute("data-kind", n.kind);
    if (n.problem) ge.setAttribute("data-problem", n.problem);
    if (n.policy) ge.setAttribute("data-policy", "true"); // a policy: its dashed edges lead to what it targets
    ge.addEventListener("click", () => selectNode(id));
  }
  g.append(svg);
  if (selectedNode && nodes.has(selectedNode)) selectNode(selectedNode); else { selectedNode = null; $("#detail").hidden = true; }
}

function conditionLines(conds) {
  return (conds || []).map((c) => el("div", { class: "cond " + (isProblem(c) ? "bad" : "") },
    c.type + "=" + c.status + " (" + c.reason + ")" + (c.message ? ": " + c.message : "")));
}
// A condition is a problem when the engine marked its object or parent red;
// the page does not keep its own list of condition polarities, it only
// colours a condition named in the node's problem.
let problemText = "";
function isProblem(c) { return problemText.includes(c.type + "=" + c.status + " (" + c.reason + ")"); }

function selectNode(id) {
  selectedNode = id;
  for (const ge of document.querySelectorAll("#graph g.node")) ge.classList.toggle("selected", ge.dataset.id === id);
  const n = state.graph.nodes.find((x) => x.id === id);
  const d = $("#detail");
  d.replaceChildren();
  d.hidden = false;
  problemText = (n.problem || "") + " " + state.graph.edges.filter((e) => e.to === id && e.problem).map((e) => e.problem).join(" ");
  d.append(el("h3", null, n.label));
  if (n.detail) d.append(el("div", { class: "muted" }, n.detail));
  if (n.problem) d.append(el("div", { class: "bad", "data-role": "problem" }, "✗ " + n.problem));
  const src = state.sources[objectKey(n.object)];
  d.append(el("div", { "data-role": "source" }, "from " + objectKey(n.object) + (src ? " at " + src : "")));
  const obj = findObject(n.object);
  const st = obj && obj.status;
  const box = el("div", { "data-role": "conditions" });
  if (st) {
    if (n.kind === "Listener") {
      const name = id.slice(id.lastIndexOf("/listener/") + "/listener/".length);
      const ls = (st.listeners || []).find((l) => l.name === name);
      if (ls) {
        box.append(el("h4", null, "listener " + name + ": " + ls.attachedRoutes + " attached routes"), ...conditionLines(ls.conditions));
      }
    } else {
      if (st.conditions) box.append(el("h4", null, "conditions"), ...conditionLines(st.conditions));
      for (const p of st.parents || []) {
        const ref = p.parentRef;
        box.append(el("h4", null, "parent " + (ref.namespace ? ref.namespace + "/" : "") + ref.name + (ref.sectionName ? " section " + ref.sectionName : "")),
          ...conditionLines(p.conditions));
      }
      for (const a of st.ancestors || []) {
        box.append(el("h4", null, "ancestor " + a.ancestorRef.name), ...conditionLines(a.conditions));
      }
    }
  }
  d.append(box);
  // What the engine recorded (state.policies, check --policies): on a
  // policy, what it does on each target; on anything else, what each
  // policy that targets it does there.
  const mine = objectKey(n.object);
  const pol = (state.policies || []).filter((p) => objectKey(n.policy ? p.policy : p.target) === mine);
  if (pol.length) {
    d.append(el("h4", null, n.policy ? "targets" : "policies"));
    for (const p of pol) {
      d.append(el("div", { class: "cond " + (p.applied ? "ok" : "bad"), "data-role": "effect" },
        objectKey(n.policy ? p.target : p.policy) + (p.section ? " (" + p.section + ")" : "") + ": " + p.reason + ": " + p.message));
    }
  }
}

// Objects and findings: what check says.
function renderObjects() {
  const tb = $("#objects tbody");
  tb.replaceChildren();
  for (const it of items()) {
    const key = { kind: it.kind, namespace: it.metadata.namespace, name: it.metadata.name };
    const conds = ((it.status && it.status.conditions) || []).map((c) => c.type + "=" + c.status).join(" ");
    tb.append(el("tr", null, el("td", null, it.kind), el("td", null, (key.namespace ? key.namespace + "/" : "") + key.name),
      el("td", null, conds), el("td", null, state.sources[objectKey(key)] || "")));
  }
}

function renderFindings() {
  const fs = (state.objects && state.objects.findings) || [];
  $("#findings-count").textContent = fs.length ? "(" + fs.length + ")" : "";
  const tb = $("#findings tbody");
  tb.replaceChildren();
  for (const f of fs) {
    const cls = f.severity === "error" ? "bad" : f.severity === "warning" ? "warn" : "muted";
    const msg = el("td", null, f.message);
    if (f.hint) msg.append(el("div", { class: "muted" }, f.hint));
    tb.append(el("tr", null, el("td", { class: cls }, f.severity), el("td", null, f.code),
      el("td", null, f.object ? objectKey(f.object) + (f.scope ? " " + f.scope : "") : ""), msg,
      el("td", null, f.file ? f.file + (f.line ? ":" + f.line : "") : "")));
  }
}

function renderMigration() {
  const m = state.migration;
  const box = $("#migration");
  box.replaceChildren();
  if (!m) { box.append(el("p", { class: "muted" }, "No Ingress in the folder: nothing to compare (gwdev migrate --compare).")); return; }
  if (m.error) { box.append(el("p", { class: "bad" }, "The comparison could not run: " + m.error)); return; }
  box.append(el("p", null, (m.running ? "Comparing (showing the last comparison)… " : "") + "Sent " + m.requests +
    " requests generated from the Ingress rules to ingress-nginx (emulated) and to the converted Gateway API routes: " +
    (m.differences || []).length + " differ." + (m.leftOut ? " " + m.leftOut + " more were not sent." : "")));
  if ((m.differences || []).length) {
    const t = el("table", { "data-role": "differences" }, el("thead", null, el("tr", null,
      el("th", null, "request (from)"), el("th", null, "differs"), el("th", null, "ingress-nginx"), el("th", null, "Gateway API"))));
    const tb = el("tbody");
    for (const d of m.differences) {
      const fields = d.fields || [];
      tb.append(el("tr", null, el("td", null, d.request, el("div", { class: "muted" }, d.from)),
        el("td", null, fields.map((f) => f.name).join(", ")),
        el("td", null, fields.map((f) => f.name + ": " + JSON.stringify(f.ingress)).join("\n"), el("div", { class: "muted" }, (d.ingressRule || "-") + " " + (d.ingressSource || ""))),
        el("td", null, fields.map((f) => f.name + ": " + JSON.stringify(f.gateway)).join("\n"), el("div", { class: "muted" }, (d.gatewayRule || "-") + " " + (d.gatewaySource || "")))));
    }
    t.append(tb);
    box.append(t);
  }
  if ((m.dropped || []).length) {
    box.append(el("h2", null, "Not carried over"));
    // migrate --compare -o json's dropped features and problems (Go field names).
    const seen = new Set();
    for (const d of m.dropped) {
      const line = objectKey(d.Ingress) + ": " + d.What + ": " + d.Why + (d.Source && d.Source.file ? " (" + d.Source.file + ":" + d.Source.line + ")" : "");
      if (!seen.has(line)) { seen.add(line); box.append(el("div", { class: "cond" + (d.Security ? " bad" : "") }, line)); }
    }
  }
  for (const p of m.convertedProblems || []) box.append(el("div", { class: "cond bad" }, "the converted manifests: " + p.File + ":" + p.Line + ": " + p.Message));
}

// Traces: the admin API's stream, newest first, filtered on the page.
function traceText(t) {
  return [t.method, t.host, t.path, t.status, t.route, t.rule, t.backend, t.gateway, t.listener, t.reason, t.sni, t.proto].filter(Boolean).join(" ");
}
function traceRow(t) {
  const tr = el("tr", { class: "clickable", "data-role": "trace" },
    el("td", null, new Date(t.time).toLocaleTimeString()),
    el("td", null, ((t.method || t.proto || "") + " " + (t.host || t.sni || "") + (t.path || "")).trim()),
    el("td", { class: t.status >= 500 ? "bad" : t.status >= 400 ? "warn" : "ok" }, t.status || ""),
    el("td", null, t.route || t.reason || ""),
    el("td", null, t.backend || ""),
    el("td", null, t.duration || ""));
  tr.addEventListener("click", () => openTrace(t, tr));
  return tr;
}
function renderTraces() {
  const f = $("#trace-filter").value.trim().toLowerCase();
  const tb = $("#traces tbody");
  tb.replaceChildren();
  let shown = 0;
  for (let i = traces.length - 1; i >= 0; i--) {
    if (f && !traceText(traces[i]).toLowerCase().includes(f)) continue;
    tb.append(traceRow(traces[i]));
    shown++;
  }
  $("#trace-count").textContent = shown + " of " + traces.length + " traces (the last " + maxTraces + " are kept)";
}
$("#trace-filter").addEventListener("input", renderTraces);

async function openTrace(t, row) {
  for (const r of document.querySelectorAll("#traces tr.selected")) r.classList.remove("selected");
  row.classList.add("selected");
  const d = $("#trace-detail");
  d.hidden = false;
  d.replaceChildren(el("p", { class: "muted" }, "…"));
  const r = await fetch("/ui/trace", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(t) });
  if (!r.ok) { d.replaceChildren(el("p", { class: "bad" }, await r.text())); return; }
  const a = await r.json();
  const dec = el("pre", { class: "decision", "data-role": "decision" });
  dec.textContent = a.decision;
  d.replaceChildren(el("h3", null, "Decision (as gwdev explain shows it)"), dec);
  if (a.command) {
    const cmd = el("pre", { class: "decision", "data-role": "command" });
    cmd.textContent = a.command;
    const btn = el("button", { class: "copy" }, "Copy as curl");
    btn.addEventListener("click", async () => {
      try { await navigator.clipboard.writeText(a.command); btn.textContent = "Copied"; } catch (e) { btn.textContent = "Copy failed: " + e.message; }
    });
    d.append(el("h3", null, "Repeat it"), cmd, btn);
    for (const n of a.notes || []) d.append(el("div", { class: "muted" }, n));
  } else if (a.noCopy) {
    d.append(el("p", { class: "muted" }, "No command: " + a.noCopy));
  }
}

// traceKey tells a trace read from /traces from the same one streamed.
function traceKey(t) { return t.time + " " + t.client + " " + t.address + " " + t.method + " " + t.path + " " + t.status; }

function connectTraces() {
  const es = new EventSource("/traces/stream");
  let pending = false;
  const redraw = () => {
    if (traces.length > maxTraces) traces.splice(0, traces.length - maxTraces);
    if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; renderTraces(); }); }
  };
  es.addEventListener("trace", (ev) => { traces.push(JSON.parse(ev.data)); redraw(); });
  // Once streaming, the history before it: the recent traces /traces keeps.
  es.addEventListener("open", async () => {
    try {
      const r = await fetch("/traces?limit=" + maxTraces, { cache: "no-store" });
      if (!r.ok) return;
      const seen = new Set(traces.map(traceKey));
      const old = (await r.json()).filter((t) => !seen.has(traceKey(t)));
      traces = old.concat(traces);
      redraw();
    } catch (e) { /* the stream still works */ }
  });
  es.addEventListener("dropped", (ev) => {
    dropped += Number(ev.data);
    const s = $("#trace-dropped");
    s.hidden = false;
    s.textContent = dropped + " traces dropped: this page fell behind the stream";
  });
}

function connectEvents() {
  const es = new EventSource("/ui/events");
  es.addEventListener("update", () => loadState());
  es.addEventListener("open", () => loadState());
  es.addEventListener("error", () => setStatus("disconnected from gwdev: reconnecting…", true));
}

connectEvents();
connectTraces();
renderTraces();
