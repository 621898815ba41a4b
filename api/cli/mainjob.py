"""The main job's line per step (``argweb run``): what the console and the run log say each step did.

:func:`api.services.mainjob.run` returns each step with what it returned; the words are the
command line's, so they live here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from api.services.mainjob import PredictionOutcome, RdfSync, Step

if TYPE_CHECKING:
    from api.services.apiserver import ApiInfo
    from api.services.corpora import RunReport
    from api.services.semantic import EmbedReport


def load_summary(report: RunReport) -> str:
    """The load step: how many corpora, and whether they were read again."""
    loaded = [name for name, e in report.stats.get("corpora", {}).items() if e.get("status") == "complete"]
    if report.bulk is not None:
        how = "bulk import"
    elif not report.unchanged:
        how = "merged into the graph"
    elif not report.ingested:
        how = "unchanged since the last load, not read again; --reload reads them"
    else:
        how = f"{len(report.ingested)} merged into the graph, {len(report.unchanged)} unchanged"
    skipped = f"; no files for {', '.join(report.skipped)}" if report.skipped else ""
    return f"{len(loaded)} corpora ({how}){skipped}"


def predict_summary(outcomes: Sequence[PredictionOutcome]) -> str:
    """The predict step: relations written, runs already present, failures."""
    written = [o for o in outcomes if o.status == "written"]
    present = sum(o.status == "skipped" for o in outcomes)
    failed = sum(o.status == "failed" for o in outcomes)
    parts = [f"{sum(o.predicted for o in written):,} relations written by {len(written)} run(s)"]
    if present:
        parts.append(f"{present} already present")
    if failed:
        parts.append(f"{failed} FAILED")
    return ", ".join(parts)


def embed_summary(done: EmbedReport | None) -> str:
    """The embed step: vectors written, and the texts the encoder cache lacks (None: it failed)."""
    if done is None:
        return "FAILED"
    written, left = sum(done.written.values()), sum(done.uncached.values())
    parts = [f"{written:,} vectors written" if written else "no new vectors", "vector indexes online"]
    if left:
        parts.append(f"{left:,} texts not in the encoder cache (`argweb embed` encodes them)")
    return ", ".join(parts)


def rdf_summary(rdf: RdfSync) -> str:
    """The rdf step: triples loaded, or nothing to do."""
    return f"{rdf.triples:,} triples loaded" if rdf.exported else "unchanged since the last run"


def step_summary(step: Step) -> str:
    """What ``step`` did, in one line (from what it returned)."""
    if step.name == "load":
        return load_summary(cast("RunReport", step.result))
    if step.name == "predict":
        return predict_summary(cast("Sequence[PredictionOutcome]", step.result))
    if step.name == "embed":
        return embed_summary(cast("EmbedReport | None", step.result))
    if step.name == "rdf":
        return rdf_summary(cast(RdfSync, step.result))
    info = cast("ApiInfo", step.result)
    return f"{info.url} (pid {info.pid})"
