"""Benchmark rows of the argument relation models: training time and inference throughput.

:func:`relation_rows` is what ``bench/models.py`` calls (one row per corpus family): the training
time comes from the model card (the ``train`` run that produced the model), the inference rate is
measured here on the given data (QT30 maps: I-node pairs scored per second, end to end from records
to decoded relations; Sci-Arg papers: component pairs per second; M-Arg debates, read by the QT30
network in windows: sentences per second).

Usage: ``python bench/models_relations.py [--model DIR] [--data PATH ...] [--limit N] [--json OUT]``
(default data: ``../shared/corpora/dialam-2024/my_train``, ``../shared/corpora/sciarg`` and
``../shared/corpora/m-arg``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCH_QUICK_ARGS = ["--limit", "5"]
TRAINING_BUDGET_S = 900.0  # the 15-minute training budget of the models
# Scoring every candidate pair of QT30's ~1,400 training maps (~10^5 pairs) within a minute.
PAIRS_PER_S = 2000.0
# M-Arg's 6,527 debate sentences within a minute.
SENTENCES_PER_S = 6527 / 60


def timed_twice(run: Callable[..., object], *args: Any) -> tuple[float, float]:
    """Seconds of a first call of ``run(*args)`` (cold caches) and of a second one (warm)."""
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        run(*args)
        seconds.append(time.perf_counter() - start)
    return seconds[0], seconds[1]


def relation_rows(
    model_dir: Path, data_paths: list[Path], limit: int = 200, cache_dir: Path | None = None
) -> list[dict[str, Any]]:
    """One row per family present in both the model and the data.

    Each family is predicted twice: ``cold_items_per_s`` is the first call (with an empty
    ``cache_dir`` the encoder computes every text vector), ``items_per_s`` the second;
    ``goal_per_s`` is the rate the first call should reach.

    Args:
        model_dir: A relations model directory.
        data_paths: Data files or folders (recognised by format).
        limit: At most this many maps / papers / debate parts are timed.
        cache_dir: Embedding cache of the encoder (default: none on disk, the encoder's memory only).
    """
    from gnn.encoder import TextEncoder
    from gnn.modelcard import read_card
    from gnn.relations.files import load_data
    from gnn.relations.qt30 import map_tensors
    from gnn.relations.qt30_run import FAMILY as QT30
    from gnn.relations.qt30_run import load_qt30
    from gnn.relations.sciarg_task import FAMILY as SCIARG
    from gnn.relations.sciarg_task import load_sciarg, paper_tensors

    card = read_card(model_dir, "relations")
    data = load_data(data_paths)
    # Per family: the data, the weights file, the loader, how its candidate pairs are built, what a pair is.
    families = (
        ("qt30", data.qt30, QT30.weights, load_qt30, map_tensors, "I-node pairs"),
        ("sciarg", data.sciarg, SCIARG.weights, load_sciarg, paper_tensors, "component pairs"),
    )
    rows: list[dict[str, Any]] = []
    for family, items, weights, load, tensors, unit in families:
        if not items or not (model_dir / weights).is_file():
            continue
        timed = items[:limit]
        uses_encoder = card.hyperparameters.get(family, {}).get("text") == "encoder"
        model = load(model_dir, encoder=TextEncoder(cache_dir=cache_dir) if uses_encoder else None)
        cold, seconds = timed_twice(model.predict, timed)
        pairs = sum(len(tensors(x, model.window).pairs) for x in timed)
        row: dict[str, Any] = {"task": f"relations/{family}"}
        if family == "qt30":
            row["train_items"] = card.data.get("qt30", {}).get("train_maps")
        row.update(
            training_s=card.hyperparameters.get(family, {}).get("train_seconds") or card.training_seconds,
            inference_items=pairs,
            inference_unit=unit,
            inference_s=round(seconds, 2),
            items_per_s=round(pairs / seconds, 1),
            cold_items_per_s=round(pairs / cold, 1),
            goal_per_s=PAIRS_PER_S,
        )
        rows.append(row)
    if data.marg_debates and (model_dir / QT30.weights).is_file():
        from gnn.relations.marg_task import predict_debates

        uses_encoder = card.hyperparameters.get("qt30", {}).get("text") == "encoder"
        qt = load_qt30(model_dir, encoder=TextEncoder(cache_dir=cache_dir) if uses_encoder else None)
        debates = data.marg_debates[:limit]
        cold, seconds = timed_twice(predict_debates, qt, debates)
        sentences = sum(len(d.sentences) for d in debates)
        rows.append(
            {
                "task": "relations/m-arg",
                "training_s": None,  # the QT30 network's; M-Arg trains nothing
                "inference_items": sentences,
                "inference_unit": "debate sentences",
                "inference_s": round(seconds, 2),
                "items_per_s": round(sentences / seconds, 1),
                "cold_items_per_s": round(sentences / cold, 1),
                "goal_per_s": SENTENCES_PER_S,
            }
        )
    return rows


def main() -> None:
    """Print the rows as a table (and JSON with ``--json``)."""
    from gnn.registry import shipped_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=shipped_model("relations"))
    parser.add_argument("--data", type=Path, action="append")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from bench.harness import record
    from ontology.formats.registry import SAMPLES

    shared = ROOT.parent / "shared" / "corpora"
    if not shared.is_dir():
        shared = SAMPLES
    data = args.data or [shared / "dialam-2024" / "my_train", shared / "sciarg", shared / "m-arg"]
    data = [p for p in data if p.exists()] or [SAMPLES / "dialam-2024", SAMPLES / "sciarg", SAMPLES / "m-arg"]
    rows = relation_rows(args.model, data, args.limit)
    for row in rows:
        print(
            f"{row['task']:18} training {row['training_s']} s   inference {row['inference_items']} "
            f"{row['inference_unit']} in {row['inference_s']} s = {row['items_per_s']} items/s "
            f"(first call {row['cold_items_per_s']} items/s)"
        )
        note = f"{row['inference_items']} {row['inference_unit']}"
        if row["training_s"] is not None:
            record(f"{row['task']}: training (model card)", row["training_s"], "s", TRAINING_BUDGET_S, "lower")
        # The first call: the encoder computes the text vectors (no cache given here).
        unit = "sentences/s" if row["task"] == "relations/m-arg" else "pairs/s"
        record(f"{row['task']}: inference", row["cold_items_per_s"], unit, row["goal_per_s"], "higher", note)
    if not rows:
        raise SystemExit(f"no data the model {args.model} can score in {', '.join(map(str, data))}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
