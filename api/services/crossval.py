"""Grouped cross-validation of the shipped training recipes (the ``--cv K`` of ``argweb evaluate``).

Thin: the files are read here, the protocol (:mod:`gnn.protocol`) and each task's folds live in
gnn (:mod:`gnn.discourse.cv`, :mod:`gnn.relations.sciarg_cv`,
:func:`gnn.relations.qt30_run.cross_validate_qt30`), but for the component tagger's, whose folds
are scored with the BAM documents of :mod:`api.services.components`. No model is read or written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from ontology.errors import ApiError, LoaderError

if TYPE_CHECKING:
    from gnn.metrics import PRF
    from gnn.protocol import Pooled
    from gnn.relations.family import TrainOptions
    from gnn.relations.sciarg_cv import EndToEnd


def discourse(
    settings: Settings,
    data: list[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    members: int | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold figures of the discourse recipe ``profile`` on the Molweni/STAC files ``data``.

    Args:
        settings: Settings (corpora directory, embedding cache).
        data: Molweni/STAC JSON files; default: Molweni dev and STAC train (what the shipped model reads).
        folds: Number of folds.
        profile: Recipe of the fold models.
        seed: Seed of the folds and the networks.
        members: Networks per ensemble instead of the profile's (a cheaper run).
        reporter: Progress lines.

    Raises:
        UnknownProfileError: Unknown profile. NotFoundError: No data file.
    """
    from api.services.discourse import read_dialogues, recipe_data
    from gnn.discourse.cv import cross_validate_discourse
    from gnn.discourse.train import PROFILES, ParserConfig
    from gnn.encoder import encoder_for

    data = recipe_data(settings, profile, data)
    files = {path.name: read_dialogues(path)[0] for path in data}
    config = ParserConfig(seed=seed, **PROFILES[profile])
    if members is not None:
        config = replace(config, members=members)
    out = cross_validate_discourse(
        files, encoder_for(None, None, settings.cache_dir), config, folds, seed, log=reporter.log
    )
    return {**out, "profile": profile}


def _pooled(by_label: Mapping[str, PRF]) -> Pooled:
    """A fold's predicted against gold counts from BAM's scores per label."""
    from gnn.protocol import Pooled

    tally = Pooled()
    for label, prf in sorted(by_label.items()):
        tally.add(label, int(prf.gold), int(prf.predicted), int(prf.tp))
    return tally


def _brat_dir(paths: list[Path]) -> Path:
    """The one folder under ``paths`` that holds the Sci-Arg ``.ann`` files."""
    found = {
        ann.parent
        for path in paths
        for ann in ([path] if path.is_file() else path.rglob("*.ann"))
        if ann.suffix == ".ann"
    }
    if len(found) != 1:
        raise LoaderError(f"the end-to-end figure needs one folder of Sci-Arg brat files; found {len(found)}")
    return found.pop()


def sciarg_pipeline(settings: Settings, corpus: Path, names: list[str], options: TrainOptions) -> EndToEnd:
    """The end-to-end scorer of a Sci-Arg fold (:data:`gnn.relations.sciarg_cv.EndToEnd`).

    The tagger trains on the fold's training papers (epoch on its tuning papers) and predicts the
    held-out papers' components; they are written as brat ``T`` lines and read back by the Sci-Arg
    loader, as ``argweb predict sciarg --components`` does, and the fold's relation model relates
    them. BAM scores the documents read back (components and relations) against the gold files.

    Args:
        settings: Settings (embedding cache).
        corpus: The Sci-Arg brat folder.
        names: The papers of the cross-validation.
        options: The relation recipe's options (profile, device, encoder).

    Raises:
        LoaderError: Unreadable papers.
    """
    import shutil
    import tempfile

    from api.services.components import ann_text, predicted_document, read_papers
    from api.services.training import profile_config
    from gnn.bam import Relation, documents_from_records, evaluate
    from gnn.components import PROFILES, TaggerConfig, TokenVectors, train_tagger
    from gnn.relations.sciarg_task import load_sciarg, papers_from_records
    from ontology.formats.sciarg import load_paper
    from ontology.records import EdgeRecord, NodeRecord
    from ontology.system import atomic_write_bytes

    papers = read_papers(corpus, names)
    # The tagger's recipe of the same name, with the seed its shipped model trains with.
    config = profile_config(PROFILES, options.profile, 13, TaggerConfig)
    vectors = TokenVectors(
        layers=config.layers, max_length=config.max_length, cache_dir=settings.embeddings_dir / "sciarg-tokens"
    )

    def score(fold: Mapping[str, Sequence[str]], model_dir: Path) -> tuple[dict[str, float], Pooled]:
        train, tune = ({n: papers[n] for n in fold[part]} for part in ("train", "tune"))
        tagger, result = train_tagger(train, tune, replace(config), vectors=vectors)
        options.log(f"Sci-Arg end to end: tagger trained (epoch {result.best_epoch})")
        tagged = {n: predicted_document(tagger, papers[n][0], papers[n][1]) for n in fold["test"]}
        nodes: list[NodeRecord] = []
        edges: list[EdgeRecord] = []
        with tempfile.TemporaryDirectory(prefix="argweb-sciarg-e2e-") as tmp:
            for name, doc in tagged.items():
                ann, txt = Path(tmp) / f"{name}.ann", Path(tmp) / f"{name}.txt"
                atomic_write_bytes(ann, ann_text(doc, papers[name][1]).encode("utf-8"))
                shutil.copyfile(corpus / f"{name}.txt", txt)
                load_paper(name, ann, txt, nodes, edges)
        # Scored as read back: the written T lines (components cut at line breaks), not the tagger's spans.
        read_back = documents_from_records(nodes, edges)
        model = load_sciarg(model_dir, device=options.device, encoder=options.encoder)
        found = papers_from_records(nodes, edges)
        for paper, rels in zip(found, model.predict(found), strict=True):
            read_back[paper.name].relations = [Relation(label, a, b) for a, b, label, _ in rels]
        scores = evaluate(read_back, {n: papers[n][0] for n in fold["test"]})
        figures = {
            "end_to_end.R_micro.f1": scores.r.f1,
            "end_to_end.R_micro.p": scores.r.precision,
            "end_to_end.R_micro.r": scores.r.recall,
            "end_to_end.C.f1": scores.c.f1,
        }
        return figures, _pooled(scores.r_by_label)

    return score


