// The argweb graph page: a dialogue or document as an argument graph (Cytoscape.js).
// Units (locutions, propositions) sit in reading order; reified relations are small nodes
// between them, as in AIF, coloured by kind; predicted relations are dashed and show their score.
import cytoscape from "cytoscape";

const KIND_COLORS = {
  Locution: "#6c8ebf", Proposition: "#82b366", Claim: "#b5739d", Premise: "#d6b656", Sentence: "#9aa5b1",
  Support: "#2e8b57", Attack: "#c0392b", Rephrase: "#8e44ad", DiscourseRelation: "#e67e22",
  Transition: "#7f8c8d", Illocution: "#95a5a6", NonRelation: "#bdc3c7", SameUnit: "#34495e", Relation: "#555",
};
const UNIT_KINDS = new Set(["Locution", "Proposition", "Claim", "Premise", "Sentence"]);
const $ = (id) => document.getElementById(id);

async function api(path) {
  const res = await fetch(path, { headers: { Accept: "application/json" } });
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail; } catch (e) { /* not JSON */ }
    throw new Error(`${res.status}: ${detail}`);
  }
  return res.json();
}

function status(text) { $("status").textContent = text || ""; }
function color(kind) { return KIND_COLORS[kind] || "#777"; }
function short(text, n) { return !text ? "" : text.length > n ? text.slice(0, n - 1) + "…" : text; }

function relationLabel(r) {
  const name = r.sense || r.scheme_label || r.kind;
  return r.origin === "predicted" && r.score != null ? `${name} ${r.score.toFixed(2)}` : name;
}

// Elements of a discourse: one node per unit and relation, one edge per relation end.
// Filters: `hidden` relation kinds are left out; predicted relations scoring under `minScore` too
// (gold relations have no score and stay).
export function elements(discourse, withPredicted, filters = {}) {
  const hidden = filters.hidden || new Set(); const minScore = filters.minScore || 0;
  const nodes = []; const edges = []; const ids = new Set(); const y = {};
  // Locutions on the left, propositions on the right, relations between them; with one kind of
  // unit only, relations go to the left so that they do not cover the text.
  const twoColumns = discourse.units.some((u) => u.kind === "Locution") && discourse.units.some((u) => u.kind !== "Locution");
  discourse.units.forEach((u, i) => {
    ids.add(u.id);
    const row = u.position != null ? u.position : i;
    y[u.id] = row * 80;
    const x = u.kind === "Locution" || !twoColumns ? 0 : 820;
    nodes.push({ data: { id: u.id, label: short(u.text, 90), kind: u.kind, color: color(u.kind), unit: u }, position: { x, y: y[u.id] } });
  });
  const relations = discourse.relations.filter((r) => (withPredicted || r.origin !== "predicted") && !hidden.has(r.kind) &&
    !(r.origin === "predicted" && r.score != null && r.score < minScore));
  relations.forEach((r) => ids.add(r.id));
  // Relations sit at the mean height of their ends; relations between relations (AIF YA/TA
  // chains) are placed after the ones they connect, hence a few passes.
  for (let pass = 0; pass < 3; pass++) {
    relations.forEach((r) => {
      const ends = [...r.sources, ...r.targets].filter((e) => y[e] !== undefined && e !== r.id);
      if (ends.length && (pass > 0 || ends.every((e) => !ids.has(e) || discourse.units.some((u) => u.id === e)))) {
        y[r.id] = ends.reduce((a, e) => a + y[e], 0) / ends.length;
      }
    });
  }
  const slot = {};
  relations.forEach((r) => {
    const mid = y[r.id] !== undefined ? y[r.id] : 0;
    const key = Math.round(mid / 40);
    slot[key] = (slot[key] || 0) + 1;
    const step = ((slot[key] - 1) % 4) * 90;
    const x = twoColumns ? 400 + step : -110 - step;
    nodes.push({
      data: { id: r.id, label: relationLabel(r), kind: r.kind, color: color(r.kind), predicted: r.origin === "predicted", relation: r },
      position: { x, y: mid + 22 * Math.floor((slot[key] - 1) / 4) },
      classes: "relation" + (r.origin === "predicted" ? " predicted" : ""),
    });
  });
  let k = 0;
  relations.forEach((r) => {
    const cls = r.origin === "predicted" ? "predicted" : "gold";
    r.sources.filter((s) => ids.has(s)).forEach((s) => edges.push({ data: { id: `e${k++}`, source: s, target: r.id, color: color(r.kind) }, classes: cls }));
    r.targets.filter((t) => ids.has(t)).forEach((t) => edges.push({ data: { id: `e${k++}`, source: r.id, target: t, color: color(r.kind) }, classes: cls }));
  });
  return { nodes, edges };
}

