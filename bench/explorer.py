"""Benchmark: the explorer draws the largest argument maps in headless Chromium.

One run does:

1. use the API at ``--url``, or start its own embedded Neo4j with the corpora of ``--corpora``
   (default: the shipped samples; ``--uri`` for an existing graph, ``--main`` for the main job's,
   as ``make bench`` does, both read only) and the API on a loopback port;
2. for each corpus of ``--corpus`` (default QT30 and M-Arg), find its map with the most units and
   open it by URL ``--n`` times in Debian's headless Chromium (1400x900, a fresh page each time);
3. time each open (in a new tab) from navigation to the map drawn and answering input (the page
   marks it after the layout and two animation frames), and print the median and the slowest with
   the page's own split (fetch, layout, draw), the node and edge counts, and the CPU time of the
   page's main thread over the open (Chrome's ThreadTime): on a machine busy with other work the
   wall time stretches, the main thread's CPU time is what the page itself costs.

With ``--compare`` each map opens in the compare view (``compare=1``: its newest prediction run
against gold, marked, with the scores panel; the map needs gold relations and a run, as on the
main job's graph); ``--screenshots`` saves the last view of each map and the corpus's dashboard as
``bench/out/explorer[-compare]-<corpus>.png`` and ``bench/out/dashboard-<corpus>.png``.

Goal: the largest QT30 and M-Arg maps drawn and interactive in <= 3 s (median wall time), in the
compare view too.

Usage: ``python bench/explorer.py [--url http://127.0.0.1:8000 | --corpora DIR | --uri bolt://...
--password ...] [--corpus qt30 m-arg] [--n 5] [--compare] [--screenshots]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import requests

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bench.harness import MAIN_HELP, bench_api, bench_graph, record  # noqa: E402
from ontology.formats.registry import SAMPLES  # noqa: E402

GOAL_SECONDS = 3.0
# make bench runs the main job first: the figures are those of the full graph with its predictions.
BENCH_ARGS = ["--main"]
BENCH_QUICK_ARGS = ["--n", "1"]
LOADED = "return document.body.dataset.loaded || ''"
OUT = _HERE / "out"


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit(f"none of {names} is installed; scripts/setup.sh installs chromium and chromium-driver")


@contextmanager
def chromium(downloads: Path | None = None) -> Iterator[Any]:
    """Debian's headless Chromium at 1400x900 through chromedriver (downloads into ``downloads``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
        options.add_argument(flag)
    if downloads is not None:
        options.add_experimental_option(
            "prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False}
        )
    options.binary_location = _binary("chromium", "chromium-browser")
    driver = webdriver.Chrome(options=options, service=Service(_binary("chromedriver")))
    driver.set_page_load_timeout(120)
    if downloads is not None:
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    try:
        yield driver
    finally:
        driver.quit()


def open_timed(browser: Any, url: str, map_id: str, timeout: float = 120) -> float:
    """Open ``url`` and wait until ``map_id`` is drawn and answers input; the seconds it took.

    Raises:
        AssertionError: Not drawn within ``timeout`` (with what the page's status line says).
    """
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    started = time.perf_counter()
    browser.get(url)
    try:
        WebDriverWait(browser, timeout).until(lambda d: d.execute_script(LOADED) == map_id)
    except TimeoutException as e:
        status = browser.execute_script("return (document.getElementById('status') || {}).textContent")
        raise AssertionError(f"{map_id} not drawn: loaded={browser.execute_script(LOADED)!r} status={status!r}") from e
    return time.perf_counter() - started


