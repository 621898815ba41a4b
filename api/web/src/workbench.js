// The query workbench, as Neo4j Browser and the Fuseki UI users know one: a Cypher and a SPARQL
// editor (CodeMirror 6, highlighted, completing the graph's own labels, relationship types and
// property keys and the ontology's prefixes, classes and properties from /schema), Ctrl+Enter to
// run, a history kept in this browser, results as a table and, when a Cypher result holds nodes or
// relationships, as a graph drawn by the explorer's renderer (Cytoscape.js, its colours; a click
// on a node opens it in its map), downloads as CSV and JSON, and every error shown as the
// problem+json detail the API answers with its position marked in the editor.
import { basicSetup } from "codemirror";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { StreamLanguage } from "@codemirror/language";
import { cypher } from "@codemirror/legacy-modes/mode/cypher";
import { sparql } from "@codemirror/legacy-modes/mode/sparql";
import { autocompletion } from "@codemirror/autocomplete";
import { setDiagnostics } from "@codemirror/lint";
import cytoscape from "cytoscape";
import { $, api, color, esc, problemOf, save, short } from "./common.js";

const texts = { cypher: "MATCH (d:Dialogue) RETURN d.corpus AS corpus, count(*) AS dialogues ORDER BY corpus",
  sparql: "PREFIX aw: <https://w3id.org/argweb/ontology#>\nSELECT ?corpus (COUNT(?d) AS ?dialogues) WHERE {\n  ?d a aw:Dialogue ; aw:corpus ?corpus .\n} GROUP BY ?corpus ORDER BY ?corpus" };
const MODES = { cypher: StreamLanguage.define(cypher), sparql: StreamLanguage.define(sparql) };
const HISTORY_KEY = "argweb.workbench.history";
const HISTORY_MAX = 50;
let lang = "cypher";
let questions = [];
let schema = { labels: [], relationship_types: [], property_keys: [], prefixes: {}, classes: [], properties: [] };
let result = null; // the last answer: { lang, columns, rows }
let cy = null;
let editor = null;
const language = new Compartment();

// -- completion ---------------------------------------------------------------------------------

const CYPHER_WORDS = ["MATCH", "OPTIONAL MATCH", "WHERE", "RETURN", "WITH", "ORDER BY", "LIMIT", "SKIP", "UNWIND",
  "DISTINCT", "AS", "AND", "OR", "NOT", "IN", "CONTAINS", "STARTS WITH", "ENDS WITH", "IS NULL", "IS NOT NULL", "CALL",
  "YIELD", "UNION", "CASE", "WHEN", "THEN", "ELSE", "END", "EXISTS", "COUNT", "COLLECT", "DESC", "ASC"];
const CYPHER_FUNCTIONS = ["count", "collect", "size", "labels", "type", "keys", "properties", "startNode", "endNode",
  "nodes", "relationships", "coalesce", "toLower", "toUpper", "substring", "avg", "min", "max", "sum", "id", "elementId"];
const SPARQL_WORDS = ["PREFIX", "SELECT", "DISTINCT", "WHERE", "FILTER", "OPTIONAL", "UNION", "GRAPH", "ORDER BY",
  "GROUP BY", "HAVING", "LIMIT", "OFFSET", "ASK", "CONSTRUCT", "DESCRIBE", "COUNT", "BIND", "VALUES", "MINUS",
  "STR", "LANG", "REGEX", "CONTAINS", "a"];

// The innermost bracket open at ``pos`` ("(", "[" or "{"), strings skipped: a ":" inside "(" names
// a label, inside "[" a relationship type, inside "{" starts a map value.
function openBracket(text) {
  const stack = [];
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) { if (c === "\\") i++; else if (c === quote) quote = null; continue; }
    if (c === "'" || c === '"' || c === "`") quote = c;
    else if ("([{".includes(c)) stack.push(c);
    else if (")]}".includes(c)) stack.pop();
  }
  return stack.length ? stack[stack.length - 1] : null;
}

const option = (type, detail) => (label) => ({ label, type, detail });

