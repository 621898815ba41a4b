"""The discourse task on Molweni/STAC files: reading dialogues, scoring a file, writing a parse.

What ``argweb evaluate|parse discourse`` do with a file once the model is loaded: the dialogues
are read through :mod:`ontology.formats.dialogue_json`, scored (also on the file written other
valid ways, given by the caller) or parsed, and a parse is written back in the file's own format
and scheme. torch is imported lazily (inside the functions): the CLI imports this module at start.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnn.task import JsonDocument
from ontology.errors import ApiError, NotFoundError
from ontology.formats.common import read_json
from ontology.formats.dialogue_json import detect_scheme, load_dialogue_json, scheme_label, write_dialogue_json
from ontology.progress import SILENT, Reporter, stages

if TYPE_CHECKING:
    from gnn.discourse.data import Dialogue
    from gnn.discourse.train import DiscourseModel, LinkPrediction

SCHEMES = ("molweni", "stac")
Variant = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
"""One other valid way of writing a Molweni/STAC file: its dialogues in, rewritten dialogues out."""


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


def evaluate_file(
    model: DiscourseModel,
    data: Path,
    model_name: str,
    variants: Mapping[str, Variant],
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> FileEvaluation:
    """Micro link and link & relation F1 of ``model`` on every dialogue of a Molweni/STAC file.

    The file written each way of ``variants`` is scored too, and ``labels`` counts gold against
    predicted relations per sense with each sense's recall. The encoding and the parse of the file
    are reported to ``reporter``.

    Args:
        model: The loaded discourse model.
        data: The Molweni/STAC JSON file.
        model_name: What the evaluation names as its model (its directory).
        variants: Other valid ways of writing the file, by name.
        scheme: ``molweni`` or ``stac``; default: detected.
        reporter: Progress lines.

    Raises:
        NotFoundError: No such file. LoaderError: Malformed file. ApiError: Unknown scheme.
    """
    from gnn.discourse.task import file_scores

    dialogues, scheme = read_dialogues(data, scheme)
    with stages(reporter) as progress:
        scored = file_scores(model, dialogues, progress)
    plain = scored.scores
    changed: dict[str, dict[str, float]] = {}
    raw = read_json(data)
    with tempfile.TemporaryDirectory(prefix="argweb-variant-") as tmp:
        for name, change in variants.items():
            path = Path(tmp) / data.name
            path.write_text(json.dumps(change(raw)), encoding="utf-8")
            other = model.evaluate(read_dialogues(path, scheme)[0]).as_dict()
            changed[name] = {k: other[k] for k in ("link_f1", "link_rel_f1")}
    change_max = max((abs(v[k] - plain[k]) for v in changed.values() for k in v), default=0.0)
    return FileEvaluation(
        str(data),
        scheme,
        model_name,
        plain,
        round(sum(len(d) for d in dialogues) / max(scored.seconds, 1e-9), 1),
        changed,
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


def parse_file(
    model: DiscourseModel,
    source: Path,
    out: Path,
    scheme: str | None = None,
    reporter: Reporter = SILENT,
) -> ParseResult:
    """Predict the relations of every dialogue of ``source`` with ``model`` and write them to ``out`` in its format.

    Dialogues stay in order with every field but ``relations`` unchanged; labels are spelled as
    the file's scheme spells them.

    Raises:
        NotFoundError: No such file. LoaderError: Malformed file. ApiError: Unknown scheme.
    """
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
