"""Grouped cross-validation of the shipped training recipes (the ``--cv K`` of ``argweb evaluate``).

The discourse recipe's is its task's (``argweb evaluate discourse --cv K``, :mod:`gnn.discourse.task`).
Thin: the files are read here, the protocol (:mod:`gnn.protocol`) and each task's folds live in
gnn (:mod:`gnn.paraphrase_cv`, :mod:`gnn.relations.sciarg_cv`,
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


def paraphrase(
    settings: Settings,
    data: list[Path] | None,
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 13,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold figures of the ContextDeP highlighter recipe on the pairs of ``data``, folds by interview.

    Args:
        settings: Settings (corpora directory, embedding cache).
        data: ``*_TOKEN-annotations.tsv`` files, pooled; default: the train and dev files (what the
            shipped model reads).
        folds: Number of folds.
        profile: Recipe of the fold models.
        seed: Seed of the folds and the models.
        reporter: Progress lines.

    Raises:
        UnknownProfileError: Unknown profile. LoaderError: Unreadable data.
    """
    from api.services.corpora import corpora_root
    from api.services.paraphrase import default_data, pairs_from_file
    from api.services.training import profile_config
    from gnn.paraphrase import PROFILES, HighlighterConfig
    from gnn.paraphrase_cv import cross_validate_paraphrase

    paths = data or default_data(corpora_root(settings))
    pairs = [p for path in paths for p in pairs_from_file(path)]
    if not pairs:
        raise LoaderError(f"no ContextDeP pairs in {', '.join(map(str, paths))}")
    config = profile_config(PROFILES, profile, seed, HighlighterConfig, "paraphrase")
    cache = settings.embeddings_dir / "contextdep-pairs"
    out = cross_validate_paraphrase(pairs, config, folds, seed, cache_dir=cache, log=reporter.log)
    return {**out, "profile": profile, "files": [str(p) for p in paths]}


def relations(
    settings: Settings,
    paths: list[Path],
    folds: int = 5,
    *,
    profile: str = "full",
    seed: int = 0,
    end_to_end: bool = False,
    encoder_dir: Path | None = None,
    reporter: Reporter = SILENT,
) -> dict[str, Any]:
    """Out-of-fold figures of the relation recipes on the data under ``paths``, per family found there.

    QT30 / DialAM maps are grouped by episode (:func:`gnn.relations.qt30_run.cross_validate_qt30`),
    Sci-Arg papers by paper (:func:`gnn.relations.sciarg_cv.cross_validate_sciarg`, over A01-A32).
    With ``end_to_end``, each Sci-Arg fold also trains the component tagger (its recipe of the same
    profile, seed 13) on the same papers and scores the pipeline on the held-out ones (:func:`sciarg_pipeline`).
    The full profile reads the texts with the packaged MiniLM, or with the local encoder in
    ``encoder_dir``.

    Raises:
        LoaderError: Neither QT30 maps nor Sci-Arg papers under ``paths``; ``end_to_end`` without
            the Sci-Arg brat files.
        ApiError: ``encoder_dir`` with a profile that reads no encoder (LSA text vectors).
    """
    from api.services.relations import load_data
    from gnn.device import pick_device
    from gnn.encoder import encoder_for
    from gnn.relations.family import TrainOptions
    from gnn.relations.qt30_run import cross_validate_qt30
    from gnn.relations.sciarg_cv import SHIPPED_PAPERS, cross_validate_sciarg

    if encoder_dir is not None and profile != "full":
        raise ApiError(f"the {profile} profile reads LSA text vectors, no encoder; --encoder goes with --profile full")
    data = load_data(paths, reporter)
    if not (data.qt30 or data.sciarg):
        raise LoaderError(
            f"cross-validation needs QT30 / DialAM AIF maps or Sci-Arg papers; none in {', '.join(map(str, paths))}"
        )
    device = pick_device()
    encoder = encoder_for(None, encoder_dir, settings.cache_dir, device=device) if profile == "full" else None
    options = TrainOptions(profile, seed, device, encoder, log=reporter.log)
    out: dict[str, Any] = {}
    if end_to_end and not data.sciarg:
        raise LoaderError(f"--end-to-end needs the Sci-Arg papers; none in {', '.join(map(str, paths))}")
    # The papers the shipped card trains on (A33-A40 are the official test papers), when present.
    kept = [p for p in data.sciarg if p.name in SHIPPED_PAPERS] or data.sciarg
    # Built first, so that a missing brat folder is said before any fold trains.
    scorer = sciarg_pipeline(settings, _brat_dir(paths), [p.name for p in kept], options) if end_to_end else None
    if data.qt30:
        out["qt30"] = cross_validate_qt30(data.qt30, options, folds)
    if kept:
        out["sciarg"] = cross_validate_sciarg(kept, options, folds, only=None, end_to_end=scorer)
    return out


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
