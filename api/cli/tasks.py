"""``model train TASK``, ``model evaluate TASK`` and ``predict TASK`` for every task on the contract.

The commands are built from the task registry (:func:`gnn.task.contract_tasks`) when the command
line is assembled: a task registered before that gets its three commands with no other edit. What
a task shows beyond the shared table (the pair task's challenge set) is a :class:`Presentation`.
"""

# No ``from __future__ import annotations``: the commands' annotations are built here and Typer
# must see them as objects.

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from api.cli import components, pairs, paraphrase
from api.cli.options import (
    CvEncoder,
    CvSeed,
    EncoderDir,
    Folds,
    JsonFlag,
    ModelDir,
    Presentation,
    Seed,
    TrainedModelDir,
    print_cv,
    print_labels,
    show,
    show_predictions,
)
from api.cli_common import REPORTER, console, group, settings
from api.services import tasks as service
from gnn.task import EvalReport, contract_tasks, get_task

PRESENTATIONS: dict[str, Presentation] = {
    "pairs": pairs.PAIRS,
    "paraphrase": paraphrase.PARAPHRASE,
    "components": components.COMPONENTS,
}
"""Tasks that describe their commands and details in their own words (the others are read from the task)."""

OWN_COMMANDS = frozenset({"discourse"})
"""Tasks on the contract whose commands keep flags of their own (``--scheme``, the graph form of
``predict discourse``): their CLI module registers them (:mod:`api.cli.discourse`)."""


def _presentation(name: str) -> Presentation:
    """The task's presentation (:data:`PRESENTATIONS`), else one read from the task itself."""
    if name in PRESENTATIONS:
        return PRESENTATIONS[name]
    task = get_task(name)
    about = (type(task).__doc__ or f"The {name} task.").strip()
    return Presentation(
        f"Train the {name} model. {about}",
        f"Score a {name} model on labelled data, or cross-validate its recipe (--cv K).",
        f"{task.reads} files or directories (default: <corpora>/{'/'.join(task.default_data)}).",
    )


def _print_evaluation(report: EvalReport, shown: Presentation) -> None:
    """The shared table of an evaluation (figures, predicted against gold), then the task's own."""
    table = Table(title=f"{report.task} model {report.model}")
    for col in ("figure", "value"):
        table.add_column(col)
    for name, value in report.scores.items():
        table.add_row(name, f"{value:.4f}")
    Console().print(table)
    print_labels(report.document()["labels"], "predicted against gold")
    if shown.print_details is not None:
        shown.print_details(report)


def _train_command(name: str, shown: Presentation) -> Callable[..., None]:
    task = get_task(name)
    default_profile = task.recipes.default
    profile_help = f"Recipe: {', '.join(sorted(task.recipes.profiles))} (default {default_profile})."

    def command(
        data: Annotated[list[Path] | None, typer.Option("--data", help=shown.data_help)] = None,
        out: TrainedModelDir = None,
        profile: Annotated[str, typer.Option("--profile", help=profile_help)] = default_profile,
        seed: Seed = 13,
        encoder: EncoderDir = None,
    ) -> None:
        cfg = settings()
        target = out or cfg.models_dir / name
        report = service.train(
            cfg, name, data, target, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER
        )
        console.print(report.summary)

    command.__doc__ = shown.train_help
    return command


def _evaluate_command(name: str, shown: Presentation) -> Callable[..., None]:
    task = get_task(name)
    default_profile = task.recipes.default

    def command(
        data: Annotated[list[Path] | None, typer.Option("--data", help=shown.data_help)] = None,
        model: ModelDir = None,
        as_json: JsonFlag = False,
        cv: Folds = None,
        profile: Annotated[
            str, typer.Option("--profile", help="Recipe of the fold models (with --cv).")
        ] = default_profile,
        seed: CvSeed = 13,
        encoder: CvEncoder = None,
    ) -> None:
        cfg = settings()
        if cv is not None:
            result = service.cross_validate(
                cfg, name, data, cv, profile=profile, seed=seed, encoder_dir=encoder, reporter=REPORTER
            )
            title = (shown.cv_title or (lambda n, g: f"{name}, {n} items in {g} groups"))(result.items, result.groups)
            show(result.document(), as_json, lambda r: print_cv(title, r))
            return
        report = service.evaluate(cfg, name, model, data, reporter=REPORTER)
        show(report.document(), as_json, lambda _r: _print_evaluation(report, shown))

    command.__doc__ = shown.evaluate_help
    return command


def predict_file(name: str, source: Path, out: Path | None, model: Path | None, as_json: bool) -> None:
    """``predict TASK --in FILE``: the task's model on the records of ``source``, printed or written to ``out``."""
    cfg = settings()
    found = service.predict(cfg, name, get_task(name).read_inputs(source), model)
    show_predictions(f"{name} predictions", found, out, as_json)


def _predict_command(name: str) -> Callable[..., None]:
    def command(
        source: Annotated[
            Path, typer.Option("--in", help='JSON lines, one {"source": ..., "target": ...} object each.')
        ],
        out: Annotated[
            Path | None, typer.Option("--out", help="Where the predictions go (JSON lines; default: printed).")
        ] = None,
        model: ModelDir = None,
        as_json: JsonFlag = False,
    ) -> None:
        predict_file(name, source, out, model, as_json)

    command.__doc__ = f"Predict with a {name} model on the records of a file (--in), printed or written (--out)."
    return command


def _add(sub: typer.Typer, name: str, command: Callable[..., None]) -> None:
    """Add ``command`` as ``name`` unless a module gave the task a command of that name with its own flags."""
    if not any(registered.name == name for registered in sub.registered_commands):
        sub.command(name)(command)


def register(app: typer.Typer) -> None:
    """Add ``train TASK``, ``evaluate TASK`` and ``predict TASK`` for every task on the contract.

    A task whose commands keep flags of their own (``argweb predict relations --corpus``, registered
    by :mod:`api.cli.relations` before this module) keeps them.
    """
    for name in contract_tasks():
        if name in OWN_COMMANDS:
            continue
        shown = _presentation(name)
        _add(group(app, "train", "Train a model."), name, _train_command(name, shown))
        _add(
            group(app, "evaluate", "Score models or predictions against gold data."),
            name,
            _evaluate_command(name, shown),
        )
        _add(group(app, "predict", "Predict with a registered model."), name, _predict_command(name))
