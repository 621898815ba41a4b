"""Molweni and STAC as two tasks over one encoder: a parser per corpus against the joint one, under the one protocol.

The shipped recipe trains one parser network on the dialogues of both files (Molweni ``DP/dev.json``
and STAC ``train.json``); the encoder, MiniLM, is frozen and shared anyway. Two variants are
cross-validated here with the folds and seeds of ``argweb model evaluate discourse --cv`` (through
:func:`gnn.protocol.cross_validate`), each fold model scored on the fold it never saw:

- ``per-corpus``: per fold, one parser per corpus, trained (:meth:`gnn.discourse.task.DiscourseTask.fit`)
  on the training folds' dialogues of that corpus only, its epoch and extra-parent threshold chosen
  on that corpus' share of the fold's tuning part; each held-out dialogue is parsed by its corpus'
  parser.
- ``finetune``: per fold, the joint parser (the baseline's network, scored too as ``joint_*``), then
  per corpus a short fine-tune of a copy of it (every parameter, or with ``--scope sense`` the two
  sense scorers only) on that corpus' training dialogues at a lower learning rate; the epoch, 0 (the
  joint weights unchanged) included, and the extra-parent threshold are chosen on that corpus' tuning
  dialogues.

Reported per file (Molweni dev, STAC train): link F1 and link & relation F1, mean ± std over folds
and per fold, and the sense of each EDU's best attachment against its gold one, pooled over the
held-out folds. The figures (quick profile, five folds, seed 13) are in docs/experiments/discourse.md,
"Molweni and STAC as two tasks over one encoder".

Usage: ``python -m experiments.discourse_per_corpus [--variant per-corpus|finetune] [--profile quick]
[--seed 13] [--folds 5] [--ft-epochs 2] [--ft-lr 3e-4] [--scope all|sense] [--json OUT]``
(the files of the shipped model under the settings' corpora directory).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, cast

from api.services import tasks
from api.services.discourse import recipe_data
from api.settings import get_settings
from gnn.discourse.data import DOMAINS, Dialogue
from gnn.discourse.model import DiscourseParser
from gnn.discourse.task import TASK, DiscourseExample, dialogues_of, score
from gnn.discourse.train import (
    DiscourseModel,
    LinkPrediction,
    ParserConfig,
    ParserFit,
    graphs_for,
    schedule,
    tune_thresholds,
)
from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate, spread
from gnn.task import Resources
from gnn.trainer import Progress, Trainer

VARIANTS = ("per-corpus", "finetune")


@dataclass(frozen=True)
class ByCorpus:
    """Parsers per corpus: each dialogue is parsed by the parser of its own corpus (``Dialogue.domain``)."""

    models: dict[str, DiscourseModel]

    def predict(self, dialogues: Sequence[Dialogue], progress: Progress | bool = False) -> list[list[LinkPrediction]]:
        """Predicted relations of each dialogue (same order), by its corpus' parser."""
        out: list[list[LinkPrediction]] = [[] for _ in dialogues]
        for domain, model in self.models.items():
            idx = [i for i, d in enumerate(dialogues) if d.domain == domain]
            if idx:
                for i, links in zip(idx, model.predict([dialogues[i] for i in idx], progress), strict=True):
                    out[i] = links
        return out


@dataclass(eq=False)
class WarmFit(ParserFit):
    """A parser network fine-tuned from given weights (a copy of ``start``), all of it or its sense scorers only."""

    start: DiscourseParser | None = None
    sense_only: bool = False

    @cached_property
    def module(self) -> DiscourseParser:
        """A copy of the starting network."""
        assert self.start is not None
        return copy.deepcopy(self.start)

    def param_groups(self) -> Any:
        """Every parameter, or those of the two passes' sense scorers."""
        if not self.sense_only:
            return self.module.parameters()
        return [p for scorer in (self.module.pass1, self.module.pass2) for p in scorer.sense.parameters()]


def of_corpus(examples: Iterable[DiscourseExample], domain: str) -> list[DiscourseExample]:
    """The examples whose dialogue is of corpus ``domain``."""
    return [e for e in examples if e.dialogue.domain == domain]


def finetune(
    joint: DiscourseModel,
    train: Sequence[Dialogue],
    tune: Sequence[Dialogue],
    config: ParserConfig,
    resources: Resources,
    *,
    epochs: int,
    lr: float,
    sense_only: bool,
) -> tuple[DiscourseModel, dict[str, Any]]:
    """Each network of ``joint`` fine-tuned on ``train`` (one corpus); its epoch (0: unchanged) and the
    extra-parent thresholds chosen on ``tune`` (that corpus' tuning dialogues)."""
    own = replace(config, epochs=epochs, patience=epochs, lr=lr, thresholds=dict(config.thresholds))
    vocab = joint.vocab
    train_g = graphs_for(train, joint.encoder, vocab, own.k)
    tune_g = graphs_for(tune, joint.encoder, vocab, own.k)
    nets, kept = [], []
    for member, start in enumerate(joint.nets):
        before = DiscourseModel([start], vocab, own, joint.encoder).evaluate(tune, graphs=tune_g).as_dict()
        base = before["link_f1"] + before["link_rel_f1"]
        job = WarmFit(train_g, own, joint.encoder, vocab, tune, tune_g, start=start, sense_only=sense_only)
        trainer = Trainer(schedule(own, own.seed + member), resources.device, None, resources.log, "fine-tune ")
        result = trainer.fit(job)
        better = result.best_score is not None and result.best_score > base
        nets.append(job.module if better else start)
        kept.append(result.best_epoch if better else 0)
    model = DiscourseModel(nets, vocab, own, joint.encoder)
    own.thresholds = tune_thresholds(model, tune, tune_g)
    return model, {"epochs": kept, "thresholds": dict(own.thresholds)}


