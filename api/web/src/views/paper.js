// A Sci-Arg paper as text, brat-like: the paper's sentences in order with each argument component
// highlighted by type, and each relation as an arc in the right margin from the component it
// leaves to the one it enters (arrow), labelled with its type. Hovering over an arc or a span shows
// both ends; a click shows the details.
import { color, esc, relationLabel } from "../common.js";
import { keptRelations } from "../model.js";

const COMPONENT_COLORS = { background_claim: "#f3d9a4", own_claim: "#f6b3b3", data: "#bcd9f2" };
const SVG = "http://www.w3.org/2000/svg";

function spansOf(u) {
  const p = u.properties || {};
  if (typeof p.spans === "string" && p.spans.trim()) {
    return p.spans.split(";").map((s) => s.trim().split(/\s+/).map(Number)).filter((s) => s.length === 2 && s.every(Number.isFinite));
  }
  return p.char_start != null && p.char_end != null ? [[p.char_start, p.char_end]] : [];
}

export function componentColor(u) {
  const label = (u.properties && u.properties.scheme_label) || "";
  return COMPONENT_COLORS[label] || "#e5e7eb";
}

// The paper's text from its sentences (each at its character offset) and the components' spans.
function layoutText(discourse) {
  const sentences = discourse.units.filter((u) => u.kind === "Sentence" && u.properties.char_start != null)
    .sort((a, b) => a.properties.char_start - b.properties.char_start);
  const components = discourse.units.filter((u) => u.kind !== "Sentence" && spansOf(u).length);
  const cuts = new Set();
  const paragraphs = [];
  let prevEnd = null;
  for (const s of sentences) {
    const start = s.properties.char_start;
    if (prevEnd === null || start - prevEnd > 1) paragraphs.push([]);
    paragraphs[paragraphs.length - 1].push(s);
    prevEnd = s.properties.char_end;
  }
  for (const c of components) for (const [a, b] of spansOf(c)) { cuts.add(a); cuts.add(b); }
  return { sentences, components, paragraphs, cuts };
}

