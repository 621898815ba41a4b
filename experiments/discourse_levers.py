"""Discourse sense levers under the one protocol, each against the recipe it changes, fold by fold.

Every lever is a field of :class:`gnn.discourse.train.ParserConfig` (``parent_sense``,
``sense_balance``, ``tune_sense_shift``). A run cross-validates one recipe through
:func:`gnn.protocol.cross_validate` with the folds and seeds of ``argweb model evaluate discourse
--cv``; when the recipe tunes the decoding's prior correction on the tuning part, each fold's model
is also scored without it (the same networks), so that the decoding lever is compared on the
same training. Reported per file (Molweni dev, STAC train): link F1 and link & relation F1, mean ±
std over folds, and the predicted against gold senses pooled over the held-out folds.

Measured, not adopted: the figures (quick profile, five folds, seed 13) are in
docs/experiments/discourse.md, "Sense levers under the protocol".

Usage: ``python -m experiments.discourse_levers [--profile quick] [--members N] [--seed 13]
[--folds 5] [--parent-sense] [--balance A] [--shift] [--json OUT]``
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
from gnn.discourse.task import TASK, DiscourseExample, score
from gnn.discourse.train import ParserConfig
from gnn.protocol import Fold, FoldOutcome, cross_validate, spread
from gnn.task import Resources


def run(
    examples: list[DiscourseExample], config: ParserConfig, resources: Resources, folds: int, seed: int
) -> dict[str, Any]:
    """The protocol's summary of ``config``; with ``tune_sense_shift`` also the unshifted decoding's figures."""

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
        chosen = {**fitted.chosen, "sense_shift": model.config.sense_shift}
        if config.tune_sense_shift:
            kept = model.config.sense_shift
            model.config.sense_shift = 0.0
            plain = score(model, test)
            model.config.sense_shift = kept
            figures |= {f"unshifted_{k}": v for k, v in plain.scores.items()}
            labels["unshifted"] = plain.tally
            extra["unshifted_files"] = plain.files
        return FoldOutcome(figures, labels, chosen, extra)

    groups = [e.group for e in examples]
    return cross_validate(groups, run_fold, folds, seed, TASK.protocol(examples), log=resources.log)


def per_file(summary: dict[str, Any], key: str = "files") -> dict[str, dict[str, str]]:
    """Per file and figure: mean ± std over folds."""
    values: dict[str, dict[str, list[float]]] = {}
    for row in summary["folds"]:
        for name, figs in row.get(key, {}).items():
            for fig in ("link_f1", "link_rel_f1"):
                values.setdefault(name, {}).setdefault(fig, []).append(float(figs[fig]))
    out = {}
    for name, figs in values.items():
        spreads = {fig: spread(v) for fig, v in figs.items()}
        out[name] = {fig: f"{s['mean']:.2f} ± {s['std']:.2f}" for fig, s in spreads.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    """Run one recipe's cross-validation and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--members", type=int, default=None)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--parent-sense", action="store_true")
    ap.add_argument("--balance", type=float, default=0.0)
    ap.add_argument("--shift", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    settings = get_settings()
    config = TASK.recipes.config(args.profile, args.seed)
    overrides: dict[str, Any] = {
        "parent_sense": args.parent_sense or config.parent_sense,
        "sense_balance": args.balance or config.sense_balance,
        "tune_sense_shift": args.shift or config.tune_sense_shift,
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
    if config.tune_sense_shift:
        out["unshifted_files"] = per_file(summary, "unshifted_files")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps({k: v for k, v in out.items() if k != "summary"}, indent=1))
    print(json.dumps(summary["figures"], indent=1))
    print(f"{summary['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
