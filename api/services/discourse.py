"""The discourse task's corpus-format commands: wiring of ``argweb train|evaluate|parse discourse``.

The task itself (training, scoring, cross-validation, graph predictions) is
:mod:`gnn.discourse.task`; here Molweni/STAC files are found and read (``ontology.formats``), the
model is resolved and loaded through the one model cache (:func:`api.services.tasks.load`), and a
parse is written back in the file's own format. Predictions over dialogues stored in the graph go
through :func:`api.services.predictions.predict_scope`. torch is imported lazily (inside the
functions): the CLI imports this module at start.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.services import tasks
from api.settings import Settings
from gnn.task import CVReport, JsonDocument, TrainReport
from graphstore.perturb import DIALOGUE_VARIANTS
from ontology.errors import ApiError, NotFoundError, UnknownProfileError
from ontology.formats.common import read_json
from ontology.formats.dialogue_json import detect_scheme, load_dialogue_json, scheme_label, write_dialogue_json
from ontology.formats.registry import corpora_root
from ontology.progress import SILENT, Reporter, stages

if TYPE_CHECKING:
    from gnn.discourse.data import Dialogue
    from gnn.discourse.train import DiscourseModel, LinkPrediction

TASK = "discourse"
DEFAULT_DATA = ("molweni/DP/dev.json", "stac/train.json")
"""The files the shipped model trains on, under the corpora directory."""
SCHEMES = ("molweni", "stac")


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

    return resolve_model(TASK).path


def load(settings: Settings, model_dir: Path | None = None) -> DiscourseModel:
    """A discourse model (default: the packaged one), loaded once per process (:func:`api.services.tasks.load`).

    Raises:
        ApiError: ``model_dir`` is not a discourse model (a directory or a trained model's name).
        ModelError: The shipped model is missing or broken, or its encoder differs.
    """
    loaded: DiscourseModel = tasks.load(settings, TASK, model_dir).model
    return loaded


def recipe_data(settings: Settings, profile: str, data: Sequence[Path] | None) -> list[Path]:
    """The Molweni/STAC files a discourse recipe reads: ``data``, or :data:`DEFAULT_DATA` under the corpora.

    Raises:
        UnknownProfileError: ``profile`` is not a discourse profile.
        NotFoundError: No data given and none of the default files present.
    """
    from gnn.discourse.train import PROFILES

    UnknownProfileError.check(profile, PROFILES, TASK)
    if data:
        return list(data)
    root = corpora_root(settings.corpora)
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
) -> TrainReport:
    """Train the discourse parser (:func:`gnn.discourse.task.train_model`) and write a model directory with its card.

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
    from gnn.discourse.task import TASK as DISCOURSE
    from gnn.discourse.task import train_model

    paths = recipe_data(settings, profile, data)
    config = DISCOURSE.recipes.config(profile, seed)
    found = DISCOURSE.examples(tasks.read_records(DISCOURSE.reads, paths), config)
    use = tasks.resources(settings, DISCOURSE, encoder_dir=encoder_dir, data=paths, reporter=reporter, device=None)
    with stages(reporter) as progress:
        return train_model(DISCOURSE, found, out or settings.models_dir / TASK, config, profile, use, progress)


def cross_validate(
    settings: Settings,
    data: list[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    members: int | None = None,
    reporter: Reporter = SILENT,
) -> CVReport:
    """Out-of-fold figures of the discourse recipe ``profile`` (``DiscourseTask.cross_validate``).

    Args:
        settings: Settings (corpora directory, embedding cache).
        data: Molweni/STAC JSON files; default: Molweni dev and STAC train (what the shipped model reads).
        folds: Number of folds.
        profile: Recipe of the fold models.
        seed: Seed of the folds and the networks.
        members: Networks per ensemble instead of the profile's (a cheaper run).
        reporter: Progress lines.

    Raises:
        UnknownProfileError: Unknown profile. NotFoundError: No data file. ApiError: Too few groups.
    """
    from gnn.discourse.task import TASK as DISCOURSE

    paths = recipe_data(settings, profile, data)
    config = DISCOURSE.recipes.config(profile, seed)
    if members is not None:
        config = replace(config, members=members)
    found = DISCOURSE.examples(tasks.read_records(DISCOURSE.reads, paths), config)
    use = tasks.resources(settings, DISCOURSE, data=paths, reporter=reporter, device=None)
    return DISCOURSE.cross_validate(found, config, use, folds=folds, seed=seed, profile=profile)


@dataclass(frozen=True)
class FileEvaluation:
    """A model's scores on one Molweni/STAC file, and on the same file written other valid ways.

    Attributes:
        file: The file.
        scheme: Its scheme.
        model: The model directory.
        scores: Micro link and link & relation precision, recall and F1 (percent), dialogues, EDUs.
        edus_per_second: Parse speed.
        variants: Per way of writing the file: its link F1 and link & relation F1.
        variants_max_change: The largest difference of those from the file's own.
        labels: Predicted against gold relations per sense (gold, predicted, right, recall).
    """

    file: str
    scheme: str
    model: str
    scores: dict[str, Any]
    edus_per_second: float
    variants: dict[str, dict[str, float]]
    variants_max_change: float
    labels: dict[str, dict[str, Any]]

    def document(self) -> JsonDocument:
        """The evaluation as ``evaluate discourse --json`` prints it."""
        return {
            "file": self.file,
            "scheme": self.scheme,
            "model": self.model,
            **self.scores,
            "edus_per_second": self.edus_per_second,
            "variants": self.variants,
            "variants_max_change": self.variants_max_change,
            "labels": self.labels,
        }


def evaluate(
    settings: Settings,
    data: Path,
    model_dir: Path | None = None,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> FileEvaluation:
    """Micro link and link & relation F1 of a model on every dialogue of a Molweni/STAC file.

    The file written every other valid way (:data:`graphstore.perturb.DIALOGUE_VARIANTS`) is scored
    too, and ``labels`` counts gold against predicted relations per sense with each sense's recall.
    The encoding and the parse of the file are reported to ``reporter``.
    """
    from gnn.discourse.task import file_scores

    model = load(settings, model_dir)
    dialogues, scheme = read_dialogues(data, scheme)
    with stages(reporter) as progress:
        scored = file_scores(model, dialogues, progress)
    plain = scored.scores
    variants: dict[str, dict[str, float]] = {}
    raw = read_json(data)
    with tempfile.TemporaryDirectory(prefix="argweb-variant-") as tmp:
        for name, change in DIALOGUE_VARIANTS.items():
            path = Path(tmp) / data.name
            path.write_text(json.dumps(change(raw)), encoding="utf-8")
            other = model.evaluate(read_dialogues(path, scheme)[0]).as_dict()
            variants[name] = {k: other[k] for k in ("link_f1", "link_rel_f1")}
    change_max = max((abs(v[k] - plain[k]) for v in variants.values() for k in v), default=0.0)
    return FileEvaluation(
        str(data),
        scheme,
        str(model_dir or default_model()),
        plain,
        round(sum(len(d) for d in dialogues) / max(scored.seconds, 1e-9), 1),
        variants,
        round(change_max, 4),
        scored.senses.as_dict(),
    )


@dataclass(frozen=True)
class ParseResult:
    """What ``parse discourse`` wrote: the file, its scheme, the dialogues and the relations predicted."""

    file: str
    scheme: str
    dialogues: int
    relations: int


def parse(
    settings: Settings,
    source: Path,
    out: Path,
    model_dir: Path | None = None,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> ParseResult:
    """Predict the relations of every dialogue of ``source`` and write them to ``out`` in its format.

    Dialogues stay in order with every field but ``relations`` unchanged; labels are spelled as
    the file's scheme spells them.
    """
    model = load(settings, model_dir)
    dialogues, scheme = read_dialogues(source, scheme)
    predicted = _predict(model, dialogues, reporter)
    rows = [[(p.x, p.y, scheme_label(scheme, p.sense)) for p in ps] for ps in predicted]
    write_dialogue_json(source, out, rows)
    return ParseResult(str(out), scheme, len(rows), sum(len(r) for r in rows))


def _predict(model: DiscourseModel, dialogues: list[Dialogue], reporter: Reporter) -> list[list[LinkPrediction]]:
    """The parser's links per dialogue; the encoding of their texts is reported to ``reporter`` (the
    parse itself is short beside it)."""
    with stages(reporter) as progress:
        graphs = model.graphs(dialogues, progress)
    return list(model.predict(dialogues, graphs=graphs))
