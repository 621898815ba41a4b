"""Seed ensembles of the Sci-Arg component tagger: do several taggers, averaged, find more exact spans?

The shipped tagger (``gnn.components``, recipe ``full``) is one BiLSTM-CRF whose single epochs swing
between 0.42 and 0.51 exact-span F1 on its tuning papers. An ensemble of the same recipe trained
from several seeds averages the members' emission scores and their CRF transition scores and
decodes once (Viterbi over the averaged scores), so its components stay clean ``B-X I-X …`` runs.

The folds are those of ``argweb model evaluate relations --cv 5 --end-to-end`` (the 32 papers
A01-A32 grouped by paper, fold seed 0, 4 of 24 training papers tune), so that the members can be
read by the end-to-end relation stage. Commands:

- ``run``: in each fold, each member seed trains the shipped recipe (its seed replaced) on the
  fold's training papers, its epoch chosen on the fold's tuning papers; it is saved under
  ``OUT/fold<k>/seed<s>/`` (a tagger directory that ``ComponentTagger.load`` reads).
- ``summary``: on each fold's held-out papers, BAM's C (labelled exact-span F1, precision, recall),
  S and B of each member alone and of the ensemble of the first ``n`` seeds (``n`` = 2, 3, …, in the
  order given), with predicted against gold components per label; mean ± sample standard
  deviation over the folds that hold every member. ``ensemble<n>-int8`` is the ensemble of all
  members with their weight matrices rounded to 8 bits (one scale per row), the size at which two
  members fit the shipped models' 20 MB budget.
- ``e2e``: in each fold, the shipped relation recipe (refit included) trains on the same training
  papers (saved under ``OUT/fold<k>/relations/``, reused when present) and reads the components of
  the first seed's tagger alone and of the ensemble; BAM's R of each on the held-out papers, the
  biases chosen on gold components of the tuning papers, as the shipped recipe does
  (``fold<k>-e2e.json``). ``summary`` then adds R's mean and spread.

Figures and what they mean: ``docs/experiments/components.md`` ("Seed ensembles of the tagger").

Usage::

    python -m experiments.components_ensemble run --out DIR [--seeds 13 14] [--folds 0 1 2 3 4]
    python -m experiments.components_ensemble e2e --out DIR [--seeds 13 14] [--folds ...]
    python -m experiments.components_ensemble summary --out DIR [--seeds 13 14]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.sciarg_e2e import fold_names, fold_plan_of, kept_papers, token_vectors  # noqa: E402
from gnn.components.net import ComponentTagger, sentence_batch  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora" / "sciarg" / "compiled_corpus"


class EnsembleTagger(ComponentTagger):
    """Taggers of one recipe read as one: their emission and CRF scores averaged, one Viterbi.

    Averaging the scores (not the decoded spans) keeps the decoding a CRF's: every component is a
    clean run, and a span the members half agree on can still win.
    """

    def __init__(self, members: Sequence[ComponentTagger]) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one member")
        first = members[0]
        super().__init__(first.network, first.config, first.vectors)
        self.members = list(members)
        # A copy of the first network carries the averaged transition, start and end scores; its own
        # emissions are never read.
        self.decoder = copy.deepcopy(first.network).eval()
        with torch.no_grad():
            for name in ("transitions", "start", "end"):
                mean = torch.stack([getattr(m.network, name) for m in members]).mean(dim=0)
                getattr(self.decoder, name).copy_(mean)

    def tag(self, rows: Sequence[np.ndarray]) -> list[list[int]]:
        """Tag ids per sentence from the members' averaged scores."""
        out: list[list[int]] = []
        device = next(self.decoder.parameters()).device
        with torch.inference_mode():
            for start in range(0, len(rows), 64):
                batch = sentence_batch(rows[start : start + 64], device=device)
                scored = [m.network.eval().emissions(batch) for m in self.members]
                em = torch.stack([e for e, _ in scored]).mean(dim=0)
                out.extend(self.decoder.viterbi(em, scored[0][1]))
        return out


