// The query workbench: a Cypher and a SPARQL editor over the read-only /cypher and /sparql
// endpoints, results as a table, the competency questions one click away, and every error shown
// as the problem+json detail the API answers.
import { $, api, esc, problemOf } from "./common.js";

const texts = { cypher: "MATCH (d:Dialogue) RETURN d.corpus AS corpus, count(*) AS dialogues ORDER BY corpus",
  sparql: "PREFIX aw: <https://w3id.org/argweb/ontology#>\nSELECT ?corpus (COUNT(?d) AS ?dialogues) WHERE {\n  ?d a aw:Dialogue ; aw:corpus ?corpus .\n} GROUP BY ?corpus ORDER BY ?corpus" };
let lang = "cypher";
let questions = [];

function setLang(next) {
  texts[lang] = $("query").value;
  lang = next;
  $("query").value = texts[lang];
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

function cell(value) {
  if (value === null || value === undefined) return '<span class="muted">null</span>';
  if (typeof value === "object") return esc(JSON.stringify(value));
  return esc(value);
}

function table(columns, rows) {
  $("results").innerHTML = `<thead><tr>${columns.map((c) => `<th>${esc(c)}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map((v) => `<td>${cell(v)}</td>`).join("")}</tr>`).join("")}</tbody>`;
}

function problem(p) {
  $("problem").hidden = false;
  $("problem").textContent = `${p.status} ${p.title || ""}: ${p.detail}`;
  $("results").innerHTML = "";
  $("row-count").textContent = "";
  document.body.dataset.done = "error";
}

async function runCypher(query) {
  const res = await fetch("/cypher", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ query, parameters: {} }) });
  if (!res.ok) return problem(await problemOf(res));
  const body = await res.json();
  table(body.columns, body.rows);
  $("row-count").textContent = `${body.row_count} rows${body.truncated ? " (cut at the row limit)" : ""}`;
  document.body.dataset.rows = String(body.row_count);
  if (body.error) problem({ status: 400, title: "Stopped", detail: body.error });
}

// N-Triples lines as (subject, predicate, object) rows: the table form of CONSTRUCT/DESCRIBE.
function triples(text) {
  return text.split("\n").map((l) => l.trim()).filter(Boolean)
    .map((l) => { const m = l.match(/^(\S+)\s+(\S+)\s+(.*?)\s*\.$/); return m ? [m[1], m[2], m[3]] : [l, "", ""]; });
}

async function runSparql(query) {
  const res = await fetch("/sparql", { method: "POST", headers: { "Content-Type": "application/sparql-query",
    Accept: "application/sparql-results+json, application/n-triples;q=0.9" }, body: query });
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
  table(columns, rows);
  $("row-count").textContent = `${rows.length} rows`;
  document.body.dataset.rows = String(rows.length);
}

async function run() {
  const query = $("query").value;
  texts[lang] = query;
  $("problem").hidden = true;
  delete document.body.dataset.done; delete document.body.dataset.rows;
  $("row-count").textContent = "running…"; $("elapsed").textContent = "";
  const t0 = performance.now();
  try {
    if (lang === "cypher") await runCypher(query); else await runSparql(query);
  } catch (e) {
    problem({ status: 0, title: "Network", detail: e.message });
  }
  $("elapsed").textContent = `${Math.round(performance.now() - t0)} ms`;
  if (!document.body.dataset.done) document.body.dataset.done = "ok";
}

function runQuestion(q) {
  texts.cypher = q.cypher; texts.sparql = q.sparql;
  $("query").value = texts[lang];
  remember(q.name);
  document.querySelectorAll(".cq").forEach((b) => b.classList.toggle("active", b.dataset.name === q.name));
  return run();
}

async function main() {
  const params = new URLSearchParams(location.search);
  if (params.get("lang") === "sparql") lang = "sparql";
  $("query").value = texts[lang];
  setLang(lang);
  $("tab-cypher").addEventListener("click", () => setLang("cypher"));
  $("tab-sparql").addEventListener("click", () => setLang("sparql"));
  $("run").addEventListener("click", run);
  $("query").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); } });
  try {
    questions = await api("/competency-questions");
  } catch (e) {
    $("questions").innerHTML = `<p class="muted">${esc(e.message)}</p>`;
  }
  $("questions").innerHTML = questions.map((q) =>
    `<button type="button" class="cq" data-name="${esc(q.name)}">${esc(q.title)}<small>${esc(q.name)}${q.requires.length ? ` · ${esc(q.requires.join(", "))}` : ""}</small></button>`).join("");
  document.querySelectorAll(".cq").forEach((b) => b.addEventListener("click", () => runQuestion(questions.find((q) => q.name === b.dataset.name))));
  document.body.dataset.ready = "1";
  const wanted = questions.find((q) => q.name === params.get("cq"));
  if (wanted) await runQuestion(wanted);
}

main();
