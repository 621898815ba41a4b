"""Corpus dashboard plots (matplotlib), shared by ``/dashboard/{corpus}``, ``argweb report`` and the notebook.

Plots: relation types, utterances per speaker, relations per topic, Krippendorff's alpha against
trust and confidence thresholds, gold and predicted relations per type, and each prediction run
against gold per type (matched, other type, missed; :mod:`graphstore.comparisons`). A plot that
does not apply to a corpus (no topics, no annotator judgements, no predictions) is left out of its
dashboard and report (:func:`applicable`); asked for by name, it says so in the figure. What the
plots draw is read by :func:`api.services.report.corpus_data`.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.services.report import CorpusData
from ontology.errors import ApiError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOTS: dict[str, str] = {
    "relation-types": "Relation types",
    "speakers": "Utterances per speaker",
    "topics": "Relations per topic",
    "agreement": "Agreement (Krippendorff's alpha) against thresholds",
    "gold-vs-predicted": "Gold and predicted relations per type",
    "predicted-against-gold": "Predicted against gold per type, per prediction run",
}
MAX_RUNS = 6
"""Runs drawn in the predicted-against-gold plot (the newest; the page's table lists them all)."""
# The graph page's colours, so a kind looks the same everywhere.
KIND_COLORS = {
    "Support": "#2e8b57",
    "Attack": "#c0392b",
    "Rephrase": "#8e44ad",
    "DiscourseRelation": "#e67e22",
    "Transition": "#7f8c8d",
    "Illocution": "#95a5a6",
    "NonRelation": "#bdc3c7",
    "SameUnit": "#34495e",
}


def applicable(data: CorpusData) -> list[str]:
    """The plots that apply to the corpus, in :data:`PLOTS` order (the others are left out)."""
    has = {
        "relation-types": bool(data.relations.get("gold")),
        "speakers": bool(data.speakers),
        "topics": bool(data.topics),
        "agreement": any(a is not None for series in data.agreement.values() for _, a in series),
        "gold-vs-predicted": bool(data.relations.get("predicted")),
        "predicted-against-gold": bool(data.relations.get("predicted")),
    }
    return [plot for plot in PLOTS if has[plot]]


def _empty(ax: Any, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="#666")
    ax.set_axis_off()


def _barh(ax: Any, counts: list[tuple[str, int]], color: str) -> None:
    labels = [k for k, _ in counts][::-1]
    values = [v for _, v in counts][::-1]
    ax.barh(labels, values, color=color)
    ax.tick_params(axis="y", labelsize=8)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v}", va="center", fontsize=7)


