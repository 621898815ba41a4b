"""Corpora from their official sources (or a local mirror), verified by sha256."""

from __future__ import annotations

from pathlib import Path

from api.settings import Settings
from graphstore.fetch import SOURCES, FetchReport, fetch_corpus
from ontology.errors import ApiError
from ontology.formats.registry import FETCHED_CORPORA, corpora_root
from ontology.progress import SILENT, Reporter


def fetch(
    settings: Settings,
    corpus: str | None = None,
    *,
    all_corpora: bool = False,
    dest: Path | None = None,
    from_dir: Path | None = None,
    groups: list[str] | None = None,
    timeout: float = 30.0,
    reporter: Reporter = SILENT,
) -> tuple[Path, list[tuple[str, FetchReport]]]:
    """Fetch one corpus or all of them into ``dest`` (default: ``settings.corpora``, else ``./corpora``),
    where ``argweb run`` looks for corpora (:func:`ontology.formats.registry.corpora_root`).

    Returns:
        The corpora directory and one report per corpus.

    Raises:
        ApiError: Neither or both of ``corpus`` and ``all_corpora``.
        GraphStoreError: A download, the mirror or a checksum failed.
    """
    if all_corpora == (corpus is not None):
        raise ApiError(f"give a corpus or --all; corpora: {', '.join(SOURCES)}")
    names = list(SOURCES) if all_corpora else [str(corpus)]
    target = dest or settings.corpora or FETCHED_CORPORA
    reports = []
    for name in names:
        report = fetch_corpus(
            name, target, from_dir=from_dir, groups=("main", *(groups or [])), timeout=timeout, log=reporter.log
        )
        reporter.log(
            f"{name}: {report.fetched} fetched, {report.present} already present, {report.verified} sha256 "
            f"verified, {report.unverified} without a known sum, {len(report.skipped)} not in the mirror "
            f"-> {target / report.folder}"
        )
        reports.append((name, report))
    found = corpora_root(settings.corpora)
    if found.resolve() != target.resolve():
        reporter.warn(f"argweb run loads the corpora of {found}; ARGWEB_CORPORA={target} makes it load these")
    return target, reports
