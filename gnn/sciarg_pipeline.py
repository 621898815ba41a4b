"""The Sci-Arg pipeline end to end: the component tagger's components, then the relation model's relations.

It joins the two tasks (:mod:`gnn.components`, :mod:`gnn.relations`) for the end-to-end figure of
the relation cross-validation (``model evaluate relations --cv K --end-to-end``), so neither
imports the other for it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import gnn.components as components
import gnn.components.net as components_net
from gnn.bam import BratDocument, Relation, documents_from_records
from gnn.bam import evaluate as evaluate_bam
from gnn.protocol import Pooled
from gnn.relations.family import TrainOptions
from gnn.relations.sciarg_cv import EndToEnd
from gnn.relations.sciarg_task import load_sciarg
from gnn.relations.sciarg_task import papers_from_records as relation_papers
from ontology.formats.sciarg import load_paper
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
