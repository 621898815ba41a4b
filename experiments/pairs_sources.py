"""The pair model trained on the conflicts of further corpora: figures per source corpus.

Cross-validates the pair recipe (:mod:`gnn.pairs`) with and without further training sources
(:attr:`gnn.pairs.PairConfig.sources`: Sci-Arg's ``contradicts`` / ``supports`` /
``semantically_same`` with same-paper unrelated components as ``none``, M-Arg's gold pairs), through
the one protocol (five folds of whole groups: QT30 episode, Sci-Arg paper, M-Arg event; epoch and
biases chosen on a tenth of the training groups). Prints, per variant and per source corpus, attack
precision / recall / F1 (mean ± std over folds), the attacks predicted and in gold pooled over the
held-out folds, and the macro-F1 over none / support / attack / rephrase.

Usage: ``python -m experiments.pairs_sources [--encoder all-MiniLM-L6-v2] [--hidden 256]
[--variant none --variant sciarg --variant sciarg+marg --variant contrast] [--json OUT]``
(``none``: QT30 alone; ``contrast``: the further cue flags of :data:`gnn.pairs.CONTRAST_CUES`;
``tuneqt30``: only the QT30 tuning pairs choose the epoch and biases).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from api.services.tasks import examples, resources
from api.settings import get_settings
from gnn.pairs import CHALLENGE, CHALLENGE_SECOND, SOURCES, TASK, PairConfig
from gnn.task import CVReport
from ontology.progress import SILENT


def variant_config(variant: str, base: PairConfig) -> PairConfig:
    """``base`` trained on QT30 plus the sources named in ``variant`` (``+``-joined; ``contrast`` among
    them switches on :attr:`gnn.pairs.PairConfig.contrast`, ``tuneqt30`` has only the QT30 pairs choose)."""
    names = variant.split("+")
    return replace(
        base,
        sources=tuple(s for s in names if s in SOURCES),
        contrast="contrast" in names,
        tune_corpus="qt30" if "tuneqt30" in names else "",
    )


def run(variant: str, base: PairConfig, folds: int) -> CVReport:
    """The out-of-fold report of the variant's recipe."""
    settings = get_settings()
    config = variant_config(variant, base)
    _, found = examples(settings, TASK, None, config, SILENT)
    return TASK.cross_validate(found, config, resources(settings, TASK), folds=folds, seed=config.seed)


def challenge(variant: str, base: PairConfig, out: Path) -> list[str]:
    """Train the variant's model on every pair into ``out`` and score it on both challenge sets."""
    settings = get_settings()
    config = variant_config(variant, base)
    paths, found = examples(settings, TASK, None, config, SILENT)
    TASK.train(found, out, config, variant, resources(settings, TASK, data=paths))
    model = TASK.load(out, encoder=resources(settings, TASK).encoder(config.encoder), device=None)
    lines = []
    for path in (CHALLENGE, CHALLENGE_SECOND):
        score = TASK.challenge(model, path)
        per = ", ".join(f"{k} {v['right']}/{v['pairs']}" for k, v in sorted(score.per_label.items()))
        lines.append(f"  challenge {path.name}: {score.right}/{score.pairs} ({per})")
    return lines


def table(name: str, report: CVReport) -> list[str]:
    """Lines of the figures per source corpus."""
    lines = [f"== {name}: {report.items} pairs, {report.groups} groups, {report.seconds:.0f} s"]
    corpora = sorted({k.split(":", 1)[0] for k in report.figures if ":" in k})
    for corpus in corpora:
        fig = {k.split(":", 1)[1]: v for k, v in report.figures.items() if k.startswith(f"{corpus}:")}

        def ms(key: str, fig: Any = fig) -> str:
            s = fig[key]
            return f"{s.mean:.3f} ± {s.std:.3f}" if s.mean is not None else "n/a"

        said = sum(v or 0 for v in fig["predicted_attack"].folds)
        real = sum(v or 0 for v in fig["gold_attack"].folds)
        lines.append(
            f"  {corpus:7s} attack P {ms('precision_attack')}  R {ms('recall_attack')}  F1 {ms('f1_attack')}  "
            f"(folds {[None if v is None else round(v, 3) for v in fig['f1_attack'].folds]})  "
            f"predicted {said:.0f} / gold {real:.0f}   macro-F1 {ms('macro_f1')}"
        )
    lines.append("  pooled labels: " + ", ".join(
        f"{k} gold {v.gold} predicted {v.predicted} right {v.right}" for k, v in report.labels.items()
    ))  # fmt: skip
    lines.append(f"  chosen: {[row.get('chosen') for row in report.folds]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the variants and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="all-mpnet-base-v2")
    parser.add_argument("--hidden", type=int, default=224)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13, help="seed of the folds, the none sampling and the network")
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--challenge", type=Path, help="train each variant into DIR/<variant> and score the challenge sets"
    )
    parser.add_argument("--no-cv", action="store_true", help="only --challenge")
    args = parser.parse_args(argv)
    base = replace(TASK.recipes.config("full", args.seed), encoder=args.encoder, hidden=args.hidden)
    out = {}
    for variant in args.variant or ["none", "sciarg"]:
        if args.challenge:
            print(f"== {variant}", *challenge(variant, base, args.challenge / variant), sep="\n", flush=True)
        if not args.no_cv:
            report = run(variant, base, args.folds)
            print("\n".join(table(variant, report)), flush=True)
            out[variant] = report.document()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