def int8_rounded(tagger: ComponentTagger) -> ComponentTagger:
    """A copy of ``tagger`` whose weight matrices are rounded to 8-bit integers with one scale per row.

    Two float16 members weigh 2.4 MB where the shipped models' budget leaves about 0.16 MB; stored
    as int8 (one float16 scale per row), two members weigh what one weighs now. This copy scores
    exactly what such a file would give back. Vectors (biases, CRF scores) stay as they are.
    """
    network = copy.deepcopy(tagger.network).eval()
    with torch.no_grad():
        for tensor in network.state_dict().values():
            if tensor.is_floating_point() and tensor.dim() >= 2:
                rows = tensor.reshape(tensor.shape[0], -1)
                scale = (rows.abs().amax(dim=1, keepdim=True) / 127).clamp_min(1e-12)
                tensor.copy_((torch.round(rows / scale) * scale).reshape(tensor.shape))
    return ComponentTagger(network, tagger.config, tagger.vectors)


def _setup(data_dir: Path) -> tuple[list[Any], dict[str, Any], Path]:
    import gnn.components as components
    from api.settings import get_settings

    kept = kept_papers(data_dir)
    papers = components.read_papers(data_dir, [p.name for p in kept])
    return kept, papers, get_settings().cache_dir


def run(out: Path, seeds: Sequence[int], folds: Sequence[int], data_dir: Path, profile: str) -> None:
    """Train and save each member of each fold (a member already saved is kept)."""
    import gnn.components as components
    from gnn.components.net import train_tagger

    kept, papers, cache_dir = _setup(data_dir)
    plan = fold_plan_of(kept)
    config = components.TASK.recipes.config(profile, 13)
    vectors = token_vectors(config, cache_dir)
    for k in folds:
        names = fold_names(plan, k, kept)
        train = {n: papers[n] for n in names["train"]}
        tune = {n: papers[n] for n in names["tune"]}
        for seed in seeds:
            where = out / f"fold{k}" / f"seed{seed}"
            if (where / "fit.json").is_file():
                continue
            start = time.perf_counter()
            tagger, fit = train_tagger(train, tune, replace(config, seed=seed), vectors=vectors)
            where.mkdir(parents=True, exist_ok=True)
            tagger.save(where)
            row: dict[str, Any] = {
                "fold": k,
                "seed": seed,
                "epoch": fit.best_epoch,
                "seconds": round(time.perf_counter() - start, 1),
            }
            row["papers"] = names
            (where / "fit.json").write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
            print(json.dumps({x: row[x] for x in ("fold", "seed", "epoch", "seconds")}), flush=True)


def members(out: Path, k: int, seeds: Sequence[int], cache_dir: Path) -> list[ComponentTagger] | None:
    """The saved members of fold ``k`` in the order of ``seeds`` (None: one is missing)."""
    dirs = [out / f"fold{k}" / f"seed{s}" for s in seeds]
    if not all((d / "fit.json").is_file() for d in dirs):
        return None
    loaded = [ComponentTagger.load(d, cache_dir=cache_dir / "embeddings" / "sciarg-tokens") for d in dirs]
    # One vector source for all: the members read the same words.
    return [ComponentTagger(m.network, m.config, loaded[0].vectors) for m in loaded]


def variants(taggers: Sequence[ComponentTagger], seeds: Sequence[int]) -> dict[str, ComponentTagger]:
    """Each member alone (``seed<s>``) and the ensembles of the first n members (``ensemble<n>``)."""
    out: dict[str, ComponentTagger] = {f"seed{s}": t for s, t in zip(seeds, taggers, strict=True)}
    for n in range(2, len(taggers) + 1):
        out[f"ensemble{n}"] = EnsembleTagger(taggers[:n])
    return out


def component_scores(tagger: ComponentTagger, test: Mapping[str, Any]) -> dict[str, Any]:
    """BAM's C, S and B of ``tagger`` on whole papers, with predicted against gold per label."""
    from gnn.components import paper_scores

    scored = paper_scores(tagger, test)
    return {**scored.figures, "labels": scored.labels.counts}


