"""After the main job on the packaged samples, in headless Chromium (Debian's chromium): search by
meaning lands on its hit (the job wrote the vectors from the encoder cache its predictions filled),
and the workbench completes a label, draws a Cypher result as a graph, downloads it, keeps a
history and marks an error's position.

The workbench's graph result is saved as ``bench/out/workbench-graph.png``.
"""

from __future__ import annotations

import csv
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from neo4j import Driver
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from api.app import create_app
from api.cli.mainjob import step_summary
from api.services import mainjob
from api.settings import Settings
from bench.explorer import chromium
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from graphstore.vocabulary import graph_schema
from tests.conftest import ROOT, SAMPLES, serve_app, served_settings

pytestmark = pytest.mark.integration

OUT = ROOT / "bench" / "out"
MAP = "qt30:nodeset21318"
LOADED = "return document.body.dataset.loaded || ''"
# The editor's text replaced, the cursor at its end and the focus in it.
SET_QUERY = (
    "const v = window.argwebEditor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: arguments[0]}}); "
    "v.dispatch({selection: {anchor: v.state.doc.length}}); v.focus()"
)
OPTIONS = "return [...document.querySelectorAll('.cm-tooltip-autocomplete li')].map(li => li.textContent)"
DOC = "return window.argwebEditor.state.doc.toString()"


@dataclass(frozen=True)
class Served:
    """The main job's report and the API serving its graph."""

    report: mainjob.MainJobReport
    url: str
    driver: Driver


