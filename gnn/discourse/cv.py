"""The discourse parser under the grouped cross-validation protocol: folds by chat session / game.

Groups are :func:`gnn.discourse.data.session_groups`. Molweni has no session id (the dialogue
``id`` numbers a window, not its chat session; the dialogues are overlapping windows of Ubuntu
IRC sessions), so dialogues that share an EDU text of 20 characters or more are one session.
STAC dialogue ids are game ids (``s2-league4-game2``): dialogues with the same id are one game
(and games that share a long EDU text are kept together too).

Like the shipped recipe, one model is trained on every file at once: each file is cut into
``k`` folds by its own groups, and fold ``f``'s model trains on the other folds of every file.
Inside those, whole groups of about a tenth (:func:`gnn.protocol.fold_plan`) are the tuning part
that :func:`gnn.discourse.train.train_parser` selects each member's epoch and tunes the
extra-parent thresholds on; fold ``f`` of each file is only scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gnn.discourse.data import Dialogue, session_groups
from gnn.discourse.train import DiscourseModel, ParserConfig, train_parser
from gnn.encoder import TextEncoder
from gnn.metrics import discourse_scores
from gnn.protocol import Fold, Pooled, figures_of, fold_plan, group_summary


def dialogue_groups(dialogues: Sequence[Dialogue]) -> list[str]:
    """The session (Molweni) / game (STAC) group of each dialogue, named by its first dialogue's key."""
    out = [""] * len(dialogues)
    for members in session_groups(dialogues):
        for i in members:
            out[i] = dialogues[members[0]].key
    return out


def fold_plans(
    files: Mapping[str, Sequence[Dialogue]], k: int, seed: int, tune_share: float = 0.1
) -> dict[str, list[Fold]]:
    """Per file, its ``k`` grouped folds with their tuning parts."""
    return {name: fold_plan(dialogue_groups(ds), k, seed, tune_share) for name, ds in files.items()}


def _links(model: DiscourseModel, dialogues: Sequence[Dialogue]) -> list[set[tuple[int, int, str]]]:
    return [{(p.x, p.y, p.sense.value) for p in ps} for ps in model.predict(dialogues)]


def run_fold(
    files: Mapping[str, Sequence[Dialogue]],
    plans: Mapping[str, Sequence[Fold]],
    fold: int,
    encoder: TextEncoder,
    config: ParserConfig,
    device: str | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, list[set[tuple[int, int, str]]]]]:
    """Train fold ``fold``'s model on the training parts, choosing on the tuning parts; score its test folds.

    Returns:
        The fold's row (``chosen``: thresholds and each member's epoch; ``scores`` per file) and
        the predicted links of each file's test dialogues.
    """
    train: list[Dialogue] = []
    tune: list[Dialogue] = []
    for name, dialogues in files.items():
        part = plans[name][fold]
        train += [dialogues[i] for i in part.train]
        tune += [dialogues[i] for i in part.tune]
    own = replace(config, thresholds=dict(config.thresholds))
    model, history = train_parser(train, tune, encoder, own, device=device, log=log)
    epochs = {int(r.get("member", 0)): int(r["epoch"]) for r in history if r.get("selected")}
    scores: dict[str, Any] = {}
    predicted: dict[str, list[set[tuple[int, int, str]]]] = {}
    for name, dialogues in files.items():
        test = [dialogues[i] for i in plans[name][fold].test]
        predicted[name] = _links(model, test)
        scores[name] = discourse_scores([d.links() for d in test], predicted[name]).as_dict()
    row = {
        "fold": fold,
        "chosen": {"thresholds": dict(own.thresholds), "epochs": [epochs[m] for m in sorted(epochs)]},
        "scores": scores,
    }
    return row, predicted


def tally_senses(
    pooled: Pooled, dialogues: Sequence[Dialogue], predicted: Sequence[Iterable[tuple[int, int, str]]]
) -> None:
    """Add gold against predicted relations per sense to ``pooled``: a predicted ``(x, y, sense)`` of
    dialogue ``k`` is right when gold links ``x`` to ``y`` in that dialogue with that sense."""
    pooled.add_pairs(
        [((k, x, y), s) for k, d in enumerate(dialogues) for x, y, s in d.links()],
        [((k, x, y), s) for k, links in enumerate(predicted) for x, y, s in links],
    )


def cross_validate_discourse(
    files: Mapping[str, Sequence[Dialogue]],
    encoder: TextEncoder,
    config: ParserConfig,
    folds: int = 5,
    seed: int = 13,
    *,
    device: str | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """Out-of-fold link and link & relation F1 of the parser recipe ``config``, per file.

    Args:
        files: Dialogues per file name (Molweni dev, STAC train, ...); one model per fold reads them all.
        encoder: The text encoder of the EDU embeddings.
        config: The recipe (a profile's configuration); each fold trains a copy.
        folds: Number of folds.
        seed: Seed of the folds (the networks use ``config.seed`` and the following ones).
        device: Torch device (default: the best available).
        log: Receives progress lines.

    Returns:
        Per file: ``figures`` (mean, std and per-fold link F1 and link & relation F1, in percent),
        ``labels`` (predicted against gold relations per sense, pooled over the held-out folds),
        group counts; and ``folds`` (per fold: chosen thresholds and epochs, sizes), protocol, seconds.
    """
    start = time.perf_counter()
    plans = fold_plans(files, folds, seed)
    values: dict[str, dict[str, list[float]]] = {name: {} for name in files}
    pooled = {name: Pooled() for name in files}
    rows = []
    for fold in range(folds):
        log(f"discourse cross-validation: fold {fold + 1}/{folds}")
        t0 = time.perf_counter()
        row, predicted = run_fold(files, plans, fold, encoder, config, device, log)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        for name, dialogues in files.items():
            part = plans[name][fold]
            row.setdefault("sizes", {})[name] = group_summary(dialogue_groups(dialogues), [part])[0]
            for measure in ("link_f1", "link_rel_f1"):
                values[name].setdefault(measure, []).append(float(row["scores"][name][measure]))
            test = [dialogues[i] for i in part.test]
            tally_senses(pooled[name], test, predicted[name])
        rows.append(row)
        log(
            f"fold {fold + 1}: "
            + ", ".join(f"{n} {row['scores'][n]['link_f1']:.2f} / {row['scores'][n]['link_rel_f1']:.2f}" for n in files)
        )
    per_file = {
        name: {
            "dialogues": len(dialogues),
            "groups": len(set(dialogue_groups(dialogues))),
            "figures": figures_of(values[name]),
            "labels": pooled[name].as_dict(),
        }
        for name, dialogues in files.items()
    }
    return {
        "protocol": (
            f"{folds}-fold cross-validation per file, grouped by chat session (Molweni: dialogues sharing an EDU "
            f"text of 20+ characters) / game (STAC: the dialogue id), seed {seed}; one model per fold trained on the "
            "other folds of every file, about 1/10 of them (whole groups) choosing each member's epoch and the "
            "extra-parent thresholds; micro F1 of the held-out fold, mean and std over folds"
        ),
        "files": per_file,
        "members": config.members,
        "folds": rows,
        "seconds": round(time.perf_counter() - start, 1),
    }