function cypherCompletions(ctx) {
  const word = ctx.matchBefore(/\w*/);
  const before = ctx.state.doc.sliceString(0, word.from);
  const mark = before.slice(-1);
  if (mark === ":") {
    const inside = openBracket(before);
    if (inside === "{") return null;
    const names = inside === "[" ? schema.relationship_types : schema.labels;
    return { from: word.from, options: names.map(option("type", inside === "[" ? "relationship type" : "label")), validFor: /^\w*$/ };
  }
  if (mark === ".") return { from: word.from, options: schema.property_keys.map(option("property", "property key")), validFor: /^\w*$/ };
  if (word.from === word.to && !ctx.explicit) return null;
  return { from: word.from, validFor: /^\w*$/, options: [
    ...CYPHER_WORDS.map(option("keyword")), ...CYPHER_FUNCTIONS.map((f) => ({ label: f, type: "function", apply: `${f}(` })),
    ...schema.labels.map(option("type", "label")), ...schema.relationship_types.map(option("type", "relationship type")),
  ] };
}

function sparqlCompletions(ctx) {
  const word = ctx.matchBefore(/[\w-]*:?[\w-]*/);
  const line = ctx.state.doc.lineAt(ctx.pos);
  const head = ctx.state.doc.sliceString(line.from, word.from);
  const prefixes = Object.entries(schema.prefixes);
  if (/PREFIX\s+$/i.test(head)) {
    return { from: word.from, options: prefixes.map(([p, ns]) => ({ label: `${p}:`, apply: `${p}: <${ns}>`, type: "namespace", detail: ns })) };
  }
  const text = word.text;
  if (text.includes(":")) {
    const terms = [...schema.classes.map(option("class", "class")), ...schema.properties.map(option("property", "property"))];
    return { from: word.from, options: terms.filter((t) => t.label.startsWith(text.split(":")[0] + ":")), validFor: /^[\w-]*:?[\w-]*$/ };
  }
  if (word.from === word.to && !ctx.explicit) return null;
  return { from: word.from, validFor: /^[\w-]*$/, options: [
    ...SPARQL_WORDS.map(option("keyword")), ...prefixes.map(([p, ns]) => ({ label: `${p}:`, type: "namespace", detail: ns })),
    ...schema.classes.map(option("class", "class")), ...schema.properties.map(option("property", "property")),
  ] };
}

const completions = (ctx) => (lang === "cypher" ? cypherCompletions(ctx) : sparqlCompletions(ctx));

// -- editor -------------------------------------------------------------------------------------

function makeEditor() {
  editor = new EditorView({
    parent: $("editor"),
    state: EditorState.create({
      doc: texts[lang],
      extensions: [
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => { run(); return true; } }])),
        basicSetup,
        language.of(MODES[lang]),
        autocompletion({ override: [completions], activateOnTyping: true }),
        EditorView.lineWrapping,
      ],
    }),
  });
  window.argwebEditor = editor;
}

const query = () => editor.state.doc.toString();

function setQuery(text) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
}

function setLang(next) {
  texts[lang] = query();
  lang = next;
  editor.dispatch({ effects: language.reconfigure(MODES[lang]) });
  setQuery(texts[lang]);
  $("tab-cypher").classList.toggle("active", lang === "cypher");
  $("tab-sparql").classList.toggle("active", lang === "sparql");
  remember();
}

function remember(cq) {
  const params = new URLSearchParams();
  params.set("lang", lang);
  if (cq) params.set("cq", cq);
  history.replaceState(null, "", `/workbench?${params.toString()}`);
}

// Where an error is: Neo4j says "(line 1, column 8 (offset: 7))", Oxigraph "error at 1:8".
function errorPosition(detail) {
  const m = /line (\d+), column (\d+)/.exec(detail) || /error at (\d+):(\d+)/.exec(detail);
  if (!m) return null;
  const doc = editor.state.doc;
  const line = doc.line(Math.min(Math.max(Number(m[1]), 1), doc.lines));
  const from = Math.min(line.from + Math.max(Number(m[2]) - 1, 0), line.to);
  const word = /^\w+/.exec(doc.sliceString(from, line.to));
  return { line: line.number, column: from - line.from + 1, from, to: Math.max(from + (word ? word[0].length : 0), Math.min(from + 1, doc.length)) };
}

