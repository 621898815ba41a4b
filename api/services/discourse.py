"""Discourse parsing services: train, evaluate and parse Molweni/STAC JSON files.

Shared by the CLI (``argweb train|evaluate|parse discourse``) and the HTTP API. Files are read with
the corpus loader (``ontology.formats.dialogue_json``) into ontology records, turned into plain
dialogues for the model, and predictions are written back in the file's own format. torch is
imported lazily (inside the functions): the CLI imports this module at start.

Held-out splits are made per file over groups of dialogues that share text or (STAC) an id, so no
session or game is on both sides: Molweni dev dialogues are overlapping windows of chat sessions.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.services.corpora import corpora_root
from api.services.graph import Graph
from api.services.reporting import SILENT, Reporter, stages
from api.settings import Settings
from graphstore.perturb import DIALOGUE_VARIANTS
from ontology.errors import ApiError, NotFoundError, UnknownProfileError
from ontology.formats.common import read_json
from ontology.formats.dialogue_json import detect_scheme, load_dialogue_json, scheme_label, write_dialogue_json

if TYPE_CHECKING:
    from gnn.discourse.data import Dialogue
    from gnn.discourse.train import DiscourseModel

# Default training data inside a corpora directory, and the held-out share per file.
DEFAULT_DATA = ("molweni/DP/dev.json", "stac/train.json")
TUNE_SHARE = 0.1
TEST_SHARE = {"molweni": 0.2, "stac": 0.15}
SCHEMES = ("molweni", "stac")


@dataclass
class TrainResult:
    """What ``train discourse`` did."""

    model_dir: Path
    metrics: dict[str, Any]
    seconds: float
    history: list[dict[str, Any]] = field(default_factory=list)


def read_dialogues(path: Path, scheme: str | None = None, source: str | None = None) -> tuple[list[Dialogue], str]:
    """The dialogues of one Molweni/STAC JSON file and the scheme it is written in.

    Args:
        path: The file.
        scheme: ``molweni`` or ``stac``; default: detected from the relation labels (a file
            without relations counts as Molweni).
        source: Prefix of the dialogue keys (default: the file name).

    Raises:
        NotFoundError: No such file.
        LoaderError: Malformed file (the message names file, dialogue and record).
        ApiError: Unknown scheme.
    """
    from gnn.discourse.data import dialogues_from_bundle

    if not path.is_file():
        raise NotFoundError(f"{path}: no such file")
    if scheme is not None and scheme not in SCHEMES:
        raise ApiError(f"unknown scheme {scheme!r}; expected one of {SCHEMES}")
    scheme = scheme or detect_scheme(path)
    bundle = load_dialogue_json([path], scheme, scheme=scheme)
    return dialogues_from_bundle(bundle, domain=scheme, source=source or path.name), scheme


def default_model() -> Path:
    """The model shipped inside the package (:func:`gnn.registry.resolve_model` with no name).

    Raises:
        ModelError: None is shipped, or its card is broken.
    """
    from gnn.registry import resolve_model

    return resolve_model("discourse").path


def load(settings: Settings, model_dir: Path | None = None) -> DiscourseModel:
    """Load a discourse model (default: the packaged one) with the cached encoder.

    Raises:
        ApiError: ``model_dir`` is not a discourse model (a directory or a trained model's name).
        ModelError: The shipped model is missing or broken, or its encoder differs.
    """
    from gnn.discourse.train import TASK, load_model
    from gnn.encoder import card_encoder
    from gnn.registry import resolve_model

    resolved = resolve_model(TASK, model_dir, settings.models_dir)
    return load_model(resolved.path, encoder=card_encoder(resolved.path, resolved.card, settings.cache_dir))


def recipe_data(settings: Settings, profile: str, data: Sequence[Path] | None) -> list[Path]:
    """The Molweni/STAC files a discourse recipe reads: ``data``, or :data:`DEFAULT_DATA` under the corpora.

    Raises:
        UnknownProfileError: ``profile`` is not a discourse profile.
        NotFoundError: No data given and none of the default files present.
    """
    from gnn.discourse.train import PROFILES

    UnknownProfileError.check(profile, PROFILES, "discourse")
    if data:
        return list(data)
    root = corpora_root(settings)
    found = [root / rel for rel in DEFAULT_DATA if (root / rel).is_file()]
    if not found:
        raise NotFoundError(f"no Molweni/STAC files under {root} ({', '.join(DEFAULT_DATA)})")
    return found


def train(
    settings: Settings,
    data: list[Path] | None = None,
    out: Path | None = None,
    *,
    profile: str = "full",
    seed: int = 13,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> TrainResult:
    """Train the discourse parser and write a model directory with its card.

    Each file is split by session / game groups into train, tune (early stopping, extra-parent
    thresholds) and held-out test parts; the card records the held-out scores per file and the
    positions of the held-out dialogues.

    Args:
        settings: Settings (embedding cache, corpora directory, models directory).
        data: Molweni/STAC JSON files; default: Molweni dev and STAC train of the corpora directory.
        out: Model directory; default ``<models dir>/discourse``.
        profile: ``quick``, ``full`` (or ``tiny``, for tests).
        seed: Random seed (model and splits).
        encoder_dir: A local Hugging Face encoder instead of the packaged MiniLM.
        reporter: Progress and log lines.

    Raises:
        NotFoundError: No data file found.
        UnknownProfileError: Unknown profile.
    """
    from gnn.discourse.data import split_by_groups
    from gnn.discourse.train import MODEL_NAME, PROFILES, TASK, ParserConfig, save_model, train_parser
    from gnn.encoder import encoder_for
    from gnn.modelcard import ModelCard

    data = recipe_data(settings, profile, data)
    started = time.perf_counter()
    train_d: list[Dialogue] = []
    tune_d: list[Dialogue] = []
    tests: dict[str, list[Dialogue]] = {}
    split_info: dict[str, Any] = {}
    for path in data:
        dialogues, scheme = read_dialogues(path)
        parts = split_by_groups(dialogues, [TUNE_SHARE, TEST_SHARE[scheme]], seed=seed)
        train_d += [dialogues[i] for i in parts[0]]
        tune_d += [dialogues[i] for i in parts[1]]
        tests[path.name] = [dialogues[i] for i in parts[2]]
        sizes = {name: len(part) for name, part in zip(("train", "tune", "test"), parts, strict=True)}
        split_info[path.name] = {"path": str(path), "scheme": scheme, "dialogues": len(dialogues), **sizes}
        split_info[path.name] |= {"test_positions": parts[2], "tune_positions": parts[1]}
        reporter.log(f"{path.name}: {len(parts[0])} train / {len(parts[1])} tune / {len(parts[2])} test dialogues")
    config = ParserConfig(seed=seed, **PROFILES[profile])
    encoder = encoder_for(None, encoder_dir, settings.cache_dir)
    metrics: dict[str, Any] = {}
    with stages(reporter) as progress:
        model, history = train_parser(train_d, tune_d, encoder, config, progress=progress, log=reporter.log)
    seconds = time.perf_counter() - started
    for name, dialogues in tests.items():
        t0 = time.perf_counter()
        scores = model.evaluate(dialogues)
        elapsed = time.perf_counter() - t0
        metrics[f"{name}:held-out"] = {
            **scores.as_dict(),
            "edus_per_second": round(sum(len(d) for d in dialogues) / max(elapsed, 1e-9), 1),
        }
        reporter.log(f"{name} held-out: link F1 {100 * scores.link.f1:.1f}, link&rel F1 {100 * scores.link_rel.f1:.1f}")
    out = out or settings.models_dir / TASK
    card = ModelCard(
        task=TASK,
        model=MODEL_NAME,
        version=f"{time.strftime('%Y%m%d')}-{profile}-s{seed}",
        weights=[],
        encoder=encoder.name,
        encoder_fingerprint=encoder.fingerprint(),
        encoder_dir=str(encoder.model_dir.resolve()) if encoder_dir is not None else None,
        data={"files": split_info, "split": "per file, by session groups (shared EDU text; STAC: same id)"},
        metrics={**metrics, "history": history},
        training_seconds=round(seconds, 1),
        notes=(
            "Frozen all-MiniLM-L6-v2 EDU embeddings + trainable word bag, BiGRU over the dialogue, relational "
            "message passing over speaker/turn/mention edges, pairwise link scorer over the previous K EDUs "
            "and a sense classifier; a second structure-aware pass over the predicted links typed by sense. "
            f"An ensemble of {config.members} such network(s) (seeds {seed}..{seed + config.members - 1}, "
            "probabilities averaged). "
            f"Profile {profile}; per-member, per-epoch tuning scores in metrics.history."
        ),
    )
    save_model(model, out, card)
    return TrainResult(out, metrics, seconds, history)


def evaluate(
    settings: Settings,
    data: Path,
    model_dir: Path | None = None,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Micro link and link & relation F1 of a model on every dialogue of a Molweni/STAC file.

    The file written every other valid way (:data:`graphstore.perturb.DIALOGUE_VARIANTS`) is scored
    too (``variants``, and ``variants_max_change``, the largest difference from the file's F1), and
    ``labels`` counts gold against predicted relations per sense with each sense's recall. The
    encoding and the parse of the file are reported to ``reporter``.
    """
    from gnn.discourse.cv import tally_senses
    from gnn.metrics import discourse_scores
    from gnn.protocol import Pooled

    model = load(settings, model_dir)
    dialogues, scheme = read_dialogues(data, scheme)
    t0 = time.perf_counter()
    with stages(reporter) as progress:
        predicted = model.predict(dialogues, progress)
    elapsed = time.perf_counter() - t0
    found = [[(p.x, p.y, p.sense.value) for p in links] for links in predicted]
    plain = discourse_scores([d.links() for d in dialogues], [set(links) for links in found]).as_dict()
    # Per sense, as the cross-validation pools them: whether rare senses are predicted at all.
    senses = Pooled()
    tally_senses(senses, dialogues, found)
    variants: dict[str, dict[str, float]] = {}
    raw = read_json(data)
    with tempfile.TemporaryDirectory(prefix="argweb-variant-") as tmp:
        for name, change in DIALOGUE_VARIANTS.items():
            path = Path(tmp) / data.name
            path.write_text(json.dumps(change(raw)), encoding="utf-8")
            other = model.evaluate(read_dialogues(path, scheme)[0]).as_dict()
            variants[name] = {k: other[k] for k in ("link_f1", "link_rel_f1")}
    change_max = max((abs(v[k] - plain[k]) for v in variants.values() for k in v), default=0.0)
    return {
        "file": str(data),
        "scheme": scheme,
        "model": str(model_dir or default_model()),
        **plain,
        "edus_per_second": round(sum(len(d) for d in dialogues) / max(elapsed, 1e-9), 1),
        "variants": variants,
        "variants_max_change": round(change_max, 4),
        "labels": senses.as_dict(),
    }


def parse(
    settings: Settings,
    source: Path,
    out: Path,
    model_dir: Path | None = None,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Predict the relations of every dialogue of ``source`` and write them to ``out`` in its format.

    Dialogues stay in order with every field but ``relations`` unchanged; labels are spelled as
    the file's scheme spells them.
    """
    model = load(settings, model_dir)
    dialogues, scheme = read_dialogues(source, scheme)
    predicted = _predict(model, dialogues, reporter)
    rows = [[(p.x, p.y, scheme_label(scheme, p.sense)) for p in ps] for ps in predicted]
    write_dialogue_json(source, out, rows)
    return {"file": str(out), "scheme": scheme, "dialogues": len(rows), "relations": sum(len(r) for r in rows)}


def _predict(model: Any, dialogues: list[Dialogue], reporter: Reporter) -> list[Any]:
    """The parser's links per dialogue; the encoding of their texts is reported to ``reporter`` (the
    parse itself is short beside it, and one unit of work per corpus in the main job is enough)."""
    with stages(reporter) as progress:
        graphs = model.graphs(dialogues, progress)
    return list(model.predict(dialogues, graphs=graphs))


def _graph_dialogues(graph: Graph, corpus: str | None, dialogue: str | None, scheme: str | None) -> list[Dialogue]:
    """Dialogues read from the graph (read views), each with its gold relations."""
    from gnn.discourse.data import dialogue_from_view
    from graphstore import cypher
    from graphstore.aif_export import read_discourses, resolve_discourse
    from graphstore.scopes import in_order
    from ontology.terms import Label
    from ontology.views import DiscourseView, NodeView, RelationView

    store = graph.store()
    if dialogue is not None:
        rows = [{"id": resolve_discourse(store, dialogue, corpus)}]
    elif corpus is not None:
        rows = store.read(cypher.corpus_discourses(), corpus=corpus)
        if not rows:
            raise NotFoundError(f"no dialogues of corpus {corpus!r} in the graph")
    else:
        raise ApiError("give --corpus or --dialogue")
    ids = [str(r["id"]) for r in rows]
    units, edges = read_discourses(store, ids)
    into: dict[str, list[str]] = {}
    out_of: dict[str, list[str]] = {}
    for e in edges:
        into.setdefault(e.target, []).append(e.source)
        out_of.setdefault(e.source, []).append(e.target)
    dialogues: list[Dialogue] = []
    for k, did in enumerate(ids):
        mine = [u for u in units.values() if u.discourse == did]
        locutions = in_order(u for u in mine if u.node.has(Label.Locution))
        relations = tuple(
            RelationView(u.node, tuple(sorted(into.get(u.id, ()))), tuple(sorted(out_of.get(u.id, ()))))
            for u in mine
            if u.node.has(Label.DiscourseRelation)
        )
        corpus_id = locutions[0].node.corpus if locutions else corpus
        domain = scheme or corpus_id
        if domain not in SCHEMES:
            raise ApiError(f"dialogue {did} is from corpus {corpus_id!r}; give --scheme molweni or stac to parse it")
        view = DiscourseView(NodeView(did, (Label.Dialogue.value,), {}), tuple(locutions), relations)
        dialogues.append(dialogue_from_view(view, domain, key=f"{did}#{k}"))
    return dialogues


def predict(
    graph: Graph,
    *,
    corpus: str | None = None,
    dialogue: str | None = None,
    model_dir: Path | None = None,
    scheme: str | None = None,
    write: bool = False,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Parse dialogues read from the graph; with ``write``, store the links as a prediction run.

    Predicted relations carry origin ``predicted``, the model name and version, the score
    (link probability times sense probability) and the run id; gold relations are untouched.

    Raises:
        ApiError: Neither corpus nor dialogue, or a dialogue of another corpus without ``scheme``.
        NotFoundError: Unknown dialogue or corpus.
    """
    from api.services.predictions import PredictionJob
    from gnn.registry import resolve_model
    from ontology.labels import RelationLabel
    from ontology.records import PredictedRelation, prediction_score

    settings = graph.settings
    resolved = resolve_model("discourse", model_dir, settings.models_dir)
    path, card = resolved.path, resolved.card
    model = load(settings, path)
    dialogues = _graph_dialogues(graph, corpus, dialogue, scheme)
    predicted = _predict(model, dialogues, reporter)
    rows = []
    for d, links in zip(dialogues, predicted, strict=True):
        assert d.unit_ids is not None
        for p in links:
            rows.append(
                PredictedRelation(
                    source=d.unit_ids[p.x],
                    target=d.unit_ids[p.y],
                    label=RelationLabel(p.sense.value),
                    score=prediction_score(p.score),
                    scheme_label=scheme_label(d.domain, p.sense),
                )
            )
    scope = [d.graph_id or d.key for d in dialogues]

    job = PredictionJob(
        "discourse",
        card.model,
        card.version,
        ("discourse", "discourse", card.model, card.version, path.resolve(), scheme, corpus, dialogue, *scope),
        {"model_dir": str(path), "corpus": corpus, "dialogue": dialogue},
    )
    run, _ = job.pick(graph)
    gold = model_scores = None
    if any(d.relations for d in dialogues):
        from gnn.metrics import discourse_scores

        model_scores = discourse_scores(
            [d.links() for d in dialogues], [{(p.x, p.y, p.sense.value) for p in ps} for ps in predicted]
        ).as_dict()
        gold = sum(len(d.relations) for d in dialogues)
    result: dict[str, Any] = {
        "run_id": run.run_id,
        "model": run.model,
        "model_version": run.model_version,
        "dialogues": len(dialogues),
        "predicted": len(rows),
        "gold": gold,
        "scores_against_gold": model_scores,
        "written": False,
    }
    if write:
        result |= job.write(graph, rows, "predicted discourse relations", reporter, run).as_dict()
    return result
