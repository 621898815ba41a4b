"""The out-of-context pair model as a service: train, cross-validate, classify, and score it on the
challenge set and on M-Arg's gold pairs.

The QT30 maps are read with the AIF loader (:func:`api.services.relations.load_data`); the model
is :mod:`gnn.pairs`. ``POST /predict`` with ``task: pair`` answers through :func:`classify`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from ontology.errors import LoaderError
from ontology.labels import RelationLabel

TASK = "pairs"
MODEL_NAME = "pair-mlp"
# Bumped whenever the shipped weights change (predictions carry it as model_version).
VERSION = "2"
QT30_DATA = ("dialam-2024", "my_train")
MARG_DATA = ("m-arg",)
CHALLENGE = Path(__file__).resolve().parents[2] / "tests" / "data" / "challenge" / "relations.jsonl"
"""The hand-written clear cases (never trained or tuned on)."""
CHALLENGE_SECOND = CHALLENGE.with_name("relations-2.jsonl")
"""A second set, written after version 2 was shipped and scored once: how far the first set's figure
carries over to pairs nobody had seen the model answer."""


def default_data(settings: Settings) -> list[Path]:
    """The QT30 / DialAM-2024 training maps under the corpora directory.

    Raises:
        LoaderError: They are not there.
    """
    from api.services.corpora import corpora_root

    path = corpora_root(settings).joinpath(*QT30_DATA)
    if not path.is_dir():
        raise LoaderError(f"{path}: no QT30 / DialAM-2024 maps (give --data)")
    return [path]


def examples(paths: Sequence[Path], seed: int, none_share: float, reporter: Reporter = SILENT) -> list[Any]:
    """The labelled pairs of the QT30 maps under ``paths`` (:func:`gnn.pairs.examples_from_maps`).

    Raises:
        LoaderError: No QT30 / DialAM maps there.
    """
    from api.services.relations import load_data
    from gnn.pairs import examples_from_maps

    data = load_data(list(paths), reporter)
    if not data.qt30:
        raise LoaderError(f"no QT30 / DialAM AIF maps in {', '.join(map(str, paths))}")
    found = examples_from_maps(data.qt30, none_share, seed)
    reporter.log(f"{len(found)} pairs from {len(data.qt30)} maps")
    return found


def _encoder(settings: Settings, name: str | None, encoder_dir: Path | None = None) -> Any:
    """The directory given, else the packaged encoder ``name`` (:func:`gnn.encoder.encoder_for`)."""
    from gnn.encoder import encoder_for

    return encoder_for(name, encoder_dir, settings.cache_dir, device="cpu")


def train(
    settings: Settings,
    data: Sequence[Path] | None,
    out: Path,
    *,
    profile: str = "full",
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> Any:
    """Train the pair model into ``out`` and write its card (with the challenge and M-Arg figures).

    The texts are read with the recipe's packaged encoder (``PairConfig.encoder``) or, given
    ``encoder_dir``, with that local encoder. About a tenth of the maps' episodes
    (:func:`gnn.protocol.tuning_part`) choose the epoch and the decision biases; with them chosen,
    the head is trained again on every pair, stopping at that epoch.

    Raises:
        ModelError: Unknown profile. LoaderError: No QT30 maps.
    """
    from api.services.training import profile_config, write_trained_card
    from gnn.modelcard import ModelCard
    from gnn.pairs import PROFILES, PairConfig, PairVectors, train_pairs
    from gnn.protocol import tuning_part

    config = profile_config(PROFILES, profile, seed, PairConfig)
    paths = list(data or default_data(settings))
    found = examples(paths, seed, config.none_share, reporter)
    tune_mask = tuning_part([e.group for e in found], seed)
    train_part = [e for e, t in zip(found, tune_mask, strict=True) if not t]
    tune_part = [e for e, t in zip(found, tune_mask, strict=True) if t]
    encoder = _encoder(settings, config.encoder, encoder_dir)
    vectors = PairVectors(encoder, progress=False)
    model, run = train_pairs(train_part, tune_part, config, vectors, refit=True, log=reporter.log)
    metrics: dict[str, Any] = {
        "best_epoch": run.fit.best_epoch,
        "tune_macro_f1": run.fit.best_score,
        "bias": dict(zip(("none", "support", "attack", "rephrase"), model.bias, strict=True)),
    }
    if CHALLENGE.is_file():
        metrics["challenge"] = {k: v for k, v in challenge(model).items() if k != "answers"}
    marg = marg_pairs(settings)
    if marg:
        metrics["marg"] = score_marg(model, marg)
    card = ModelCard(
        task=TASK,
        model=MODEL_NAME,
        version=VERSION,
        weights=["pairs_head.safetensors", "pairs_config.json"],
        encoder=encoder.name,
        encoder_fingerprint=encoder.fingerprint(),
        encoder_dir=str(encoder_dir.resolve()) if encoder_dir else None,
        data={
            "files": [str(p) for p in paths],
            "pairs": len(found),
            "labels": {lab: sum(e.label == lab for e in found) for lab in sorted({e.label for e in found})},
            "split": "about 1/10 of the episodes (whole) choose the epoch and the biases; the head is then "
            "trained again on every pair up to that epoch",
            "tune_pairs": len(tune_part),
        },
        notes=f"MLP over frozen {encoder.name} sentence vectors of the two texts ([u, v, u*v, |u-v|, u.v], "
        "cue-word flags and word overlap), source -> target; per-label log-biases chosen on the tuning "
        "episodes. Out of context: two texts, no map.",
    )
    return write_trained_card(out, card, config, profile, run, metrics, model.save(out))


def cross_validate(
    settings: Settings,
    data: Sequence[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold figures of the pair recipe ``profile``, folds by QT30 episode (no model is written);
    the texts are read with the encoder in ``encoder_dir`` (default: the recipe's packaged encoder).

    Raises:
        ModelError: Unknown profile. LoaderError: No QT30 maps.
    """
    from api.services.training import profile_config
    from gnn.pairs import PROFILES, PairConfig, PairVectors, cross_validate_pairs

    config = profile_config(PROFILES, profile, seed, PairConfig)
    found = examples(list(data or default_data(settings)), seed, config.none_share, reporter)
    encoder = _encoder(settings, config.encoder, encoder_dir)
    out = cross_validate_pairs(found, config, PairVectors(encoder), folds, seed, log=reporter.log)
    return {**out, "profile": profile, "encoder": encoder.name}


