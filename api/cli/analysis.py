"""``argweb agreement`` and ``argweb features audio``: measures computed from the graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import JsonFlag, show
from api.cli_common import REPORTER, console, group, settings
from api.services.graph import Graph


def register(app: typer.Typer) -> None:
    """Add ``agreement`` and ``features audio`` to the ``argweb`` app."""
    app.command("agreement")(agreement)
    group(app, "features", "Compute features of graph units.").command("audio")(features_audio)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def print_agreement(result: dict[str, Any]) -> None:
    """M-Arg: one line per filter of Table 2; other corpora: one line per measure."""
    out = Console()
    if result["corpus"] == "m-arg":
        table = Table(title=f"M-Arg agreement (tainted judgements {'in' if result['include_tainted'] else 'out'})")
        for col in ("min trust", "min conf.", "Krippendorff's alpha", "annotators", "annotations", "support", "attack"):
            table.add_column(col, justify="right")
        for row in [result["overall"], *result["filters"]]:
            table.add_row(
                "-" if row["min_trust"] is None else str(row["min_trust"]),
                "-" if row["min_confidence"] is None else str(row["min_confidence"]),
                _fmt(row["alpha"]),
                str(row["annotators"]),
                str(row["annotations"]),
                str(row["labels"].get("Support", 0)),
                str(row["labels"].get("Attack", 0)),
            )
        out.print(table)
        return
    table = Table(title=f"{result['corpus']} agreement")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if key != "corpus":
            table.add_row(key, _fmt(value) if isinstance(value, float) or value is None else str(value))
    out.print(table)


def agreement(
    corpus: Annotated[str, typer.Argument(help="Corpus id: m-arg or contextdep (any corpus with judgements).")],
    min_trust: Annotated[
        float | None,
        typer.Option("--min-trust", min=0.0, max=1.0, help="Keep judgements of annotators with trust >= X."),
    ] = None,
    min_confidence: Annotated[
        float | None, typer.Option("--min-confidence", help="Keep judgements with self-confidence >= Y.")
    ] = None,
    include_tainted: Annotated[
        bool, typer.Option("--include-tainted", help="Keep judgements marked tainted (M-Arg).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Krippendorff's alpha of the stored judgements (M-Arg: Table-2 grid of trust/confidence filters)."""
    from api.services.agreement import agreement as compute
    from gnn.agreement import JudgementFilter

    with Graph(settings()) as graph:
        result = compute(graph, corpus, JudgementFilter(min_trust, min_confidence, include_tainted))
    show(result.as_dict(), as_json, print_agreement)


def features_audio(
    audio_dir: Annotated[Path, typer.Option("--audio-dir", help="Folder with the recordings of the debate parts.")],
    corpus: Annotated[str, typer.Option(help="Corpus whose timed utterances to process.")] = "m-arg",
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Feature cache (default <data dir>/features/audio/<corpus>).")
    ] = None,
    buffer: Annotated[float, typer.Option(help="Seconds added before and after each utterance.")] = 2.0,
) -> None:
    """MFCC, spectral and chroma features per utterance (M-Arg paper), cached as one .npz per part.

    Utterances are the corpus's locutions with start/end times; each debate part's recording is
    looked up in AUDIO_DIR by its official name (us_election_2020_..._part1.mp3) or its part id
    (00.wav). Re-running skips utterances already cached.
    """
    # Imported here: the service pulls in numpy-heavy feature code only this command needs.
    from api.services.features import audio_features

    with Graph(settings()) as graph:
        done = audio_features(graph, corpus, audio_dir, cache_dir=cache_dir, buffer=buffer, reporter=REPORTER)
    report = done.report
    console.print(
        f"{report.computed} utterances computed, {report.cached} already cached, {report.files} recordings "
        f"-> {done.cache_dir} ({report.seconds:.1f}s, {report.per_second:.1f} utterances/s)"
    )
