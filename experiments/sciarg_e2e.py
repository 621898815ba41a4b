"""Where the Sci-Arg pipeline loses its relations, and relation biases chosen for predicted components.

The folds are those of ``argweb model evaluate relations --cv 5 --end-to-end`` (the 32 papers
A01-A32 grouped by paper, fold seed 0, 4 of 24 training papers tune): in each fold the shipped
relation recipe (:func:`gnn.relations.sciarg_task.train_sciarg`, refit included) trains on the
training papers, and a component tagger of the shipped recipe trains on the same papers (its epoch
chosen on the same tuning papers) and predicts the components of the tuning and held-out papers,
written as brat lines and read back as ``argweb predict sciarg --components`` does.

For the held-out papers it reports:

- **where each gold relation is lost**: an end whose span the tagger did not find exactly
  (segmentation; BAM's R compares spans only), both spans found but a component type wrong and the
  relation lost, both right and the relation missed or given another type or direction, or found;
- **where each predicted relation is wrong**: an end that is no gold span, both gold spans but no
  gold relation between them, or another type or direction than the gold one;
- predicted against gold relations per type;
- BAM's R of the pipeline under two decodings of the same fold model: the biases the shipped
  recipe tunes on gold components (``shipped``), and biases tuned, by the same coordinate search,
  on the tuning papers' *predicted* components (``predicted_bias``, chosen inside the training
  folds: the tuning papers' gold relations are the reference, unreachable ones included).

Figures and what they mean: ``docs/experiments/components.md`` (section on the end-to-end
pipeline) and ``docs/models/components.md``.

Each fold writes ``fold<k>.json`` (and ``fold<k>.pkl``: the predicted papers and the fold model's
probabilities, so that further decodings need no training) under ``--out``; ``summary`` pools them.

Usage::

    python -m experiments.sciarg_e2e run --out DIR [--folds 0 1 2 3 4] [--data-dir DIR]
    python -m experiments.sciarg_e2e summary --out DIR
    python -m experiments.sciarg_e2e heldout --out DIR   # the shipped models on A25-A32
    python -m experiments.sciarg_e2e refold --out DIR    # the bias choice in 4 folds of those papers
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gnn.relations.sciarg_features import LABELS, SYMMETRIC, Paper  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora" / "sciarg" / "compiled_corpus"
GRID = (-4.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)

Span = tuple[int, int]


def kept_papers(data_dir: Path, names: Sequence[str] | None = None) -> list[Paper]:
    """The relation stage's papers of ``data_dir``: A01-A32 (or ``names``), in file order."""
    from gnn.relations.sciarg_cv import SHIPPED_PAPERS
    from gnn.relations.sciarg_task import papers_from_records
    from ontology.formats.sciarg import load_sciarg

    bundle = load_sciarg(sorted(data_dir.glob("*.ann")))
    wanted = set(names or SHIPPED_PAPERS)
    return [p for p in papers_from_records(bundle.nodes, bundle.edges) if p.name in wanted]


def fold_plan_of(kept: Sequence[Paper], seed: int = 0) -> Any:
    """The folds of ``argweb model evaluate relations --cv 5 --end-to-end`` (fold seed 0 there)."""
    from gnn.protocol import fold_plan
    from gnn.relations.sciarg_cv import TUNE_SHARE

    return fold_plan([p.name for p in kept], 5, seed, TUNE_SHARE)


def fold_names(plan: Any, k: int, kept: Sequence[Paper]) -> dict[str, list[str]]:
    """Fold ``k``'s paper names per part: ``train``, ``tune`` and ``test``."""
    return {part: sorted(kept[i].name for i in getattr(plan[k], part)) for part in ("train", "tune", "test")}


def token_vectors(config: Any, cache_dir: Path) -> Any:
    """The tagger's contextual word vectors, cached where the product caches them."""
    from gnn.components.net import TokenVectors

    return TokenVectors(
        layers=config.layers, max_length=config.max_length, cache_dir=cache_dir / "embeddings" / "sciarg-tokens"
    )