export function render(container, discourse, filters, hooks) {
  const { components, paragraphs, cuts } = layoutText(discourse);
  const relations = keptRelations(discourse, filters).filter((r) => r.sources.length && r.targets.length);
  const covering = (a, b) => components.filter((c) => spansOf(c).some(([s, e]) => s <= a && b <= e));
  const html = [];
  for (const para of paragraphs) {
    html.push("<p>");
    for (const s of para) {
      const start = s.properties.char_start; const text = s.text;
      const points = [0, text.length, ...[...cuts].map((c) => c - start).filter((c) => c > 0 && c < text.length)].sort((a, b) => a - b);
      for (let i = 0; i + 1 < points.length; i++) {
        const [a, b] = [points[i], points[i + 1]];
        if (a === b) continue;
        const piece = esc(text.slice(a, b));
        const over = covering(start + a, start + b);
        if (over.length) {
          const inner = over.reduce((m, c) => (spansOf(c)[0][1] - spansOf(c)[0][0] < spansOf(m)[0][1] - spansOf(m)[0][0] ? c : m));
          const first = spansOf(inner)[0][0] === start + a ? ` data-first="1"` : "";
          const tag = first ? `<sup class="tag">${esc((inner.properties.scheme_label || inner.kind).replace(/_/g, " "))}</sup>` : "";
          html.push(`<span class="comp" data-id="${esc(inner.id)}"${first} style="background:${componentColor(inner)}">${tag}${piece}</span>`);
        } else html.push(piece);
      }
      html.push(" ");
    }
    html.push("</p>");
  }
  container.innerHTML = `<div class="paper"><div class="paper-text">${html.join("")}</div><svg class="arcs" xmlns="${SVG}"></svg></div>`;
  const paper = container.querySelector(".paper");
  const svg = container.querySelector("svg.arcs");
  const spanEls = new Map();
  container.querySelectorAll(".comp").forEach((el) => {
    const id = el.dataset.id;
    if (!spanEls.has(id)) spanEls.set(id, []);
    spanEls.get(id).push(el);
  });
  const drawn = relations.filter((r) => spanEls.has(r.sources[0]) && spanEls.has(r.targets[0]));

  function drawArcs() {
    const box = paper.getBoundingClientRect();
    const textBox = container.querySelector(".paper-text").getBoundingClientRect();
    const gutter = textBox.right - box.left + 12;
    svg.setAttribute("width", String(paper.scrollWidth)); svg.setAttribute("height", String(paper.scrollHeight));
    const yOf = (id) => { const r = spanEls.get(id)[0].getBoundingClientRect(); return r.top - box.top + r.height / 2; };
    const arcs = drawn.map((r) => ({ r, ys: yOf(r.sources[0]), yt: yOf(r.targets[0]) }))
      .sort((a, b) => Math.abs(a.ys - a.yt) - Math.abs(b.ys - b.yt));
    const columns = [];
    // Labels are moved up or down a line, then further right, until they cover no other label.
    const labels = [];
    const SHIFTS = [0, 11, -11, 22, -22, 33, -33, 44, -44, 55, -55];
    const labelAt = (x, y, text) => {
      const w = text.length * 5.4 + 4;
      for (const dx of [0, 70, 140]) {
        for (const dy of SHIFTS) {
          const box = { x1: x + dx, x2: x + dx + w, y1: y + dy - 9, y2: y + dy + 2 };
          if (labels.every((b) => box.x2 < b.x1 || box.x1 > b.x2 || box.y2 < b.y1 || box.y1 > b.y2)) { labels.push(box); return [x + dx, y + dy]; }
        }
      }
      return [x, y];
    };
    const parts = [`<defs>${[...new Set(arcs.map((a) => a.r.kind))].map((k) =>
      `<marker id="arrow-${k}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${color(k)}"/></marker>`).join("")}</defs>`];
    for (const a of arcs) {
      const lo = Math.min(a.ys, a.yt); const hi = Math.max(a.ys, a.yt);
      let k = 0;
      while (columns[k] && columns[k].some(([l, h]) => !(hi < l - 4 || lo > h + 4))) k++;
      (columns[k] = columns[k] || []).push([lo, hi]);
      const bulge = 18 + k * 16;
      const c = color(a.r.kind);
      const dash = a.r.origin === "predicted" ? ` stroke-dasharray="5 3"` : "";
      const d = `M ${gutter} ${a.ys} C ${gutter + bulge} ${a.ys}, ${gutter + bulge} ${a.yt}, ${gutter + 2} ${a.yt}`;
      const [lx, ly] = labelAt(gutter + bulge * 0.75 + 3, (a.ys + a.yt) / 2 + 3, relationLabel(a.r));
      parts.push(`<g class="arc" data-id="${esc(a.r.id)}"><path d="${d}" fill="none" stroke="${c}" stroke-width="1.6"${dash} marker-end="url(#arrow-${a.r.kind})"/>` +
        `<path d="${d}" fill="none" stroke="transparent" stroke-width="9"/>` +
        `<text x="${lx}" y="${ly}" font-size="9.5" fill="${c}" stroke="#fff" stroke-width="3" paint-order="stroke">${esc(relationLabel(a.r))}</text></g>`);
    }
    svg.innerHTML = parts.join("");
    svg.querySelectorAll("g.arc").forEach((g) => {
      const r = drawn.find((x) => x.id === g.dataset.id);
      g.addEventListener("mouseenter", () => mark(r, true));
      g.addEventListener("mouseleave", () => mark(r, false));
      g.addEventListener("click", () => { select(r.id); hooks.onSelect({ id: r.id, kind: r.kind, relation: r }); });
    });
  }
  function mark(r, on) {
    for (const id of [...r.sources, ...r.targets]) (spanEls.get(id) || []).forEach((el) => el.classList.toggle("linked", on));
    const g = svg.querySelector(`g.arc[data-id="${CSS.escape(r.id)}"]`);
    if (g) g.classList.toggle("linked", on);
  }
  function select(id) {
    container.querySelectorAll(".selected").forEach((el) => el.classList.remove("selected"));
    (spanEls.get(id) || []).forEach((el) => el.classList.add("selected"));
    const g = svg.querySelector(`g.arc[data-id="${CSS.escape(id)}"]`);
    if (g) g.classList.add("selected");
  }
  const byId = new Map(discourse.units.map((u) => [u.id, u]));
  container.querySelectorAll(".comp").forEach((el) => {
    el.addEventListener("click", () => { const u = byId.get(el.dataset.id); select(u.id); hooks.onSelect({ id: u.id, kind: u.kind, unit: u }); });
    el.addEventListener("mouseenter", () => drawn.filter((r) => r.sources.includes(el.dataset.id) || r.targets.includes(el.dataset.id)).forEach((r) => mark(r, true)));
    el.addEventListener("mouseleave", () => drawn.forEach((r) => mark(r, false)));
  });
  drawArcs();
  const resize = new ResizeObserver(() => drawArcs());
  resize.observe(paper);
  // Open at the first annotated paragraph (the title and front matter carry no components).
  const first = container.querySelector(".comp");
  if (first) container.scrollTop = Math.max(0, first.closest("p").offsetTop - 24);
  return {
    counts: { nodes: spanEls.size, edges: drawn.length },
    selected: () => { const el = container.querySelector(".comp.selected, g.arc.selected"); return el ? el.dataset.id : null; },
    focus(id) {
      const u = byId.get(id); const r = drawn.find((x) => x.id === id);
      if (!u && !r) return false;
      select(id);
      const el = (spanEls.get(id) || [])[0] || (r && (spanEls.get(r.sources[0]) || [])[0]);
      if (el) el.scrollIntoView({ block: "center" });
      hooks.onSelect(u ? { id, kind: u.kind, unit: u } : { id, kind: r.kind, relation: r });
      return true;
    },
    fade() { /* papers have no speakers */ },
    destroy() { resize.disconnect(); container.innerHTML = ""; },
    svgText: () => paperSvg(container),
    element: paper,
  };
}

