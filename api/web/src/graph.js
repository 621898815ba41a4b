// The argweb explorer: every map of every corpus, drawn as its kind of discourse is read.
//
// * argument maps (QT30/AIF, M-Arg): the proposition layer as an argument diagram beside the
//   dialogue lane (views/argument.js);
// * dialogues (Molweni, STAC): the thread with its discourse arcs (views/thread.js);
// * Sci-Arg papers: the text with highlighted components and relation arcs (views/paper.js);
// * ContextDeP: the guest and host turns with gold and predicted highlights (views/interview.js).
//
// Filters (relation types, gold/predicted, minimum score, speaker), a full-text or semantic search
// that opens the hit in its map, downloads (AIF, xAIF, PNG, SVG), and an address that carries the
// whole view so that it can be shared and reloaded.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";
import { $, api, ApiProblem, color, esc, relationLabel, save, short, speakerColors, UNIT_KINDS } from "./common.js";
import { comparable, viewFor } from "./model.js";
import * as compare from "./compare.js";
import * as argument from "./views/argument.js";
import * as thread from "./views/thread.js";
import * as paper from "./views/paper.js";
import * as interview from "./views/interview.js";
import { graphSvg, svgToPng } from "./svg.js";

cytoscape.use(dagre);

const VIEWS = ["argument", "thread", "paper", "interview"];
const READABLE = 0.92; // the least zoom a map opens at: 12 px labels stay at 11 px
const filters = { origin: "all", hidden: new Set(), minScore: 0, speaker: "", compare: false, run: null };
let compareRun = null; // the run asked for in the compare view (null: the newest on the map)
let current = null; // the discourse drawn
let view = null; // the drawn view: { counts, focus, selected, fade, destroy, svgText?, cy? }
let palette = new Map();
let timings = {};

function status(text) { $("status").textContent = text || ""; }
const speakerColor = (name) => palette.get(name) || "#6b7280";

// -- details ----------------------------------------------------------------------------------

function endText(id) {
  const unit = current && current.units.find((u) => u.id === id);
  if (unit) return `“${short(unit.text, 160)}” (${id})`;
  const rel = current && current.relations.find((r) => r.id === id);
  return rel ? `${relationLabel(rel)} (${id})` : id;
}

function showDetails(data) {
  const u = data.unit; const r = data.relation;
  const rows = [];
  const add = (k, v) => { if (v !== null && v !== undefined && v !== "") rows.push(`<dt>${k}</dt><dd>${esc(v)}</dd>`); };
  add("kind", data.kind); add("id", data.id);
  let text = "";
  if (u) {
    text = u.text; add("speaker", u.speaker); add("position", u.position);
    add("time", u.timestamp || (u.start_time != null ? `${u.start_time.toFixed(1)}–${(u.end_time || 0).toFixed(1)} s` : ""));
    if (u.properties && u.properties.scheme_label) add("label", u.properties.scheme_label);
  } else if (r) {
    text = r.text || ""; add("origin", r.origin); add("label", r.scheme_label); add("sense", r.sense);
    add("score", r.score != null ? r.score.toFixed(3) : ""); add("model", r.model ? `${r.model} ${r.model_version || ""}` : "");
    add("run", r.run_id); add("from", r.sources.map(endText).join(" · ")); add("to", r.targets.map(endText).join(" · "));
  }
  $("details").innerHTML = `<h2>${esc(data.kind)}</h2>${text ? `<div class="text">${esc(text)}</div>` : ""}<dl>${rows.join("")}</dl>` +
    `<p><a href="/nodes/${encodeURIComponent(data.id)}">JSON</a> · <a href="/nodes/${encodeURIComponent(data.id)}/neighbors">neighbours</a> · ` +
    `<a href="/data/${encodeURIComponent(data.id)}">Linked Data</a></p>`;
}

const hooks = { onSelect: (data) => { showDetails(data); remember(); } };

// -- legend and filters -----------------------------------------------------------------------

