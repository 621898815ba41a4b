"""Discourse levers under the one protocol: lexical sense cues, the reply-to decoding and sense-share biases.

The levers are fields of :class:`gnn.discourse.train.ParserConfig`: ``cues`` (hash buckets of the
pairs' lexical cues, :func:`gnn.discourse.graphs.pair_cues`, read by the sense scorers),
``tune_reply`` (a per-domain margin within which a candidate the reply-to structure points at,
:func:`gnn.discourse.graphs.reply_candidates`, is preferred to the best parent) and
``tune_sense_bias`` (per-domain sense log-biases under which the senses given to the tuning
part's links match the gold sense shares of the training part), each chosen on the tuning part
inside the training folds. A run cross-validates one recipe through
:func:`gnn.protocol.cross_validate` with the folds and seeds of ``argweb model evaluate discourse
--cv``; each fold's networks are also scored without the biases (``unbiased_*``) and without the
margin and the biases (``plain_*``, extra-parent thresholds chosen again), so that the decoding
levers are compared on the same networks. Reported per file (Molweni dev, STAC train): link F1 and
link & relation F1, mean ± std over folds, per fold, and the predicted against gold senses pooled
over the held-out folds.

The figures (quick profile, five folds, seed 13) are in docs/experiments/discourse.md,
"Lexical cues, reply-to decoding and sense-share biases".

Usage: ``python -m experiments.discourse_cues [--profile quick] [--members N] [--seed 13]
[--folds 5] [--cues 4096] [--cue-dim 16] [--reply] [--bias] [--json OUT]``
(the files of the shipped model under the settings' corpora directory).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from api.services import tasks
from api.services.discourse import recipe_data
from api.settings import get_settings
from gnn.discourse.data import DOMAINS
from gnn.discourse.task import TASK, DiscourseExample, dialogues_of, score
from gnn.discourse.train import ParserConfig, tune_thresholds
from gnn.protocol import Fold, FoldOutcome, cross_validate, spread
from gnn.task import Resources


def run(
    examples: list[DiscourseExample], config: ParserConfig, resources: Resources, folds: int, seed: int
) -> dict[str, Any]:
    """The protocol's summary of ``config``; with ``tune_sense_bias`` also the figures of the same networks
    decoded without the sense biases (``unbiased_*``), with ``tune_reply`` those without the margin or the
    biases (``plain_*``)."""

    def run_fold(fold: Fold) -> FoldOutcome:
        train = [examples[i] for i in fold.train]
        tune = [examples[i] for i in fold.tune]
        test = [examples[i] for i in fold.test]
        fitted = TASK.fit(train, tune, config, resources)
        model = fitted.model
        scored = score(model, test)
        figures = dict(scored.scores)
        labels = {"": scored.tally}
        extra: dict[str, Any] = {"files": scored.files}
        if config.tune_sense_bias:
            biases = model.config.sense_bias
            model.config.sense_bias = {}
            unbiased = score(model, test)
            figures |= {f"unbiased_{k}": v for k, v in unbiased.scores.items()}
            labels["unbiased"] = unbiased.tally
            extra["unbiased_files"] = unbiased.files
            model.config.sense_bias = biases
        if config.tune_reply:
            kept = (dict(model.config.reply_margin), dict(model.config.thresholds), model.config.sense_bias)
            model.config.sense_bias = {}
            model.config.reply_margin = dict.fromkeys(DOMAINS, 0.0)
            model.config.thresholds = dict.fromkeys(DOMAINS, 1.01)
            plain_thresholds = tune_thresholds(model, dialogues_of(tune))
            plain = score(model, test)
            model.config.reply_margin, model.config.thresholds, model.config.sense_bias = kept
            figures |= {f"plain_{k}": v for k, v in plain.scores.items()}
            labels["plain"] = plain.tally
            extra["plain_files"] = plain.files
            extra["plain_thresholds"] = plain_thresholds
        return FoldOutcome(figures, labels, dict(fitted.chosen), extra)

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
    """Run one recipe's cross-validation and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--members", type=int, default=None)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--cues", type=int, default=0)
    ap.add_argument("--cue-dim", type=int, default=16)
    ap.add_argument("--reply", action="store_true")
    ap.add_argument("--bias", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    settings = get_settings()
    config = TASK.recipes.config(args.profile, args.seed)
    overrides: dict[str, Any] = {
        "cues": args.cues or config.cues,
        "cue_dim": args.cue_dim,
        "tune_reply": args.reply or config.tune_reply,
        "tune_sense_bias": args.bias or config.tune_sense_bias,
    }
    if args.members is not None:
        overrides["members"] = args.members
    config = replace(config, **overrides)
    paths = recipe_data(settings, args.profile, None)
    examples = TASK.examples(tasks.read_records(TASK.reads, paths), config)
    resources = tasks.resources(settings, TASK, data=paths, device=None)
    resources = replace(resources, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    summary = run(examples, config, resources, args.folds, args.seed)
    out = {
        "recipe": {"profile": args.profile, **overrides, "seed": args.seed, "folds": args.folds},
        "files": per_file(summary),
        "summary": summary,
    }
    if config.tune_sense_bias:
        out["unbiased_files"] = per_file(summary, "unbiased_files")
    if config.tune_reply:
        out["plain_files"] = per_file(summary, "plain_files")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps({k: v for k, v in out.items() if k != "summary"}, indent=1))
    print(json.dumps(summary["figures"], indent=1))
    print(f"{summary['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
