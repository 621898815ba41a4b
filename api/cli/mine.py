"""``argweb mine TRANSCRIPT``: a new transcript as a dialogue with predicted discourse and argument links."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from api.cli_common import REPORTER, settings
from api.services import mine as svc
from api.services.graph import Graph
from gnn.relations.mining import MiningSummary, best_neighbours


def register(app: typer.Typer) -> None:
    """Add ``mine`` to the ``argweb`` app."""
    app.command("mine")(mine)


def _cut(text: str | None, width: int = 70) -> str:
    text = text or ""
    return text if len(text) <= width else text[: width - 1] + "…"


def print_summary(summary: MiningSummary) -> None:
    """The summary as tables: counts, predicted links, strongest support/attack, nearest units elsewhere."""
    out = Console()
    c = summary.counts
    state = "written" if summary.written else "dry run, nothing written"
    out.print(
        f"[bold]{summary.dialogue_id}[/] ({state}): {c['utterances']} utterances by {c['speakers']} speakers, "
        f"{c['discourse_links']} discourse links, {c['support']} support, {c['attack']} attack, "
        f"{c['rephrase']} rephrase",
        highlight=False,
    )
    links = Table(title="predicted links")
    for col in ("kind", "from", "to", "label", "score"):
        links.add_column(col, justify="right" if col == "score" else "left")
    for kind, rows in (("discourse", summary.discourse_links), ("argument", summary.argument_relations)):
        for r in rows:
            links.add_row(
                kind,
                f"{r.source_index}: {_cut(r.source_text, 45)}",
                f"{r.target_index}: {_cut(r.target_text, 45)}",
                r.label,
                f"{r.score:.3f}",
            )
    out.print(links)
    for kind in ("support", "attack"):
        best = summary.strongest[kind]
        if best:
            out.print(
                f'strongest {kind} ({best.score:.3f}): "{_cut(best.source_text)}" -> "{_cut(best.target_text)}"',
                highlight=False,
            )
        else:
            out.print(f"no {kind} predicted", highlight=False)
    if summary.nearest is None:
        out.print(f"nearest elsewhere: none looked up ({summary.nearest_note})", highlight=False)
        return
    near = Table(title="nearest propositions elsewhere in the graph")
    for col in ("utterance", "corpus", "nearest text", "score"):
        near.add_column(col, justify="right" if col == "score" else "left")
    for row, hit in best_neighbours(summary):
        near.add_row(f"{row.index}: {_cut(row.text, 40)}", str(hit.corpus), _cut(hit.text, 60), f"{hit.score:.3f}")
    out.print(near)


def mine(
    transcript: Annotated[
        Path, typer.Argument(help="'Speaker: text' transcript (UTF-8) or an AIF JSON map (its locutions).")
    ],
    corpus: Annotated[str, typer.Option("--corpus", help="Corpus of the new dialogue.")] = svc.DEFAULT_CORPUS,
    write: Annotated[
        bool, typer.Option("--write/--dry-run", help="Store the dialogue and its predictions (default: dry run).")
    ] = False,
    k: Annotated[int, typer.Option("--k", help="Nearest units to look up per proposition (1-20).")] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Segment a transcript into utterances, parse its discourse, predict support/attack/rephrase and find
    the nearest propositions elsewhere in the graph; --write stores the dialogue and the predictions."""
    with Graph(settings()) as graph:
        summary = svc.mine_file(graph, transcript, corpus=corpus, write=write, k=k, reporter=REPORTER)
    if as_json:
        typer.echo(json.dumps(summary.as_dict(), indent=2, ensure_ascii=False))
    else:
        print_summary(summary)
