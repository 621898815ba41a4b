"""The compare view and the dashboard in a real browser (Debian's headless Chromium), on the samples.

The compare view of a map shows the counts the comparison route answers, and the route's counts
are those computed here from the graph's gold and predicted edges by the test's own Cypher.
Screenshots go to ``bench/out/explorer-compare.png`` and ``bench/out/dashboard-qt30.png``; the
time the compare view of the largest sample map takes to draw is printed (``pytest -s``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from selenium.webdriver.support.ui import Select, WebDriverWait

from bench.explorer import chromium, open_timed
from tests.conftest import ROOT
from tests.integration.api.compare_support import RUN_A, RUN_B, ComparedMap, delete_runs, expected, write_runs
from tests.integration.api.conftest import ApiGraph

OUT = ROOT / "bench" / "out"
KEYS = ("gold", "predicted", "matched", "other_type", "missed")
PANEL = (
    "return Object.fromEntries([...document.querySelectorAll('#compare-panel tr[data-type]')].map(tr => "
    "[tr.dataset.type, Object.fromEntries([...tr.querySelectorAll('td')].map(td => [td.dataset.k, td.textContent]))]))"
)
DRAWN_MARKS = (
    "return Object.fromEntries(window.argwebGraph.nodes('.relation').filter(n => n.data('cmp'))"
    ".map(n => [n.id(), n.data('cmp')]))"
)


@pytest.fixture(scope="module")
def compared(api_graph: ApiGraph) -> Iterator[ComparedMap]:
    try:
        yield write_runs(api_graph.driver)
    finally:
        delete_runs(api_graph.driver)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


def _route(live_url: str, map_id: str, run: str) -> dict[str, Any]:
    r = requests.get(f"{live_url}/discourses/{map_id}/comparison", params={"run": run}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def _route_counts(body: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    out = {t["type"]: tuple(t[k] for k in KEYS) for t in body["types"]}
    out["micro"] = tuple(body["micro"][k] for k in KEYS)
    return out


def _shown(browser: Any) -> dict[str, tuple[int, ...]]:
    return {t: tuple(int(cells[k]) for k in KEYS) for t, cells in browser.execute_script(PANEL).items()}


def _wait_compared(browser: Any, map_id: str, run: str) -> None:
    WebDriverWait(browser, 120).until(
        lambda d: (
            d.execute_script("return [document.body.dataset.loaded, document.body.dataset.compared]") == [map_id, run]
        )
    )


def test_compare_view_shows_the_routes_counts_which_are_the_graphs(
    browser: Any, live_url: str, api_graph: ApiGraph, compared: ComparedMap
) -> None:
    map_id = compared.map_id
    page = f"{live_url}/?corpus=qt30&discourse={map_id}&compare=1&run={RUN_A}"
    cold = open_timed(browser, page, map_id)
    seconds = open_timed(browser, page, map_id)  # the browser's caches warm, as bench/explorer.py times it
    _wait_compared(browser, map_id, RUN_A)
    print(
        f"\ncompare view of the largest qt30 sample map {map_id}: drawn in {seconds:.2f} s (first open {cold:.2f} s) "
        f"(page: {browser.execute_script('return window.argwebTimings')}; goal <= 3 s on the full corpora)"
    )
    body = _route(live_url, map_id, RUN_A)
    want = expected(api_graph.driver, map_id, RUN_A)
    # Page = route = the graph's edges, per type and micro.
    assert _route_counts(body) == want
    assert _shown(browser) == want
    shown_micro = browser.execute_script(PANEL)["micro"]
    assert shown_micro["precision"] == f"{body['micro']['precision']:.2f}"
    assert shown_micro["recall"] == f"{body['micro']['recall']:.2f}"
    # Each predicted relation is drawn with its mark; each gold relation with a missed edge too.
    drawn = browser.execute_script(DRAWN_MARKS)
    assert {k: v for k, v in drawn.items() if k.startswith("pred:")} == compared.marks
    assert {k: v for k, v in drawn.items() if v in ("missed", "partly")} == {
        k: v for k, v in body["marks"].items() if v in ("missed", "partly")
    }
    assert {m["relation"] for m in body["missed"]} <= set(drawn)
    assert browser.execute_script(
        "return window.argwebGraph.getElementById(arguments[0]).hasClass('cmp-unmatched')", "pred:run-compare-a:4"
    )
    # Only the compared run's predictions are drawn.
    assert (
        browser.execute_script("return window.argwebGraph.nodes('.predicted').map(n => n.data('relation').run_id)")
        == [RUN_A] * 5
    )
    OUT.mkdir(parents=True, exist_ok=True)
    # The screenshot shows the marked relations with their ends.
    browser.execute_script(
        "const cy = window.argwebGraph; cy.zoom(1); "
        "cy.center(cy.nodes('.relation').filter(n => ['match', 'other_type', 'partly'].includes(n.data('cmp'))))"
    )
    assert browser.save_screenshot(str(OUT / "explorer-compare.png"))
    # The run picker: the other run covering the map, and the address follows.
    Select(browser.find_element("id", "compare-run")).select_by_value(RUN_B)
    _wait_compared(browser, map_id, RUN_B)
    WebDriverWait(browser, 30).until(lambda d: f"run={RUN_B}" in d.current_url)
    assert (
        _shown(browser) == _route_counts(_route(live_url, map_id, RUN_B)) == expected(api_graph.driver, map_id, RUN_B)
    )
    assert browser.execute_script(
        "return window.argwebGraph.getElementById(arguments[0]).empty()", "pred:run-compare-a:0"
    )
    # Off again: every prediction drawn, no panel, no marks.
    browser.find_element("id", "compare").click()
    WebDriverWait(browser, 60).until(
        lambda d: (
            d.execute_script("return document.body.dataset.loaded") == map_id
            and not d.execute_script("return document.body.dataset.compared")
        )
    )
    assert browser.execute_script("return document.getElementById('compare-panel').hidden")
    assert browser.execute_script(DRAWN_MARKS) == {}
    assert len(browser.execute_script("return window.argwebGraph.nodes('.predicted').map(n => n.id())")) == 6
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_compare_box_only_where_a_map_can_be_compared(browser: Any, live_url: str, compared: ComparedMap) -> None:
    # A Molweni thread: gold relations, no prediction run: no compare box, no panel.
    browser.get(f"{live_url}/?corpus=molweni&discourse=molweni:1078&compare=1")
    WebDriverWait(browser, 120).until(
        lambda d: d.execute_script("return document.body.dataset.loaded") == "molweni:1078"
    )
    assert browser.execute_script("return document.getElementById('compare-label').hidden")
    assert browser.execute_script("return document.getElementById('compare-panel').hidden")
    browser.get(f"{live_url}/?corpus=qt30&discourse={compared.map_id}")
    WebDriverWait(browser, 120).until(
        lambda d: d.execute_script("return document.body.dataset.loaded") == compared.map_id
    )
    assert not browser.execute_script("return document.getElementById('compare-label').hidden")
    # Ticking the box compares the newest run on the map.
    browser.find_element("id", "compare").click()
    _wait_compared(browser, compared.map_id, RUN_B)
    assert "compare=1" in browser.current_url
    # A run that does not cover the map asked for: the newest run that does.
    browser.get(f"{live_url}/?corpus=qt30&discourse=qt30:nodeset21318&compare=1&run={RUN_A}")
    _wait_compared(browser, "qt30:nodeset21318", "run-api-test")


def test_dashboard_has_the_runs_against_gold_and_no_empty_panels(
    browser: Any, live_url: str, compared: ComparedMap
) -> None:
    browser.get(f"{live_url}/dashboard/qt30")
    plots = browser.execute_script("return [...document.querySelectorAll('figure')].map(f => f.dataset.plot)")
    # QT30 has no topics and no annotator judgements: those panels are left out, not drawn empty.
    assert "topics" not in plots and "agreement" not in plots
    assert {"relation-types", "gold-vs-predicted", "predicted-against-gold"} <= set(plots)
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#against-gold tr[data-run]')].map(tr => "
        "[tr.dataset.run, tr.dataset.type, [...tr.querySelectorAll('td')].map(td => td.textContent)])"
    )
    micro = {run: cells for run, kind, cells in rows if kind == "micro"}
    assert {RUN_A, RUN_B, "run-api-test"} <= set(micro)
    # With model and run; the run's corpus figures are its one map's.
    body = _route(live_url, compared.map_id, RUN_A)
    assert micro[RUN_A][:3] == ["test-compare-a 1", RUN_A, "1"]
    assert [int(v) for v in micro[RUN_A][4:9]] == [body["micro"][k] for k in KEYS]
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script(
            "return [...document.images].filter(i => i.getBoundingClientRect().top < innerHeight)"
            ".every(i => i.complete && i.naturalWidth > 0)"
        )
    )
    assert requests.get(f"{live_url}/dashboard/qt30/predicted-against-gold.svg", timeout=60).content.count(b"<svg") == 1
    assert browser.save_screenshot(str(OUT / "dashboard-qt30.png"))
    # A corpus without predictions has no predicted panels and no table.
    browser.get(f"{live_url}/dashboard/molweni")
    plots = browser.execute_script("return [...document.querySelectorAll('figure')].map(f => f.dataset.plot)")
    assert "relation-types" in plots and "predicted-against-gold" not in plots and "gold-vs-predicted" not in plots
    assert not browser.find_elements("id", "against-gold")
