"""ContextDeP paraphrase highlighting: train, evaluate and predict in the corpus's own TSV format.

Data files are read with the ContextDeP loader (one parser, one set of checks) and turned into
:class:`gnn.paraphrase_eval.ParaphrasePair` items. The split used by ``train``: pairs from
``*_TRAIN_*`` files train the head; pairs from ``*_DEV_*`` files are divided by interview
(:func:`gnn.paraphrase_eval.split_by_interview`, a fixed hash of the MediaSum interview id) into a
tuning half (model selection) and a held-out half that is only scored, never tuned on.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.services.graph import Graph
from api.services.predictions import PredictionJob
from api.services.reporting import SILENT
from api.services.training import profile_config, write_trained_card
from gnn.contextdep import pairs_from_records
from gnn.modelcard import ModelCard, atomic_write_bytes, read_card
from gnn.paraphrase_eval import ParaphrasePair, score_predictions, split_by_interview
from graphstore.pairs import utterance_pairs
from ontology.errors import LoaderError, ModelError, NotFoundError
from ontology.formats.contextdep import load_contextdep, read_token_pairs, split_of
from ontology.labels import RelationLabel
from ontology.records import (
    PredictedRelation,
    prediction_score,
)
from ontology.terms import Prop

if TYPE_CHECKING:
    from gnn.paraphrase import Highlighter
    from gnn.registry import ResolvedModel
    from gnn.trainer import Progress

TASK = "paraphrase"
MODEL_NAME = "contextdep-highlighter"
# Bumped whenever the shipped weights change: `argweb run` skips a corpus that holds a complete
# run of the same model and version, so an unchanged version would keep the old predictions.
VERSION = "2"
HEADER = ("QID", "paraphrase", "score", "guest_probs", "host_probs")


def pairs_from_file(path: Path) -> list[ParaphrasePair]:
    """The pairs of one ``*_TOKEN-annotations.tsv`` file, in file order.

    Raises:
        LoaderError: The file is not a valid aggregated ContextDeP file (named in the message).
    """
    if not path.is_file():
        raise LoaderError(f"{path}: no such file")
    return pairs_from_records(load_contextdep([path]).nodes)


def default_data(corpora: Path) -> list[Path]:
    """The aggregated train and dev files of ``<corpora>/contextdep``."""
    found = sorted(
        p for p in (corpora / "contextdep").glob("*_TOKEN-annotations.tsv") if split_of(p) in ("train", "dev")
    )
    if not found:
        raise LoaderError(f"{corpora / 'contextdep'}: no *_TRAIN_/*_DEV_TOKEN-annotations.tsv files")
    return found


def split_data(paths: Sequence[Path]) -> dict[str, list[ParaphrasePair]]:
    """``train`` / ``tune`` / ``heldout`` pairs of the given files (see the module docstring).

    Raises:
        LoaderError: No training pairs, or unreadable files.
    """
    train: list[ParaphrasePair] = []
    dev: list[ParaphrasePair] = []
    for path in paths:
        (dev if split_of(path) == "dev" else train).extend(pairs_from_file(path))
    if not train:
        raise LoaderError(f"no training pairs in {[str(p) for p in paths]} (a *_TRAIN_TOKEN-annotations.tsv is needed)")
    tune, heldout = split_by_interview(dev)
    return {"train": train, "tune": tune, "heldout": heldout}


def train(
    paths: Sequence[Path],
    out: Path,
    profile: str = "full",
    seed: int = 13,
    cache_dir: Path | None = None,
    encoder_dir: Path | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> ModelCard:
    """Train the highlighter and write a model directory with its card.

    Args:
        paths: ``*_TOKEN-annotations.tsv`` files (see :func:`split_data`).
        out: The model directory.
        profile: A profile of :data:`gnn.paraphrase.PROFILES`.
        seed: Seed of the model.
        cache_dir: Pair-encoding cache.
        encoder_dir: A local Hugging Face encoder instead of the packaged MiniLM (recorded in the card
            by name, directory and fingerprint; the model then runs on that encoder only).
        progress: ``(stage, done, total)`` of the encoding and of the epochs.
        log: A line per epoch.

    Raises:
        UnknownProfileError: Unknown profile. ModelError: An encoder that cannot be read.
        LoaderError: Unreadable data.
    """
    from gnn.paraphrase import CONFIG, PROFILES, HighlighterConfig, train_highlighter

    config = profile_config(PROFILES, profile, seed, HighlighterConfig, "paraphrase")
    parts = split_data(paths)
    model, fit, tuned = train_highlighter(parts["train"], parts["tune"], config, encoder_dir, cache_dir, progress, log)
    metrics: dict[str, Any] = {"tune": tuned, "best_epoch": fit.best_epoch}
    if parts["heldout"]:
        metrics["heldout"] = score_predictions(parts["heldout"], model.predict(parts["heldout"])).as_dict()
    card = ModelCard(
        task=TASK,
        model=MODEL_NAME,
        version=VERSION,
        weights=[model.WEIGHTS, CONFIG],
        encoder=model.encoder.name,
        encoder_fingerprint=model.encoder.fingerprint(),
        encoder_dir=str(model.encoder.model_dir.resolve()) if encoder_dir is not None else None,
        data={
            "files": [str(p) for p in paths],
            "split": "train files -> train; dev files split by interview (sha1 of the MediaSum id, "
            "salt argweb-contextdep, half) -> tune (epoch and offset selection) / heldout (scored only)",
            "pairs": {k: len(v) for k, v in parts.items()},
            "heldout_qids": [p.qid for p in parts["heldout"]],
        },
        notes=model.notes + "; a pair is a paraphrase when both sides have a token with probability >= 0.5.",
    )
    return write_trained_card(out, card, config, profile, fit, metrics, model.save(out))


def resolve_model(model: Path | None) -> Path:
    """``model`` (a directory or a trained model's name) or the shipped model (:func:`gnn.registry.resolve_model`).

    Raises:
        ApiError: ``model`` is not a paraphrase model.
        ModelError: No model given and none shipped.
    """
    return _resolved(model).path


def _resolved(model: Path | None) -> ResolvedModel:
    from api.settings import get_settings
    from gnn.registry import resolve_model as resolve

    return resolve(TASK, model, get_settings().models_dir if model is not None else None)


def _load(model: Path | None, cache_dir: Path | None) -> Highlighter:
    """The highlighter :func:`resolve_model` names, on the encoder its card records.

    Raises:
        ModelError: Its files are missing, or the encoder is not the one it was trained with.
    """
    from gnn.paraphrase import load_highlighter

    resolved = _resolved(model)
    try:
        return load_highlighter(resolved.path, resolved.card, cache_dir)
    except FileNotFoundError as e:
        raise ModelError(str(e)) from e


def evaluate(model: Path | None, data: Path, cache_dir: Path | None = None) -> dict[str, Any]:
    """Classification F1/P/R against the majority vote and highlight Jaccard of a model on ``data``.

    Beside the figures, ``labels``: predicted against gold pairs per label (``paraphrase`` /
    ``not_paraphrase``), which shows a model that calls every pair a paraphrase at a glance.
    """
    pairs = pairs_from_file(data)
    highlighter = _load(model, cache_dir)
    metrics = score_predictions(pairs, highlighter.predict(pairs))
    return (
        {"model": str(resolve_model(model)), "data": str(data)}
        | metrics.as_dict()
        | {"labels": metrics.labels().as_dict()}
    )


def predictions_tsv(rows: Sequence[Any]) -> str:
    """The prediction file: header ``QID paraphrase score guest_probs host_probs``, tab-separated."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(HEADER)
    for p in rows:
        probs = [json.dumps([round(x, 4) for x in side]) for side in (p.guest_probs, p.host_probs)]
        writer.writerow([p.qid, int(p.paraphrase), f"{p.score:.4f}", *probs])
    return buf.getvalue()


def predict_file(
    source: Path, target: Path, model: Path | None = None, cache_dir: Path | None = None
) -> dict[str, Any]:
    """Predict every pair of ``source`` and write the UTF-8 TSV ``target`` (all or nothing).

    ``source`` is an aggregated ``*_TOKEN-annotations.tsv`` file, or any tab-separated UTF-8 file
    with its ``QID``, ``Guest Tokens`` and ``Host Tokens`` columns alone (pairs nobody annotated).

    Raises:
        LoaderError: A malformed file (file, line and QID named).
    """
    started = time.perf_counter()
    if not source.is_file():
        raise LoaderError(f"{source}: no such file")
    pairs = [ParaphrasePair(qid, guest, host) for qid, guest, host in read_token_pairs(source)]
    predictions = _load(model, cache_dir).predict(pairs)
    atomic_write_bytes(target, predictions_tsv(predictions).encode("utf-8"))
    return {
        "in": str(source),
        "out": str(target),
        "pairs": len(pairs),
        "paraphrases": sum(p.paraphrase for p in predictions),
        "seconds": round(time.perf_counter() - started, 2),
    }


def predict_graph(
    graph: Graph,
    corpus: str = "contextdep",
    model: Path | None = None,
    write: bool = False,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Predict every (guest, host) locution pair of ``corpus`` in the graph; write the paraphrases.

    Each predicted paraphrase becomes a ``rephrase`` relation guest -> host through the prediction
    write path (origin predicted, model, version, score, run id, and the highlighted token
    positions of each side as ``source_tokens`` / ``target_tokens``); gold relations are untouched.

    Raises:
        NotFoundError: ``corpus`` has no two-locution dialogues.
        ModelError: No usable model.
    """
    found = utterance_pairs(graph.store(), corpus)
    if not found:
        raise NotFoundError(f"corpus {corpus!r} has no two-locution dialogues in the graph")
    pairs = [
        ParaphrasePair(qid, list(g.node.get(Prop.TOKENS) or []), list(h.node.get(Prop.TOKENS) or []))
        for qid, g, h in found
    ]
    model_dir = resolve_model(model)
    predictions = _load(model_dir, cache_dir).predict(pairs)
    relations = [
        PredictedRelation(
            source=g.node.id,
            target=h.node.id,
            label=RelationLabel.REPHRASE,
            score=prediction_score(p.score),
            scheme_label="Paraphrase",
            source_tokens=sorted(p.highlights("guest")),
            target_tokens=sorted(p.highlights("host")),
        )
        for (_, g, h), p in zip(found, predictions, strict=True)
        if p.paraphrase
    ]
    card = read_card(model_dir, task=TASK)
    qids = [qid for qid, _, _ in found]
    job = PredictionJob(
        TASK,
        card.model,
        card.version,
        ("paraphrase", TASK, card.model, card.version, model_dir.resolve(), 0.5, corpus, *qids),
        {"corpus": corpus, "threshold": 0.5, "model_dir": str(model_dir)},
    )
    summary: dict[str, Any] = {"corpus": corpus, "pairs": len(pairs), "paraphrases": len(relations), "written": 0}
    if write and relations:
        done = job.write(graph, relations, "predicted paraphrases", SILENT)
        summary |= {"written": done["report"]["written"], "run_id": done["run_id"], "model": job.model}
        summary["version"] = job.version
    return summary