function markError(detail) {
  const at = errorPosition(detail);
  if (!at) return null;
  editor.dispatch(setDiagnostics(editor.state, [{ from: at.from, to: at.to, severity: "error", message: detail }]));
  editor.dispatch({ selection: { anchor: at.from }, scrollIntoView: true });
  document.body.dataset.errorAt = `${at.line}:${at.column}`;
  return at;
}

function clearMark() {
  if (!document.body.dataset.errorAt) return;
  delete document.body.dataset.errorAt;
  editor.dispatch(setDiagnostics(editor.state, []));
}

// -- history ------------------------------------------------------------------------------------

function readHistory() {
  try { return JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]"); } catch (e) { return []; }
}

function record(text) {
  const kept = readHistory().filter((h) => !(h.lang === lang && h.query === text));
  kept.unshift({ lang, query: text, at: new Date().toISOString() });
  try { localStorage.setItem(HISTORY_KEY, JSON.stringify(kept.slice(0, HISTORY_MAX))); } catch (e) { /* storage full or off */ }
  showHistory();
}

function showHistory() {
  const items = readHistory();
  $("history").innerHTML = items.length ? items.map((h, i) =>
    `<button type="button" class="history-item" data-i="${i}" title="${esc(h.at)}"><b>${esc(h.lang)}</b> ${esc(short(h.query.replace(/\s+/g, " "), 110))}</button>`).join("")
    : '<p class="muted">nothing run yet</p>';
  $("history").querySelectorAll(".history-item").forEach((b) => b.addEventListener("click", () => {
    const h = items[Number(b.dataset.i)];
    if (h.lang !== lang) setLang(h.lang);
    setQuery(h.query);
    editor.focus();
  }));
}

// -- results ------------------------------------------------------------------------------------

function cell(value) {
  if (value === null || value === undefined) return '<span class="muted">null</span>';
  if (typeof value === "object") return esc(JSON.stringify(value));
  return esc(value);
}

function table(columns, rows) {
  $("results").innerHTML = `<thead><tr>${columns.map((c) => `<th>${esc(c)}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map((v) => `<td>${cell(v)}</td>`).join("")}</tr>`).join("")}</tbody>`;
}

function showResult(columns, rows) {
  result = { lang, columns, rows };
  table(columns, rows);
  $("download-csv").disabled = false; $("download-json").disabled = false;
  const graph = lang === "cypher" ? graphOf(rows) : null;
  $("result-tabs").hidden = !graph;
  if (graph) { draw(graph); showTab("graph"); } else showTab("table");
}

function showTab(which) {
  $("show-table").classList.toggle("active", which === "table");
  $("show-graph").classList.toggle("active", which === "graph");
  $("table-wrap").hidden = which !== "table";
  $("result-graph").hidden = which !== "graph";
  $("graph-note").hidden = which !== "graph";
  if (which === "graph" && cy) { cy.resize(); cy.fit(undefined, 30); }
}

function problem(p) {
  const at = p.detail ? markError(p.detail) : null;
  $("problem").hidden = false;
  $("problem").textContent = `${p.status} ${p.title || ""}: ${p.detail}${at ? ` (marked at line ${at.line}, column ${at.column})` : ""}`;
  $("results").innerHTML = "";
  $("row-count").textContent = "";
  $("result-tabs").hidden = true; $("result-graph").hidden = true; $("graph-note").hidden = true; $("table-wrap").hidden = false;
  $("download-csv").disabled = true; $("download-json").disabled = true;
  result = null;
  document.body.dataset.done = "error";
}

// -- the graph of a Cypher result ---------------------------------------------------------------

const isNode = (v) => Array.isArray(v.labels) && v.properties && typeof v.properties === "object";
const isRel = (v) => typeof v.type === "string" && "start" in v && "end" in v && v.properties && typeof v.properties === "object";