def run(
    examples: list[DiscourseExample],
    config: ParserConfig,
    resources: Resources,
    folds: int,
    seed: int,
    variant: str,
    *,
    ft_epochs: int = 2,
    ft_lr: float = 3e-4,
    sense_only: bool = False,
    pooled: bool = False,
) -> dict[str, Any]:
    """The protocol's summary of ``variant``; with ``finetune`` also the joint parser's figures (``joint_*``).

    With ``pooled``, the control of ``finetune``: one fine-tune on both corpora' dialogues at once.
    """

    def run_fold(fold: Fold) -> FoldOutcome:
        train = [examples[i] for i in fold.train]
        tune = [examples[i] for i in fold.tune]
        test = [examples[i] for i in fold.test]
        models: dict[str, DiscourseModel] = {}
        chosen: dict[str, Any] = {}
        figures: dict[str, float] = {}
        labels: dict[str, Pooled] = {}
        extra: dict[str, Any] = {}
        if variant == "per-corpus":
            for domain in DOMAINS:
                tr, tu = of_corpus(train, domain), of_corpus(tune, domain)
                if not tr or not of_corpus(test, domain):
                    continue
                fitted = TASK.fit(tr, tu, config, resources)
                models[domain], chosen[domain] = fitted.model, dict(fitted.chosen)
        else:
            fitted = TASK.fit(train, tune, config, resources)
            joint = fitted.model
            chosen["joint"] = dict(fitted.chosen)
            scored = score(joint, test)
            figures |= {f"joint_{k}": v for k, v in scored.scores.items()}
            labels["joint"] = scored.tally
            extra["joint_files"] = scored.files
            if pooled:
                # The control: the same fine-tune on both corpora at once (more epochs, no split by corpus).
                both, chosen["both"] = finetune(
                    joint,
                    dialogues_of(train),
                    dialogues_of(tune),
                    config,
                    resources,
                    epochs=ft_epochs,
                    lr=ft_lr,
                    sense_only=sense_only,
                )
                models = dict.fromkeys(DOMAINS, both)
            for domain in DOMAINS if not pooled else ():
                tr, tu = of_corpus(train, domain), of_corpus(tune, domain)
                if not tr or not tu:
                    # Nothing to fine-tune on or to choose the epoch with: the joint parser stays.
                    models[domain] = joint
                    continue
                models[domain], chosen[domain] = finetune(
                    joint,
                    dialogues_of(tr),
                    dialogues_of(tu),
                    config,
                    resources,
                    epochs=ft_epochs,
                    lr=ft_lr,
                    sense_only=sense_only,
                )
        # ``score`` reads ``predict`` only: the router stands in for one model.
        scored = score(cast(DiscourseModel, ByCorpus(models)), test)
        figures |= scored.scores
        labels[""] = scored.tally
        extra["files"] = scored.files
        return FoldOutcome(figures, labels, chosen, extra)

    groups = [e.group for e in examples]
    return cross_validate(groups, run_fold, folds, seed, TASK.protocol(examples), log=resources.log)


def per_file(summary: dict[str, Any], key: str = "files") -> dict[str, dict[str, Any]]:
    """Per file and figure: mean ± std over folds, and each fold's figure."""
    values: dict[str, dict[str, list[float]]] = {}
    for row in summary["folds"]:
        for name, figs in row.get(key, {}).items():
            for fig in ("link_f1", "link_rel_f1"):
                values.setdefault(name, {}).setdefault(fig, []).append(float(figs[fig]))
    out: dict[str, dict[str, Any]] = {}
    for name, figs in values.items():
        spreads = {fig: spread(v) for fig, v in figs.items()}
        out[name] = {fig: f"{s['mean']:.2f} ± {s['std']:.2f}" for fig, s in spreads.items()}
        out[name]["folds"] = " ".join(
            f"{a:.1f}/{b:.1f}" for a, b in zip(figs["link_f1"], figs["link_rel_f1"], strict=True)
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Run one variant's cross-validation and print its figures."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--variant", choices=VARIANTS, default="per-corpus")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--ft-epochs", type=int, default=2)
    ap.add_argument("--ft-lr", type=float, default=3e-4)
    ap.add_argument("--scope", choices=("all", "sense"), default="all")
    ap.add_argument("--pooled", action="store_true", help="finetune on both corpora at once (the control)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    settings = get_settings()
    config = TASK.recipes.config(args.profile, args.seed)
    paths = recipe_data(settings, args.profile, None)
    examples = TASK.examples(tasks.read_records(TASK.reads, paths), config)
    resources = tasks.resources(settings, TASK, data=paths, device=None)
    resources = replace(resources, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    summary = run(
        examples,
        config,
        resources,
        args.folds,
        args.seed,
        args.variant,
        ft_epochs=args.ft_epochs,
        ft_lr=args.ft_lr,
        sense_only=args.scope == "sense",
        pooled=args.pooled,
    )
    recipe = {"variant": args.variant, "profile": args.profile, "seed": args.seed, "folds": args.folds}
    if args.variant == "finetune":
        recipe |= {"ft_epochs": args.ft_epochs, "ft_lr": args.ft_lr, "scope": args.scope, "pooled": args.pooled}
    out: dict[str, Any] = {"recipe": recipe, "files": per_file(summary), "summary": summary}
    if args.variant == "finetune":
        out["joint_files"] = per_file(summary, "joint_files")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps({k: v for k, v in out.items() if k != "summary"}, indent=1))
    print(json.dumps(summary["figures"], indent=1))
    print(f"{summary['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
