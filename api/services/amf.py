"""argweb's models as modules of the open Argument Mining Framework (oAMF): xAIF in, xAIF out.

Each task takes an xAIF document and returns it with argweb's predictions added (what is added
and how it is listed: :mod:`ontology.formats.amf`, the pure half of this work):

* ``turns`` / ``segments``: locutions from the document's text and propositions where absent
  (rule-based, no model);
* ``ari``: RA / CA / MA nodes between the I-nodes, predicted by the QT30 relation model through the
  one AIF prediction path (:func:`gnn.relations.maps.map_relations`, as ``argweb predict
  aif``): the model reads the map in DialAM's test-input form (YA, RA, CA, MA left out), and the
  relations go into the map as it came;
* ``discourse``: TA nodes between L-nodes, the discourse parser's links, each named by its SDRT sense.

This module is the wiring: the task names and their module files, the run ids (one rule with the
graph's prediction runs), the prediction limits, and the models. Nothing is written to the graph;
the models are loaded on first use and kept.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path

from api.services.predict import Limits, running_slot
from api.settings import Settings
from ontology.aiftext import split_speaker
from ontology.errors import ApiError, LoaderError
from ontology.formats import amf as xaif
from ontology.formats.aif import AifMap
from ontology.formats.aif_write import strip_relations
from ontology.formats.amf import SECTION, Producer, XaifDocument
from ontology.formats.transcript import SEGMENTER

__all__ = ["MODULES", "SECTION", "TASKS", "check_task", "metadata", "readme", "run_task"]

TASKS = ("turns", "segments", "ari", "discourse")
MODULES = Path(__file__).resolve().parent.parent / "amf"


def check_task(task: str) -> str:
    """``task`` if it is one of :data:`TASKS`.

    Raises:
        ApiError: Another name.
    """
    if task not in TASKS:
        raise ApiError(f"unknown oAMF task {task!r}; argweb's modules are {', '.join(TASKS)}")
    return task


def readme(task: str) -> str:
    """The README of the module of ``task`` (what ``GET /amf/{task}`` serves)."""
    return (MODULES / check_task(task) / "README.md").read_text(encoding="utf-8")


def metadata(task: str) -> str:
    """The oAMF ``metadata.yaml`` of the module of ``task``."""
    return (MODULES / check_task(task) / "metadata.yaml").read_text(encoding="utf-8")


def _run_id(producer: Producer, aif: AifMap) -> str:
    from api.services.predictions import PredictionJob

    digest = hashlib.sha256(json.dumps(aif, sort_keys=True, default=str).encode()).hexdigest()[:16]
    parts = (f"amf-{producer.task}", producer.model, producer.version, digest)
    return PredictionJob(producer.task, producer.model, producer.version, parts).run().run_id


def segment_task(doc: XaifDocument, task: str) -> XaifDocument:
    """``turns`` / ``segments``: locutions from the text when the map has none, propositions where absent."""
    rule = "speaker-turns" if task == "turns" else SEGMENTER
    producer = Producer(task, rule, version("argweb") if task == "turns" else version("pysbd"))
    return xaif.add_units(doc, task, producer, _run_id)


def ari_task(doc: XaifDocument, settings: Settings) -> XaifDocument:
    """``ari``: RA / CA / MA between the I-nodes, as ``argweb predict aif`` predicts them."""
    from api.services import live
    from gnn.relations.maps import map_relations
    from gnn.relations.task import FORMAT_OBJECTIVE

    out, aif = xaif.prepared(doc, "ari")
    loaded = live.relation_model(settings)
    producer = Producer("ari", loaded.name, loaded.version)
    run_id = _run_id(producer, aif)
    try:
        (relations,) = map_relations(loaded.model, [("xAIF document", strip_relations(aif))], FORMAT_OBJECTIVE)
    except LoaderError as e:
        raise ApiError(str(e)) from e
    return xaif.add_arguments(out, aif, relations, producer, run_id)


def discourse_task(doc: XaifDocument, settings: Settings) -> XaifDocument:
    """``discourse``: the discourse parser's links between the L-nodes, as TA nodes named by their sense."""
    from api.services import live

    out, aif = xaif.prepared(doc, "discourse")
    locutions = xaif.locution_nodes(aif)  # before the model loads: a map without L-nodes is refused at once
    loaded = live.discourse_model(settings)
    producer = Producer("discourse", loaded.name, loaded.version)
    run_id = _run_id(producer, aif)
    speakers = xaif.speakers(aif)
    texts = [split_speaker(str(n.get("text") or ""))[1] for n in locutions]
    links = live.discourse_links(settings, texts, [speakers[str(n["nodeID"])] for n in locutions])
    return xaif.add_discourse_links(out, aif, links, producer, run_id)


def run_task(task: str, doc: XaifDocument, settings: Settings, limits: Limits | None = None) -> XaifDocument:
    """Run one oAMF task on an xAIF document (see the module docstring); nothing is stored.

    Args:
        task: One of :data:`TASKS`.
        doc: The xAIF document (not changed; a changed copy is returned).
        settings: Where the models are.
        limits: The prediction limits (size, requests at once); default: the settings'.

    Raises:
        ApiError: Unknown task, a malformed document (the record named), or beyond the limits.
        BusyError: As many model requests running as the limits allow (503, retry).
    """
    check_task(task)
    limits = limits or Limits(settings.predict_max_utterances, settings.predict_max_chars, settings.predict_max_running)
    # Refused before any model runs.
    xaif.check_size(doc, 10 * limits.utterances, 2 * limits.chars)
    with running_slot(limits):
        if task in ("turns", "segments"):
            return segment_task(doc, task)
        if task == "ari":
            return ari_task(doc, settings)
        return discourse_task(doc, settings)