function legend(discourse) {
  const kinds = new Set([...discourse.units.map((u) => u.kind), ...discourse.relations.map((r) => r.kind)]);
  const rows = [...kinds].sort().map((k) => {
    const box = UNIT_KINDS.has(k) ? "" : `<input type="checkbox" class="kind-filter" value="${esc(k)}" ${filters.hidden.has(k) ? "" : "checked"}> `;
    return `<label class="legend-row">${box}<span class="swatch ${UNIT_KINDS.has(k) ? "round" : ""}" style="background:${color(k)}"></span>${esc(k)}</label>`;
  });
  rows.push('<div class="legend-row"><span class="swatch dash"></span>predicted (score shown)</div>');
  if (palette.size) {
    rows.push('<h2>Speakers</h2>');
    for (const [name, c] of palette) rows.push(`<div class="legend-row"><span class="swatch round" style="background:${c}"></span>${esc(name)}</div>`);
  }
  $("legend-items").innerHTML = rows.join("");
  document.querySelectorAll(".kind-filter").forEach((box) => box.addEventListener("change", () => {
    if (box.checked) filters.hidden.delete(box.value); else filters.hidden.add(box.value);
    redraw();
  }));
}

function speakers(discourse) {
  const names = [...new Set(discourse.units.map((u) => u.speaker).filter(Boolean))].sort();
  $("speaker").innerHTML = '<option value="">all speakers</option>' + names.map((n) => `<option>${esc(n)}</option>`).join("");
  $("speaker").value = names.includes(filters.speaker) ? filters.speaker : "";
}

// -- drawing ----------------------------------------------------------------------------------

const COMMON_STYLE = [
  { selector: "node.predicted", style: { "border-width": 2, "border-style": "dashed", "border-color": "#333", "background-opacity": 0.75 } },
  { selector: "edge.predicted", style: { "line-style": "dashed" } },
  { selector: "node:selected", style: { "border-width": 3, "border-color": "#111", "border-style": "solid" } },
  { selector: ".faded", style: { opacity: 0.18 } },
];

function chosenView(discourse) {
  const wanted = $("view").value;
  return VIEWS.includes(wanted) ? wanted : viewFor(discourse);
}

function drawGraph(container, discourse, kind) {
  const mod = kind === "thread" ? thread : argument;
  const t0 = performance.now();
  const { nodes, edges, layout } = mod.build(discourse, filters, speakerColor);
  timings.build_ms = Math.round(performance.now() - t0);
  const big = nodes.length > 600;
  const cy = cytoscape({
    // No fit at creation: it would measure every label of the map before the layout has run.
    container, elements: [...nodes, ...edges], style: [...mod.style, ...COMMON_STYLE, ...compare.STYLE], layout: { name: "preset", fit: false },
    minZoom: 0.05, maxZoom: 3, hideEdgesOnViewport: big, textureOnViewport: big,
  });
  timings.cy_ms = Math.round(performance.now() - t0) - timings.build_ms;
  cy.startBatch();
  layout(cy, (eles) => eles.layout({ name: "dagre", rankDir: "BT", nodeSep: 22, rankSep: 34, edgeSep: 8, fit: false, animate: false }).run());
  cy.endBatch();
  timings.layout_ms = Math.round(performance.now() - t0);
  if (mod === argument) Object.assign(timings, argument.stats);
  // Readable from the start (labels at 11 px or more): the whole map when it fits so, else its
  // top left corner, where the dialogue starts; the rest is a scroll away.
  // (Without labels: the boxes hold them, and measuring every label of a large map costs seconds.)
  const bb = cy.elements().boundingBox({ includeLabels: false });
  const width = container.clientWidth; const height = container.clientHeight;
  // (Labels are measured when first drawn: leave them room beyond the bounding box.)
  const fit = Math.min(width / (bb.w + 160), height / (bb.h + 60));
  if (fit >= READABLE) {
    cy.zoom(Math.min(fit, 1.25));
    cy.center();
  } else {
    cy.zoom(READABLE);
    cy.pan({ x: 30 - bb.x1 * READABLE, y: 30 - bb.y1 * READABLE });
  }
  cy.on("tap", "node", (evt) => hooks.onSelect(evt.target.data()));
  cy.on("tap", (evt) => { if (evt.target === cy) remember(); });
  window.argwebGraph = cy;
  return {
    cy,
    counts: { nodes: cy.nodes().length, edges: cy.edges().length },
    selected: () => { const s = cy.$("node:selected"); return s.nonempty() ? s[0].id() : null; },
    focus(id) {
      const n = cy.getElementById(id);
      if (n.empty()) return false;
      cy.$(":selected").unselect();
      n.select(); hooks.onSelect(n.data());
      cy.animate({ center: { eles: n }, zoom: Math.max(cy.zoom(), 1) }, { duration: 250 });
      return true;
    },
    fade(speaker) {
      cy.elements().removeClass("faded");
      if (!speaker) return;
      // Units of other speakers (a proposition counts as its asserting locution's speaker), and
      // the relations that touch only them, fade; the counts stay the map's.
      cy.nodes().filter((n) => n.data("unit") && n.data("speaker") !== speaker).addClass("faded");
      cy.nodes(".relation").filter((r) => r.neighborhood("node").every((n) => n.hasClass("faded"))).addClass("faded");
    },
    destroy() { cy.destroy(); window.argwebGraph = null; },
    svgText: () => graphSvg(cy),
    png: () => cy.png({ full: true, scale: 1.5, bg: "#ffffff", output: "blob" }),
  };
}