// The paper view as one SVG document (text as foreignObject would not survive every viewer: the
// spans become rectangles and text lines).
function paperSvg(container) {
  const paper = container.querySelector(".paper");
  const box = paper.getBoundingClientRect();
  const parts = [];
  container.querySelectorAll(".paper-text p").forEach((p) => {
    const range = document.createRange();
    for (const node of p.childNodes) {
      const el = node.nodeType === 1 ? node : null;
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) {
        if (el) parts.push(`<rect x="${rect.left - box.left}" y="${rect.top - box.top}" width="${rect.width}" height="${rect.height}" fill="${el.style.background || "none"}"/>`);
      }
    }
  });
  const walker = document.createTreeWalker(container.querySelector(".paper-text"), NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (walker.nextNode()) {
    const t = walker.currentNode; const text = t.textContent;
    let lineTop = null; let from = 0;
    const flush = (to, rect) => {
      const piece = text.slice(from, to);
      if (piece.trim()) parts.push(`<text x="${rect.left - box.left}" y="${rect.bottom - box.top - 4}" font-size="14" font-family="system-ui, sans-serif">${esc(piece)}</text>`);
    };
    let firstRect = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(t, i); range.setEnd(t, i + 1);
      const r = range.getBoundingClientRect();
      if (lineTop === null) { lineTop = r.top; firstRect = r; }
      else if (Math.abs(r.top - lineTop) > 3 && r.width > 0) { flush(i, firstRect); from = i; lineTop = r.top; firstRect = r; }
    }
    if (firstRect) flush(text.length, firstRect);
  }
  const arcs = container.querySelector("svg.arcs").innerHTML;
  return `<svg xmlns="${SVG}" width="${paper.scrollWidth}" height="${paper.scrollHeight}" viewBox="0 0 ${paper.scrollWidth} ${paper.scrollHeight}">` +
    `<rect width="100%" height="100%" fill="#fff"/>${parts.join("")}${arcs}</svg>`;
}