// Every node and relationship anywhere in the rows (in lists, maps and paths), each once: nodes by
// their argweb id, relationships by ends, type and properties.
export function graphOf(rows) {
  const nodes = new Map(); const rels = new Map();
  const visit = (v) => {
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) { v.forEach(visit); return; }
    if (isNode(v)) { nodes.set(String(v.properties.id ?? JSON.stringify(v.properties)), v); return; }
    if (isRel(v)) { rels.set(`${v.start}|${v.type}|${v.end}|${JSON.stringify(v.properties)}`, v); return; }
    if (Array.isArray(v.nodes) && Array.isArray(v.relationships)) { v.nodes.forEach(visit); v.relationships.forEach(visit); return; }
    Object.values(v).forEach(visit);
  };
  rows.forEach(visit);
  if (!nodes.size && !rels.size) return null;
  // A relationship whose ends the result does not hold still shows them, as bare ids.
  for (const r of rels.values()) {
    for (const end of [r.start, r.end]) {
      if (end != null && !nodes.has(String(end))) nodes.set(String(end), { labels: [], properties: { id: end }, bare: true });
    }
  }
  return { nodes, rels: [...rels.values()].filter((r) => r.start != null && r.end != null) };
}

// The label a node is drawn as: its most specific one (Node is every argweb node's).
const kindOf = (n) => n.labels.find((l) => l !== "Node") || n.labels[0] || "";

function nodeLabel(n) {
  const p = n.properties;
  const text = p.text || p.name || p.title || p.id;
  return `${kindOf(n)}${kindOf(n) ? "\n" : ""}${short(String(text ?? ""), 60)}`;
}

function draw(graph) {
  if (cy) cy.destroy();
  const elements = [];
  for (const [id, n] of graph.nodes) {
    elements.push({ group: "nodes", data: { id, label: nodeLabel(n), kind: kindOf(n), color: n.bare ? "#d4d4d0" : color(kindOf(n)) } });
  }
  graph.rels.forEach((r, i) => elements.push({ group: "edges", data: { id: `r${i}`, source: String(r.start), target: String(r.end), label: r.type } }));
  $("result-graph").hidden = false;
  cy = cytoscape({
    container: $("result-graph"), elements, minZoom: 0.05, maxZoom: 3,
    style: [
      { selector: "node", style: { "background-color": "data(color)", label: "data(label)", "font-size": 10, "text-wrap": "wrap",
        "text-max-width": 140, "text-valign": "bottom", "text-margin-y": 4, width: 26, height: 26, "border-width": 1, "border-color": "#555" } },
      { selector: "edge", style: { width: 1.5, "line-color": "#9a9a94", "target-arrow-color": "#9a9a94", "target-arrow-shape": "triangle",
        "curve-style": "bezier", label: "data(label)", "font-size": 9, color: "#555", "text-rotation": "autorotate", "text-background-color": "#fff",
        "text-background-opacity": 0.85 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#111" } },
    ],
    layout: { name: graph.nodes.size > 400 ? "grid" : "cose", animate: false, fit: true, padding: 30, nodeDimensionsIncludeLabels: true },
  });
  // A node opens in its map: /data/<id> is the explorer focused on it.
  cy.on("tap", "node", (e) => { location.href = `/data/${encodeURIComponent(e.target.id())}`; });
  window.argwebResultGraph = cy;
  document.body.dataset.graphNodes = String(graph.nodes.size);
  $("graph-note").textContent = `${graph.nodes.size} nodes, ${graph.rels.length} relationships · a click on a node opens it in its map`;
}

// -- downloads ----------------------------------------------------------------------------------

function csvField(v) {
  const s = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(columns, rows) {
  return [columns, ...rows].map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n";
}

function download(kind) {
  if (!result) return;
  const name = `${result.lang}-result.${kind}`;
  const blob = kind === "csv"
    ? new Blob([toCsv(result.columns, result.rows)], { type: "text/csv;charset=utf-8" })
    : new Blob([JSON.stringify({ columns: result.columns, rows: result.rows }, null, 1)], { type: "application/json" });
  save(blob, name);
}

// -- running ------------------------------------------------------------------------------------

async function runCypher(text) {
  const res = await fetch("/cypher", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ query: text, parameters: {} }) });
  if (!res.ok) return problem(await problemOf(res));
  const body = await res.json();
  showResult(body.columns, body.rows);
  $("row-count").textContent = `${body.row_count} rows${body.truncated ? " (cut at the row limit)" : ""}`;
  document.body.dataset.rows = String(body.row_count);
  if (body.error) problem({ status: 400, title: "Stopped", detail: body.error });
}

