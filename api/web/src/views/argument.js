// Argument map (QT30 / AIF, M-Arg), as OVA users know it: the proposition layer as an argument
// diagram (I-nodes as boxes, RA/CA/MA nodes between them, premises below their conclusions, laid
// out in layers by dagre), and the dialogue as a lane beside it (locutions in order, transitions
// between them); illocutions (YA) link each locution to its propositions.
//
// Columns, left to right: locutions | transitions | illocutions of locutions | illocutions of
// relations | the diagram. Each connected part of the diagram is laid out on its own and placed
// at the height of the first locution that asserts it, so the diagram reads down with the dialogue.
import { color, short, tint, wrapLines, FONT_FAMILY } from "../common.js";
import { graphUnits, isProposition, keptRelations, relationEdges } from "../model.js";

const LANE_W = 260;
const PROP_W = 220;
const PAD = 20; // label width = box width - PAD
const LINE_H = 15;
const X_LANE = 0;
const X_TA = LANE_W / 2 + 45;
const X_YA = X_TA + 60;
const X_YA_REL = X_YA + 60;
const X_DIAGRAM = X_YA_REL + 70;
const GAP = 16;
const DIAGRAM_W = 760; // the diagram spreads this wide before parts go lower than their locution

const FONT = `12px ${FONT_FAMILY}`;

// A box's label wrapped here, at the width Cytoscape would wrap it: Cytoscape then measures each
// line once instead of word by word (most of the cost of drawing a large map), and the box is as
// tall as its lines (at most MAX_LINES; the details panel has the whole text).
const MAX_LINES = 9;
function boxLabel(text, width) {
  const lines = wrapLines(text, width - PAD, FONT);
  const shown = lines.length > MAX_LINES ? [...lines.slice(0, MAX_LINES - 1), `${lines[MAX_LINES - 1]}…`] : lines;
  return { label: shown.join("\n"), h: shown.length * LINE_H + 12 };
}

const ARGUMENT_TYPES = { Support: "RA", Attack: "CA", Rephrase: "MA", NonRelation: "—", SameUnit: "=" };

function sLabel(r) {
  const name = r.scheme_label && r.scheme_label.length <= 18 ? r.scheme_label : ARGUMENT_TYPES[r.kind] || r.kind;
  return r.origin === "predicted" && r.score != null ? `${name} ${r.score.toFixed(2)}` : name;
}

export function build(discourse, filters, speakerColor) {
  const units = graphUnits(discourse);
  const relations = keptRelations(discourse, filters);
  const byId = new Map(units.map((u) => [u.id, u]));
  const ids = new Set(units.map((u) => u.id));
  relations.forEach((r) => ids.add(r.id));
  const relById = new Map(relations.map((r) => [r.id, r]));

  // The speaker of a proposition: the one whose locution asserts it.
  const assertedBy = new Map();
  for (const r of relations) {
    if (r.kind !== "Illocution") continue;
    for (const s of r.sources) {
      const u = byId.get(s);
      if (u && u.kind === "Locution") for (const t of r.targets) if (!assertedBy.has(t)) assertedBy.set(t, u);
    }
  }

  const nodes = [];
  for (const u of units) {
    const spk = u.speaker || (assertedBy.get(u.id) || {}).speaker;
    const sc = spk ? speakerColor(spk) : null;
    if (u.kind === "Locution") {
      const { label, h } = boxLabel(short(u.text, 400), LANE_W);
      nodes.push({ data: { id: u.id, label, kind: u.kind, unit: u, speaker: spk, w: LANE_W, h,
        fill: sc ? tint(sc) : "#eef2f8", stroke: sc || color(u.kind) }, classes: "unit box locution" });
    } else {
      const { label, h } = boxLabel(short(u.text, 400), PROP_W);
      nodes.push({ data: { id: u.id, label, kind: u.kind, unit: u, speaker: spk, w: PROP_W, h,
        fill: "#ffffff", stroke: sc || color(u.kind) }, classes: "unit box proposition" });
    }
  }
  for (const r of relations) {
    const argument = !["Illocution", "Transition", "DiscourseRelation"].includes(r.kind);
    // Illocutions and transitions are named by their scheme (Asserting, Default Transition), if any.
    const linkName = r.sense || r.scheme_label || "";
    const label = argument ? sLabel(r) : r.origin === "predicted" && r.score != null ? `${linkName || r.kind} ${r.score.toFixed(2)}` : linkName;
    nodes.push({
      data: { id: r.id, label, kind: r.kind, relation: r, color: color(r.kind), w: argument ? Math.max(34, label.length * 6.3 + 12) : 12, h: argument ? 20 : 12 },
      classes: `relation ${argument ? "snode" : "link"}` + (r.origin === "predicted" ? " predicted" : ""),
    });
  }
  const edges = relationEdges(relations, ids).map((e) => ({
    data: { id: e.id, source: e.source, target: e.target, color: color(e.relation.kind) },
    classes: `${e.cls} ${["Illocution", "Transition"].includes(e.relation.kind) ? "faint" : "strong"}`,
  }));

  return { nodes, edges, layout: (cy, dagre) => layout(cy, units, relations, byId, relById, dagre) };
}