def _score(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _against_gold(data: CorpusData) -> Figure:
    """Per run (the newest :data:`MAX_RUNS`): gold, predicted and matched edges per type."""
    from matplotlib.figure import Figure

    runs = data.comparisons[:MAX_RUNS]
    rows = max(1, len(runs))
    height = sum(1.2 + 0.32 * len(c.types) for c in runs) if runs else 4.5
    fig = Figure(figsize=(8, max(3.0, height)), layout="constrained")
    axes = fig.subplots(rows, 1, squeeze=False)[:, 0]
    fig.suptitle(f"{data.corpus}: {PLOTS['predicted-against-gold']}", fontsize=11)
    if not runs:
        _empty(axes[0], "no prediction runs in this corpus")
        return fig
    for ax, c in zip(axes, runs, strict=True):
        kinds = [t.type for t in c.types]
        y = list(range(len(kinds)))
        for offset, key, color in (
            (-0.27, "gold", "#4c72b0"),
            (0.0, "predicted", "#dd8452"),
            (0.27, "matched", "#55a868"),
        ):
            values = [getattr(t, key) for t in c.types]
            ax.barh([i + offset for i in y], values, height=0.26, label=key, color=color)
            for i, v in zip(y, values, strict=True):
                ax.text(v, i + offset, f" {v}", va="center", fontsize=6)
        ax.set_yticks(y, kinds, fontsize=8)
        ax.invert_yaxis()
        m = c.micro
        ax.set_title(
            f"{c.run.model} {c.run.model_version} · run {c.run.run_id} · {c.maps} maps · "
            f"P {_score(m.precision)} R {_score(m.recall)} F1 {_score(m.f1)}",
            fontsize=8,
        )
        ax.legend(fontsize=7, loc="lower right")
    return fig


def figure(plot: str, data: CorpusData) -> Figure:
    """The matplotlib figure of one plot."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    if plot == "predicted-against-gold":
        return _against_gold(data)
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.subplots()
    ax.set_title(f"{data.corpus}: {PLOTS[plot]}", fontsize=11)
    if plot == "relation-types":
        gold = data.relations.get("gold", Counter())
        if gold:
            _barh(ax, gold.most_common(25), "#4c72b0")
            ax.set_xlabel("relations")
        else:
            _empty(ax, "no gold relations")
    elif plot == "speakers":
        if data.speakers:
            _barh(ax, data.speakers, "#55a868")
            ax.set_xlabel("utterances")
        else:
            _empty(ax, "no utterances with a speaker")
    elif plot == "topics":
        if data.topics:
            names = sorted(data.topics, key=lambda t: -sum(data.topics[t].values()))[:15]
            kinds = sorted({k for t in names for k in data.topics[t]})
            left = [0] * len(names)
            for k in kinds:
                color = KIND_COLORS.get(k, "#4c72b0")
                values = [data.topics[t].get(k, 0) for t in names]
                ax.barh(names, values, left=left, label=k, color=color)
                left = [a + b for a, b in zip(left, values, strict=True)]
            ax.invert_yaxis()
            ax.tick_params(axis="y", labelsize=8)
            ax.legend(fontsize=8)
        else:
            _empty(ax, "no relations with a topic in this corpus")
    elif plot == "agreement":
        series = {k: [(t, a) for t, a in v if a is not None] for k, v in data.agreement.items()}
        series = {k: v for k, v in series.items() if v}
        if series:
            for (name, points), marker in zip(series.items(), ("o", "s", "^"), strict=False):
                ax.plot([t for t, _ in points], [a for _, a in points], marker=marker, label=name)
            ax.set_xlabel("threshold")
            ax.set_ylabel("Krippendorff's alpha")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        else:
            _empty(ax, "no annotator judgements stored for this corpus")
    elif plot == "gold-vs-predicted":
        kinds = sorted({k for c in data.relations.values() for k in c})[:25]
        if kinds:
            gold_counts: list[int] = [data.relations.get("gold", Counter()).get(k, 0) for k in kinds]
            pred_counts: list[int] = [data.relations.get("predicted", Counter()).get(k, 0) for k in kinds]
            y = list(range(len(kinds)))
            ax.barh([i - 0.2 for i in y], gold_counts, height=0.4, label="gold", color="#4c72b0")
            ax.barh([i + 0.2 for i in y], pred_counts, height=0.4, label="predicted", color="#dd8452")
            ax.set_yticks(y, kinds, fontsize=8)
            ax.invert_yaxis()
            ax.legend(fontsize=8)
        else:
            _empty(ax, "no relations")
    else:
        raise ApiError(f"unknown plot {plot!r}; expected one of {', '.join(PLOTS)}")
    return fig


def render(plot: str, data: CorpusData, ext: str) -> bytes:
    """One plot as ``svg`` or ``png`` bytes."""
    buf = io.BytesIO()
    figure(plot, data).savefig(buf, format=ext, dpi=110)
    return buf.getvalue()


def write_report(data: CorpusData, out_dir: Path) -> list[Path]:
    """Write every plot that applies to a corpus (:func:`applicable`) as PNG and SVG into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for plot in applicable(data):
        for ext in ("png", "svg"):
            path = out_dir / f"{data.corpus}-{plot}.{ext}"
            path.write_bytes(render(plot, data, ext))
            written.append(path)
    return written