async function draw(discourse, focus) {
  const started = performance.now();
  // The compare view: the comparison is read first, so that only its run's predictions are drawn.
  let comparison = null;
  const canCompare = comparable(discourse);
  $("compare-label").hidden = !canCompare;
  if (filters.compare && canCompare) {
    try { comparison = await compare.fetchComparison(discourse.id, compareRun); } catch (e) {
      // A run chosen on another map that does not cover this one: the newest run that does.
      if (compareRun && e instanceof ApiProblem && e.status === 404) {
        compareRun = null;
        comparison = await compare.fetchComparison(discourse.id, null).catch((e2) => { status(e2.message); return null; });
      } else status(e.message);
    }
    timings.compare_ms = Math.round(performance.now() - started);
  }
  filters.run = comparison ? comparison.run.run_id : null;
  current = discourse;
  const selected = focus || (view && view.selected && view.selected());
  if (view) view.destroy();
  view = null;
  palette = speakerColors(discourse.units);
  const kind = chosenView(discourse);
  const container = $("graph");
  container.className = `view-${kind}`;
  document.body.dataset.view = kind;
  if (kind === "paper") view = paper.render(container, discourse, filters, hooks);
  else if (kind === "interview") view = interview.render(container, discourse, filters, hooks, speakerColor);
  else view = drawGraph(container, discourse, kind);
  speakers(discourse);
  view.fade(filters.speaker);
  $("node-count").textContent = String(view.counts.nodes);
  $("edge-count").textContent = String(view.counts.edges);
  $("node-name").textContent = { paper: "components", interview: "turns" }[kind] || "nodes";
  $("edge-name").textContent = kind === "paper" || kind === "interview" ? "relations" : "edges";
  legend(discourse);
  downloads(discourse);
  if (comparison) {
    view.marked = view.cy ? compare.markGraph(view.cy, comparison.marks) : kind === "paper" ? compare.markArcs(container, comparison.marks) : {};
    compare.renderPanel(comparison, (run) => { compareRun = run; redraw(); });
    document.body.dataset.compared = comparison.run.run_id;
  } else {
    compare.hidePanel();
    delete document.body.dataset.compared;
  }
  if (selected) view.focus(selected);
  // Wait for two frames: the map is on screen and answers input when ``loaded`` is set.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  timings.draw_ms = Math.round(performance.now() - started);
  timings.since_navigation_ms = Math.round(performance.now());
  window.argwebTimings = { ...timings };
  // Set last: tests and scripts wait for it to know the map (and its focus) is drawn.
  document.body.dataset.loaded = discourse.id;
  status("");
}

function redraw() {
  if (!current) return;
  delete document.body.dataset.loaded;
  draw(current).then(remember).catch((e) => status(e.message));
}

// -- downloads --------------------------------------------------------------------------------

