"""One relations model directory for all corpus families: train, evaluate, load.

``argweb train relations`` gets whatever data it is given (QT30 maps, Sci-Arg papers, M-Arg
pairs; the service recognises the format and hands over loader records) and writes one model
directory with a sub-model per family present (``qt30.*``, ``sciarg.*``: safetensors weights and
their JSON configuration) and one model card
whose sections are keyed by family. M-Arg has 102 gold pairs only and no model of its own: its
debates are read by the QT30 network, which is scored on those pairs without ever training on them
(``qt30_transfer``); the logistic regression once cross-validated on them is ``experiments/marg_cv.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gnn.modelcard import ModelCard, git_commit, read_card, write_card
from gnn.relations.argmap import ArgMap
from gnn.relations.family import TrainOptions
from gnn.relations.marg_task import Debate, Pair, predict_debates, score_transfer
from gnn.relations.sciarg_task import Paper
from gnn.relations.text import TextVectors
from gnn.trainer import Progress
from ontology.errors import ClientError, ModelError, UnknownProfileError

TASK = "relations"
MODEL = "relation-gnn"
VERSION = "9"
PROFILES = ("quick", "full")
"""The relation recipes: ``quick`` reads the texts as LSA vectors, ``full`` through the text encoder."""


@dataclass
class RelationData:
    """Inputs of the relation models, by corpus family (empty lists: family absent)."""

    qt30: list[ArgMap] = field(default_factory=list)
    sciarg: list[Paper] = field(default_factory=list)
    marg: list[Pair] = field(default_factory=list)
    marg_sentences: list[str] = field(default_factory=list)
    marg_audio: dict[str, np.ndarray] | None = None
    marg_debates: list[Debate] = field(default_factory=list)

    def families(self) -> list[str]:
        """Families with data."""
        return [f for f in ("qt30", "sciarg", "marg") if getattr(self, f)]


def _threads(n: int | None) -> None:
    if n:
        import torch

        # On a shared CPU one thread per process avoids the spin-wait collapse of two-thread ops.
        torch.set_num_threads(n)


def marg_transfer(model_dir: Path, data: RelationData, *, device: str, encoder: TextVectors | None) -> dict[str, Any]:
    """The QT30 network of ``model_dir`` on the M-Arg debates, scored on the gold pairs, per QT30 objective.

    The network never saw an M-Arg label, so every gold pair is held out. Empty when the data has
    no debate sentences (only a pair file) or the model no QT30 network.
    """
    from gnn.relations.qt30_run import FAMILY, load_qt30

    if not data.marg or not data.marg_debates or not (model_dir / FAMILY.weights).is_file():
        return {}
    qt = load_qt30(model_dir, device=device, encoder=encoder)
    return {obj: score_transfer(data.marg, predict_debates(qt, data.marg_debates, obj)) for obj in qt.objectives}


def _encoder_identity(encoder: TextVectors | None) -> tuple[str | None, str | None]:
    """The card's ``encoder_fingerprint`` and ``encoder_dir`` (the latter for a non-default encoder)."""
    fingerprint = getattr(encoder, "fingerprint", None)
    where = getattr(encoder, "model_dir", None)
    if fingerprint is None or where is None:
        return None, None
    from gnn.encoder import default_model_dir

    custom = Path(where).resolve() != default_model_dir().resolve()
    return fingerprint(), str(Path(where).resolve()) if custom else None