const style = [
  { selector: "node", style: { "background-color": "data(color)", label: "data(label)", "font-size": 11, "text-wrap": "wrap", "text-max-width": 300, "text-valign": "center", "text-halign": "right", "text-margin-x": 6, width: 16, height: 16, color: "#222" } },
  { selector: "node.relation", style: { shape: "diamond", width: 13, height: 13, "font-size": 9, color: "data(color)", "text-halign": "center", "text-valign": "top", "text-margin-x": 0, "text-margin-y": -3 } },
  { selector: "node.predicted", style: { "border-width": 2, "border-style": "dashed", "border-color": "#333", "background-opacity": 0.6 } },
  { selector: "node:selected", style: { "border-width": 3, "border-color": "#111", "border-style": "solid" } },
  { selector: "edge", style: { width: 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)", "target-arrow-shape": "triangle", "arrow-scale": 0.8, "curve-style": "bezier", opacity: 0.85 } },
  { selector: "edge.predicted", style: { "line-style": "dashed" } },
  { selector: ".faded", style: { opacity: 0.2 } },
];

let cy = null;
let current = null;

// A relation end as its text (a unit) or its kind (a relation between relations), with its id.
function endText(id) {
  const unit = current && current.units.find((u) => u.id === id);
  if (unit) return `“${short(unit.text, 160)}” (${id})`;
  const rel = current && current.relations.find((r) => r.id === id);
  return rel ? `${relationLabel(rel)} (${id})` : id;
}

function showDetails(data) {
  const box = $("details");
  const u = data.unit; const r = data.relation;
  const rows = [];
  const add = (k, v) => { if (v !== null && v !== undefined && v !== "") rows.push(`<dt>${k}</dt><dd>${String(v).replace(/</g, "&lt;")}</dd>`); };
  add("kind", data.kind); add("id", data.id);
  let text = "";
  if (u) {
    text = u.text; add("speaker", u.speaker); add("position", u.position);
    add("time", u.timestamp || (u.start_time != null ? `${u.start_time.toFixed(1)}–${(u.end_time || 0).toFixed(1)} s` : ""));
  } else if (r) {
    text = r.text || ""; add("origin", r.origin); add("label", r.scheme_label); add("sense", r.sense);
    add("score", r.score != null ? r.score.toFixed(3) : ""); add("model", r.model ? `${r.model} ${r.model_version || ""}` : "");
    add("run", r.run_id); add("from", r.sources.map(endText).join(" · ")); add("to", r.targets.map(endText).join(" · "));
  }
  box.innerHTML = `<h2>${data.kind}</h2>${text ? `<div class="text">${text.replace(/</g, "&lt;")}</div>` : ""}<dl>${rows.join("")}</dl>` +
    `<p><a href="/nodes/${encodeURIComponent(data.id)}">JSON</a> · <a href="/nodes/${encodeURIComponent(data.id)}/neighbors">neighbours</a></p>`;
}

// The legend lists every kind of the map; relation kinds have a box that shows or hides them.
function legend(kinds) {
  $("legend-items").innerHTML = [...kinds].sort().map((k) => {
    const box = UNIT_KINDS.has(k) ? "" : `<input type="checkbox" class="kind-filter" value="${k}" ${filters.hidden.has(k) ? "" : "checked"}> `;
    return `<label class="legend-row">${box}<span class="swatch ${UNIT_KINDS.has(k) ? "round" : ""}" style="background:${color(k)}"></span>${k}</label>`;
  }).join("") + '<div class="legend-row"><span class="swatch dash"></span>predicted (score shown)</div>';
  document.querySelectorAll(".kind-filter").forEach((box) => box.addEventListener("change", () => {
    if (box.checked) filters.hidden.delete(box.value); else filters.hidden.add(box.value);
    redraw();
  }));
}

const filters = { hidden: new Set(), minScore: 0, speaker: "" };

// The speaker box lists the map's speakers; choosing one fades the others' units.
function speakers(discourse) {
  const names = [...new Set(discourse.units.map((u) => u.speaker).filter(Boolean))].sort();
  const box = $("speaker");
  box.innerHTML = '<option value="">all speakers</option>' +
    names.map((n) => `<option>${n.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</option>`).join("");
  box.value = names.includes(filters.speaker) ? filters.speaker : "";
}

function redraw() {
  if (!current) return;
  const sel = cy ? cy.$("node:selected") : null;
  draw(current, sel && sel.nonempty() ? sel[0].id() : undefined);
  remember();
}

function draw(discourse, focus) {
  current = discourse;
  const { nodes, edges } = elements(discourse, $("predicted").checked, filters);
  if (cy) cy.destroy();
  cy = cytoscape({ container: $("graph"), elements: [...nodes, ...edges], style, layout: { name: "preset" }, minZoom: 0.1, maxZoom: 3 });
  window.argwebGraph = cy;
  cy.on("tap", "node", (evt) => { showDetails(evt.target.data()); remember(); });
  cy.fit(undefined, 30);
  if (cy.zoom() < 0.8) {
    // Long dialogues: keep the text readable and start at the top; the rest is a scroll away.
    const bb = cy.elements().boundingBox();
    cy.zoom(0.8);
    cy.pan({ x: 30 - bb.x1 * 0.8, y: 30 - bb.y1 * 0.8 });
  }
  speakers(discourse);
  if (filters.speaker) {
    // Units of other speakers (and the relations touching only them) fade; counts stay the map's.
    const other = cy.nodes().filter((n) => n.data("unit") && n.data("unit").speaker !== filters.speaker);
    other.addClass("faded");
    cy.nodes(".relation").filter((r) => r.neighborhood("node").every((n) => n.hasClass("faded"))).addClass("faded");
  }
  $("node-count").textContent = String(cy.nodes().length);
  $("edge-count").textContent = String(cy.edges().length);
  legend(new Set([...discourse.units.map((u) => u.kind), ...discourse.relations.map((r) => r.kind)]));
  if (focus) {
    const n = cy.getElementById(focus);
    if (n.nonempty()) { n.select(); showDetails(n.data()); cy.animate({ center: { eles: n }, zoom: 1.2 }, { duration: 300 }); }
  }
  // Set last: tests and scripts wait for it to know the graph (and its focus) is drawn.
  document.body.dataset.loaded = discourse.id;
  status("");
}

// The address tells the view: corpus, map, selected node and the predicted switch, so that a view
// can be shared and reloaded (replaceState: no history entry per click).
function remember() {
  const params = new URLSearchParams();
  const corpus = $("corpus").value; const map = current ? current.id : "";
  if (corpus) params.set("corpus", corpus);
  if (map) params.set("discourse", map);
  const sel = cy ? cy.$("node:selected") : null;
  if (sel && sel.nonempty()) params.set("node", sel[0].id());
  if (!$("predicted").checked) params.set("predicted", "0");
  if ($("map-q").value) params.set("q", $("map-q").value);
  if (filters.minScore > 0) params.set("min_score", String(filters.minScore));
  if (filters.hidden.size) params.set("hide", [...filters.hidden].sort().join(","));
  if (filters.speaker) params.set("speaker", filters.speaker);
  const wanted = new URLSearchParams(location.search).get("maps");
  if (wanted) params.set("maps", wanted);
  history.replaceState(null, "", `/?${params.toString()}`);
}

function unknown(id, message) {
  $("details").innerHTML = `<h2>Unknown id</h2><div class="text">${String(id).replace(/</g, "&lt;")}</div>` +
    `<p class="muted">${String(message).replace(/</g, "&lt;")}</p>`;
  status(`unknown id: ${id}`);
  document.body.dataset.loaded = `unknown:${id}`;
}

async function loadDiscourse(id, focus) {
  status("loading…");
  let discourse;
  try { discourse = await api(`/discourses/${encodeURIComponent(id)}`); } catch (e) {
    if (e.message.startsWith("404")) { unknown(id, e.message); return; }
    status(e.message); return;
  }
  ensureOption(discourse.id, discourse.local_id || discourse.id);
  $("discourse").value = discourse.id;
  draw(discourse, focus);
  remember();
}

// Map list of the corpus: a page at a time from the server (by name or text with the search
// box), so that every map is reachable however many the corpus holds.
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
  $("discourse").innerHTML = "";
  $("dashboard-link").href = `/dashboard/${encodeURIComponent(corpus)}`;
  listing = { corpus, q: $("map-q").value.trim(), cursors: {} };
  current = null;
  const items = await listMaps(false);
  // A map named in the address is drawn even when it is not on the first page of the list.
  const target = selectId || (items[0] && items[0].id);
  if (target) await loadDiscourse(target, focus);
  else { status(listing.q ? `no map of ${corpus} matches “${listing.q}”` : `no maps in ${corpus}`); remember(); }
}