export const stats = { dagre_ms: 0, dagre_parts: 0, dagre_largest: 0 };

function layout(cy, units, relations, byId, relById, runDagre) {
  Object.assign(stats, { dagre_ms: 0, dagre_parts: 0, dagre_largest: 0 });
  const pos = new Map();
  const set = (id, x, y) => pos.set(id, { x, y });
  const height = (id) => { const n = cy.getElementById(id); return n.nonempty() ? n.data("h") || 12 : 12; };

  // The lane: locutions in dialogue order.
  const locutions = units.filter((u) => u.kind === "Locution")
    .sort((a, b) => (a.position ?? 1e9) - (b.position ?? 1e9) || a.id.localeCompare(b.id));
  let y = 0;
  for (const u of locutions) {
    const h = height(u.id);
    set(u.id, X_LANE, y + h / 2);
    y += h + GAP;
  }
  const yOf = (id) => (pos.get(id) || {}).y;
  const isLoc = (id) => byId.has(id) && byId.get(id).kind === "Locution";

  // Propositions anchored at the locution that asserts them.
  const anchor = new Map();
  for (const r of relations) {
    if (r.kind !== "Illocution") continue;
    const loc = r.sources.find(isLoc);
    if (loc === undefined) continue;
    for (const t of r.targets) if (!anchor.has(t) || yOf(loc) < anchor.get(t)) anchor.set(t, yOf(loc));
  }

  // The diagram: propositions and the argument relations between them, part by part.
  const inDiagram = new Set(units.filter(isProposition).map((u) => u.id));
  // Parts are made of the gold relations: predictions are drawn over the diagram of the map (at
  // the middle of their ends), so that switching them on or off moves nothing.
  const argumentRels = relations.filter((r) => !["Illocution", "Transition", "DiscourseRelation"].includes(r.kind) &&
    r.origin !== "predicted" && [...r.sources, ...r.targets].every((e) => !isLoc(e)));
  argumentRels.forEach((r) => inDiagram.add(r.id));
  const parent = new Map([...inDiagram].map((id) => [id, id]));
  const find = (x) => { while (parent.get(x) !== x) { parent.set(x, parent.get(parent.get(x))); x = parent.get(x); } return x; };
  for (const r of argumentRels) {
    for (const e of [...r.sources, ...r.targets]) if (parent.has(e)) parent.set(find(e), find(r.id));
  }
  const parts = new Map();
  for (const id of inDiagram) {
    if (cy.getElementById(id).empty()) continue;
    const root = find(id);
    if (!parts.has(root)) parts.set(root, []);
    parts.get(root).push(id);
  }
  const order = (id) => { const u = byId.get(id); return u && u.position != null ? u.position : 1e9; };
  // A part no locution asserts (maps without L -> YA -> I anchors) goes beside the last locution
  // before its first proposition in the map's order.
  const byPosition = locutions.filter((u) => u.position != null);
  const lastBefore = (position) => {
    let lo = 0; let hi = byPosition.length - 1; let found;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (byPosition[mid].position <= position) { found = byPosition[mid]; lo = mid + 1; } else hi = mid - 1;
    }
    return found === undefined ? undefined : yOf(found.id) - height(found.id) / 2;
  };
  const placed = [...parts.values()].map((members) => {
    const anchors = members.map((m) => anchor.get(m)).filter((v) => v !== undefined);
    const first = Math.min(...members.map(order));
    return { members, at: anchors.length ? Math.min(...anchors) : first < 1e9 ? lastBefore(first) : undefined, order: first };
  });
  // Parts with neither go after the others, in reading order.
  placed.sort((a, b) => (a.at ?? Infinity) - (b.at ?? Infinity) || a.order - b.order);
  // Each part goes at the height of its first locution, in the leftmost place free there; when
  // the diagram is as wide as allowed, lower, where it first fits.
  const taken = [];
  const free = (rects, x, y, w, h) => rects.every((r) => x + w + GAP <= r.x1 || x >= r.x2 + GAP || y + h + GAP <= r.y1 || y >= r.y2 + GAP);
  let lowest = 0;
  for (const part of placed) {
    const eles = cy.collection(part.members.map((m) => cy.getElementById(m)));
    let w; let h;
    if (part.members.length === 1) {
      w = eles[0].data("w"); h = eles[0].data("h");
      set(part.members[0], w / 2, h / 2);
    } else {
      const t0 = performance.now();
      runDagre(eles.union(eles.edgesWith(eles)));
      stats.dagre_ms += performance.now() - t0; stats.dagre_parts += 1; stats.dagre_largest = Math.max(stats.dagre_largest, part.members.length);
      const bb = eles.boundingBox({ includeLabels: false });
      w = bb.w; h = bb.h;
      eles.forEach((n) => { const p = n.position(); set(n.id(), p.x - bb.x1, p.y - bb.y1); });
    }
    // Candidates: beside each part placed, each at the first height from the wanted one where it
    // fits; the one least far from where it is wanted wins (moving down costs more than right).
    const wanted = part.at !== undefined ? part.at - 12 : lowest;
    // Parts are placed in the order of their heights: one that ends above this height cannot be
    // in its way, so only the others are looked at (a long map stays linear).
    const near = taken.filter((r) => r.y2 + GAP > wanted);
    let x0 = X_DIAGRAM; let y0 = Infinity; let best = Infinity;
    const xs = [...new Set([X_DIAGRAM, ...near.map((r) => r.x2 + GAP)])].filter((x) => x === X_DIAGRAM || x + w <= X_DIAGRAM + DIAGRAM_W);
    const ys = [...new Set([wanted, ...near.map((r) => r.y2 + GAP).filter((y) => y > wanted)])].sort((a, b) => a - b);
    for (const x of xs) {
      const y = ys.find((c) => free(near, x, c, w, h));
      const cost = (y - wanted) + 0.35 * (x - X_DIAGRAM);
      if (y !== undefined && cost < best) { best = cost; x0 = x; y0 = y; }
    }
    taken.push({ x1: x0, y1: y0, x2: x0 + w, y2: y0 + h });
    lowest = Math.max(lowest, y0 + h + GAP);
    for (const id of part.members) { const p = pos.get(id); set(id, p.x + x0, p.y + y0); }
  }

  // Transitions between the locutions they join; illocutions beside what they anchor.
  const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  const stack = new Map();
  // Several nodes wanted at one place are stacked downwards.
  const nudge = (x, y0, step = 14) => {
    const key = `${x}:${Math.round(y0 / step)}`; const k = stack.get(key) || 0; stack.set(key, k + 1); return y0 + k * step;
  };
  const rest = relations.filter((r) => !pos.has(r.id));
  for (let pass = 0; pass < 3; pass++) {
    for (const r of rest) {
      if (pos.has(r.id)) continue;
      const ends = [...r.sources, ...r.targets].filter((e) => pos.has(e));
      if (!ends.length && pass < 2) continue;
      const ys = ends.map(yOf);
      if (r.kind === "Transition" || r.kind === "DiscourseRelation") {
        set(r.id, X_TA, nudge(X_TA, ys.length ? mean(ys) : 0));
      } else if (r.kind === "Illocution") {
        const loc = r.sources.find(isLoc);
        if (loc !== undefined) set(r.id, X_YA, nudge(X_YA, yOf(loc)));
        else {
          // The illocution of a relation (TA -> YA -> RA): just left of the relation it anchors.
          const target = r.targets.find((t) => pos.has(t));
          if (target !== undefined) {
            const x = pos.get(target).x - (cy.getElementById(target).data("w") || 12) / 2 - 12;
            set(r.id, x, nudge(Math.round(x), yOf(target)));
          } else set(r.id, X_YA_REL, nudge(X_YA_REL, ys.length ? mean(ys) : 0));
        }
      } else if (ends.length) {
        // A predicted (or locution-level) relation: between its ends.
        const xs = ends.map((e) => pos.get(e).x);
        set(r.id, mean(xs) + 44, nudge(Math.round(mean(xs)), mean(ys), 24));
      } else {
        set(r.id, X_YA_REL, nudge(X_YA_REL, 0));
      }
    }
  }
  cy.nodes().forEach((n) => { const p = pos.get(n.id()); if (p) n.position(p); });
}