function fileStem(discourse) { return (discourse.id || "map").replace(/[^A-Za-z0-9._-]+/g, "_"); }

function downloads(discourse) {
  const withPredicted = filters.origin === "gold" ? "false" : "true";
  const base = `/aif/${encodeURIComponent(discourse.id)}?include_predicted=${withPredicted}`;
  $("dl-aif").href = base; $("dl-aif").download = `${fileStem(discourse)}.aif.json`;
  $("dl-xaif").href = `${base}&format=xaif`; $("dl-xaif").download = `${fileStem(discourse)}.xaif.json`;
}

async function downloadImage(kind) {
  if (!view || !current) return;
  try {
    if (kind === "svg") {
      save(new Blob([view.svgText()], { type: "image/svg+xml" }), `${fileStem(current)}.svg`);
    } else {
      const blob = view.png ? view.png() : await svgToPng(view.svgText());
      save(blob, `${fileStem(current)}.png`);
    }
  } catch (e) { status(`download failed: ${e.message}`); }
}

// -- address ----------------------------------------------------------------------------------

// The address tells the view: corpus, map, selected node, view kind and filters (replaceState: no
// history entry per click).
function remember() {
  const params = new URLSearchParams();
  const corpus = $("corpus").value; const map = current ? current.id : "";
  if (corpus) params.set("corpus", corpus);
  if (map) params.set("discourse", map);
  const sel = view && view.selected ? view.selected() : null;
  if (sel) params.set("node", sel);
  if ($("view").value) params.set("view", $("view").value);
  if (filters.origin !== "all") params.set("origin", filters.origin);
  if ($("map-q").value) params.set("q", $("map-q").value);
  if (filters.minScore > 0) params.set("min_score", String(filters.minScore));
  if (filters.hidden.size) params.set("hide", [...filters.hidden].sort().join(","));
  if (filters.speaker) params.set("speaker", filters.speaker);
  if (filters.compare) params.set("compare", "1");
  if (filters.compare && compareRun) params.set("run", compareRun);
  const wanted = new URLSearchParams(location.search).get("maps");
  if (wanted) params.set("maps", wanted);
  history.replaceState(null, "", `/?${params.toString()}`);
}

function unknown(id, message) {
  $("details").innerHTML = `<h2>Unknown id</h2><div class="text">${esc(id)}</div><p class="muted">${esc(message)}</p>`;
  status(`unknown id: ${id}`);
  document.body.dataset.loaded = `unknown:${id}`;
}

// -- loading maps -----------------------------------------------------------------------------

async function loadDiscourse(id, focus, pending) {
  status("loading…");
  delete document.body.dataset.loaded;
  const t0 = performance.now();
  let discourse;
  // The comparison is fetched while the map is (the map's id as the address or list gives it).
  if (filters.compare) compare.fetchComparison(id, compareRun).catch(() => {});
  try { discourse = await (pending || api(`/discourses/${encodeURIComponent(id)}`)); } catch (e) {
    if (e instanceof ApiProblem && e.status === 404) { unknown(id, e.message); return; }
    status(e.message); return;
  }
  timings = { fetch_ms: Math.round(performance.now() - t0) };
  ensureOption(discourse.id, discourse.local_id || discourse.id);
  $("discourse").value = discourse.id;
  await draw(discourse, focus);
  remember();
}

// Map list of the corpus: a page at a time from the server (by name or text with the search box),
// so that every map is reachable however many the corpus holds.
let listing = { corpus: null, q: "", cursors: {} };

function pageSize() {
  const n = parseInt(new URLSearchParams(location.search).get("maps") || "100", 10);
  return Math.min(500, Math.max(1, Number.isFinite(n) ? n : 100));
}

function ensureOption(id, label) {
  const select = $("discourse");
  if ([...select.options].some((o) => o.value === id)) return;
  const opt = document.createElement("option");
  opt.value = id; opt.textContent = label;
  select.appendChild(opt);
}