def e2e(out: Path, seeds: Sequence[int], folds: Sequence[int], data_dir: Path, profile: str) -> None:
    """R end to end of the first member alone and of the ensemble of all ``seeds``, per fold."""
    from experiments.sciarg_e2e import analyse, predicted_parts
    from gnn.device import pick_device
    from gnn.encoder import encoder_for
    from gnn.relations.family import TrainOptions
    from gnn.relations.sciarg_task import load_sciarg, train_sciarg

    kept, papers, cache_dir = _setup(data_dir)
    plan = fold_plan_of(kept)
    by_name = {p.name: p for p in kept}
    device = pick_device()
    encoder = encoder_for(None, None, cache_dir, device=device)
    options = TrainOptions(profile, 0, device, encoder, log=lambda line: print(line, flush=True))
    for k in folds:
        taggers = members(out, k, seeds, cache_dir)
        if taggers is None:
            print(f"fold {k}: a member is missing; run `run` first", flush=True)
            continue
        start = time.perf_counter()
        names = fold_names(plan, k, kept)
        rel_dir = out / f"fold{k}" / "relations"
        if not (rel_dir / "fold.json").is_file():
            rel_dir.mkdir(parents=True, exist_ok=True)
            train_sciarg(kept, rel_dir, options, dev=names["tune"], heldout=names["test"])
            (rel_dir / "fold.json").write_text(json.dumps({"fold": k, "papers": names}) + "\n", encoding="utf-8")
        model = load_sciarg(rel_dir, device=device, encoder=encoder)
        chosen = {f"seed{seeds[0]}": taggers[0], f"ensemble{len(taggers)}": EnsembleTagger(taggers)}
        result: dict[str, Any] = {"fold": k, "papers": names, "variants": {}}
        for name, tagger in chosen.items():
            parts = predicted_parts(tagger, model, names, papers, by_name, data_dir)
            row: dict[str, Any] = {}
            analyse(row, parts, list(model.bias), {n: papers[n][0] for n in names["test"]})
            shipped = row["variants"]["shipped"]
            result["variants"][name] = {"R": shipped["R"], "C": shipped["C"], "by_type": shipped["by_type"]}
        result["seconds"] = round(time.perf_counter() - start, 1)
        (out / f"fold{k}-e2e.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(json.dumps({"fold": k, **{v: x["R"] for v, x in result["variants"].items()}}), flush=True)


def summary(out: Path, seeds: Sequence[int], data_dir: Path) -> dict[str, Any]:
    """Each variant's figures per fold and their mean ± spread over the folds holding every member."""
    from gnn.protocol import spread

    kept, papers, cache_dir = _setup(data_dir)
    plan = fold_plan_of(kept)
    folds: dict[int, dict[str, Any]] = {}
    for k in range(5):
        taggers = members(out, k, seeds, cache_dir)
        if taggers is None:
            continue
        test = {n: papers[n] for n in fold_names(plan, k, kept)["test"]}
        found = variants(taggers, seeds)
        if len(taggers) > 1:
            found[f"ensemble{len(taggers)}-int8"] = EnsembleTagger([int8_rounded(t) for t in taggers])
        folds[k] = {name: component_scores(t, test) for name, t in found.items()}
    report: dict[str, Any] = {"folds": sorted(folds), "seeds": list(seeds), "per_fold": folds}
    names = list(next(iter(folds.values()))) if folds else []
    for name in names:
        rows = [folds[k][name] for k in sorted(folds)]
        totals: dict[str, dict[str, int]] = {}
        for r in rows:
            for lab, c in r["labels"].items():
                t = totals.setdefault(lab, {"gold": 0, "predicted": 0, "right": 0})
                for key in t:
                    t[key] += int(c[key])
        report[name] = {
            **{m: spread([r[m] for r in rows]) for m in ("C.f1", "C.precision", "C.recall", "S", "B")},
            "labels": totals,
        }
    ends = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("fold*-e2e.json"))]
    if ends:
        report["e2e_folds"] = [e["fold"] for e in ends]
        for name in ends[0]["variants"]:
            report[f"{name}.R"] = spread([e["variants"][name]["R"]["f1"] for e in ends])
            report[f"{name}.C_e2e"] = spread([e["variants"][name]["C"] for e in ends])
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("run", "e2e", "summary"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[13, 14])
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--profile", default="full", help="the recipes' profile (quick: a smoke run)")
    parser.add_argument("--json", type=Path, help="summary: also write it here")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command == "run":
        run(args.out, args.seeds, args.folds, args.data_dir, args.profile)
    elif args.command == "e2e":
        e2e(args.out, args.seeds, args.folds, args.data_dir, args.profile)
    else:
        report = summary(args.out, args.seeds, args.data_dir)
        text = json.dumps({k: v for k, v in report.items() if k != "per_fold"}, indent=2)
        print(text)
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
