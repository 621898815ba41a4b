"""QT30 conflicts (CA) under the grouped protocol: training and decoding levers measured out of fold.

Two steps, so that every decoding is compared on the very same networks:

* ``run``: the grouped cross-validation of :func:`gnn.relations.qt30_run.cross_validate_qt30`
  (maps grouped by episode, :func:`gnn.protocol.fold_plan`, about a tenth of the training maps
  in whole episodes choosing the epoch), with the training recipe's class-weight exponent
  (``--weight-power``; the shipped recipe's is 0.5), conflict cues in the pair features
  (``--cues`` / ``--no-cues``, :func:`gnn.relations.qt30.conflict_cues`) and Sci-Arg conflicts as extra training pairs
  (``--aux-sciarg``, :func:`sciarg_pair_maps`) as the training levers. Each fold's
  probabilities of its tuning maps and of its held-out maps are saved (``--save DIR``).
* ``decode``: every decoding of :data:`DECODERS` is tuned on each fold's tuning maps only and
  scored on its held-out maps: official-style general / focused F1, conflict precision / recall /
  F1 (mean ± std over folds) and predicted against gold per type, pooled over the folds;
  ``--mix DIR`` decodes the mean probabilities of two runs' networks on the same folds.

Usage::

    python -m experiments.qt30_conflicts run --save /tmp/qt30-cv [--profile full] [--folds 5]
        [--weight-power 0.5] [--[no-]cues] [--aux-sciarg] [--only K ...] [--data DIR ...]
    python -m experiments.qt30_conflicts decode --save /tmp/qt30-cv [--files fold0.pkl ...] [--mix DIR]
        [--json OUT]
    python -m experiments.qt30_conflicts combine OUT1 OUT2 ... [--json OUT]

Figures and what they mean are in ``docs/experiments/relations-history.md`` ("Conflicts").
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from gnn.protocol import fold_plan, spread
from gnn.relations import family
from gnn.relations.argmap import ArgMap
from gnn.relations.metrics import dialam_scores
from gnn.relations.qt30 import LABELS, MapTensors
from gnn.relations.qt30_task import (
    CONFLICT_DROP,
    CONFLICT_GATES,
    CONFLICT_TOLERANCE,
    DIRECTIONS,
    Decoding,
    decoded_rows,
    episodes,
    tune_bias,
    tune_conflict_shares,
    tune_shares,
)

ROOT = Path(__file__).resolve().parents[1]
DIALAM = ROOT.parent / "shared" / "corpora" / "dialam-2024"
CA = LABELS.index("CA")
Rows = list[tuple[dict[tuple[int, int], str], dict[tuple[int, int], str], int]]


def _light(t: MapTensors) -> MapTensors:
    """What decoding and scoring read of a map (its pairs, gold and size), without features or texts."""
    empty = np.zeros((0, 0), dtype=np.float32)
    return replace(t, texts=[], prop_feats=empty, edges=np.zeros((3, 0), np.int64), pair_feats=empty, loc_feats=empty)


SCIARG = ROOT.parent / "shared" / "corpora" / "sciarg" / "compiled_corpus"


def sciarg_pair_maps(cues: bool) -> list[MapTensors]:
    """Sci-Arg ``contradicts`` (as CA) and ``supports`` (as RA) pairs as two-proposition maps.

    Each pair is given as :func:`gnn.relations.qt30_run.pair_map` gives a text pair to the network
    (two speakers, no transition), so the pair scorer learns from the texts and the cues alone; the
    reverse pair is a ``none``. Read through the pure reader, never a store.
    """
    from gnn.relations.qt30_run import pair_map, tensors_of
    from gnn.relations.sciarg_task import papers_from_records
    from ontology.formats.sciarg import load_sciarg

    bundle = load_sciarg(sorted(SCIARG.glob("*.ann")))
    maps: list[ArgMap] = []
    to_qt30 = {"contradicts": "CA", "supports": "RA"}
    found = [
        (paper.comps[s].text, paper.comps[t].text, to_qt30[label])
        for paper in papers_from_records(bundle.nodes, bundle.edges)
        for (s, t), label in sorted(paper.gold.items())
        if label in to_qt30
    ]
    # As many supports as conflicts (every n-th, in paper order): the point is the conflict signal.
    conflicts = [x for x in found if x[2] == "CA"]
    supports = [x for x in found if x[2] == "RA"]
    step = max(1, len(supports) // max(len(conflicts), 1))
    for source, target, label in conflicts + supports[::step][: len(conflicts)]:
        amap = pair_map(len(maps), source, target)
        amap.gold = {(0, 1): label}
        amap.name = f"sciarg{len(maps)}"
        maps.append(amap)
    return tensors_of(maps, 8, cues=cues)


def run(args: argparse.Namespace) -> None:
    """Train each fold's network and save the probabilities of its tuning and held-out maps."""
    from api.settings import Settings
    from gnn.encoder import encoder_for
    from gnn.relations.argmap import maps_from_records
    from gnn.relations.qt30_run import FAMILY, PROFILES, tensors_of, widths
    from gnn.relations.train import predict_probs
    from ontology.formats.aif import load_aif

    files = sorted(p for d in args.data for p in Path(d).glob("*.json"))
    bundle = load_aif(files)
    maps = maps_from_records(bundle.nodes, bundle.edges)
    hp = family.profile_hp(PROFILES, args.profile, None)
    hp["weight_power"] = args.weight_power
    # The profile's cues unless --cues / --no-cues says otherwise.
    hp["cues"] = bool(hp.get("cues")) if args.cues is None else args.cues
    encoder = encoder_for(None, None, Settings().cache_dir) if args.profile == "full" else None
    options = family.TrainOptions(args.profile, args.seed, "cpu", encoder, None, log=lambda m: print(m, flush=True))
    tensors = tensors_of(maps, hp["window"], cues=hp["cues"])
    groups = episodes([t.name for t in tensors])
    extra = sciarg_pair_maps(hp["cues"]) if args.aux_sciarg else []
    if extra:
        hp["aux_sciarg_pairs"] = len(extra)
    save = Path(args.save)
    save.mkdir(parents=True, exist_ok=True)
    print(f"{len(tensors)} maps, {len(set(groups))} episodes, recipe {hp}", flush=True)
    for fold in fold_plan(groups, args.folds, args.seed):
        out = save / f"fold{fold.index}.pkl"
        if out.exists() or (args.only and fold.index not in args.only):
            continue
        start = time.perf_counter()
        parts = {
            "train": [tensors[k] for k in fold.train] + extra,
            "dev": [tensors[k] for k in fold.tune],
            "test": [tensors[k] for k in fold.test],
        }
        with tempfile.TemporaryDirectory(prefix="qt30-conflicts-") as tmp:
            trained = family.train_gnn(parts, hp, options, Path(tmp), FAMILY, members=(widths(hp),))
            dev_p = predict_probs(trained.tuning_model, trained.items["dev"], "cpu")
            test_p = predict_probs(trained.model, trained.items["test"], "cpu")
        saved = {
            "dev": [_light(t) for t in parts["dev"]],
            "dev_p": dev_p,
            "test": [_light(t) for t in parts["test"]],
            "test_p": test_p,
            "epochs": trained.selected_epochs,
            "hp": hp,
            "seconds": round(time.perf_counter() - start, 1),
        }
        out.write_bytes(pickle.dumps(saved))
        print(f"fold {fold.index}: {saved['seconds']} s, epoch {saved['epochs']}", flush=True)