async function listMaps(more) {
  const { corpus, q } = listing;
  const base = `corpus=${encodeURIComponent(corpus)}&limit=${pageSize()}` + (q ? `&q=${encodeURIComponent(q)}` : "");
  const kinds = more ? Object.keys(listing.cursors).filter((k) => listing.cursors[k]) : ["dialogues", "documents"];
  const pages = await Promise.all(kinds.map((k) =>
    api(`/${k}?${base}` + (more ? `&cursor=${encodeURIComponent(listing.cursors[k])}` : "")).then((p) => [k, p])));
  const items = [];
  for (const [k, p] of pages) { listing.cursors[k] = p.next_cursor; items.push(...p.items); }
  items.sort((a, b) => a.id.localeCompare(b.id));
  for (const d of items) ensureOption(d.id, `${d.local_id || d.id} (${d.units} units)`);
  const left = Object.values(listing.cursors).some(Boolean);
  $("more-maps").hidden = !left;
  $("map-count").textContent = `${$("discourse").options.length}${left ? "+" : ""} maps`;
  return items;
}

async function loadCorpus(corpus, selectId, focus) {
  $("corpus").value = corpus;
  $("discourse").innerHTML = "";
  $("dashboard-link").href = `/dashboard/${encodeURIComponent(corpus)}`;
  listing = { corpus, q: $("map-q").value.trim(), cursors: {} };
  current = null;
  // A map named in the address is fetched while the list loads, and drawn even when it is not on
  // the list's first page.
  const pending = selectId ? api(`/discourses/${encodeURIComponent(selectId)}`) : null;
  if (pending) pending.catch(() => {}); // reported by loadDiscourse
  const items = await listMaps(false);
  const target = selectId || (items[0] && items[0].id);
  if (target) await loadDiscourse(target, focus, pending);
  else { status(listing.q ? `no map of ${corpus} matches “${listing.q}”` : `no maps in ${corpus}`); remember(); }
}

// Open a node in its map: focus it when its map is drawn, else load its corpus and map.
async function openNode(nodeId, discourseId, corpus) {
  if (current && current.id === discourseId) {
    if (!view.focus(nodeId)) status(`${nodeId} is not drawn with the current filters`);
    remember();
    return;
  }
  if (corpus && corpus !== $("corpus").value) await loadCorpus(corpus, discourseId, nodeId);
  else await loadDiscourse(discourseId, nodeId);
}

// -- search -----------------------------------------------------------------------------------

async function search() {
  const q = $("find").value.trim();
  if (!q) return;
  const semantic = $("semantic").checked;
  const scope = $("find-scope").value === "corpus" && $("corpus").value ? `&corpus=${encodeURIComponent($("corpus").value)}` : "";
  status("searching…");
  let hits;
  try {
    const page = await api(`/search?q=${encodeURIComponent(q)}&limit=20${scope}${semantic ? "&semantic=true" : ""}`);
    hits = page.items.map((h) => (semantic
      ? { id: h.id, kind: h.label, corpus: h.corpus, text: h.text, discourse: h.discourse, score: h.score }
      : { id: h.node.id, kind: h.node.kind, corpus: h.node.corpus, text: h.node.text, score: h.score,
        // A dialogue or document found by its id opens itself.
        discourse: ["Dialogue", "Document"].includes(h.node.kind) ? h.node.id : h.discourses[0] }));
  } catch (e) {
    if (semantic && e instanceof ApiProblem && e.status === 404) {
      $("semantic").checked = false; $("semantic").disabled = true;
      $("semantic-label").title = e.detail;
      status(`search by meaning is off: ${e.detail}`);
    } else status(e.message);
    return;
  }
  const opened = hits.filter((h) => h.discourse);
  $("hits").innerHTML = `<h2>${hits.length ? `${hits.length} hits` : "no hits"} for “${esc(q)}”</h2>` + hits.map((h, i) =>
    `<button type="button" class="hit" data-i="${i}" ${h.discourse ? "" : "disabled"}><span class="hit-kind" style="color:${color(h.kind)}">${esc(h.kind)}</span> ` +
    `${esc(short(h.text || h.id, 140))}<span class="muted"> · ${esc(h.discourse || h.id)} · ${h.score.toFixed(2)}</span></button>`).join("");
  $("hits").querySelectorAll(".hit").forEach((b) => b.addEventListener("click", () => {
    const h = hits[Number(b.dataset.i)];
    openNode(h.id, h.discourse, h.corpus).catch((e) => status(e.message));
  }));
  status("");
  if (opened.length) await openNode(opened[0].id, opened[0].discourse, opened[0].corpus);
  document.body.dataset.searched = q;
}