def train_relations(
    data: RelationData,
    out_dir: Path,
    *,
    profile: str = "quick",
    seed: int = 0,
    device: str = "cpu",
    encoder: TextVectors | None = None,
    threads: int | None = 1,
    epochs: int | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> ModelCard:
    """Train a sub-model per family present in ``data`` into ``out_dir`` and write its model card.

    Args:
        data: Records converted by family.
        out_dir: Model directory (created).
        profile: ``quick`` (LSA text vectors) or ``full`` (the text encoder).
        seed: Seed of everything random.
        device: Torch device.
        encoder: Text encoder for the full profile.
        threads: Torch CPU threads (``None``: leave torch's default).
        epochs: Overrides the profile's epochs (tests, benchmarks).
        progress: Receives ``(stage, done, total)`` (:data:`gnn.trainer.Progress`).
        log: Receives progress lines (one per training epoch of every network).

    Raises:
        ClientError: No data of any family, or M-Arg pairs only (they train nothing).
        UnknownProfileError: ``profile`` is neither quick nor full.
    """
    from gnn.device import seed_everything
    from gnn.relations.qt30_run import train_qt30
    from gnn.relations.sciarg_task import train_sciarg

    if not data.families():
        raise ClientError("no relation data given (QT30/DialAM AIF maps, Sci-Arg brat papers or M-Arg pair files)")
    if not (data.qt30 or data.sciarg):
        raise ClientError(
            "M-Arg pairs alone train no relation model (no M-Arg model ships; its logistic-regression "
            "cross-validation is experiments/marg_cv.py): give QT30/DialAM maps or Sci-Arg papers too"
        )
    UnknownProfileError.check(profile, PROFILES, "relations")
    _threads(threads)
    seed_everything(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    use_encoder = encoder if profile == "full" else None
    sections: dict[str, Any] = {}
    options = TrainOptions(profile, seed, device, use_encoder, epochs, progress, log)
    trainers = (("qt30", "QT30", "maps", train_qt30), ("sciarg", "Sci-Arg", "papers", train_sciarg))
    for family, name, unit, train in trainers:
        items = getattr(data, family)
        if not items:
            continue
        log(f"{name}: {len(items)} {unit}")
        sections[family] = train(items, out_dir, options)
    # No M-Arg model ships: M-Arg's gold pairs only score this run's QT30 network (the logistic
    # regression once cross-validated here is experiments/marg_cv.py). Only a QT30 network of this
    # run: out_dir may hold an older one.
    transfer = marg_transfer(out_dir, data, device=device, encoder=use_encoder) if "qt30" in sections else {}
    if transfer:
        log(f"M-Arg: {len(data.marg)} gold pairs scored with the QT30 network")
        sections["marg"] = {"metrics": {"qt30_transfer": transfer}}
    weights = [f for s in sections.values() for f in s.get("files", [])]
    fingerprint, encoder_dir = _encoder_identity(use_encoder)
    card = ModelCard(
        task=TASK,
        model=MODEL,
        version=VERSION,
        weights=weights,
        encoder=getattr(use_encoder, "name", None)
        if use_encoder is not None
        else "lsa (TF-IDF + SVD, in the model dir)",
        encoder_fingerprint=fingerprint,
        encoder_dir=encoder_dir,
        data={k: v.get("data", {}) for k, v in sections.items()},
        hyperparameters={
            "profile": profile,
            "seed": seed,
            **{k: v.get("hyperparameters", {}) for k, v in sections.items()},
        },
        metrics={k: v.get("metrics", {}) for k, v in sections.items()},
        training_seconds=round(time.perf_counter() - start, 1),
        git_commit=git_commit(),
        notes=(
            "Relational GNN (block-sparse R-GCN over the argument map) + transformer layer over the propositions "
            "+ pairwise head on text vectors and structural pair features; per-label log-biases tuned on dev. "
            "QT30: three bias sets, 'general' (default of the corpus-format commands), 'focused', and 'shares' "
            "(each relation type's predicted count near its gold count; the graph's predictions). "
            + (
                "Sci-Arg: the networks selected on the dev papers were trained again on the train and dev papers "
                "for their chosen epochs (hyperparameters.sciarg.refit_epochs), with the biases tuned before; "
                "metrics.sciarg.heldout_before_refit scores the selected networks. "
                if sections.get("sciarg", {}).get("hyperparameters", {}).get("refit")
                else ""
            )
            + "Per-family timings: "
            + ", ".join(
                f"{k} {v.get('seconds')} s (training loop {v.get('train_seconds')} s)"
                for k, v in sections.items()
                if "seconds" in v
            )
        ),
    )
    write_card(out_dir, card)
    return card


def qt30_evaluated(maps: Sequence[ArgMap]) -> list[ArgMap]:
    """The maps ``evaluate`` scores: those of the held-out split, or all when none is held out."""
    from gnn.relations.qt30_run import SPLIT_SEED
    from gnn.relations.qt30_task import split_maps

    split = split_maps([m.name for m in maps], SPLIT_SEED)
    return [m for m in maps if split[m.name] == "test"] or list(maps)


def _variant_scores(
    model: Any, test: Sequence[ArgMap], variants: Mapping[str, Sequence[ArgMap]], plain: Mapping[str, Any]
) -> dict[str, Any]:
    """Official-style F1 of each objective's decoding on each variant of the ``test`` maps."""
    from gnn.relations.qt30_run import score_maps

    wanted = {m.name for m in test}
    out: dict[str, Any] = {}
    change = 0.0
    for name, maps in variants.items():
        chosen = [m for m in maps if m.name in wanted]
        if len(chosen) != len(test):
            raise ModelError(f"variant {name!r} has {len(chosen)} of the {len(test)} evaluated maps")
        row: dict[str, Any] = {}
        for obj in model.objectives:
            scores = score_maps(chosen, model.predict(chosen, obj))["official_style"]
            row[f"tuned_{obj}"] = {kind: scores[kind]["f1"] for kind in ("general", "focused")}
            for kind in ("general", "focused"):
                base = plain[f"tuned_{obj}"]["official_style"][kind]["f1"]
                change = max(change, abs(scores[kind]["f1"] - base))
        out[name] = row
    return {"maps": out, "max_change": round(change, 4)}


def evaluate_relations(
    model_dir: Path,
    data: RelationData,
    *,
    device: str = "cpu",
    encoder: TextVectors | None = None,
    threads: int | None = 1,
    seed: int = 0,
    variants: Mapping[str, Sequence[ArgMap]] | None = None,
) -> dict[str, Any]:
    """Score the model on ``data`` next to a TF-IDF + LR baseline trained in the same run.

    QT30 maps of the model's held-out split (Sci-Arg papers A25-A32) are the evaluation set when
    any are present, otherwise all given maps/papers; the baseline is trained on the other given
    ones (when there are none it is left out and said so). On M-Arg pairs the model's QT30 network
    is scored (given the sentence file, the debates; ``marg.qt30_transfer``).

    ``variants`` are the same QT30 maps written other valid ways (by variant name; see
    :mod:`ontology.formats.perturb`): the evaluated ones among them are scored too, and
    ``qt30.variants.max_change`` is the largest difference from the plain maps' F1.
    """
    from gnn.relations import qt30_run, sciarg_task

    _threads(threads)
    card = read_card(model_dir, TASK)
    out: dict[str, Any] = {"model": str(model_dir), "version": card.version}
    if data.qt30:
        test = qt30_evaluated(data.qt30)
        rest = [m for m in data.qt30 if m not in test]
        model = qt30_run.load_qt30(model_dir, device=device, encoder=encoder)
        section: dict[str, Any] = {"maps": len(test)}
        for obj in model.objectives:
            section[f"tuned_{obj}"] = qt30_run.score_maps(test, model.predict(test, obj))
        if variants:
            section["variants"] = _variant_scores(model, test, variants, section)
        section["baseline_tfidf_lr"] = (
            qt30_run.baseline_on(rest, test, seed) if rest else "no training maps given besides the evaluated ones"
        )
        out["qt30"] = section
    if data.sciarg:
        test_p = [p for p in data.sciarg if p.name in sciarg_task.HELDOUT] or list(data.sciarg)
        rest_p = [p for p in data.sciarg if p not in test_p]
        smodel = sciarg_task.load_sciarg(model_dir, device=device, encoder=encoder)
        out["sciarg"] = {"papers": len(test_p), **sciarg_task.score_papers(test_p, smodel.predict(test_p))}
        out["sciarg"]["baseline_tfidf_lr"] = (
            sciarg_task.baseline_on(rest_p, test_p, seed)
            if rest_p
            else "no training papers given besides the evaluated ones"
        )
    transfer = marg_transfer(model_dir, data, device=device, encoder=encoder)
    if transfer:
        out["marg"] = {"qt30_transfer": transfer}
    return out