# -- decodings ---------------------------------------------------------------------------------------


def _rows(tensors: Sequence[MapTensors], probs: Sequence[np.ndarray], d: Decoding) -> Rows:
    return decoded_rows(tensors, probs, d.bias, d.directions, d.gate)


def conflict_counts(rows: Rows) -> tuple[float, int, int, int]:
    """Conflict recall, and the gold, predicted and right conflict counts of decoded rows."""
    gold = sum(1 for g, _, _ in rows for v in g.values() if v == "CA")
    pred = sum(1 for _, p, _ in rows for v in p.values() if v == "CA")
    right = sum(1 for g, p, _ in rows for k, v in p.items() if v == "CA" and g.get(k) == "CA")
    return (right / gold if gold else 0.0), gold, pred, right


Tuner = Callable[[list[MapTensors], list[np.ndarray]], Decoding]


def general_decoding(dev: list[MapTensors], dev_p: list[np.ndarray]) -> Decoding:
    """The general decoding (as :func:`tune_decodings` chooses it): the best general F1, either direction rule."""
    found = {d: tune_bias(dev, dev_p, "general", directions=d) for d in DIRECTIONS}
    best = max(DIRECTIONS, key=lambda d: found[d][1])
    return Decoding(tuple(found[best][0]), best)


def shares_before(dev: list[MapTensors], dev_p: list[np.ndarray]) -> Decoding:
    """The shares decoding of relation model 8: the best general F1 with every type's count within x1.5 of gold."""
    found = {d: tune_shares(dev, dev_p, directions=d) for d in DIRECTIONS}
    best = max(DIRECTIONS, key=lambda d: found[d][1])
    return Decoding(tuple(found[best][0]), best)