// -- start ------------------------------------------------------------------------------------

async function main() {
  const params = new URLSearchParams(location.search);
  const corpora = await api("/corpora");
  const select = $("corpus");
  for (const c of corpora) {
    const opt = document.createElement("option");
    opt.value = c.id; opt.textContent = c.status === "complete" ? c.id : `${c.id} (${c.status})`;
    select.appendChild(opt);
  }
  // ``predicted=0`` is how earlier addresses said "gold only".
  const origin = params.get("origin") || (params.get("predicted") === "0" ? "gold" : "all");
  filters.origin = ["all", "gold", "predicted"].includes(origin) ? origin : "all";
  $("origin").value = filters.origin;
  filters.minScore = Math.min(1, Math.max(0, parseFloat(params.get("min_score") || "0") || 0));
  $("min-score").value = String(filters.minScore); $("min-score-value").textContent = filters.minScore.toFixed(2);
  for (const k of (params.get("hide") || "").split(",").filter(Boolean)) filters.hidden.add(k);
  filters.speaker = params.get("speaker") || "";
  if (VIEWS.includes(params.get("view"))) $("view").value = params.get("view");
  filters.compare = params.get("compare") === "1";
  compareRun = params.get("run") || null;
  $("compare").checked = filters.compare;
  $("compare").addEventListener("change", () => { filters.compare = $("compare").checked; redraw(); });
  $("speaker").addEventListener("change", () => { filters.speaker = $("speaker").value; if (view) view.fade(filters.speaker); remember(); });
  $("min-score").addEventListener("input", () => {
    filters.minScore = parseFloat($("min-score").value) || 0;
    $("min-score-value").textContent = filters.minScore.toFixed(2);
  });
  $("min-score").addEventListener("change", redraw);
  $("view").addEventListener("change", redraw);
  if (params.get("q")) $("map-q").value = params.get("q");
  select.addEventListener("change", () => loadCorpus(select.value).catch((e) => status(e.message)));
  $("discourse").addEventListener("change", () => loadDiscourse($("discourse").value));
  $("origin").addEventListener("change", () => { filters.origin = $("origin").value; redraw(); });
  $("more-maps").addEventListener("click", () => listMaps(true).catch((e) => status(e.message)));
  $("find-form").addEventListener("submit", (e) => { e.preventDefault(); search().catch((err) => status(err.message)); });
  $("dl-png").addEventListener("click", () => downloadImage("png"));
  $("dl-svg").addEventListener("click", () => downloadImage("svg"));
  let typing = null;
  $("map-q").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => loadCorpus(select.value).catch((e) => status(e.message)), 300);
  });
  const focus = params.get("node");
  if (focus) {
    let node;
    try { node = await api(`/nodes/${encodeURIComponent(focus)}`); } catch (e) {
      if (e instanceof ApiProblem && e.status === 404) { unknown(focus, e.message); return; }
      throw e;
    }
    const target = node.kind === "Dialogue" || node.kind === "Document" ? node.id : params.get("discourse") || node.discourses[0];
    if (target) { await loadCorpus(node.corpus, target, focus); return; }
    showDetails({ id: node.id, kind: node.kind, unit: { text: node.text, speaker: node.speaker } });
    document.body.dataset.loaded = node.id;
    return;
  }
  const wanted = params.get("corpus");
  if (wanted) {
    if (![...select.options].some((o) => o.value === wanted)) { unknown(wanted, "no such corpus in the graph"); return; }
    select.value = wanted;
  }
  if (select.value) await loadCorpus(select.value, params.get("discourse"));
}

// For scripts and tests: the counts the page shows, whichever view draws the map.
window.argwebCounts = () => (view ? { ...view.counts } : null);

main().catch((e) => status(e.message));
