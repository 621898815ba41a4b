"""BAM evaluation of brat directories: read gold and predicted Sci-Arg annotations, score S/B/C/R.

Both directories are read with the Sci-Arg loader (one parser, one set of checks). A predicted
``.ann`` is read against the text next to it when there is one, else against the gold text of
the same name, so a prediction directory may hold ``.ann`` files only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gnn.bam import BratDocument, documents_from_records, evaluate, majority_baseline
from ontology.errors import LoaderError
from ontology.formats.sciarg import load_paper
from ontology.records import EdgeRecord, NodeRecord


def read_brat_dir(directory: Path, texts: Path | None = None) -> dict[str, BratDocument]:
    """Documents of the ``.ann`` files of ``directory``, keyed by file stem.

    Args:
        directory: A brat directory (``.ann`` files, usually each with its ``.txt``).
        texts: Where to find a ``.txt`` that ``directory`` lacks (the gold directory).

    Raises:
        LoaderError: Not a directory, no ``.ann`` file, a missing text, or an annotation the
            Sci-Arg loader rejects (the message names the file and line).
    """
    if not directory.is_dir():
        raise LoaderError(f"{directory}: not a directory")
    anns = sorted(directory.glob("*.ann"))
    if not anns:
        raise LoaderError(f"{directory}: no brat .ann files")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for ann in anns:
        txt = ann.with_suffix(".txt")
        if not txt.is_file() and texts is not None:
            txt = texts / txt.name
        if not txt.is_file():
            raise LoaderError(f"{ann}: no text {ann.with_suffix('.txt').name} next to it or in the gold directory")
        load_paper(ann.stem, ann, txt, nodes, edges)
    return documents_from_records(nodes, edges)


def evaluate_dirs(pred: Path, gold: Path) -> dict[str, Any]:
    """S/B/C/R of the predictions in ``pred`` and of the most-frequent-label baseline, against ``gold``.

    Every gold document is scored; a gold document without a predicted ``.ann`` counts as a
    prediction of nothing.

    Raises:
        LoaderError: Unreadable input, or a predicted document with no gold counterpart.
    """
    gold_docs = read_brat_dir(gold)
    pred_docs = read_brat_dir(pred, texts=gold)
    extra = sorted(set(pred_docs) - set(gold_docs))
    if extra:
        raise LoaderError(f"{pred}: predicted document(s) {extra[:5]} have no gold .ann in {gold}")
    missing = sorted(set(gold_docs) - set(pred_docs))
    return {
        "pred": str(pred),
        "gold": str(gold),
        "documents": len(gold_docs),
        "missing_predictions": missing,
        "system": evaluate(pred_docs, gold_docs).as_dict(),
        "baseline": evaluate(majority_baseline(gold_docs), gold_docs).as_dict(),
    }