@pytest.fixture(scope="module")
def served(
    neo4j_server: EmbeddedNeo4j, driver: Driver, neo4j_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    GraphStore(driver).clear()
    tmp = tmp_path_factory.mktemp("mainjob-browser")
    settings = neo4j_settings.with_overrides(corpora=SAMPLES, oxigraph_store=tmp / "oxigraph")
    report = mainjob.run(settings, bulk=False, serve=False)
    with serve_app(create_app(served_settings(neo4j_server, tmp, "test-api-key-0123456789"))) as url:
        yield Served(report, url, driver)


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[webdriver.Chrome]:
    with chromium(downloads) as drv:
        yield drv


def _wait(browser: webdriver.Chrome, script: str, check: Any = bool, timeout: float = 120) -> Any:
    try:
        WebDriverWait(browser, timeout).until(lambda d: check(d.execute_script(script)))
    except TimeoutException as e:
        raise AssertionError(f"{script!r} never held; browser log: {browser.get_log('browser')}") from e
    return browser.execute_script(script)


def test_the_main_job_writes_vectors_from_the_cache_and_says_how_long(served: Served) -> None:
    steps = [s.name for s in served.report.steps]
    assert steps == ["load", "predict", "embed", "rdf"], steps
    embedded = served.report.embedded
    assert embedded is not None and sum(embedded.written.values()) > 0, embedded
    step = next(s for s in served.report.steps if s.name == "embed")
    assert step_summary(step).startswith(f"{sum(embedded.written.values()):,} vectors written, vector indexes online")
    # The texts the cache lacks are counted, not encoded.
    left = sum(embedded.uncached.values())
    assert left == sum(embedded.pending.values()) - sum(embedded.written.values())
    print(f"\nembedding step on the samples: {step.seconds:.2f} s ({step_summary(step)})")


def _unique_proposition(driver: Driver) -> dict[str, str]:
    """A QT30 proposition with a vector whose text no other embedded node has."""
    records, _, _ = driver.execute_query(
        "MATCH (p:Proposition {corpus: 'qt30'}) WHERE p.embedding_model IS NOT NULL AND size(p.text) > 40 "
        "AND COUNT { MATCH (o:Node {text: p.text}) WHERE o.embedding_model IS NOT NULL } = 1 "
        "MATCH (p)-[:PART_OF]->(d:Discourse) RETURN p.id AS id, p.text AS text, d.id AS discourse ORDER BY id LIMIT 1"
    )
    assert records, "no embedded QT30 proposition after the main job"
    return dict(records[0])


def test_search_by_meaning_after_the_main_job_lands_on_its_hit(served: Served, browser: webdriver.Chrome) -> None:
    target = _unique_proposition(served.driver)
    answer = requests.get(f"{served.url}/search", params={"q": target["text"], "semantic": "true"}, timeout=120)
    assert answer.status_code == 200, answer.text
    assert answer.json()["items"][0]["id"] == target["id"]
    browser.get(f"{served.url}/?corpus=molweni")
    _wait(browser, LOADED, lambda loaded: loaded.startswith("molweni:"))
    browser.find_element("id", "semantic").click()
    browser.find_element("id", "find").send_keys(target["text"], Keys.ENTER)
    _wait(browser, "return document.body.dataset.searched || ''")
    _wait(browser, LOADED, lambda loaded: loaded == target["discourse"])
    assert browser.execute_script("return window.argwebGraph.$(':selected').map(n => n.id())") == [target["id"]]
    assert browser.find_element("id", "semantic").is_selected()


def _downloaded(folder: Path, name: str, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = folder / name
        if path.is_file() and not list(folder.glob("*.crdownload")):
            return path
        time.sleep(0.2)
    raise AssertionError(f"{name} was not downloaded; {sorted(p.name for p in folder.iterdir())}")


def _node_ids(value: Any, found: set[str]) -> set[str]:
    """Ids of the nodes anywhere in a /cypher value (a node is a map of labels and properties)."""
    if isinstance(value, list):
        for v in value:
            _node_ids(v, found)
    elif isinstance(value, dict):
        if isinstance(value.get("labels"), list) and isinstance(value.get("properties"), dict):
            found.add(value["properties"]["id"])
        elif "start" in value and "end" in value and "type" in value:
            found.update(str(value[end]) for end in ("start", "end"))
        else:
            for v in value.values():
                _node_ids(v, found)
    return found


def test_the_workbench_completes_draws_a_graph_downloads_and_marks_errors(
    served: Served, browser: webdriver.Chrome, downloads: Path
) -> None:
    url = served.url
    schema = requests.get(f"{url}/schema", timeout=60).json()
    direct = graph_schema(served.driver)
    assert schema["labels"] == list(direct.labels) and "Proposition" in schema["labels"]
    assert "PART_OF" in schema["relationship_types"] and "text" in schema["property_keys"]
    assert schema["prefixes"]["aw"] == "https://w3id.org/argweb/ontology#" and "aw:Proposition" in schema["classes"]
    browser.get(f"{url}/workbench")
    browser.execute_script("localStorage.clear()")
    browser.get(f"{url}/workbench")
    _wait(browser, "return document.body.dataset.ready || ''")
    # Completion of a label from the graph's own schema.
    browser.execute_script(SET_QUERY, "")
    content = browser.find_element("css selector", "#editor .cm-content")
    content.click()
    content.send_keys("MATCH (p:Propo")
    options = _wait(browser, OPTIONS, lambda found: any(o.startswith("Proposition") for o in found), timeout=30)
    assert options[0].startswith("Proposition"), options
    content.send_keys(Keys.ENTER)
    assert browser.execute_script(DOC) == "MATCH (p:Proposition)"
    # A query whose result holds nodes and relationships, run with Ctrl+Enter, drawn as a graph.
    query = f"MATCH (u:Locution)-[r:PART_OF]->(d:Discourse {{id: '{MAP}'}}) RETURN u, r, d ORDER BY u.id"
    browser.execute_script(SET_QUERY, query)
    content.send_keys(Keys.CONTROL, Keys.ENTER)
    assert _wait(browser, "return document.body.dataset.done || ''") == "ok"
    expected = requests.post(f"{url}/cypher", json={"query": query}, timeout=60).json()
    ids = _node_ids(expected["rows"], set())
    assert expected["row_count"] > 1 and len(ids) == expected["row_count"] + 1
    drawn = browser.execute_script("return window.argwebResultGraph.nodes().map(n => n.id())")
    assert sorted(drawn) == sorted(ids)
    assert browser.execute_script("return window.argwebResultGraph.edges().length") == expected["row_count"]
    assert browser.find_element("id", "result-graph").is_displayed()
    OUT.mkdir(parents=True, exist_ok=True)
    browser.execute_script("document.getElementById('result-graph').scrollIntoView({block: 'end'})")
    shot = OUT / "workbench-graph.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    # The result as CSV (a header and one line per row) and as JSON.
    browser.find_element("id", "download-csv").click()
    with _downloaded(downloads, "cypher-result.csv").open(encoding="utf-8", newline="") as fh:
        lines = list(csv.reader(fh))
    assert lines[0] == expected["columns"] and len(lines) == expected["row_count"] + 1
    browser.find_element("id", "download-json").click()
    saved = _downloaded(downloads, "cypher-result.json").read_text(encoding="utf-8")
    assert f'"{MAP}"' in saved
    # The table holds the same rows.
    browser.find_element("id", "show-table").click()
    assert len(browser.find_elements("css selector", "#results tbody tr")) == expected["row_count"]
    # An error: the problem's detail, and its position marked in the editor.
    bad = "MATCH (n:Locution) RETRN n"
    browser.execute_script(SET_QUERY, bad)
    browser.find_element("id", "run").click()
    assert _wait(browser, "return document.body.dataset.done || ''") == "error"
    refused = requests.post(f"{url}/cypher", json={"query": bad}, timeout=60)
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    assert "line 1, column 20" in detail, detail
    assert detail in browser.find_element("id", "problem").text
    assert browser.execute_script("return document.body.dataset.errorAt") == "1:20"
    marked = browser.execute_script("return document.querySelector('.cm-lintRange-error')?.textContent")
    assert marked == "RETRN"
    # SPARQL: the ontology's classes complete, and the position Oxigraph names is marked.
    browser.find_element("id", "tab-sparql").click()
    browser.execute_script(SET_QUERY, "SELECT ?p WHERE { ?p a ")
    ActionChains(browser).send_keys("aw:Propo").perform()
    options = _wait(browser, OPTIONS, lambda found: any(o.startswith("aw:Proposition") for o in found), timeout=30)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert browser.execute_script(DOC).startswith("SELECT ?p WHERE { ?p a aw:Proposition"), options
    broken = "SELECT ?p WHERE { ?p a aw:Proposition . FILTR ?p }"
    browser.execute_script(SET_QUERY, broken)
    ActionChains(browser).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()
    assert _wait(browser, "return document.body.dataset.done || ''") == "error"
    answer = requests.post(
        f"{url}/sparql", data=broken, headers={"Content-Type": "application/sparql-query"}, timeout=60
    )
    assert answer.status_code == 400
    position = re.search(r"error at (\d+):(\d+)", answer.json()["detail"])
    assert position is not None, answer.json()
    assert browser.execute_script("return document.body.dataset.errorAt") == f"{position[1]}:{position[2]}"
    assert answer.json()["detail"] in browser.find_element("id", "problem").text
    # The history keeps the queries, newest first, after a reload.
    browser.get(f"{url}/workbench")
    _wait(browser, "return document.body.dataset.ready || ''")
    kept = [b.text for b in browser.find_elements("css selector", "#history .history-item")]
    assert kept[0] == f"sparql {broken}" and kept[1] == f"cypher {bad}" and any(MAP in k for k in kept), kept
    # A node of the graph opens in its map.
    browser.find_element("id", "tab-cypher").click()
    browser.execute_script(SET_QUERY, query)
    browser.find_element("id", "run").click()
    assert _wait(browser, "return document.body.dataset.done || ''") == "ok"
    unit = sorted(i for i in ids if i != MAP)[0]
    browser.execute_script("window.argwebResultGraph.getElementById(arguments[0]).emit('tap')", unit)
    _wait(browser, LOADED, lambda loaded: loaded == MAP)
    assert browser.execute_script("return window.argwebGraph.$(':selected').map(n => n.id())") == [unit]