def components(
    settings: Settings,
    data: Path | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold component figures of the tagger recipe ``profile``, folds by paper.

    The papers the shipped model's split uses (A01-A32; A33-A40 are the official test papers) are
    the groups. Each fold trains :func:`gnn.components.train_tagger` on its training papers, with
    whole papers of the training folds (the shipped split's share, 4 of 24) choosing the epoch,
    and scores the fold's papers with BAM: components exact-span F1 (C, labelled), argumentative
    sentences (S) and boundary similarity (B). No model is read or written.

    Args:
        settings: Settings (corpora directory, embedding cache).
        data: The Sci-Arg brat directory; default ``<corpora>/sciarg/compiled_corpus``.
        folds: Number of folds.
        profile: Recipe of the fold models.
        seed: Seed of the folds and the taggers.
        reporter: Progress lines.

    Raises:
        UnknownProfileError: Unknown profile.
        ApiError: Fewer of those papers than folds.
        LoaderError: Unreadable papers.
    """
    from api.services.components import SCIARG_DIR, predicted_document, read_papers
    from api.services.corpora import corpora_root
    from api.services.training import profile_config
    from gnn.bam import evaluate
    from gnn.components import PROFILES, TaggerConfig, TokenVectors, train_tagger
    from gnn.protocol import Fold, FoldOutcome, cross_validate
    from gnn.relations.sciarg_cv import SHIPPED_PAPERS, TUNE_SHARE

    corpus = data or corpora_root(settings) / SCIARG_DIR
    config = profile_config(PROFILES, profile, seed, TaggerConfig, "components")
    present = [name for name in SHIPPED_PAPERS if (corpus / f"{name}.ann").is_file()]
    if len(present) < folds:
        raise ApiError(f"{corpus}: {len(present)} of the papers A01-A32 found, fewer than the {folds} folds")
    papers = read_papers(corpus, present)
    names = sorted(papers)
    vectors = TokenVectors(
        layers=config.layers, max_length=config.max_length, cache_dir=settings.embeddings_dir / "sciarg-tokens"
    )

    def run_fold(fold: Fold) -> FoldOutcome:
        train, tune, test = (
            {names[i]: papers[names[i]] for i in getattr(fold, part)} for part in ("train", "tune", "test")
        )
        tagger, result = train_tagger(train, tune, replace(config), vectors=vectors)
        gold = {name: doc for name, (doc, _) in test.items()}
        scores = evaluate({name: predicted_document(tagger, doc, text) for name, (doc, text) in test.items()}, gold)
        figures = {"C.f1": scores.c.f1, "C.precision": scores.c.precision, "C.recall": scores.c.recall}
        figures |= {"S": scores.s.f1, "B": scores.b_mean}
        return FoldOutcome(
            figures, {"": _pooled(scores.c_by_label)}, {"epoch": result.best_epoch}, {"papers": sorted(test)}
        )

    protocol = (
        f"Sci-Arg components grouped by paper over {len(names)} papers; in each fold about a sixth of the training "
        "papers choose the epoch; BAM C (labelled exact-span F1), S and B of the held-out fold"
    )
    out = cross_validate(
        names,
        run_fold,
        folds,
        seed,
        protocol,
        tune_share=TUNE_SHARE,
        log=reporter.log,
        what="components cross-validation",
    )
    return {**out, "papers": len(names), "profile": profile}