def open_in_tab(browser: Any, url: str, map_id: str) -> dict[str, Any]:
    """:func:`open_timed` in a new tab, with the CPU time its main thread spent and the page's figures."""
    browser.switch_to.new_window("tab")
    try:
        browser.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
        wall = open_timed(browser, url, map_id)
        metrics = {m["name"]: m["value"] for m in browser.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
        return {
            "wall_s": wall,
            "main_thread_cpu_s": metrics.get("ThreadTime", float("nan")),
            "split": browser.execute_script("return window.argwebTimings"),
            "counts": browser.execute_script("return window.argwebCounts()"),
        }
    finally:
        browser.close()
        browser.switch_to.window(browser.window_handles[0])


def largest_map(url: str, corpus: str) -> tuple[str, int]:
    """The map of ``corpus`` with the most units (id, units), from the API's listing."""
    best: tuple[str, int] | None = None
    cursor = None
    while True:
        params: dict[str, Any] = {"corpus": corpus, "limit": 500, **({"cursor": cursor} if cursor else {})}
        page = requests.get(f"{url}/dialogues", params=params, timeout=120).json()
        for d in page["items"]:
            if best is None or (d["units"], d["id"]) > (best[1], best[0]):
                best = (d["id"], d["units"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    if best is None:
        raise SystemExit(f"corpus {corpus} has no dialogue at {url}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running API (nothing is started)")
    parser.add_argument("--corpora", type=Path, default=SAMPLES)
    parser.add_argument("--corpus", nargs="+", default=["qt30", "m-arg"])
    parser.add_argument("--n", type=int, default=5, help="opens per map")
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--main", action="store_true", help=MAIN_HELP)
    parser.add_argument("--uri")
    parser.add_argument("--user", default="neo4j")
    parser.add_argument("--password", default="")
    parser.add_argument("--compare", action="store_true", help="open the maps in the compare view")
    parser.add_argument("--screenshots", action="store_true", help=f"save the views and dashboards under {OUT}")
    args = parser.parse_args()

    with ExitStack() as stack:
        url = args.url
        if not url:
            settings, _ = stack.enter_context(bench_graph(args, "argweb-bench-explorer-"))
            url, _ = stack.enter_context(bench_api(settings))
        browser = stack.enter_context(chromium())
        for corpus in args.corpus:
            map_id, units = largest_map(url, corpus)
            page = f"{url}/?corpus={corpus}&discourse={map_id}" + ("&compare=1" if args.compare else "")
            opened = [open_in_tab(browser, page, map_id) for _ in range(args.n + 1)][1:]  # the first warms caches
            seconds = [o["wall_s"] for o in opened]
            cpu = [o["main_thread_cpu_s"] for o in opened]
            counts = opened[-1]["counts"]
            median = statistics.median(seconds)
            print(
                f"{corpus} {map_id} ({units} units; {counts['nodes']} nodes, {counts['edges']} edges): "
                f"median {median:.2f} s, slowest {max(seconds):.2f} s over {args.n} opens; main-thread CPU median "
                f"{statistics.median(cpu):.2f} s; last page split {opened[-1]['split']}"
            )
            compared = ""
            if args.compare or args.screenshots:
                open_timed(browser, page, map_id)
                compared = browser.execute_script("return document.body.dataset.compared || ''")
            if args.compare:
                print(
                    f"  compare view: run {compared}"
                    if compared
                    else "  compare view: not comparable (no gold or no run)"
                )
            if args.screenshots:
                OUT.mkdir(parents=True, exist_ok=True)
                shot = OUT / f"explorer{'-compare' if args.compare else ''}-{corpus}.png"
                browser.save_screenshot(str(shot))
                browser.get(f"{url}/dashboard/{corpus}")
                # The plots are lazy images the server draws on request (seconds on the full graph):
                # the screenshot waits until every one has loaded, up to a minute.
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not browser.execute_script(
                    "return [...document.images].every(i => i.complete && i.naturalWidth > 0)"
                ):
                    browser.execute_script("document.querySelectorAll('img').forEach(i => i.loading = 'eager')")
                    time.sleep(0.25)
                browser.save_screenshot(str(OUT / f"dashboard-{corpus}.png"))
                print(f"  screenshots: {shot}, {OUT / f'dashboard-{corpus}.png'}")
            note = (
                f"{map_id}, {counts['nodes']} nodes / {counts['edges']} edges, slowest {max(seconds):.2f} s, "
                f"main-thread CPU {statistics.median(cpu):.2f} s" + (f", run {compared}" if compared else "")
            )
            what = "compare view" if args.compare and compared else "map"
            record(f"explorer: largest {corpus} {what} drawn and interactive", median, "s", GOAL_SECONDS, "lower", note)


if __name__ == "__main__":
    main()
