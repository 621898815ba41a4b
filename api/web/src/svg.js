// A drawn Cytoscape graph as a standalone SVG document: node shapes with their fill and border,
// wrapped labels, edges as drawn (straight, bezier or taxi) with arrowheads, predicted dashed.
import { esc, textWidth, wrapLines } from "./common.js";

const NS = "http://www.w3.org/2000/svg";
function shape(n, fill, stroke, width, dash) {
  const { x, y } = n.position(); const w = n.width(); const h = n.height();
  const common = `fill="${fill}" stroke="${stroke}" stroke-width="${width}"${dash ? ' stroke-dasharray="4 3"' : ""}`;
  const kind = n.style("shape");
  if (kind === "ellipse") return `<ellipse cx="${x}" cy="${y}" rx="${w / 2}" ry="${h / 2}" ${common}/>`;
  if (kind === "diamond") return `<polygon points="${x},${y - h / 2} ${x + w / 2},${y} ${x},${y + h / 2} ${x - w / 2},${y}" ${common}/>`;
  const r = kind === "round-rectangle" ? Math.min(8, w / 4, h / 4) : 0;
  return `<rect x="${x - w / 2}" y="${y - h / 2}" width="${w}" height="${h}" rx="${r}" ${common}/>`;
}

function label(n) {
  const text = n.style("label");
  if (!text) return "";
  const size = parseFloat(n.style("font-size")) || 11;
  const weight = n.style("font-weight") || "normal";
  const family = n.style("font-family");
  const max = n.style("text-wrap") === "wrap" ? parseFloat(n.style("text-max-width")) || 200 : Infinity;
  const lines = wrapLines(text, max, `${weight} ${size}px ${family}`);
  const { x, y } = n.position();
  const halign = n.style("text-halign"); const valign = n.style("text-valign");
  const lh = size * (parseFloat(n.style("line-height")) || 1);
  let tx = x; let anchor = "middle";
  if (halign === "center" && n.style("text-justification") === "left") {
    tx = x - Math.max(...lines.map((l) => textWidth(l, `${weight} ${size}px ${family}`))) / 2; anchor = "start";
  }
  if (halign === "right") { tx = x + n.width() / 2 + (parseFloat(n.style("text-margin-x")) || 0); anchor = "start"; }
  if (halign === "left") { tx = x - n.width() / 2 - (parseFloat(n.style("text-margin-x")) || 0); anchor = "end"; }
  let top = y - (lines.length * lh) / 2;
  if (valign === "top") top = y - n.height() / 2 - lines.length * lh;
  if (valign === "bottom") top = y + n.height() / 2;
  const fill = n.style("color");
  return `<text x="${tx}" font-size="${size}" font-weight="${weight}" font-family="${esc(family)}" text-anchor="${anchor}" fill="${fill}">` +
    lines.map((l, i) => `<tspan x="${tx}" y="${top + (i + 0.8) * lh}">${esc(l)}</tspan>`).join("") + "</text>";
}

function edgePath(e) {
  const s = e.sourceEndpoint(); const t = e.targetEndpoint();
  const curve = e.style("curve-style");
  if (curve === "taxi" || curve === "segments") {
    const pts = e.segmentPoints() || [];
    return { d: `M ${s.x} ${s.y} ${pts.map((p) => `L ${p.x} ${p.y}`).join(" ")} L ${t.x} ${t.y}`, from: pts.length ? pts[pts.length - 1] : s };
  }
  if (curve === "bezier" || curve === "unbundled-bezier") {
    const cps = e.controlPoints();
    if (cps && cps.length) {
      return { d: `M ${s.x} ${s.y} Q ${cps[0].x} ${cps[0].y} ${t.x} ${t.y}`, from: cps[cps.length - 1] };
    }
  }
  return { d: `M ${s.x} ${s.y} L ${t.x} ${t.y}`, from: s };
}

function arrow(from, to, size, fill) {
  const a = Math.atan2(to.y - from.y, to.x - from.x);
  const p = (da, r) => `${to.x - r * Math.cos(a + da)},${to.y - r * Math.sin(a + da)}`;
  return `<polygon points="${to.x},${to.y} ${p(0.45, size)} ${p(-0.45, size)}" fill="${fill}"/>`;
}

export function graphSvg(cy) {
  const eles = cy.elements(":visible");
  const bb = eles.boundingBox({ includeLabels: true });
  const pad = 20;
  const parts = [];
  cy.edges(":visible").forEach((e) => {
    const c = e.style("line-color"); const w = parseFloat(e.style("width")) || 1;
    const opacity = parseFloat(e.style("opacity")) * parseFloat(e.style("line-opacity") || 1);
    const dash = e.style("line-style") === "dashed" ? ' stroke-dasharray="5 3"' : "";
    const { d, from } = edgePath(e);
    parts.push(`<g opacity="${opacity}"><path d="${d}" fill="none" stroke="${c}" stroke-width="${w}"${dash}/>` +
      (e.style("target-arrow-shape") !== "none" ? arrow(from, e.targetEndpoint(), 7 * (parseFloat(e.style("arrow-scale")) || 1), c) : "") + "</g>");
  });
  cy.nodes(":visible").forEach((n) => {
    const opacity = parseFloat(n.style("opacity"));
    const bw = parseFloat(n.style("border-width")) || 0;
    const fill = n.style("background-color");
    const dashed = n.style("border-style") === "dashed";
    parts.push(`<g opacity="${opacity}">${shape(n, fill, bw ? n.style("border-color") : "none", bw, dashed)}${label(n)}</g>`);
  });
  const w = bb.w + 2 * pad; const h = bb.h + 2 * pad;
  return `<svg xmlns="${NS}" width="${w}" height="${h}" viewBox="${bb.x1 - pad} ${bb.y1 - pad} ${w} ${h}">` +
    `<rect x="${bb.x1 - pad}" y="${bb.y1 - pad}" width="${w}" height="${h}" fill="#fff"/>${parts.join("")}</svg>`;
}

// An SVG document drawn onto a canvas: a PNG Blob (for the HTML views, which Cytoscape does not draw).
export function svgToPng(svgText, scale = 1.5) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    const url = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.ceil(img.width * scale); canvas.height = Math.ceil(img.height * scale);
      const ctx = canvas.getContext("2d");
      ctx.scale(scale, scale); ctx.drawImage(img, 0, 0);
      URL.revokeObjectURL(url);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the image is too large for a PNG"))), "image/png");
    };
    img.onerror = () => { URL.revokeObjectURL(url); reject(new Error("could not draw the SVG")); };
    img.src = url;
  });
}