_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


def model_dir(settings: Settings, model: Path | str | None = None) -> Path:
    """The pair model directory for what the caller wrote (:func:`gnn.registry.resolve_model`).

    Raises:
        NotFoundError: No such model. ApiError: Not a pair model. ModelError: The shipped one is broken.
    """
    from gnn.registry import resolve_model

    return resolve_model(TASK, model, settings.models_dir if model is not None else None).path


def load(settings: Settings, model: Path | str | None = None) -> tuple[Any, Any]:
    """The model card and the loaded model (``model``, else the shipped one), loaded once per process.

    Raises:
        ModelError: The model is broken, or its encoder is not the one it was trained with.
    """
    from gnn.encoder import card_encoder
    from gnn.modelcard import read_card
    from gnn.pairs import PairModel

    path = model_dir(settings, model)
    with _LOCK:
        if str(path) not in _LOADED:
            card = read_card(path, task=TASK)
            encoder = card_encoder(path, card, settings.cache_dir, device="cpu")
            _LOADED[str(path)] = (card, PairModel.load(path, encoder))
        return _LOADED[str(path)]


def classify(
    settings: Settings, pairs: Sequence[tuple[str, str]], model: Path | str | None = None
) -> list[tuple[RelationLabel, float, dict[str, float]]]:
    """Label (source, target) text pairs, out of context.

    Returns:
        Per pair: the label (support, attack, rephrase or none), its probability and the
        probability of every label.
    """
    _, loaded = load(settings, model)
    return [(RelationLabel(lab), p, probs) for lab, p, probs in loaded.predict(pairs)]


def challenge(model: Any, path: Path = CHALLENGE) -> dict[str, Any]:
    """How many pairs of the challenge file a loaded model labels right (:func:`gnn.pairs.challenge_score`)."""
    from gnn.pairs import challenge_score, read_challenge

    rows = read_challenge(path)
    labels = [lab for lab, _, _ in model.predict([(r.source, r.target) for r in rows])]
    return challenge_score(rows, labels)


def marg_pairs(settings: Settings) -> list[Any]:
    """M-Arg's gold pairs under the corpora directory (empty when it is not there)."""
    from api.services.corpora import corpora_root
    from api.services.relations import load_data

    path = corpora_root(settings).joinpath(*MARG_DATA)
    if not path.is_dir() or not any(path.glob("*.csv")):
        return []
    return list(load_data([path]).marg)


def score_marg(model: Any, pairs: Sequence[Any]) -> dict[str, Any]:
    """Support / attack on M-Arg's gold pairs, out of domain (:func:`gnn.relations.marg_task.score_transfer`).

    Each pair is labelled source -> target; support and attack become M-Arg's ``Support`` and
    ``Attack``, rephrase and none ``Neither``.
    """
    from gnn.relations.marg_task import score_transfer
    from ontology.labels import scheme_raw

    marg_of = {lab.value: scheme_raw("m-arg", lab) for lab in (RelationLabel.SUPPORT, RelationLabel.ATTACK)}
    predicted = model.predict([(p.source, p.target) for p in pairs])
    rows = [
        (p.source_id, p.target_id, marg_of[lab], score)
        for p, (lab, score, _) in zip(pairs, predicted, strict=True)
        if lab in marg_of
    ]
    return score_transfer(pairs, [rows])
