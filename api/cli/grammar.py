"""The ``argweb`` command tree: nouns then verbs, built from the commands the CLI modules register.

Every CLI module registers its commands under the names they have always had (``ingest qt30``,
``train discourse``, ``sparql``, ...) on a staging app. :func:`build` places each of those command
functions in the grammar (``corpus ingest qt30``, ``model train discourse``, ``rdf query``, ...)
and registers it a second time, hidden, under its old name: an alias is the same function, so
flags and output are the same. A command a module registers that the grammar does not place is an
error at build time, so nothing gets lost from the tree.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from api.cli.options import CorpusOpt, DialogueOpt, JsonFlag, ModelDir, WriteFlag, show
from api.cli_common import ArgwebGroup, settings

SchemeOpt = Annotated[
    str | None,
    typer.Option("--scheme", help="Label spelling of the file: molweni or stac (default: detected from its labels)."),
]

# Group name -> its help (one place, so a group's help no longer depends on which module came first).
GROUPS: dict[str, str] = {
    "corpus": "The corpora in the graph: load, remove, count, fetch, plot and measure agreement.",
    "corpus ingest": "Load corpus files into the graph (one command per corpus and per argument-map format).",
    "model": "The models of each task: train, evaluate and list the registered ones.",
    "model train": "Train a model and write a model directory with its card (--out: where).",
    "model evaluate": "Score a model against gold data (a corpus file, or cross-validation with --cv).",
    "predict": "Predict with a registered model: on graph dialogues (--corpus/--dialogue; --write stores "
    "predicted edges beside the gold ones) or on a file (--in/--out, written in its own format).",
    "runs": "Prediction runs: model output stored beside the gold annotations, with model, version and run id.",
    "rdf": "The RDF view of the graph: export it, load the SPARQL store, query it.",
    "db": "The embedded Neo4j: start, stop, status.",
    "features": "Compute features of graph units.",
}

# Where each registered command goes: (old path) -> (new path). Old paths are the names the modules
# register; the old name stays as a hidden alias unless it is the same as the new one.
PLACES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("stats",): ("corpus", "stats"),
    ("delete",): ("corpus", "delete"),
    ("fetch",): ("corpus", "fetch"),
    ("report",): ("corpus", "report"),
    ("agreement",): ("corpus", "agreement"),
    ("export", "aif"): ("corpus", "export"),
    ("export", "rdf"): ("rdf", "export"),
    ("rdf", "load"): ("rdf", "load"),
    ("sparql",): ("rdf", "query"),
    ("predictions", "runs"): ("runs", "list"),
    ("parse", "discourse"): ("predict", "discourse"),
}

# Groups whose every command keeps its own name under a new group: old group -> new group.
MOVED_GROUPS: dict[str, tuple[str, ...]] = {
    "ingest": ("corpus", "ingest"),
    "train": ("model", "train"),
    "evaluate": ("model", "evaluate"),
}

# Top-level commands that stay where they are.
TOP_LEVEL = ("run", "serve", "search", "embed", "link", "mine", "questions")


def _commands(app: typer.Typer, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], typer.models.CommandInfo]:
    """Every command registered on ``app`` (recursively), by its path of names."""
    found: dict[tuple[str, ...], typer.models.CommandInfo] = {}
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        found[(*prefix, name)] = info
    for sub in app.registered_groups:
        if sub.typer_instance is not None and isinstance(sub.name, str):
            found |= _commands(sub.typer_instance, (*prefix, sub.name))
    return found


# The help of the old groups kept as aliases.
ALIAS_GROUPS: dict[str, str] = {
    "ingest": "Load corpus files into the graph (alias of `argweb corpus ingest`).",
    "train": "Train a model and write a model directory with its card (alias of `argweb model train`).",
    "evaluate": "Score a model against gold data (alias of `argweb model evaluate`).",
    "parse": "Predict the relations of a file, written in its own format (alias of `argweb predict`).",
    "export": "Export the graph: rdf (alias of `argweb rdf export`), aif (alias of `argweb corpus export`).",
    "predictions": "Prediction runs (alias of `argweb runs`).",
}


class Tree:
    """The command tree under construction: groups by path, commands added by path."""

    def __init__(self, root: typer.Typer) -> None:
        self.root = root
        self.groups: dict[tuple[str, ...], typer.Typer] = {(): root}

    def group(self, path: tuple[str, ...]) -> typer.Typer:
        """The group at ``path``, created when new (an old group as a hidden alias)."""
        if path not in self.groups:
            key = " ".join(path)
            alias = key in ALIAS_GROUPS
            sub = typer.Typer(help=ALIAS_GROUPS[key] if alias else GROUPS[key], no_args_is_help=True)
            self.group(path[:-1]).add_typer(sub, name=path[-1], hidden=alias)
            self.groups[path] = sub
        return self.groups[path]

    def add(self, path: tuple[str, ...], info: typer.models.CommandInfo, *, hidden: bool = False) -> None:
        """Register the command of ``info`` (its function, help and settings) at ``path``."""
        placed = copy.copy(info)
        placed.name = path[-1]
        placed.hidden = hidden
        self.group(path[:-1]).registered_commands.append(placed)

    def command(self, path: tuple[str, ...], function: Callable[..., Any]) -> None:
        """Register ``function`` as the command at ``path``."""
        self.group(path[:-1]).command(path[-1])(function)


def _placed(old: tuple[str, ...]) -> tuple[str, ...]:
    """Where the grammar puts the command registered at ``old``."""
    if old in PLACES:
        return PLACES[old]
    if old[0] in MOVED_GROUPS:
        return (*MOVED_GROUPS[old[0]], *old[1:])
    if old[0] in ("predict", "db", "features") or old in {(name,) for name in TOP_LEVEL}:
        return old
    raise RuntimeError(f"argweb {' '.join(old)}: the command grammar (api/cli/grammar.py) does not place it")


def build(staging: typer.Typer) -> tuple[typer.Typer, dict[str, str]]:
    """The ``argweb`` app: every command of ``staging`` in the grammar, plus its old name as a hidden alias.

    Returns:
        The app and the aliases (old command line -> new one).
    """
    from api.cli import predictions

    app = typer.Typer(cls=ArgwebGroup, help="argweb: the Argument Web knowledge backend.", no_args_is_help=True)
    tree = Tree(app)
    registered = _commands(staging)
    placed = {old: _placed(old) for old in registered}  # first: a command the grammar misses stops here
    # The grammar's order: the nouns first, then the commands that stand alone.
    for path in (("corpus",), ("corpus", "ingest"), ("model",), ("model", "train"), ("model", "evaluate")):
        tree.group(path)
    tree.command(("model", "list"), list_models)
    for path in (("predict",), ("runs",), ("rdf",), ("db",)):
        tree.group(path)
    parse_file = registered[("parse", "discourse")].callback
    on_graph = registered[("predict", "discourse")].callback
    assert parse_file is not None and on_graph is not None
    tree.command(("predict", "discourse"), discourse_command(parse_file, on_graph))
    for old, info in registered.items():
        if placed[old] != ("predict", "discourse"):  # both forms are the one command above
            tree.add(placed[old], info)
    tree.command(("runs", "delete"), predictions.delete_runs)
    # The old names: the same functions registered again, hidden from the top-level list.
    aliases: dict[str, str] = {}
    for old, info in registered.items():
        new = placed[old]
        if new != old:
            tree.add(old, info, hidden=len(old) == 1)
            aliases[" ".join(old)] = " ".join(new)
    aliases["delete predictions --model NAME"] = "runs delete --model NAME"
    app.info.epilog = "Aliases (older names, still accepted): " + "; ".join(
        f"{old} = {new}" for old, new in _top_level_aliases(aliases).items()
    )
    return app, aliases


def _top_level_aliases(aliases: dict[str, str]) -> dict[str, str]:
    """The aliases folded by group (``train *`` = ``model train *``) for the one-line epilog."""
    folded: dict[str, str] = {}
    for old, new in aliases.items():
        head = old.split()[0]
        if head in MOVED_GROUPS:
            folded[f"{head} ..."] = " ".join(MOVED_GROUPS[head]) + " ..."
        else:
            folded[old] = new
    return folded


def discourse_command(parse_file: Callable[..., None], on_graph: Callable[..., None]) -> Callable[..., None]:
    """``predict discourse``: on graph dialogues (``--corpus``/``--dialogue``) or on a file (``--in``/``--out``)."""

    def predict_discourse(
        corpus: CorpusOpt = None,
        dialogue: DialogueOpt = None,
        write: WriteFlag = False,
        source: Annotated[
            Path | None, typer.Option("--in", help="Molweni/STAC JSON file of dialogues (file form).")
        ] = None,
        out: Annotated[Path | None, typer.Option("--out", help="Where --in's predictions go (same format).")] = None,
        model: ModelDir = None,
        scheme: SchemeOpt = None,
        as_json: JsonFlag = False,
    ) -> None:
        """Parse dialogues of the graph (--corpus/--dialogue, --write to store) or of a file (--in/--out).

        --write stores graph links as predicted relations (gold untouched); a file comes back as it spells labels.
        """
        if source is not None or out is not None:
            if source is None or out is None:
                raise typer.BadParameter("the file form needs both --in and --out")
            if corpus or dialogue or write or as_json:
                raise typer.BadParameter("--corpus, --dialogue, --write and --json go with the graph form, not --in")
            parse_file(source=source, out=out, model=model, scheme=scheme)
            return
        on_graph(corpus=corpus, dialogue=dialogue, write=write, model=model, scheme=scheme, as_json=as_json)

    return predict_discourse


def list_models(as_json: JsonFlag = False) -> None:
    """Each task's shipped model (its name, version and folder), then the models trained into the models folder."""
    from gnn.registry import registered_models

    found = registered_models(settings().models_dir)
    rows = [
        {
            "task": m.card.task,
            "model": m.card.model,
            "version": m.card.version,
            "shipped": m.shipped,
            "path": str(m.path),
        }
        for m in found
    ]

    def table(rows: list[dict[str, Any]]) -> None:
        out = Table(title="models")
        for col in ("task", "model", "version", "shipped", "path"):
            out.add_column(col)
        for row in rows:
            out.add_row(row["task"], row["model"], row["version"], "yes" if row["shipped"] else "", row["path"])
        Console().print(out)

    show(rows, as_json, table)
