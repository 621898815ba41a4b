// The compare view: one prediction run's relations on a map against the map's gold relations, as
// GET /discourses/{id}/comparison answers (the rules: docs/graph-model.md, "Predicted against
// gold"). Each predicted relation is marked (matches gold, gold has another type, not in gold),
// each gold relation a prediction misses is marked missed, and a side panel gives precision,
// recall and F1 per relation type with a run picker when several runs cover the map.
import { $, api, esc } from "./common.js";

export const MARKS = {
  match: { color: "#15803d", text: "predicted, matches gold (same ends, same type)", suffix: " ✓" },
  other_type: { color: "#d97706", text: "predicted, gold has another type on these ends", suffix: " ≠" },
  unmatched: { color: "#dc2626", text: "predicted, not in gold", suffix: " ✗" },
  missed: { color: "#7c3aed", text: "gold, missed by the run", suffix: " ○" },
  partly: { color: "#a78bfa", text: "gold, some of its edges missed", suffix: " ◐" },
  found: { color: "#15803d", text: "gold, found by the run", suffix: "" },
};

// Cytoscape styles of the marks (relation nodes and the edges that join them to their ends).
export const STYLE = Object.entries(MARKS).flatMap(([mark, m]) => [
  { selector: `node.cmp-${mark}`, style: {
    "border-width": mark === "found" ? 2 : 3.5, "border-color": m.color,
    "border-style": mark === "missed" || mark === "partly" ? "dotted" : "solid" } },
  { selector: `edge.cmp-${mark}`, style: {
    "line-color": m.color, "target-arrow-color": m.color, width: mark === "found" ? 1.6 : 2.6,
    ...(mark === "missed" || mark === "partly" ? { "line-style": "dotted" } : {}) } },
]);

let cache = null;

// The comparison of a map (``run`` null: the newest run on it); one request per map and run.
export function fetchComparison(id, run) {
  const key = `${id}|${run || ""}`;
  if (!cache || cache.key !== key) {
    const query = run ? `?run=${encodeURIComponent(run)}` : "";
    cache = { key, promise: api(`/discourses/${encodeURIComponent(id)}/comparison${query}`) };
    cache.promise.catch(() => { cache = null; });
  }
  return cache.promise;
}

// Mark the relations of a graph view; returns how many of each mark were drawn.
export function markGraph(cy, marks) {
  const drawn = {};
  cy.batch(() => {
    for (const [id, mark] of Object.entries(marks)) {
      const n = cy.getElementById(id);
      if (n.empty()) continue;
      n.addClass(`cmp-${mark}`); n.data("cmp", mark);
      n.connectedEdges().addClass(`cmp-${mark}`);
      const suffix = MARKS[mark] ? MARKS[mark].suffix : "";
      if (suffix) n.data("label", `${n.data("label") || ""}${suffix}`);
      drawn[mark] = (drawn[mark] || 0) + 1;
    }
  });
  return drawn;
}

// Mark the arcs of the paper view (an SVG ``g.arc`` per relation).
export function markArcs(container, marks) {
  const drawn = {};
  for (const [id, mark] of Object.entries(marks)) {
    const g = container.querySelector(`g.arc[data-id="${CSS.escape(id)}"]`);
    if (!g) continue;
    g.classList.add(`cmp-${mark}`); g.dataset.cmp = mark;
    drawn[mark] = (drawn[mark] || 0) + 1;
  }
  return drawn;
}

const COUNTS = ["gold", "predicted", "matched", "other_type", "missed"];
const SCORES = ["precision", "recall", "f1"];
const fmt = (x) => (x == null ? "–" : x.toFixed(2));

function runName(r) { return `${r.run_id} · ${r.model} ${r.model_version} (${r.relations})`; }

// The side panel: scores per type and micro, the marks' legend, a run picker if several runs.
export function renderPanel(result, onRun) {
  const panel = $("compare-panel");
  const rows = [...result.types, result.micro].map((t) =>
    `<tr data-type="${esc(t.type)}"${t.type === "micro" ? ' class="micro"' : ""}><th title="${esc(t.type)}">${esc(t.type.replace("DiscourseRelation:", ""))}</th>` +
    COUNTS.map((k) => `<td data-k="${k}">${t[k]}</td>`).join("") +
    SCORES.map((k) => `<td data-k="${k}">${fmt(t[k])}</td>`).join("") + "</tr>");
  const picker = result.runs.length > 1
    ? `<label class="run-pick">Run <select id="compare-run">${result.runs.map((r) =>
      `<option value="${esc(r.run_id)}"${r.run_id === result.run.run_id ? " selected" : ""}>${esc(runName(r))}</option>`).join("")}</select></label>`
    : "";
  const legend = Object.entries(MARKS).filter(([k]) => k !== "found").map(([, m]) =>
    `<div class="legend-row"><span class="swatch" style="background:${m.color}"></span>${esc(m.suffix.trim())} ${esc(m.text)}</div>`).join("");
  const run = result.run;
  panel.innerHTML = `<h2>Predicted against gold</h2>` +
    `<p class="muted">run <b id="compare-run-id">${esc(run.run_id)}</b> · ${esc(run.model)} ${esc(run.model_version)} · ` +
    `compared on ${esc(run.classes.join(", "))}</p>${picker}` +
    `<div class="scores-wrap"><table class="scores"><thead><tr><th>type</th><th title="gold edges">gold</th><th title="predicted edges">pred</th>` +
    `<th title="matched: same ends, same type">✓</th><th title="other type: same ends, another type">≠</th><th title="missed: gold edges no prediction matches">miss</th>` +
    `<th>P</th><th>R</th><th>F1</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>${legend}`;
  panel.hidden = false;
  const select = $("compare-run");
  if (select) select.addEventListener("change", () => onRun(select.value));
}

export function hidePanel() {
  const panel = $("compare-panel");
  panel.hidden = true; panel.innerHTML = "";
}