def conflict_shares(
    drop: float = CONFLICT_DROP,
    gates: Sequence[float | None] = CONFLICT_GATES,
    directions: Sequence[str] = ("one",),
    tolerance: float = CONFLICT_TOLERANCE,
) -> Tuner:
    """:func:`gnn.relations.qt30_task.tune_conflict_shares` against the general decoding tuned on the
    same maps (the defaults: the recipe :func:`tune_decodings` now uses)."""

    def tune(dev: list[MapTensors], dev_p: list[np.ndarray]) -> Decoding:
        general = max(tune_bias(dev, dev_p, "general", directions=d)[1] for d in DIRECTIONS)
        found = [tune_conflict_shares(dev, dev_p, general, d, drop, gates, tolerance) for d in directions]
        return max(found, key=lambda x: x[1])[0]

    return tune


DECODERS: dict[str, Tuner] = {
    "general": general_decoding,
    "shares_before": shares_before,
    "conflict_shares": conflict_shares(),
    "conflict_shares_both": conflict_shares(directions=DIRECTIONS),
    "conflict_shares_nogate": conflict_shares(gates=(None,)),
    "conflict_shares_tol1.5": conflict_shares(tolerance=1.5),
    "conflict_shares_tol3": conflict_shares(tolerance=3.0),
    "conflict_shares_drop0.03": conflict_shares(drop=0.03),
    "conflict_shares_drop0.01": conflict_shares(drop=0.01),
    "conflict_shares_drop0.01_tol3": conflict_shares(drop=0.01, tolerance=3.0),
}


