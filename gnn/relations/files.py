"""Relation models over the corpora's own files: read, evaluate on, and predict into AIF maps and brat papers.

Data paths are recognised by format: AIF JSON maps (``*.json`` with ``nodes``/``edges``) are QT30 /
DialAM-2024, brat ``*.ann`` files Sci-Arg papers, ``*.csv`` files M-Arg. The files are read with the
format readers (:mod:`ontology.formats`) and handed to the relation models as records. Every function
takes the model directory, device and encoder it runs with (:func:`runtime` gives those its card
names); which model directory is the caller's wiring.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnn.relations.maps import map_relations
from gnn.relations.task import FORMAT_OBJECTIVE
from gnn.task import JsonDocument
from ontology.errors import ApiError, LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.aif_write import add_relations, read_map, strip_relations, write_json_atomic
from ontology.formats.brat_write import write_paper
from ontology.formats.common import FileRelation, expand
from ontology.formats.marg import load_marg
from ontology.formats.sciarg import load_sciarg
from ontology.progress import SILENT, Reporter
from ontology.records import PropositionRecord

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder
    from gnn.relations.pipeline import RelationData

MapChange = Callable[[dict[str, Any]], dict[str, Any]]
"""One rewriting of an AIF map's JSON into another valid writing of the same map."""


@dataclass(frozen=True)
class AifPrediction:
    """What ``predict aif`` wrote.

    Attributes:
        maps: Maps written.
        relations: Predicted relations per type (``RA``, ``CA``, ``MA``).
        out: The output folder.
        model: The model directory.
    """

    maps: int
    relations: dict[str, int]
    out: str
    model: str


@dataclass(frozen=True)
class SciargPrediction:
    """What ``predict sciarg`` wrote.

    Attributes:
        papers: Papers written.
        relations: Predicted relations.
        out: The output folder.
        model: The model directory.
        components: Components the tagger predicted (``None``: the papers' own components were read).
    """

    papers: int
    relations: int
    out: str
    model: str
    components: int | None = None


@dataclass
class Sources:
    """Input files by family."""

    aif: list[Path] = field(default_factory=list)
    brat: list[Path] = field(default_factory=list)
    marg: list[Path] = field(default_factory=list)


def runtime(model_dir: Path, cache_dir: Path) -> tuple[str, TextEncoder | None]:
    """The device to run ``model_dir`` on, and the text encoder when the model reads texts through one.

    The encoder is the one the card names (the packaged MiniLM unless it was trained with
    ``--encoder``), checked against the card's fingerprint.

    Raises:
        ModelError: Not a relations model, or its encoder is missing or not the one it was trained with.
    """
    from gnn.device import pick_device
    from gnn.encoder import card_encoder
    from gnn.modelcard import read_card

    device = pick_device()
    card = read_card(model_dir, "relations")
    if not any(isinstance(v, dict) and v.get("text") == "encoder" for v in card.hyperparameters.values()):
        return device, None
    return device, card_encoder(model_dir, card, cache_dir, device=device)


def classify(paths: list[Path]) -> Sources:
    """Sort the given files and directories (searched recursively) into AIF, brat and M-Arg files.

    Raises:
        LoaderError: A path does not exist, or nothing usable was found.
    """
    out = Sources()
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".json", ".ann", ".csv"))
        elif path.is_file():
            files.append(path)
        else:
            raise LoaderError(f"{path}: no such file or directory")
    for f in files:
        if f.suffix == ".json":
            out.aif.append(f)
        elif f.suffix == ".ann":
            out.brat.append(f)
        elif f.suffix == ".csv":
            out.marg.append(f)
        elif f.suffix != ".txt":
            raise LoaderError(f"{f}: not a relation data file (AIF .json, brat .ann or M-Arg .csv)")
    if not (out.aif or out.brat or out.marg):
        raise LoaderError(f"no AIF .json, brat .ann or M-Arg .csv files in {', '.join(map(str, paths))}")
    return out


def load_data(paths: list[Path], reporter: Reporter = SILENT) -> RelationData:
    """Read the relation data under ``paths`` into :class:`gnn.relations.pipeline.RelationData`."""
    from gnn.relations.argmap import maps_from_records
    from gnn.relations.marg_task import debates_from_records, pairs_from_records
    from gnn.relations.pipeline import RelationData
    from gnn.relations.sciarg_task import papers_from_records

    src = classify(paths)
    data = RelationData()
    if src.aif:
        reporter.log(f"reading {len(src.aif)} AIF map(s)")
        bundle = load_aif(src.aif)
        data.qt30 = maps_from_records(bundle.nodes, bundle.edges)
    if src.brat:
        reporter.log(f"reading {len(src.brat)} Sci-Arg paper(s)")
        bundle = load_sciarg(src.brat)
        data.sciarg = papers_from_records(bundle.nodes, bundle.edges)
    if src.marg:
        reporter.log(f"reading {len(src.marg)} M-Arg file(s)")
        bundle = load_marg(src.marg)
        data.marg = pairs_from_records(bundle.nodes, bundle.edges)
        data.marg_sentences = [n.text for n in bundle.nodes if isinstance(n, PropositionRecord) and n.text]
        data.marg_debates = debates_from_records(bundle.nodes)
    return data


def require_distinct(in_dir: Path, out_dir: Path, kept: str) -> None:
    """Refuse to write predictions over their input ``kept``: the caller's mistake (exit 2 / 4xx)."""
    if in_dir.resolve() == out_dir.resolve():
        raise ApiError(f"--out must differ from --in (the input {kept} are kept)")


