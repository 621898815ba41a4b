"""Live mining: a new transcript becomes a dialogue of the graph with predicted discourse and argument links.

``argweb mine`` and ``POST /predict`` (tasks ``transcript`` and ``dialogue``) share this pipeline:

1. the transcript is read and segmented (:mod:`ontology.formats.transcript`) into a dialogue
   bundle -- locutions, propositions, illocutions: gold structure, because it is the input;
2. the shipped discourse parser links the utterances (who answers whom, with an SDRT sense);
3. the relation model (QT30) predicts support / attack / rephrase between the propositions, given
   the parser's links as the transitions a QT30 map would have annotated;
4. each proposition is looked up by meaning in the rest of the graph (the semantic layer).

With ``write`` the new locutions and propositions are embedded too, so later searches find them.

Without ``write`` nothing is stored (a dry run). With ``write`` the dialogue is ingested like a
corpus (corpus marker, all-or-nothing, idempotent) and the links are written as two prediction
runs (origin ``predicted``, model, version, score, run id). Run ids derive from the dialogue and the
model version, so mining the same transcript again writes nothing new.

Models are loaded on first use and kept for the life of the process (the API answers many
requests with one load).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from api.services import predict as hook
from api.services.aif import refuse_gold
from api.services.graph import Graph
from api.services.live import LoadedModel, analyse, models
from api.services.predictions import PredictionJob
from gnn.relations.mining import DISCOURSE_DOMAIN, Analysis, DialogueUnits, MiningSummary, NeighbourHit, summarise
from gnn.relations.task import GRAPH_OBJECTIVE
from graphstore.scopes import stored_dialogue
from ontology.errors import ApiError, NotFoundError
from ontology.formats.transcript import (
    SEGMENTER,
    TranscriptDialogue,
    TranscriptLimits,
    Utterance,
    read_utterances,
    transcript_dialogue,
    utterances_of,
)
from ontology.progress import SILENT, Reporter
from ontology.records import PredictionRun
from ontology.terms import Label

DEFAULT_CORPUS = "mined"


def jobs_for(dialogue_id: str, models: tuple[LoadedModel, LoadedModel]) -> list[PredictionJob]:
    """The discourse and the relations job of a mined dialogue: run ids from dialogue, model and version only."""
    parser, relator = models
    found: tuple[tuple[LoadedModel, str, dict[str, str]], ...] = (
        (parser, "discourse", {"domain": DISCOURSE_DOMAIN}),
        (relator, "relations", {"objective": GRAPH_OBJECTIVE, "transitions": "discourse"}),
    )
    return [
        PredictionJob(
            task,
            m.name,
            m.version,
            (f"mine-{task}", dialogue_id, m.name, m.version, task),
            {"dialogue": dialogue_id, **kw},
        )
        for m, task, kw in found
    ]


def nearest_elsewhere(
    graph: Graph, texts: Sequence[str], *, k: int, corpus: str
) -> tuple[list[list[NeighbourHit]] | None, str | None]:
    """For each text, the ``k`` stored propositions of other corpora nearest in meaning (the semantic layer).

    Returns:
        The hits per text (``id``, ``corpus``, ``discourse``, ``text``, ``score``), or None and the
        reason when nothing can be looked up (nothing embedded yet): never made-up neighbours.
    """
    from api.services import semantic

    try:
        found = semantic.nearest(
            graph, graph.settings, list(texts), k=k, exclude_corpus=corpus, labels=[Label.Proposition]
        )
    except NotFoundError as e:
        return None, str(e)
    return [[NeighbourHit.of(h) for h in row] for row in found], None


def prepare(utterances: list[Utterance], corpus: str, name: str, source: str) -> TranscriptDialogue:
    """The dialogue bundle of ``utterances`` and the ids of its locutions and propositions.

    Raises:
        ApiError: ``corpus`` names a gold corpus (mined dialogues never mix with annotation).
        LoaderError: No utterances or an invalid field.
    """
    refuse_gold(corpus, DEFAULT_CORPUS)
    return transcript_dialogue(utterances, corpus, name, source)


def write_predictions(
    graph: Graph, dialogue_id: str, analysis: Analysis, locutions: Sequence[str], units: Sequence[str], *, write: bool
) -> list[PredictionRun]:
    """The two prediction runs of an analysis; with ``write``, written: discourse links between
    ``locutions``, argument links between ``units``, each through the one prediction job (a run
    complete in the graph already is not written again; scores rounded). Their ids are the same
    either way: they depend only on dialogue, model and version."""
    jobs = jobs_for(dialogue_id, models(graph.settings))
    if not write:
        return [job.run() for job in jobs]
    whats = ("predicted discourse links", "predicted argument relations")
    rows_of = analysis.relations(locutions, units)
    return [job.write(graph, rows, what, SILENT)[0] for job, rows, what in zip(jobs, rows_of, whats, strict=True)]


def mine_utterances(
    graph: Graph,
    utterances: list[Utterance],
    *,
    corpus: str = DEFAULT_CORPUS,
    name: str = "transcript",
    source: str = "",
    write: bool = False,
    k: int = 3,
    reporter: Reporter = SILENT,
) -> MiningSummary:
    """Mine a dialogue given as utterances: predict, look up neighbours, write when asked; the summary.

    Raises:
        ApiError: A gold corpus named, or ``k`` out of range.
        LoaderError: Invalid utterances (nothing written).
        PredictionError / GraphStoreError: The write failed (nothing of the failed step kept).
    """
    from api.services.corpora import write_bundle

    if not 1 <= k <= 20:
        raise ApiError(f"k must lie in 1..20, not {k}")
    mined = prepare(utterances, corpus, name, source)
    texts, speakers = [u.text for u in utterances], [u.speaker for u in utterances]
    # Each utterance is its own argument unit (one proposition per locution).
    analysis = analyse(graph.settings, texts, speakers, texts, [[i] for i in range(len(texts))])
    neighbours, why = nearest_elsewhere(graph, texts, k=k, corpus=corpus)
    if write:
        write_bundle(graph.store(), mined.bundle, reporter)
    runs = write_predictions(graph, mined.dialogue_id, analysis, mined.locutions, mined.propositions, write=write)
    if write:
        # Embedded at once, the new propositions are found by meaning from the rest of the graph.
        from api.services import semantic

        semantic.embed_graph(graph, graph.settings, corpus=corpus)
        reporter.log(
            f"{mined.dialogue_id}: dialogue and predictions written (runs {', '.join(r.run_id for r in runs)})"
        )
    units = DialogueUnits(mined.dialogue_id, corpus, speakers, texts, mined.locutions, mined.propositions)
    return summarise(
        units, analysis, runs=runs, neighbours=neighbours, neighbours_note=why, written=write, segmenter=SEGMENTER
    )


def mine_file(
    graph: Graph,
    path: Path,
    *,
    corpus: str = DEFAULT_CORPUS,
    write: bool = False,
    k: int = 3,
    reporter: Reporter = SILENT,
) -> MiningSummary:
    """``argweb mine TRANSCRIPT``: read and segment a transcript (or AIF locutions), then mine it.

    The file is read and validated before the database is touched, within the ``mine_max_*``
    settings: its size before it is read, its turns before they are segmented.

    Raises:
        NotFoundError: No such file.
        LoaderError: The file is over a limit, not UTF-8 or malformed (named with its line); nothing
            written.
    """
    if not path.is_file():
        raise NotFoundError(f"{path}: no such file")
    cfg = graph.settings
    limits = TranscriptLimits(cfg.mine_max_bytes, cfg.mine_max_turns, cfg.mine_max_turn_chars, cfg.mine_max_utterances)
    utterances = read_utterances(path, limits)
    return mine_utterances(
        graph, utterances, corpus=corpus, name=path.stem, source=path.name, write=write, k=k, reporter=reporter
    )


# -- the live-mining doors of POST /predict ------------------------------------------------------------


def _response(task: str, summary: MiningSummary) -> hook.PredictionAnswer:
    """The ``/predict`` answer of a dialogue-level task: every predicted edge plus the summary."""
    runs = summary.runs
    edges = [
        hook.PredictedEdge(
            e.source, e.target, e.label, e.score, kind, e.model, e.model_version, e.run_id, e.source_text, e.target_text
        )
        for kind, links in (("discourse", summary.discourse_links), ("argument", summary.argument_relations))
        for e in links
    ]
    return hook.PredictionAnswer(
        task=task,
        model=runs[-1].model,
        model_version=runs[-1].model_version,
        run_id=runs[-1].run_id if summary.written else None,
        runs=runs,
        written=summary.written,
        dialogue_id=summary.dialogue_id,
        edges=edges,
        summary=summary,
    )


def predict_dialogue(request: hook.PredictionRequest, graph: Graph) -> hook.PredictionAnswer:
    """Discourse and argument links of a stored dialogue; with ``write``, stored as two prediction runs.

    Raises:
        NotFoundError: No such dialogue. ApiError: A dialogue without locutions.
    """
    assert request.dialogue_id is not None
    found = stored_dialogue(graph.store(), request.dialogue_id)
    locs, props, anchors = found.locutions, found.units, [found.anchors[p.id] for p in found.units]
    texts = [u.text for u in locs]
    speakers = [u.speaker or u.speaker_id or "" for u in locs]
    unit_texts = [p.text for p in props]
    analysis = analyse(graph.settings, texts, speakers, unit_texts, anchors)
    loc_ids, unit_ids = [u.id for u in locs], [p.id for p in props]
    runs = write_predictions(graph, found.id, analysis, loc_ids, unit_ids, write=request.write)
    units = DialogueUnits(found.id, found.corpus, speakers, texts, loc_ids, unit_ids, unit_texts)
    summary = summarise(
        units, analysis, runs=runs, neighbours=None, neighbours_note="not looked up", written=request.write
    )
    return _response("dialogue", summary)


def predict_transcript(request: hook.PredictionRequest, graph: Graph) -> hook.PredictionAnswer:
    """Live mining of new utterances (each segmented into sentences), written with ``write``.

    Raises:
        ApiError: An utterance without speaker or text, a gold corpus, ``k`` out of range.
    """
    options = request.options
    summary = mine_utterances(
        graph,
        utterances_of(request.utterances),
        corpus=options.get("corpus") or DEFAULT_CORPUS,
        name=options.get("name") or "transcript",
        source="POST /predict",
        write=request.write,
        k=int(options.get("k") or 3),
    )
    return _response("transcript", summary)


def install() -> None:
    """Register the live-mining doors of ``POST /predict`` (``dialogue``, ``transcript``)."""
    hook.register("dialogue", predict_dialogue)
    hook.register("transcript", predict_transcript)