def _span(paper: Paper, k: int) -> Span:
    return (paper.comps[k].start, paper.comps[k].end)


def triples(paper: Paper, rels: Mapping[tuple[int, int], str]) -> set[tuple[Any, ...]]:
    """(paper, spans, label) triples of relations by component index; symmetric types unordered."""
    out: set[tuple[Any, ...]] = set()
    for (i, j), lab in rels.items():
        a, b = _span(paper, i), _span(paper, j)
        out.add((paper.name, frozenset((a, b)), lab) if lab in SYMMETRIC else (paper.name, a, lab, b))
    return out


def decoded(tensors: Any, probs: np.ndarray, bias: Sequence[float]) -> dict[tuple[int, int], str]:
    from gnn.relations.sciarg_task import decode_paper

    return {k: v[0] for k, v in decode_paper(tensors.pairs, probs, bias).items()}


def span_f1(
    gold: Sequence[Paper], pred: Sequence[Paper], outputs: Sequence[tuple[Any, np.ndarray]], bias: Sequence[float]
) -> float:
    """Micro F1 of span triples (BAM's R on single-span components) of ``pred`` decoded with ``bias``."""
    g = set().union(*(triples(p, p.gold) for p in gold))
    s = set().union(*(triples(p, decoded(t, pr, bias)) for p, (t, pr) in zip(pred, outputs, strict=True)))
    tp = len(g & s)
    return 2 * tp / (len(g) + len(s)) if g or s else 0.0


def tune_on_predicted(
    gold: Sequence[Paper], pred: Sequence[Paper], outputs: Sequence[tuple[Any, np.ndarray]]
) -> list[float]:
    """Per-label log-biases maximising :func:`span_f1` (the coordinate search of the shipped recipe)."""
    from gnn.relations.qt30_task import coordinate_biases

    return coordinate_biases(lambda b: span_f1(gold, pred, outputs, b), len(LABELS), range(1, len(LABELS)), GRID)[0]


def decompose(gold: Paper, pred: Paper, rels: Mapping[tuple[int, int], str]) -> dict[str, Counter[str]]:
    """Each gold relation's fate and each predicted relation's fault (see the module docstring)."""
    at = {_span(pred, k): k for k in range(len(pred.comps))}
    predicted = triples(pred, rels)
    pair_label: dict[frozenset[Span], str] = {}
    for (i, j), lab in rels.items():
        pair_label[frozenset((_span(pred, i), _span(pred, j)))] = lab
    lost: Counter[str] = Counter()
    for (i, j), lab in gold.gold.items():
        a, b = _span(gold, i), _span(gold, j)
        found = sum(s in at for s in (a, b))
        if found < 2:
            lost[f"{lab}: segmentation ({2 - found} end{'s' if found == 0 else ''} missed)"] += 1
            continue
        typed = gold.comps[i].label == pred.comps[at[a]].label and gold.comps[j].label == pred.comps[at[b]].label
        right = next(iter(triples(gold, {(i, j): lab}))) in {(gold.name, *t[1:]) for t in predicted}
        if right:
            lost[f"{lab}: found{'' if typed else ' (a component type wrong)'}"] += 1
        elif not typed:
            lost[f"{lab}: component type wrong, relation lost"] += 1
        elif frozenset((a, b)) in pair_label:
            lost[f"{lab}: relation given another type or direction"] += 1
        else:
            lost[f"{lab}: relation missed (right components)"] += 1
    gold_spans = {_span(gold, k) for k in range(len(gold.comps))}
    gold_pairs = {frozenset((_span(gold, i), _span(gold, j))) for i, j in gold.gold}
    gold_triples = triples(gold, gold.gold)
    wrong: Counter[str] = Counter()
    for (i, j), lab in rels.items():
        if next(iter(triples(pred, {(i, j): lab}))) in gold_triples:
            continue
        a, b = _span(pred, i), _span(pred, j)
        if a not in gold_spans or b not in gold_spans:
            wrong[f"{lab}: an end is no gold span"] += 1
        elif frozenset((a, b)) in gold_pairs:
            wrong[f"{lab}: gold pair, another type or direction"] += 1
        else:
            wrong[f"{lab}: gold spans, no gold relation"] += 1
    return {"gold_relations": lost, "wrong_predictions": wrong}


