"""The scale benchmark at its smallest published size (100k items), end to end on real servers."""

from __future__ import annotations

import json
from pathlib import Path

from bench import scale
from graphstore.runtime import free_port


def test_scale_bench_at_100k_items_reports_every_figure_and_an_identical_bulk_graph(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    code = scale.main(
        [
            "--sizes", "100000",
            "--work", str(tmp_path / "work"),
            "--json", str(out),
            "--port", str(free_port()),
            "--heap", "1g",
            "--nodes", "200",
            "--repeat", "1",
        ]
    )  # fmt: skip
    (row,) = json.loads(out.read_text())["sizes"]
    assert code == 0
    assert set(scale.REQUIRED_KEYS) <= set(row)
    assert 99_000 <= row["items"] <= 101_000
    assert row["identical_stats"] and row["identical_answers"] and row["identical_graph"]
    for key in scale.REQUIRED_KEYS:
        assert row[key] > 0, key
    assert row["neighbors_p50_ms"] <= row["neighbors_p99_ms"]
    # The export streams: its peak memory is far below what holding the triples would take.
    assert row["export_peak_rss_mb"] < 1024
    assert row["export_triples"] > row["items"]
