"""``argweb predict contextdep``: the paraphrase task's predictions written in ContextDeP's own TSV form.

Wiring only: the model is the paraphrase task's (:mod:`gnn.paraphrase`), loaded once through
:func:`api.services.tasks.load`; training, evaluation and cross-validation are
:mod:`api.services.tasks`'s, predictions over the graph :func:`api.services.predictions.predict_scope`'s.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from api.services import tasks
from api.settings import Settings
from gnn.modelcard import atomic_write_bytes
from gnn.paraphrase import TASK_NAME, PairPrediction
from gnn.paraphrase_eval import NOT_SURE, ParaphrasePair
from ontology.errors import LoaderError
from ontology.formats.contextdep import read_token_pairs

HEADER = ("QID", "paraphrase", "score", "guest_probs", "host_probs")


@dataclass(frozen=True)
class FilePrediction:
    """What ``predict contextdep`` read and wrote.

    Attributes:
        source: The file read.
        target: The TSV written.
        pairs: Pairs predicted.
        paraphrases: Pairs called paraphrases (1 in the ``paraphrase`` column).
        seconds: Wall time.
        not_sure: Pairs the model is not sure of (0 in the ``paraphrase`` column, highlights written).
    """

    source: Path
    target: Path
    pairs: int
    paraphrases: int
    seconds: float
    not_sure: int = 0


def predictions_tsv(rows: Sequence[PairPrediction]) -> str:
    """The prediction file: header ``QID paraphrase score guest_probs host_probs``, tab-separated.

    ``paraphrase`` is 1 for a pair the model calls a paraphrase and 0 otherwise: a pair it is not
    sure of is written as 0 (the official scoring reads this column as the decision), with its score
    and its token probabilities (the highlights) like every other pair.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(HEADER)
    for p in rows:
        probs = [json.dumps([round(x, 4) for x in side]) for side in (p.guest_probs, p.host_probs)]
        writer.writerow([p.qid, int(p.paraphrase), f"{p.score:.4f}", *probs])
    return buf.getvalue()


def predict_file(settings: Settings, source: Path, target: Path, model: Path | None = None) -> FilePrediction:
    """Predict every pair of ``source`` and write the UTF-8 TSV ``target`` (all or nothing).

    ``source`` is an aggregated ``*_TOKEN-annotations.tsv`` file, or any tab-separated UTF-8 file
    with its ``QID``, ``Guest Tokens`` and ``Host Tokens`` columns alone (pairs nobody annotated).

    Raises:
        LoaderError: A malformed file (file, line and QID named). ApiError, ModelError: ``model`` is
            not a usable paraphrase model.
    """
    started = time.perf_counter()
    if not source.is_file():
        raise LoaderError(f"{source}: no such file")
    pairs = [ParaphrasePair(qid, guest, host) for qid, guest, host in read_token_pairs(source)]
    predictions = tasks.load(settings, TASK_NAME, model).model.predict(pairs)
    atomic_write_bytes(target, predictions_tsv(predictions).encode("utf-8"))
    return FilePrediction(
        source,
        target,
        len(pairs),
        sum(p.paraphrase for p in predictions),
        round(time.perf_counter() - started, 2),
        sum(p.decision == NOT_SURE for p in predictions),
    )