def _counts(
    gold: Sequence[Paper], pred: Sequence[Paper], rels: Sequence[Mapping[tuple[int, int], str]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lab in LABELS[1:]:
        g = set().union(*(triples(p, {k: v for k, v in p.gold.items() if v == lab}) for p in gold))
        s = set().union(
            *(triples(p, {k: v for k, v in r.items() if v == lab}) for p, r in zip(pred, rels, strict=True))
        )
        out[lab] = {"gold": len(g), "predicted": len(s), "right": len(g & s)}
    return out


def predicted_parts(
    tagger: Any,
    model: Any,
    names: Mapping[str, Sequence[str]],
    papers: Mapping[str, Any],
    by_name: Mapping[str, Paper],
    corpus: Path,
) -> dict[str, Any]:
    """Per part (``tune``, ``test``): gold papers, papers of the tagger's components read back, the
    relation model's outputs on them and their BAM documents."""
    import gnn.components as components
    from gnn.bam import documents_from_records
    from gnn.relations.sciarg_task import papers_from_records as relation_papers
    from gnn.sciarg_pipeline import read_back

    parts: dict[str, Any] = {}
    for part in ("tune", "test"):
        tagged = {n: components.predicted_document(tagger, papers[n][0], papers[n][1]) for n in names[part]}
        nodes, edges = read_back(corpus, tagged, papers)
        found = {p.name: p for p in relation_papers(nodes, edges)}
        pred = [found[n] for n in names[part]]
        parts[part] = {
            "gold": [by_name[n] for n in names[part]],
            "pred": pred,
            "outputs": model.probabilities(pred),
            "docs": documents_from_records(nodes, edges),
        }
    return parts


def analyse(
    result: dict[str, Any], parts: Mapping[str, Any], shipped: list[float], gold_docs: Mapping[str, Any]
) -> None:
    """Score the held-out part under each decoding (``result["variants"]``), biases in ``result["biases"]``."""
    from gnn.bam import Relation
    from gnn.bam import evaluate as evaluate_bam

    biases = {"shipped": shipped}
    t = parts["tune"]
    biases["predicted_bias"] = tune_on_predicted(t["gold"], t["pred"], t["outputs"])
    result["biases"] = {v: dict(zip(LABELS, b, strict=True)) for v, b in biases.items()}
    test = parts["test"]
    result["variants"] = {}
    for variant, bias in biases.items():
        rels = [decoded(tt, pr, bias) for tt, pr in test["outputs"]]
        docs = test["docs"]
        for paper, r in zip(test["pred"], rels, strict=True):
            docs[paper.name].relations = [
                Relation(lab, paper.comps[i].local_id, paper.comps[j].local_id) for (i, j), lab in r.items()
            ]
        scores = evaluate_bam(docs, gold_docs)
        per_paper = {n: evaluate_bam({n: docs[n]}, {n: gold_docs[n]}).r.f1 for n in gold_docs}
        lost: Counter[str] = Counter()
        wrong: Counter[str] = Counter()
        for g, p, r in zip(test["gold"], test["pred"], rels, strict=True):
            parts_of = decompose(g, p, r)
            lost.update(parts_of["gold_relations"])
            wrong.update(parts_of["wrong_predictions"])
        result["variants"][variant] = {
            "R": {"f1": scores.r.f1, "p": scores.r.precision, "r": scores.r.recall},
            "C": scores.c.f1,
            "R_per_paper": per_paper,
            "tune_span_f1": span_f1(t["gold"], t["pred"], t["outputs"], bias),
            "gold_relations": dict(sorted(lost.items())),
            "wrong_predictions": dict(sorted(wrong.items())),
            "by_type": _counts(test["gold"], test["pred"], rels),
        }


def run_fold(k: int, plan: Any, kept: Sequence[Paper], corpus: Path, options: Any, cache_dir: Path, out: Path) -> None:
    import gnn.components as components
    import gnn.components.net as components_net
    from gnn.relations.sciarg_task import load_sciarg, train_sciarg

    start = time.perf_counter()
    names = fold_names(plan, k, kept)
    by_name = {p.name: p for p in kept}
    papers = components.read_papers(corpus, [p.name for p in kept])
    config = components.TASK.recipes.config(options.profile, 13)
    vectors = token_vectors(config, cache_dir)
    result: dict[str, Any] = {"fold": k, "papers": names}
    with tempfile.TemporaryDirectory(prefix="argweb-sciarg-e2e-exp-") as tmp:
        section = train_sciarg(kept, Path(tmp), options, dev=names["tune"], heldout=names["test"])
        result["gold_components_R"] = section["metrics"]["heldout"]["R"]["micro"]["f1"]
        result["shipped_bias"] = section["hyperparameters"]["bias"]
        options.log(f"fold {k}: relations trained ({time.perf_counter() - start:.0f} s)")
        train = {n: papers[n] for n in names["train"]}
        tune = {n: papers[n] for n in names["tune"]}
        tagger, fit = components_net.train_tagger(train, tune, replace(config), vectors=vectors)
        result["tagger_epoch"] = fit.best_epoch
        options.log(f"fold {k}: tagger trained, epoch {fit.best_epoch} ({time.perf_counter() - start:.0f} s)")
        model = load_sciarg(Path(tmp), device=options.device, encoder=options.encoder)
        parts = predicted_parts(tagger, model, names, papers, by_name, corpus)
    analyse(result, parts, list(model.bias), {n: papers[n][0] for n in names["test"]})
    result["seconds"] = round(time.perf_counter() - start, 1)
    (out / f"fold{k}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    keep = {part: {x: v[x] for x in ("gold", "pred", "outputs")} for part, v in parts.items()}
    with (out / f"fold{k}.pkl").open("wb") as fh:
        pickle.dump({"names": names, "parts": keep}, fh)
    options.log(f"fold {k}: {json.dumps({v: x['R'] for v, x in result['variants'].items()})}")


def heldout(kept: Sequence[Paper], corpus: Path, cache_dir: Path, out: Path) -> None:
    """The shipped tagger and relation model: biases tuned on A21-A24, scored on the held-out A25-A32.

    Neither model trained on A25-A32; the tagger chose its epoch on A21-A24, the relation model
    chose its epochs and biases there and was then refit on A01-A24.
    """
    import gnn.components as components
    from api.services.components import load_tagger
    from gnn.device import pick_device
    from gnn.encoder import card_encoder
    from gnn.modelcard import read_card
    from gnn.relations.sciarg_task import DEV, HELDOUT, load_sciarg

    start = time.perf_counter()
    model_dir = ROOT / "gnn" / "models" / "relations"
    device = pick_device()
    encoder = card_encoder(model_dir, read_card(model_dir, "relations"), cache_dir, device=device)
    model = load_sciarg(model_dir, device=device, encoder=encoder)
    names = {"tune": list(DEV), "test": list(HELDOUT)}
    papers = components.read_papers(corpus, [*DEV, *HELDOUT])
    parts = predicted_parts(load_tagger(None), model, names, papers, {p.name: p for p in kept}, corpus)
    result: dict[str, Any] = {"fold": "heldout", "papers": names}
    analyse(result, parts, list(model.bias), {n: papers[n][0] for n in names["test"]})
    result["seconds"] = round(time.perf_counter() - start, 1)
    (out / "heldout.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    keep = {part: {x: v[x] for x in ("gold", "pred", "outputs")} for part, v in parts.items()}
    with (out / "heldout.pkl").open("wb") as fh:
        pickle.dump({"names": names, "parts": keep}, fh)
    print(json.dumps({v: x["R"] for v, x in result["variants"].items()}))


def refold(out: Path, k: int = 4) -> dict[str, Any]:
    """The bias choice cross-validated over the held-out papers of ``heldout.pkl``, models fixed.

    The held-out papers are dealt into ``k`` grouped folds by paper (weighted by their gold
    relations, :func:`gnn.protocol.grouped_folds`, seed 0); in each fold the biases are tuned on
    the other folds' predicted components and both decodings score the fold's papers. Neither
    model trained on any of these papers, so every choice is made outside the fold it scores.
    """
    from gnn.protocol import grouped_folds, spread

    with (out / "heldout.pkl").open("rb") as fh:
        saved = pickle.load(fh)
    test = saved["parts"]["test"]
    shipped = [
        float(b) for b in json.loads((out / "heldout.json").read_text(encoding="utf-8"))["biases"]["shipped"].values()
    ]
    rows = list(zip(test["gold"], test["pred"], test["outputs"], strict=True))
    items = [g.name for g, _, _ in rows for _ in g.gold]
    fold_of = dict(zip(items, grouped_folds(items, k, 0), strict=True))
    folds: list[dict[str, Any]] = []
    for f in range(k):
        inside = [r for r in rows if fold_of[r[0].name] != f]
        held = [r for r in rows if fold_of[r[0].name] == f]
        bias = tune_on_predicted([r[0] for r in inside], [r[1] for r in inside], [r[2] for r in inside])
        scored = {
            name: span_f1([r[0] for r in held], [r[1] for r in held], [r[2] for r in held], b)
            for name, b in (("shipped", shipped), ("predicted_bias", bias))
        }
        folds.append(
            {"papers": sorted(r[0].name for r in held), "bias": dict(zip(LABELS, bias, strict=True)), **scored}
        )
    report = {name: spread([row[name] for row in folds]) for name in ("shipped", "predicted_bias")}
    report["difference"] = spread([row["predicted_bias"] - row["shipped"] for row in folds])
    return {"folds": folds, **report}


def summary(out: Path) -> dict[str, Any]:
    """Mean and spread of each variant's R over the folds written under ``out``, causes pooled."""
    from gnn.protocol import spread

    folds = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("fold*.json"))]
    report: dict[str, Any] = {"folds": [f["fold"] for f in folds]}
    report["gold_components_R"] = spread([f["gold_components_R"] for f in folds])
    for variant in folds[0]["variants"] if folds else []:
        rows = [f["variants"][variant] for f in folds]
        pooled: dict[str, Counter[str]] = {"gold_relations": Counter(), "wrong_predictions": Counter()}
        by_type: dict[str, Counter[str]] = {}
        for row in rows:
            for key, counter in pooled.items():
                counter.update(row[key])
            for lab, c in row["by_type"].items():
                by_type.setdefault(lab, Counter()).update(c)
        report[variant] = {
            "R.f1": spread([r["R"]["f1"] for r in rows]),
            "R.p": spread([r["R"]["p"] for r in rows]),
            "R.r": spread([r["R"]["r"] for r in rows]),
            "C": spread([r["C"] for r in rows]),
            **{key: dict(sorted(c.items())) for key, c in pooled.items()},
            "by_type": {lab: dict(c) for lab, c in by_type.items()},
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("run", "heldout", "refold", "summary"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--profile", default="full", help="the recipes' profile (quick: a smoke run)")
    parser.add_argument("--papers", nargs="+", default=None, help="a subset of A01-A32 (a smoke run)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command == "summary":
        print(json.dumps(summary(args.out), indent=2))
        return 0
    if args.command == "refold":
        print(json.dumps(refold(args.out), indent=2))
        return 0
    from api.settings import get_settings
    from gnn.device import pick_device
    from gnn.encoder import encoder_for
    from gnn.relations.family import TrainOptions

    settings = get_settings()
    kept = kept_papers(args.data_dir, args.papers)
    if args.command == "heldout":
        heldout(kept, args.data_dir, settings.cache_dir, args.out)
        return 0
    device = pick_device()
    encoder = encoder_for(None, None, settings.cache_dir, device=device)
    options = TrainOptions(args.profile, 0, device, encoder, log=lambda line: print(line, flush=True))
    plan = fold_plan_of(kept, options.seed)
    for k in args.folds:
        run_fold(k, plan, kept, args.data_dir, options, settings.cache_dir, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