// N-Triples lines as (subject, predicate, object) rows: the table form of CONSTRUCT/DESCRIBE.
function triples(text) {
  return text.split("\n").map((l) => l.trim()).filter(Boolean)
    .map((l) => { const m = l.match(/^(\S+)\s+(\S+)\s+(.*?)\s*\.$/); return m ? [m[1], m[2], m[3]] : [l, "", ""]; });
}

async function runSparql(text) {
  const res = await fetch("/sparql", { method: "POST", headers: { "Content-Type": "application/sparql-query",
    Accept: "application/sparql-results+json, application/n-triples;q=0.9" }, body: text });
  if (!res.ok) return problem(await problemOf(res));
  const type = (res.headers.get("content-type") || "").split(";")[0];
  let columns; let rows;
  if (type === "application/sparql-results+json") {
    const body = await res.json();
    if ("boolean" in body) { columns = ["ASK"]; rows = [[body.boolean]]; } else {
      columns = body.head.vars;
      rows = body.results.bindings.map((b) => columns.map((v) => (b[v] ? b[v].value : null)));
    }
  } else {
    columns = ["subject", "predicate", "object"]; rows = triples(await res.text());
  }
  showResult(columns, rows);
  $("row-count").textContent = `${rows.length} rows`;
  document.body.dataset.rows = String(rows.length);
}

async function run() {
  const text = query();
  texts[lang] = text;
  clearMark();
  $("problem").hidden = true;
  delete document.body.dataset.done; delete document.body.dataset.rows; delete document.body.dataset.graphNodes;
  $("row-count").textContent = "running…"; $("elapsed").textContent = "";
  record(text);
  const t0 = performance.now();
  try {
    if (lang === "cypher") await runCypher(text); else await runSparql(text);
  } catch (e) {
    problem({ status: 0, title: "Network", detail: e.message });
  }
  $("elapsed").textContent = `${Math.round(performance.now() - t0)} ms`;
  if (!document.body.dataset.done) document.body.dataset.done = "ok";
}

function runQuestion(q) {
  texts.cypher = q.cypher; texts.sparql = q.sparql;
  setQuery(texts[lang]);
  remember(q.name);
  document.querySelectorAll(".cq").forEach((b) => b.classList.toggle("active", b.dataset.name === q.name));
  return run();
}

async function main() {
  const params = new URLSearchParams(location.search);
  if (params.get("lang") === "sparql") lang = "sparql";
  makeEditor();
  setLang(lang);
  $("tab-cypher").addEventListener("click", () => setLang("cypher"));
  $("tab-sparql").addEventListener("click", () => setLang("sparql"));
  $("run").addEventListener("click", run);
  $("show-table").addEventListener("click", () => showTab("table"));
  $("show-graph").addEventListener("click", () => showTab("graph"));
  $("download-csv").addEventListener("click", () => download("csv"));
  $("download-json").addEventListener("click", () => download("json"));
  $("history-clear").addEventListener("click", () => { localStorage.removeItem(HISTORY_KEY); showHistory(); });
  showHistory();
  const [found, known] = await Promise.allSettled([api("/competency-questions"), api("/schema")]);
  if (found.status === "fulfilled") questions = found.value;
  else $("questions").innerHTML = `<p class="muted">${esc(found.reason.message)}</p>`;
  if (known.status === "fulfilled") schema = known.value;
  $("questions").innerHTML = questions.length ? questions.map((q) =>
    `<button type="button" class="cq" data-name="${esc(q.name)}">${esc(q.title)}<small>${esc(q.name)}${q.requires.length ? ` · ${esc(q.requires.join(", "))}` : ""}</small></button>`).join("")
    : $("questions").innerHTML;
  document.querySelectorAll(".cq").forEach((b) => b.addEventListener("click", () => runQuestion(questions.find((q) => q.name === b.dataset.name))));
  document.body.dataset.ready = "1";
  const wanted = questions.find((q) => q.name === params.get("cq"));
  if (wanted) await runQuestion(wanted);
}

main();
