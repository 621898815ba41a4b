// Dialogue thread (Molweni, STAC): the turns in order, one box per EDU coloured by speaker, and each
// discourse relation as an arc on the right that leaves its first EDU and enters its second. Arcs
// are nested like an arc diagram: a relation gets the innermost column whose arcs it does not
// overlap, so short links stay close to the text and long ones go around them.
import { color, relationLabel, short, tint, wrapLines, FONT_FAMILY } from "../common.js";
import { graphUnits, keptRelations, relationEdges } from "../model.js";

const BOX_W = 460;
const GAP = 12;
const X_ARCS = BOX_W / 2 + 34;
const ARC_STEP = 92; // room for a sense name between two columns of arcs


function boxHeight(text) {
  return Math.min(8, wrapLines(text, BOX_W - 16, `11.5px ${FONT_FAMILY}`).length) * 15 + 12;
}

// A sense name shortened: its capitals when it has several (QuestionAnswerPair: QAP), else its
// first four letters (Elaboration: Elab).
function abbreviation(name) {
  const capitals = name.replace(/[^A-Z]/g, "");
  return capitals.length > 1 ? capitals : name.slice(0, 4);
}

export function build(discourse, filters, speakerColor) {
  const units = graphUnits(discourse);
  const relations = keptRelations(discourse, filters);
  const ids = new Set(units.map((u) => u.id));
  relations.forEach((r) => ids.add(r.id));
  const nodes = units.map((u) => {
    const text = short(u.speaker ? `${u.speaker}: ${u.text}` : u.text, 400);
    const sc = u.speaker ? speakerColor(u.speaker) : color(u.kind);
    return { data: { id: u.id, label: text, kind: u.kind, unit: u, speaker: u.speaker, h: boxHeight(text), fill: tint(sc, 0.88), stroke: sc }, classes: "unit turn" };
  });
  for (const r of relations) {
    // Predicted arcs often double gold ones: their label is short (QAP 0.87, Elab 0.55); the
    // details panel names the sense in full.
    const label = r.origin === "predicted" && r.score != null ? `${abbreviation(r.sense || r.scheme_label || r.kind)} ${r.score.toFixed(2)}` : relationLabel(r);
    nodes.push({ data: { id: r.id, label, kind: r.kind, relation: r, color: color(r.kind) },
      classes: "relation arc" + (r.origin === "predicted" ? " predicted" : "") });
  }
  const edges = relationEdges(relations, ids).map((e) => ({
    data: { id: e.id, source: e.source, target: e.target, color: color(e.relation.kind) },
    classes: `${e.cls} ${e.end === "in" ? "leave" : "enter"}`,
  }));
  return { nodes, edges, layout: (cy) => layout(cy, units, relations) };
}

function layout(cy, units, relations) {
  const pos = new Map();
  const ordered = [...units].sort((a, b) => (a.position ?? 1e9) - (b.position ?? 1e9) || a.id.localeCompare(b.id));
  const row = new Map();
  let y = 0;
  ordered.forEach((u, i) => {
    const h = cy.getElementById(u.id).data("h");
    pos.set(u.id, { x: 0, y: y + h / 2 });
    row.set(u.id, i);
    y += h + GAP;
  });
  // Interval colouring: shortest arcs first, each into the first column free over its rows.
  const spans = relations.map((r) => {
    const rows = [...r.sources, ...r.targets].map((e) => row.get(e)).filter((v) => v !== undefined);
    return { r, lo: rows.length ? Math.min(...rows) : 0, hi: rows.length ? Math.max(...rows) : 0, ys: [...r.sources, ...r.targets].filter((e) => pos.has(e)).map((e) => pos.get(e).y) };
  }).sort((a, b) => (a.hi - a.lo) - (b.hi - b.lo) || a.lo - b.lo);
  const columns = [];
  for (const s of spans) {
    let k = 0;
    while (columns[k] && columns[k].some(([lo, hi]) => !(s.hi < lo || s.lo > hi))) k++;
    (columns[k] = columns[k] || []).push([s.lo, s.hi]);
    const mid = s.ys.length ? (Math.min(...s.ys) + Math.max(...s.ys)) / 2 : 0;
    pos.set(s.r.id, { x: X_ARCS + k * ARC_STEP, y: mid });
  }
  cy.nodes().forEach((n) => { const p = pos.get(n.id()); if (p) n.position(p); });
}

export const style = [
  { selector: "node.turn", style: { shape: "round-rectangle", width: BOX_W, height: "data(h)", "background-color": "data(fill)",
    "border-width": 2, "border-color": "data(stroke)", label: "data(label)", "text-wrap": "wrap", "text-max-width": BOX_W - 16,
    "font-size": 11.5, "line-height": 1.3, "font-family": FONT_FAMILY, "text-justification": "left", "text-valign": "center", "text-halign": "center", color: "#1f2328", "min-zoomed-font-size": 5 } },
  { selector: "node.arc", style: { shape: "ellipse", width: 9, height: 9, "background-color": "data(color)", label: "data(label)",
    "font-size": 9, color: "data(color)", "text-valign": "center", "text-halign": "right", "text-margin-x": 4, "min-zoomed-font-size": 6,
    "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": 1 } },
  // Right-angled arcs: out of a turn's right side to the relation's column, along it, and back
  // into the other turn's right side. Turns are measured between node centres and placed just
  // outside the relation node, so that Cytoscape keeps them where they are asked (its fallbacks
  // would cut across the text).
  { selector: "edge", style: { width: 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)", "target-arrow-shape": "none",
    "curve-style": "taxi", "taxi-direction": "horizontal", "edge-distances": "node-position", "taxi-turn-min-distance": 0, opacity: 0.9 } },
  { selector: "edge.leave", style: { "taxi-turn": "-9px" } },
  { selector: "edge.enter", style: { "taxi-turn": "9px", "target-arrow-shape": "triangle", "arrow-scale": 0.8 } },
];
