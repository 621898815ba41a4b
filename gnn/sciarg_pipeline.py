"""The Sci-Arg pipeline end to end: the component tagger's components, then the relation model's relations.

It joins the two tasks (:mod:`gnn.components`, :mod:`gnn.relations`) for the end-to-end figure of
the relation cross-validation (``model evaluate relations --cv K --end-to-end``), so neither
imports the other for it; :func:`cross_validate_papers` is that cross-validation on brat files.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import gnn.components as components
import gnn.components.net as components_net
from gnn.bam import BratDocument, Relation, documents_from_records
from gnn.bam import evaluate as evaluate_bam
from gnn.protocol import Pooled
from gnn.relations.family import TrainOptions
from gnn.relations.sciarg_cv import SHIPPED_PAPERS, EndToEnd, cross_validate_sciarg
from gnn.relations.sciarg_task import load_sciarg
from gnn.relations.sciarg_task import papers_from_records as relation_papers
from ontology.errors import LoaderError
from ontology.formats.sciarg import load_paper
from ontology.formats.sciarg import load_sciarg as read_papers
from ontology.records import EdgeRecord, NodeRecord
from ontology.system import atomic_write_bytes


def read_back(
    corpus: Path, tagged: Mapping[str, BratDocument], papers: Mapping[str, components.Paper]
) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The records of predicted documents as ``argweb predict sciarg --components`` writes and reads them.

    Each document's components are written as brat ``T`` lines beside a copy of its text from
    ``corpus`` and read back by the Sci-Arg loader, so that they are what the relation stage sees
    (components cut at line breaks). ``corpus`` holds each document's ``.txt``.
    """
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    with tempfile.TemporaryDirectory(prefix="argweb-sciarg-e2e-") as tmp:
        for name, doc in tagged.items():
            ann, txt = Path(tmp) / f"{name}.ann", Path(tmp) / f"{name}.txt"
            atomic_write_bytes(ann, components.ann_text(doc, papers[name][1]).encode("utf-8"))
            shutil.copyfile(corpus / f"{name}.txt", txt)
            load_paper(name, ann, txt, nodes, edges)
    return nodes, edges


def end_to_end(corpus: Path, names: Sequence[str], options: TrainOptions, cache_dir: Path) -> EndToEnd:
    """The end-to-end scorer of a Sci-Arg fold (:data:`gnn.relations.sciarg_cv.EndToEnd`).

    The tagger (its recipe of the relation recipe's profile name, with the seed its shipped model
    trains with) trains on the fold's training papers (epoch on its tuning papers) and predicts
    the held-out papers' components; they are written as brat ``T`` lines and read back by the
    Sci-Arg loader, as ``argweb predict sciarg --components`` does, and the fold's relation model
    relates them. BAM scores the documents read back (components and relations) against the gold files.

    Args:
        corpus: The Sci-Arg brat folder.
        names: The papers of the cross-validation.
        options: The relation recipe's options (profile, device, encoder).
        cache_dir: The cache directory (the papers' word vectors go under ``embeddings``).

    Raises:
        LoaderError: Unreadable papers. UnknownProfileError: No tagger recipe of that name.
    """
    papers = components.read_papers(corpus, names)
    config = components.TASK.recipes.config(options.profile, 13)
    vectors = components_net.TokenVectors(
        layers=config.layers, max_length=config.max_length, cache_dir=cache_dir / "embeddings" / "sciarg-tokens"
    )

    def score(fold: Mapping[str, Sequence[str]], model_dir: Path) -> tuple[dict[str, float], Pooled]:
        train, tune = ({n: papers[n] for n in fold[part]} for part in ("train", "tune"))
        # Looked up on the module when the fold runs (a test stands a gold tagger in for it).
        tagger, result = components_net.train_tagger(train, tune, replace(config), vectors=vectors)
        options.log(f"Sci-Arg end to end: tagger trained (epoch {result.best_epoch})")
        tagged = {n: components.predicted_document(tagger, papers[n][0], papers[n][1]) for n in fold["test"]}
        nodes, edges = read_back(corpus, tagged, papers)
        # Scored as read back: the written T lines (components cut at line breaks), not the tagger's spans.
        docs = documents_from_records(nodes, edges)
        model = load_sciarg(model_dir, device=options.device, encoder=options.encoder)
        found = relation_papers(nodes, edges)
        for paper, rels in zip(found, model.predict(found), strict=True):
            docs[paper.name].relations = [Relation(label, a, b) for a, b, label, _ in rels]
        scores = evaluate_bam(docs, {n: papers[n][0] for n in fold["test"]})
        figures = {
            "end_to_end.R_micro.f1": scores.r.f1,
            "end_to_end.R_micro.p": scores.r.precision,
            "end_to_end.R_micro.r": scores.r.recall,
            "end_to_end.C.f1": scores.c.f1,
        }
        return figures, components.pooled(scores.r_by_label)

    return score


def cross_validate_papers(
    brat: Sequence[Path],
    paths: Sequence[Path],
    options: TrainOptions,
    folds: int,
    *,
    pipeline: bool,
    cache_dir: Path,
) -> dict[str, Any]:
    """Out-of-fold figures of the Sci-Arg relation recipe on the brat papers ``brat``, grouped by paper.

    Over A01-A32 when present, the papers the shipped card trains on (A33-A40 are the official test
    papers), through :func:`gnn.relations.sciarg_cv.cross_validate_sciarg`. With ``pipeline``, each
    fold also trains the component tagger and scores the pipeline on the held-out papers
    (:func:`end_to_end`).

    Args:
        brat: The papers' brat files.
        paths: What the caller named (the one brat folder under them is the end-to-end corpus).
        options: The recipe's profile, seed, device and encoder.
        folds: Number of folds.
        pipeline: Also score each fold's model on predicted components (the end-to-end figure).
        cache_dir: The cache directory.

    Raises:
        LoaderError: ``pipeline`` without one folder of Sci-Arg brat files under ``paths``.
    """
    options.log(f"reading {len(brat)} Sci-Arg paper(s)")
    bundle = read_papers(list(brat))
    papers = relation_papers(bundle.nodes, bundle.edges)
    kept = [p for p in papers if p.name in SHIPPED_PAPERS] or papers
    # Built first, so that a missing brat folder is said before any fold trains.
    scorer = end_to_end(brat_dir(paths), [p.name for p in kept], options, cache_dir) if pipeline else None
    return cross_validate_sciarg(kept, options, folds, only=None, end_to_end=scorer)


def brat_dir(paths: Sequence[Path]) -> Path:
    """The one folder under ``paths`` that holds the Sci-Arg ``.ann`` files.

    Raises:
        LoaderError: None, or more than one.
    """
    found = {
        ann.parent
        for path in paths
        for ann in ([path] if path.is_file() else path.rglob("*.ann"))
        if ann.suffix == ".ann"
    }
    if len(found) != 1:
        raise LoaderError(f"the end-to-end figure needs one folder of Sci-Arg brat files; found {len(found)}")
    return found.pop()