export const style = [
  { selector: "node.box", style: { shape: "round-rectangle", width: "data(w)", height: "data(h)", "background-color": "data(fill)",
    "border-width": 1.5, "border-color": "data(stroke)", label: "data(label)", "text-wrap": "wrap", "font-size": 12, "line-height": 1.25, "font-family": FONT_FAMILY,
    "text-valign": "center", "text-halign": "center", color: "#1f2328", "min-zoomed-font-size": 5 } },
  { selector: "node.locution", style: { "text-max-width": LANE_W - PAD + 6, "border-width": 2 } },
  { selector: "node.proposition", style: { "text-max-width": PROP_W - PAD + 6 } },
  { selector: "node.snode", style: { shape: "round-rectangle", width: "data(w)", height: "data(h)", "background-color": "data(color)",
    label: "data(label)", color: "#fff", "font-size": 10, "font-weight": "bold", "text-valign": "center", "text-halign": "center", "min-zoomed-font-size": 5 } },
  { selector: "node.link", style: { shape: "diamond", width: 11, height: 11, "background-color": "data(color)", label: "data(label)",
    "font-size": 8, color: "#6b7280", "text-valign": "center", "text-halign": "right", "text-margin-x": 3, "min-zoomed-font-size": 7 } },
  { selector: "edge", style: { width: 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)", "target-arrow-shape": "triangle",
    "arrow-scale": 0.8, "curve-style": "straight" } },
  { selector: "edge.faint", style: { width: 1, opacity: 0.45, "arrow-scale": 0.6 } },
];
