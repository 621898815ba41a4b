"""Options and output that several commands share, declared once.

A flag that means the same thing in every command (``--json``, ``--model``, ``--seed`` ...) is
spelt and documented here, so ``argweb train discourse --help`` and ``argweb train paraphrase
--help`` cannot drift apart. Options whose meaning depends on the command (``--data``, ``--in``)
stay with the command.
"""

# No ``from __future__ import annotations`` here: :func:`train_command` builds its parameters'
# annotations from its arguments, and Typer must see them as objects, not as strings to resolve.

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gnn.task import PredictedRelation

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ModelDir = Annotated[Path | None, typer.Option("--model", help="Model directory (default: the shipped one).")]
TrainedModelDir = Annotated[
    Path | None, typer.Option("--out", help="Model directory to write (default: <cache>/models/<model name>).")
]
Profile = Annotated[str, typer.Option("--profile", help="quick or full (the description says what differs).")]
Seed = Annotated[int, typer.Option("--seed", help="Random seed of the model and of the data splits.")]
WriteFlag = Annotated[
    bool, typer.Option("--write/--dry-run", help="Write the predicted edges (default: dry run, only count them).")
]
CorpusOpt = Annotated[str | None, typer.Option("--corpus", help="Every dialogue/document of this corpus.")]
DialogueOpt = Annotated[
    str | None, typer.Option("--dialogue", help="One dialogue/document: graph id or local id (e.g. nodeset21318).")
]
# The text-pair door of a task that also predicts over the graph (``predict relations|paraphrase --in``).
PairsIn = Annotated[
    Path | None,
    typer.Option(
        "--in",
        help='Instead of the graph: JSON lines, one {"source": ..., "target": ...} object each, each pair asked '
        "out of context (nothing is stored).",
    ),
]
PairsOut = Annotated[
    Path | None, typer.Option("--out", help="With --in: where the answers go (JSON lines; default: printed).")
]


TrainRun = Callable[[list[Path] | None, Path | None, str, int, Path | None], None]


EncoderDir = Annotated[
    Path | None,
    typer.Option(
        "--encoder",
        help="A local Hugging Face encoder directory to read the texts with, instead of the packaged MiniLM "
        "(its fingerprint goes into the model card; the model then runs on that encoder only).",
    ),
]


def train_command(
    run: TrainRun, data_help: str, default_profile: str = "full", default_seed: int = 13
) -> Callable[..., None]:
    """A ``train <model>`` command that hands ``--data`` (repeatable), ``--out``, ``--profile``, ``--seed`` and
    ``--encoder`` to ``run``.

    Every trainer takes these options; what ``--data`` reads (``data_help``) and the defaults differ.
    The command's help is ``run``'s docstring.
    """

    def command(
        data: Annotated[list[Path] | None, typer.Option("--data", help=data_help)] = None,
        out: TrainedModelDir = None,
        profile: Profile = default_profile,
        seed: Seed = default_seed,
        encoder: EncoderDir = None,
    ) -> None:
        run(data, out, profile, seed, encoder)

    command.__doc__ = run.__doc__
    return command


def show(result: Any, as_json: bool, table: Callable[[Any], None], sort_keys: bool = True) -> None:
    """Print ``result`` as indented JSON on stdout when ``as_json``, else through ``table``."""
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=sort_keys))
    else:
        table(result)


Folds = Annotated[
    int | None,
    typer.Option(
        "--cv",
        min=2,
        help="Cross-validate the training recipe instead of scoring a model: K fold models, grouped (episode, "
        "session, game, paper, interview), each scored on the fold it never saw; prints out-of-fold mean ± std.",
    ),
]


CvProfile = Annotated[str, typer.Option("--profile", help="Recipe of the fold models (with --cv).")]
CvSeed = Annotated[int, typer.Option("--seed", help="Seed of the folds and the fold models (with --cv).")]
CvEncoder = Annotated[
    Path | None,
    typer.Option(
        "--encoder",
        help="With --cv: a local Hugging Face encoder directory the fold models read the texts with, instead "
        "of the packaged MiniLM.",
    ),
]