def decode(args: argparse.Namespace) -> None:
    """Tune every decoding on each fold's tuning maps, score it on the held-out maps, print the figures."""
    files = [Path(args.save) / f for f in args.files] if args.files else sorted(Path(args.save).glob("fold*.pkl"))
    folds = [pickle.loads(p.read_bytes()) for p in files]
    if args.mix:
        # The mean probabilities of two runs' networks over the same folds (same maps, same order).
        for p, f in zip(files, folds, strict=True):
            other = pickle.loads((Path(args.mix) / p.name).read_bytes())
            for part in ("dev", "test"):
                assert [t.name for t in other[part]] == [t.name for t in f[part]], p.name
                f[f"{part}_p"] = [(a + b) / 2 for a, b in zip(f[f"{part}_p"], other[f"{part}_p"], strict=True)]
    names = args.decoders or list(DECODERS)
    report: dict[str, Any] = {"folds": len(folds), "hp": folds[0]["hp"] if folds else None, "decodings": {}}
    for name in names:
        per: dict[str, list[float]] = {}
        pooled: dict[str, Counter[str]] = {"gold": Counter(), "predicted": Counter(), "right": Counter()}
        chosen = []
        for f in folds:
            d = DECODERS[name](f["dev"], f["dev_p"])
            chosen.append({"bias": [round(x, 2) for x in d.bias], "directions": d.directions, "gate": d.gate})
            rows = _rows(f["test"], f["test_p"], d)
            s = dialam_scores(rows)
            recall, _, pred, right = conflict_counts(rows)
            precision = right / pred if pred else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            for key, v in (
                ("general_f1", s["general"]["f1"]),
                ("focused_f1", s["focused"]["f1"]),
                ("ca_precision", precision),
                ("ca_recall", recall),
                ("ca_f1", f1),
            ):
                per.setdefault(key, []).append(v)
            for g, p, _ in rows:
                pooled["gold"].update(g.values())
                pooled["predicted"].update(p.values())
                pooled["right"].update(v for k, v in p.items() if g.get(k) == v)
        counted = {lab: {c: pooled[c][lab] for c in pooled} for lab in LABELS[1:]}
        report["decodings"][name] = {
            "figures": {k: spread(v) for k, v in per.items()},
            "pooled": counted,
            "chosen": chosen,
        }
        line = "  ".join(f"{k} {np.mean(v):.3f}±{np.std(v, ddof=1) if len(v) > 1 else 0:.3f}" for k, v in per.items())
        counts = " ".join(f"{lab} {c['predicted']}/{c['gold']} ({c['right']} right)" for lab, c in counted.items())
        print(f"{name}: {line}\n    {counts}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


def combine(args: argparse.Namespace) -> None:
    """Join the reports of ``decode`` runs over disjoint folds into one (per-fold values, pooled counts)."""
    reports = [json.loads(Path(p).read_text()) for p in args.reports]
    names = [n for n in reports[0]["decodings"] if all(n in r["decodings"] for r in reports)]
    out: dict[str, Any] = {"folds": sum(r["folds"] for r in reports), "hp": reports[0]["hp"], "decodings": {}}
    for name in names:
        parts = [r["decodings"][name] for r in reports]
        figures = {k: spread([v for p in parts for v in p["figures"][k]["folds"]]) for k in parts[0]["figures"]}
        pooled = {
            lab: {c: sum(p["pooled"][lab][c] for p in parts) for c in ("gold", "predicted", "right")}
            for lab in LABELS[1:]
        }
        out["decodings"][name] = {
            "figures": figures,
            "pooled": pooled,
            "chosen": [c for p in parts for c in p["chosen"]],
        }
        line = "  ".join(f"{k} {v['mean']:.3f}±{v['std']:.3f}" for k, v in figures.items())
        counts = " ".join(f"{lab} {c['predicted']}/{c['gold']} ({c['right']} right)" for lab, c in pooled.items())
        print(f"{name} ({out['folds']} folds): {line}\n    {counts}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``run`` or ``decode`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    r = sub.add_parser("run")
    r.add_argument("--save", required=True)
    r.add_argument("--data", nargs="+", default=[str(DIALAM / "my_train"), str(DIALAM / "my_test")])
    r.add_argument("--profile", default="full", choices=("quick", "full"))
    r.add_argument("--folds", type=int, default=5)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--weight-power", type=float, default=0.5)
    r.add_argument(
        "--cues",
        action=argparse.BooleanOptionalAction,
        help="conflict cues as pair features (default: the profile's)",
    )
    r.add_argument("--aux-sciarg", action="store_true", help="Sci-Arg contradicts/supports pairs as training maps")
    r.add_argument("--only", type=int, nargs="*", help="train these folds only (default: every fold)")
    d = sub.add_parser("decode")
    d.add_argument("--save", required=True)
    d.add_argument("--decoders", nargs="*", choices=sorted(DECODERS))
    d.add_argument("--files", nargs="*", help="fold files under --save to decode (default: all)")
    d.add_argument("--json")
    d.add_argument("--mix", help="a second run's --save: decode the mean of both networks' probabilities")
    c = sub.add_parser("combine")
    c.add_argument("reports", nargs="+")
    c.add_argument("--json")
    args = parser.parse_args(argv)
    {"run": run, "decode": decode, "combine": combine}[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