async function main() {
  const params = new URLSearchParams(location.search);
  const corpora = await api("/corpora");
  const select = $("corpus");
  for (const c of corpora) {
    const opt = document.createElement("option");
    opt.value = c.id; opt.textContent = c.status === "complete" ? c.id : `${c.id} (${c.status})`;
    select.appendChild(opt);
  }
  if (params.get("predicted") === "0") $("predicted").checked = false;
  filters.minScore = Math.min(1, Math.max(0, parseFloat(params.get("min_score") || "0") || 0));
  $("min-score").value = String(filters.minScore); $("min-score-value").textContent = filters.minScore.toFixed(2);
  for (const k of (params.get("hide") || "").split(",").filter(Boolean)) filters.hidden.add(k);
  filters.speaker = params.get("speaker") || "";
  $("speaker").addEventListener("change", () => { filters.speaker = $("speaker").value; redraw(); });
  $("min-score").addEventListener("input", () => {
    filters.minScore = parseFloat($("min-score").value) || 0;
    $("min-score-value").textContent = filters.minScore.toFixed(2);
    redraw();
  });
  if (params.get("q")) $("map-q").value = params.get("q");
  select.addEventListener("change", () => loadCorpus(select.value).catch((e) => status(e.message)));
  $("discourse").addEventListener("change", () => loadDiscourse($("discourse").value));
  $("predicted").addEventListener("change", redraw);
  $("more-maps").addEventListener("click", () => listMaps(true).catch((e) => status(e.message)));
  let typing = null;
  $("map-q").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => loadCorpus(select.value).catch((e) => status(e.message)), 300);
  });
  const focus = params.get("node");
  if (focus) {
    let node;
    try { node = await api(`/nodes/${encodeURIComponent(focus)}`); } catch (e) {
      if (e.message.startsWith("404")) { unknown(focus, e.message); return; }
      throw e;
    }
    const target = node.kind === "Dialogue" || node.kind === "Document" ? node.id : node.discourses[0];
    if (target) {
      select.value = node.corpus;
      await loadCorpus(node.corpus, target, focus);
      return;
    }
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

main().catch((e) => status(e.message));
