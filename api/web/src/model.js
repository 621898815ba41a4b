// What a view draws of a discourse: its units and the relations the filters keep.

// Relations kept by the page's filters: of the origins shown (``all``, ``gold`` or ``predicted``),
// none of a hidden kind, predicted ones at or above the minimum score (gold ones have no score) and
// of the chosen run, if one is.
export function keptRelations(discourse, filters) {
  const hidden = filters.hidden || new Set(); const minScore = filters.minScore || 0;
  const origin = filters.origin || "all";
  // With a run chosen (the compare view), the predictions of other runs are left out.
  const run = filters.run || null;
  return discourse.relations.filter((r) => (origin === "all" || (r.origin === "predicted") === (origin === "predicted")) &&
    !hidden.has(r.kind) && !(r.origin === "predicted" && r.score != null && r.score < minScore) &&
    !(run && r.origin === "predicted" && r.run_id !== run));
}

// Units drawn as graph nodes: sentences are a document's text, not nodes.
export function graphUnits(discourse) {
  return discourse.units.filter((u) => u.kind !== "Sentence");
}

const PROPOSITIONS = new Set(["Proposition", "Claim", "Premise"]);
export const isProposition = (u) => PROPOSITIONS.has(u.kind);

// Which view suits a discourse: a document with character spans is a paper; a dialogue of
// token-highlighted turns an interview; locutions with propositions an argument map; locutions
// alone a dialogue thread.
export function viewFor(discourse) {
  const units = discourse.units;
  if (discourse.kind === "Document" && units.some((u) => u.properties && u.properties.char_start != null)) return "paper";
  if (units.some((u) => u.properties && Array.isArray(u.properties.tokens))) return "interview";
  if (units.some((u) => u.kind === "Locution") && units.some(isProposition)) return "argument";
  if (units.some((u) => u.kind === "Locution")) return "thread";
  return "argument";
}

// Every drawn relation end as [source, target] pairs (source -> relation -> target), limited to
// the ids drawn.
export function relationEdges(relations, ids) {
  const edges = [];
  let k = 0;
  for (const r of relations) {
    const cls = r.origin === "predicted" ? "predicted" : "gold";
    for (const s of r.sources) if (ids.has(s)) edges.push({ id: `e${k++}`, source: s, target: r.id, relation: r, cls, end: "in" });
    for (const t of r.targets) if (ids.has(t)) edges.push({ id: `e${k++}`, source: r.id, target: t, relation: r, cls, end: "out" });
  }
  return edges;
}

// Whether a map can be compared with gold: it has gold relations and predictions of some run.
export function comparable(discourse) {
  return discourse.relations.some((r) => r.origin !== "predicted") &&
    discourse.relations.some((r) => r.origin === "predicted" && r.run_id);
}
