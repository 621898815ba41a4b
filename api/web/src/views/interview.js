// An interview exchange (ContextDeP): the guest's turn and the host's turn, token by token. Gold
// highlights are shaded by the share of annotators who marked the token; a predicted paraphrase
// underlines the tokens its model highlights. Between the turns: the gold relation and the
// predicted one with its score and model.
import { color, esc, relationLabel } from "../common.js";
import { keptRelations } from "../model.js";

const SVG = "http://www.w3.org/2000/svg";

export function render(container, discourse, filters, hooks, speakerColor) {
  const turns = discourse.units.filter((u) => u.kind === "Locution")
    .sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const relations = keptRelations(discourse, filters);
  const predicted = new Map(); // unit id -> Set of token positions (of the predicted relations)
  for (const r of relations.filter((x) => x.origin === "predicted")) {
    for (const [ends, tokens] of [[r.sources, r.source_tokens], [r.targets, r.target_tokens]]) {
      for (const id of ends) {
        if (!predicted.has(id)) predicted.set(id, new Set());
        for (const t of tokens || []) predicted.get(id).add(t);
      }
    }
  }
  const card = (u) => {
    const tokens = (u.properties && u.properties.tokens) || u.text.split(/\s+/);
    const shares = (u.properties && u.properties.highlights) || [];
    const mine = predicted.get(u.id) || new Set();
    const sc = speakerColor(u.speaker || "speaker");
    const body = tokens.map((t, i) => {
      const share = Number(shares[i] || 0);
      const cls = `tok${mine.has(i) ? " pred" : ""}${share >= 0.5 ? " gold" : ""}`;
      return `<span class="${cls}" data-i="${i}" title="gold share ${share.toFixed(2)}${mine.has(i) ? " · predicted" : ""}" style="background:rgba(245,176,65,${(share * 0.85).toFixed(3)})">${esc(t)}</span>`;
    }).join(" ");
    return `<section class="turn" data-id="${esc(u.id)}" style="border-color:${sc}"><h3 style="color:${sc}">${esc(u.speaker || "speaker")}</h3><div class="tokens">${body}</div></section>`;
  };
  const relRow = (r) => `<button type="button" class="rel ${r.origin}" data-id="${esc(r.id)}" style="border-color:${color(r.kind)};color:${color(r.kind)}">` +
    `${esc(r.origin)} · ${esc(relationLabel(r))}${r.model ? ` · ${esc(r.model)} ${esc(r.model_version || "")}` : ""}</button>`;
  const between = `<div class="relations">${relations.map(relRow).join("") || '<span class="muted">no relation</span>'}</div>`;
  const body = turns.length ? card(turns[0]) + between + turns.slice(1).map(card).join("") : between;
  container.innerHTML = `<div class="interview">${body}` +
    `<p class="muted key"><span class="tok" style="background:rgba(245,176,65,.7)">shaded</span> gold: share of annotators who highlighted the token · ` +
    `<span class="tok pred">underlined</span> predicted by the model</p></div>`;
  const byId = new Map(discourse.units.map((u) => [u.id, u]));
  const relById = new Map(relations.map((r) => [r.id, r]));
  const select = (id) => {
    container.querySelectorAll(".selected").forEach((el) => el.classList.remove("selected"));
    const el = container.querySelector(`[data-id="${CSS.escape(id)}"]`);
    if (el) el.classList.add("selected");
    return el;
  };
  container.querySelectorAll(".turn").forEach((el) => el.addEventListener("click", () => {
    const u = byId.get(el.dataset.id); select(u.id); hooks.onSelect({ id: u.id, kind: u.kind, unit: u });
  }));
  container.querySelectorAll(".rel").forEach((el) => el.addEventListener("click", () => {
    const r = relById.get(el.dataset.id); select(r.id); hooks.onSelect({ id: r.id, kind: r.kind, relation: r });
  }));
  return {
    counts: { nodes: turns.length, edges: relations.length },
    selected: () => { const el = container.querySelector(".selected"); return el ? el.dataset.id : null; },
    focus(id) {
      const u = byId.get(id); const r = relById.get(id);
      if (!u && !r) return false;
      select(id);
      hooks.onSelect(u ? { id, kind: u.kind, unit: u } : { id, kind: r.kind, relation: r });
      return true;
    },
    fade(speaker) {
      container.querySelectorAll(".turn").forEach((el) => el.classList.toggle("faded", !!speaker && byId.get(el.dataset.id).speaker !== speaker));
    },
    destroy() { container.innerHTML = ""; },
    svgText: () => interviewSvg(container),
    element: container.querySelector(".interview"),
  };
}

// The exchange as an SVG document: each token's box (shaded as on the page) and text.
function interviewSvg(container) {
  const root = container.querySelector(".interview");
  const box = root.getBoundingClientRect();
  const parts = [];
  const at = (r) => `x="${(r.left - box.left).toFixed(1)}" y="${(r.top - box.top).toFixed(1)}" width="${r.width.toFixed(1)}" height="${r.height.toFixed(1)}"`;
  root.querySelectorAll(".turn, .rel").forEach((el) => {
    const cs = getComputedStyle(el);
    parts.push(`<rect ${at(el.getBoundingClientRect())} rx="6" fill="${cs.backgroundColor}" stroke="${cs.borderTopColor}" stroke-width="1.5"/>`);
  });
  root.querySelectorAll("h3, .tok, .rel, .key").forEach((el) => {
    const r = el.getBoundingClientRect(); const cs = getComputedStyle(el);
    if (el.classList.contains("tok")) {
      parts.push(`<rect ${at(r)} fill="${cs.backgroundColor}"/>`);
      if (el.classList.contains("pred")) parts.push(`<line x1="${r.left - box.left}" x2="${r.right - box.left}" y1="${r.bottom - box.top}" y2="${r.bottom - box.top}" stroke="#7b2cbf" stroke-width="2"/>`);
    }
    if (!el.classList.contains("key")) {
      parts.push(`<text x="${(r.left - box.left + (el.classList.contains("rel") ? 8 : 0)).toFixed(1)}" y="${(r.bottom - box.top - 5).toFixed(1)}" font-size="${cs.fontSize}" font-weight="${cs.fontWeight}" fill="${cs.color}" font-family="system-ui, sans-serif">${esc(el.textContent)}</text>`);
    }
  });
  return `<svg xmlns="${SVG}" width="${root.scrollWidth}" height="${root.scrollHeight}" viewBox="0 0 ${root.scrollWidth} ${root.scrollHeight}"><rect width="100%" height="100%" fill="#fff"/>${parts.join("")}</svg>`;
}