def read_rewritten(files: list[Path], change: MapChange) -> list[Any]:
    """The argument maps of ``files`` after ``change`` rewrote each file's JSON (same file names)."""
    from gnn.relations.argmap import maps_from_records

    with tempfile.TemporaryDirectory(prefix="argweb-variant-") as tmp:
        paths = []
        for f in files:
            path = Path(tmp) / f.name
            path.write_text(json.dumps(change(read_map(f))), encoding="utf-8")
            paths.append(path)
        bundle = load_aif(paths)
    return maps_from_records(bundle.nodes, bundle.edges)


def evaluate_files(
    model_dir: Path,
    paths: list[Path],
    *,
    device: str,
    encoder: Any = None,
    variants: Mapping[str, MapChange] | None = None,
    reporter: Reporter = SILENT,
) -> JsonDocument:
    """Scores of the relations model in ``model_dir`` on ``paths`` with the TF-IDF + LR baseline of the same run.

    Args:
        model_dir: The relations model directory.
        paths: Relation data files or folders (:func:`classify`).
        device: The device to run the model on.
        encoder: The text encoder the model reads texts with (``None``: it reads none).
        variants: Named rewritings of an AIF map (other valid writings of it); the evaluated QT30
            maps are also scored written each of these ways. ``None`` or empty: no variants.
        reporter: Hears what is read and rewritten.
    """
    from gnn.relations.pipeline import evaluate_relations, qt30_evaluated

    data = load_data(paths, reporter)
    rewritten = None
    if variants and data.qt30:
        names = {m.name for m in qt30_evaluated(data.qt30)}
        files = [f for f in classify(paths).aif if f.stem in names]
        reporter.log(f"writing {len(files)} evaluated map(s) {len(variants)} other ways")
        rewritten = {name: read_rewritten(files, change) for name, change in variants.items()}
    return evaluate_relations(model_dir, data, device=device, encoder=encoder, variants=rewritten)


def predict_aif_files(
    model_dir: Path,
    in_dir: Path,
    out_dir: Path,
    *,
    device: str,
    encoder: Any = None,
    objective: str = FORMAT_OBJECTIVE,
    reporter: Reporter = SILENT,
) -> AifPrediction:
    """Predict RA/CA/MA for every AIF map of ``in_dir`` into ``out_dir`` (same file names).

    Each map is first reduced to the DialAM test-input form (YA/RA/CA/MA dropped); every kept node,
    edge and locution is written back unchanged, followed by the predicted S-nodes and edges. All
    maps are read and predicted before the first file is written.

    Args:
        model_dir: The relations model directory.
        in_dir: Folder of AIF maps.
        out_dir: Output folder (must differ from ``in_dir``).
        device: The device to run the model on.
        encoder: The text encoder the model reads texts with (``None``: it reads none).
        objective: The model's decision objective.
        reporter: Hears what is predicted.

    Raises:
        LoaderError: A malformed map (named). ApiError: ``in_dir`` equals ``out_dir``.
    """
    from gnn.relations.qt30_run import load_qt30

    require_distinct(in_dir, out_dir, "maps")
    files = expand([in_dir], "*.json")
    qt = load_qt30(model_dir, device=device, encoder=encoder)
    stripped = [(f, strip_relations(read_map(f))) for f in files]
    reporter.log(f"predicting relations for {len(stripped)} map(s) with {model_dir} ({objective})")
    predicted = map_relations(qt, [(f.stem, data) for f, data in stripped], objective, progress=True)
    outputs = [(f, add_relations(data, rels, str(f))) for (f, data), rels in zip(stripped, predicted, strict=True)]
    for f, data in outputs:
        write_json_atomic(out_dir / f.relative_to(in_dir), data)
    counts = {t: sum(rel.type == t for rels in predicted for rel in rels) for t in ("RA", "CA", "MA")}
    return AifPrediction(len(outputs), counts, str(out_dir), str(model_dir))


def predict_sciarg_files(
    model_dir: Path,
    in_dir: Path,
    out_dir: Path,
    *,
    device: str,
    encoder: Any = None,
    reporter: Reporter = SILENT,
) -> SciargPrediction:
    """Predict relations for every brat paper of ``in_dir``: same ``T`` lines, predicted ``R`` lines, ``.txt`` copied.

    Args:
        model_dir: The relations model directory.
        in_dir: Folder of brat ``.ann`` + ``.txt`` papers.
        out_dir: Output folder (must differ from ``in_dir``).
        device: The device to run the model on.
        encoder: The text encoder the model reads texts with (``None``: it reads none).
        reporter: Hears what is predicted.

    Raises:
        LoaderError: A malformed paper (named). ApiError: ``in_dir`` equals ``out_dir``.
    """
    from gnn.relations.sciarg_task import load_sciarg as load_model
    from gnn.relations.sciarg_task import papers_from_records

    require_distinct(in_dir, out_dir, "papers")
    anns = expand([in_dir], "*.ann")
    sm = load_model(model_dir, device=device, encoder=encoder)
    bundle = load_sciarg(anns)
    papers = {p.name: p for p in papers_from_records(bundle.nodes, bundle.edges)}
    ordered = [papers[a.stem] for a in anns if a.stem in papers]
    reporter.log(f"predicting relations for {len(ordered)} paper(s) with {model_dir}")
    predicted = dict(zip([p.name for p in ordered], sm.predict(ordered), strict=True))
    total = 0
    for ann in anns:
        rels = [FileRelation(a, b, lab, s) for a, b, lab, s in predicted.get(ann.stem, [])]
        total += len(rels)
        write_paper(ann, out_dir / ann.parent.relative_to(in_dir), rels)
    return SciargPrediction(len(anns), total, str(out_dir), str(model_dir))