def print_cv(title: str, section: dict[str, Any]) -> None:
    """Print one cross-validated section: its figures (mean, std, per fold) and predicted against gold labels.

    ``section`` is what a ``cross_validate_*`` function of :mod:`gnn` returns: ``figures`` (name ->
    mean, std, folds), ``labels`` (label -> gold, predicted, recall; or one such mapping per
    decoding), ``protocol`` and ``seconds``.
    """
    from rich.console import Console
    from rich.table import Table

    console = Console()
    figures = Table(title=f"{title} ({section.get('seconds', '?')} s)")
    for col in ("figure", "mean", "std", "folds"):
        figures.add_column(col, justify="left" if col in ("figure", "folds") else "right")

    def shown(x: float | None, fmt: str) -> str:
        # None: the figure is undefined on that fold (an AUC over one class), or on every fold.
        return "-" if x is None else format(x, fmt)

    for name, v in section["figures"].items():
        folds = " ".join(shown(x, ".3f") for x in v["folds"])
        figures.add_row(name, shown(v["mean"], ".4f"), shown(v["std"], ".4f"), folds)
    console.print(figures)
    print_labels(section.get("labels") or {}, "predicted against gold, pooled over the held-out folds")
    console.print(section["protocol"])


def print_labels(labels: dict[str, Any], title: str) -> None:
    """Print predicted against gold counts per label (label -> gold, predicted, recall; or one such
    mapping per decoding), as :class:`gnn.protocol.Pooled` gives them; nothing when there are none."""
    from rich.console import Console
    from rich.table import Table

    nested = all(isinstance(v, dict) and "gold" not in v for v in labels.values())
    per_decoding = labels if nested else {"": labels}
    counts = Table(title=title)
    for col in ("decoding", "label", "gold", "predicted", "recall"):
        counts.add_column(col, justify="left" if col in ("decoding", "label") else "right")
    for decoding, per in per_decoding.items():
        for label, c in per.items():
            recall = "—" if c["recall"] is None else f"{c['recall']:.3f}"
            counts.add_row(decoding or "—", label, str(c["gold"]), str(c["predicted"]), recall)
    if labels:
        Console().print(counts)


@dataclass(frozen=True)
class Presentation:
    """How a task's commands describe themselves and print an evaluation.

    Attributes:
        train_help: Help of ``model train TASK``.
        evaluate_help: Help of ``model evaluate TASK``.
        data_help: What ``--data`` reads.
        print_details: Prints the task's own details of an evaluation (:class:`gnn.task.EvalReport`),
            after the shared table.
        cv_title: Title of the cross-validation table, from its item and group counts.
    """

    train_help: str
    evaluate_help: str
    data_help: str
    print_details: Callable[[Any], None] | None = None
    cv_title: Callable[[int, int], str] | None = None


def show_predictions(title: str, found: "Sequence[PredictedRelation]", out: Path | None, as_json: bool) -> None:
    """Text-pair predictions of a task (``predict TASK --in``): JSON lines into ``out``, else printed.

    A ``threshold`` column is shown when the task's answers carry one (a task that may answer
    "not sure" states the cut each score was compared with).
    """
    from rich.console import Console
    from rich.table import Table

    with_threshold = any(p.threshold is not None for p in found)
    rows = [
        {
            "source": p.source,
            "target": p.target,
            "label": p.label,
            "score": round(p.score, 4),
            "probabilities": {k: round(v, 4) for k, v in p.probabilities.items()},
        }
        | ({"threshold": None if p.threshold is None else round(p.threshold, 4)} if with_threshold else {})
        for p in found
    ]
    if out is not None:
        out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
        Console(stderr=True).print(f"{len(rows)} {title} -> {out}")
        return

    def table(rows: list[dict[str, Any]]) -> None:
        columns = ("source", "target", "label", "score") + (("threshold",) if with_threshold else ())
        shown = Table(title=title)
        for col in columns:
            shown.add_column(col)
        for r in rows:
            cells = [r["source"], r["target"], r["label"], f"{r['score']:.4f}"]
            shown.add_row(*cells, *([str(r["threshold"])] if with_threshold else []))
        Console().print(shown)

    show(rows, as_json, table)
