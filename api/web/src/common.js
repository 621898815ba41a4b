// Shared by the explorer and the workbench: API calls that read problem+json, escaping, colours.

export const $ = (id) => document.getElementById(id);

// A failed call as an Error whose message is the problem's status and detail (RFC 9457).
export class ApiProblem extends Error {
  constructor(status, detail, title) {
    super(`${status}: ${detail}`);
    this.status = status; this.detail = detail; this.title = title;
  }
}

export async function problemOf(res) {
  let detail = res.statusText; let title = "";
  try { const body = await res.json(); detail = body.detail || detail; title = body.title || ""; } catch (e) { /* not JSON */ }
  return new ApiProblem(res.status, detail, title);
}

export async function api(path, init) {
  const res = await fetch(path, { headers: { Accept: "application/json" }, ...(init || {}) });
  if (!res.ok) throw await problemOf(res);
  return res.json();
}

export function esc(text) {
  return String(text == null ? "" : text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function short(text, n) { return !text ? "" : text.length > n ? text.slice(0, n - 1) + "…" : text; }

export const KIND_COLORS = {
  Locution: "#6c8ebf", Proposition: "#82b366", Claim: "#b5739d", Premise: "#d6b656", Sentence: "#9aa5b1",
  Support: "#2e8b57", Attack: "#c0392b", Rephrase: "#8e44ad", DiscourseRelation: "#e67e22",
  Transition: "#7f8c8d", Illocution: "#95a5a6", NonRelation: "#bdc3c7", SameUnit: "#34495e", Relation: "#555",
};
export const UNIT_KINDS = new Set(["Locution", "Proposition", "Claim", "Premise", "Sentence"]);
export function color(kind) { return KIND_COLORS[kind] || "#777"; }

// Speakers get colours in the order they first speak (so a map keeps its colours on reload).
const SPEAKER_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
  "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"];
export function speakerColors(units) {
  const colors = new Map();
  for (const u of units) {
    if (u.speaker && !colors.has(u.speaker)) colors.set(u.speaker, SPEAKER_PALETTE[colors.size % SPEAKER_PALETTE.length]);
  }
  return colors;
}

// A pale version of a colour (for box backgrounds).
export function tint(hex, amount = 0.85) {
  const n = parseInt(hex.slice(1), 16);
  const mix = (c) => Math.round(c + (255 - c) * amount);
  const r = mix((n >> 16) & 255); const g = mix((n >> 8) & 255); const b = mix(n & 255);
  return `#${((1 << 24) + (r << 16) + (g << 8) + b).toString(16).slice(1)}`;
}

export const FONT_FAMILY = "system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif";

// Lines a label takes when wrapped at ``width`` pixels in ``font`` (at spaces, as Cytoscape wraps),
// so that a box is as tall as its text.
let measurer = null;
export function wrapLines(text, width, font) {
  if (!measurer) measurer = document.createElement("canvas").getContext("2d");
  measurer.font = font;
  const lines = [];
  for (const para of String(text || "").split("\n")) {
    let line = "";
    for (const word of para.split(" ")) {
      const next = line ? `${line} ${word}` : word;
      if (line && measurer.measureText(next).width > width) { lines.push(line); line = word; } else line = next;
    }
    lines.push(line);
  }
  return lines;
}

export function textWidth(text, font) {
  if (!measurer) measurer = document.createElement("canvas").getContext("2d");
  measurer.font = font;
  return measurer.measureText(text).width;
}

export function relationLabel(r) {
  const name = r.sense || r.scheme_label || r.kind;
  return r.origin === "predicted" && r.score != null ? `${name} ${r.score.toFixed(2)}` : name;
}

// Download a Blob under a file name.
export function save(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob); a.download = name;
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
