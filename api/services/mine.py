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

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.services import predict as hook
from api.services.aif import refuse_gold
from api.services.graph import Graph
from api.services.live import (
    DISCOURSE_DOMAIN,
    LoadedModel,
    argument_links,
    discourse_links,
    models,
)
from api.services.predictions import PredictionJob
from gnn.relations.mining import Analysis, DialogueUnits, MiningSummary, NeighbourHit, summarise
from gnn.relations.task import GRAPH_OBJECTIVE
from graphstore.scopes import in_order
from ontology.errors import ApiError, NotFoundError
from ontology.formats.transcript import (
    SEGMENTER,
    TranscriptLimits,
    Utterance,
    read_utterances,
    segment,
    transcript_bundle,
)
from ontology.labels import RelationLabel
from ontology.progress import SILENT, Reporter
from ontology.records import (
    SCORE_DIGITS,
    CorpusBundle,
    DiscourseRecord,
    LocutionRecord,
    PredictedRelation,
    PredictionRun,
    PropositionRecord,
)
from ontology.terms import Label
from ontology.views import SemanticHit

DEFAULT_CORPUS = "mined"


def job_for(dialogue_id: str, model: LoadedModel, task: str, parameters: dict[str, Any]) -> PredictionJob:
    """The prediction job of ``model`` on a mined dialogue: its run id depends only on dialogue, model and version."""
    parts = (f"mine-{task}", dialogue_id, model.name, model.version, task)
    return PredictionJob(task, model.name, model.version, parts, {"dialogue": dialogue_id, **parameters})


def jobs_for(dialogue_id: str, models: tuple[LoadedModel, LoadedModel]) -> list[PredictionJob]:
    """The discourse and the relations job of a mined dialogue."""
    parser, relator = models
    return [
        job_for(dialogue_id, parser, "discourse", {"domain": DISCOURSE_DOMAIN}),
        job_for(dialogue_id, relator, "relations", {"objective": GRAPH_OBJECTIVE, "transitions": "discourse"}),
    ]


def run_for(dialogue_id: str, model: LoadedModel, task: str, parameters: dict[str, Any]) -> PredictionRun:
    """The prediction run of ``model`` on a dialogue (what :func:`job_for` writes when nothing was written before)."""
    return job_for(dialogue_id, model, task, parameters).run()


def runs_for(dialogue_id: str, models: tuple[LoadedModel, LoadedModel]) -> list[PredictionRun]:
    """The discourse and the relations run of a dialogue."""
    return [job.run() for job in jobs_for(dialogue_id, models)]


def _hit(hit: SemanticHit) -> NeighbourHit:
    # A search hit's score is a cosine, in [-1, 1]: rounded, not clamped like a model's score.
    return NeighbourHit(hit.id, hit.corpus, hit.discourse, hit.text, round(float(hit.score), SCORE_DIGITS))


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
    return [[_hit(h) for h in row] for row in found], None


@dataclass
class Mined:
    """A dialogue ready to be mined: its bundle and its units in order."""

    bundle: CorpusBundle
    dialogue_id: str
    utterances: list[Utterance]
    locutions: list[str]
    propositions: list[str]


def prepare(utterances: list[Utterance], corpus: str, name: str, source: str) -> Mined:
    """The dialogue bundle of ``utterances`` and the ids of its locutions and propositions.

    Raises:
        ApiError: ``corpus`` names a gold corpus (mined dialogues never mix with annotation).
        LoaderError: No utterances or an invalid field.
    """
    refuse_gold(corpus, DEFAULT_CORPUS)
    bundle = transcript_bundle(utterances, corpus, name, source)
    dialogue = next(n for n in bundle.nodes if isinstance(n, DiscourseRecord))
    locs = [n.id for n in bundle.nodes if isinstance(n, LocutionRecord)]
    props = [n.id for n in bundle.nodes if isinstance(n, PropositionRecord)]
    return Mined(bundle, dialogue.id, utterances, locs, props)


def write_predictions(
    graph: Graph,
    dialogue_id: str,
    analysis: Analysis,
    locutions: Sequence[str],
    units: Sequence[str],
) -> list[PredictionRun]:
    """Write the two prediction runs of an analysis: discourse links between ``locutions``, argument
    links between ``units``, each through the one prediction job (:meth:`PredictionJob.pick`: a run
    complete in the graph already is not written again; scores rounded)."""
    from ontology.formats.dialogue_json import scheme_label

    disc = [
        PredictedRelation(
            source=locutions[x],
            target=locutions[y],
            label=RelationLabel(sense),
            score=score,
            scheme_label=scheme_label(DISCOURSE_DOMAIN, sense),
        )
        for x, y, sense, score in analysis.discourse
    ]
    args = [
        PredictedRelation(source=units[s], target=units[t], label=RelationLabel(lab), score=score)
        for s, t, lab, score in analysis.arguments
    ]
    runs = []
    jobs = jobs_for(dialogue_id, models(graph.settings))
    for job, rows, what in zip(jobs, (disc, args), ("discourse links", "argument relations"), strict=True):
        run, present = job.pick(graph)
        if present is None:
            job.write(graph, rows, f"predicted {what}", SILENT, run)
        runs.append(run)
    return runs


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
    # Discourse links between utterances, then argument links with them as transitions: each
    # utterance is its own argument unit (one proposition per locution).
    disc = discourse_links(graph.settings, texts, speakers)
    analysis = Analysis(disc, argument_links(graph.settings, texts, speakers, [(x, y) for x, y, _, _ in disc]))
    neighbours, why = nearest_elsewhere(graph, texts, k=k, corpus=corpus)
    runs = runs_for(mined.dialogue_id, models(graph.settings))
    if write:
        write_bundle(graph.store(), mined.bundle, reporter)
        runs = write_predictions(graph, mined.dialogue_id, analysis, mined.locutions, mined.propositions)
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


def utterances_of(turns: Sequence[dict[str, str]]) -> list[Utterance]:
    """Utterances of ``[{"speaker", "text"}]`` turns (API), each turn segmented like a transcript's.

    Raises:
        ApiError: A turn without speaker or text.
    """
    out: list[Utterance] = []
    for k, turn in enumerate(turns):
        speaker, text = (turn.get("speaker") or "").strip(), (turn.get("text") or "").strip()
        if not speaker or not text:
            raise ApiError(f"utterance #{k}: needs a non-empty speaker and text")
        out.extend(Utterance(speaker, s, k, k) for s in segment(text))
    if not out:
        raise ApiError("no utterances")
    return out


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


def _stored(graph: Graph, ref: str) -> tuple[str, str | None, list[Any], list[Any], dict[str, list[int]]]:
    """A stored dialogue's id, corpus, locutions, argument units and each unit's locution indices.

    Raises:
        NotFoundError: No such dialogue. ApiError: It has no locutions.
    """
    from graphstore.aif_export import read_discourses, resolve_discourse

    store = graph.store()
    did = resolve_discourse(store, ref)
    units, edges = read_discourses(store, [did])
    mine_units = [u for u in units.values() if u.discourse == did]

    def ordered(label: Label) -> list[Any]:
        return in_order(u for u in mine_units if u.node.has(label))

    locs, props = ordered(Label.Locution), ordered(Label.Proposition)
    if not locs:
        raise ApiError(f"dialogue {did} has no locutions to predict over")
    loc_index = {u.id: i for i, u in enumerate(locs)}
    # L -> YA -> I: which locution(s) each proposition was said in.
    into: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        into[e.target].append(e.source)
    illocutions = {u.id for u in units.values() if u.node.has(Label.Illocution)}
    anchors = {
        p.id: sorted({loc_index[s] for ya in into[p.id] if ya in illocutions for s in into[ya] if s in loc_index})
        for p in props
    }
    if not props:
        props = locs
        anchors = {u.id: [i] for i, u in enumerate(locs)}
    corpus = locs[0].node.corpus
    return did, corpus, locs, props, anchors


def predict_dialogue(request: hook.PredictionRequest, graph: Graph) -> hook.PredictionAnswer:
    """Discourse and argument links of a stored dialogue; with ``write``, stored as two prediction runs.

    Raises:
        NotFoundError: No such dialogue. ApiError: A dialogue without locutions.
    """
    assert request.dialogue_id is not None
    did, corpus, locs, props, anchors = _stored(graph, request.dialogue_id)
    texts = [u.text for u in locs]
    speakers = [u.speaker or u.speaker_id or "" for u in locs]
    disc = discourse_links(graph.settings, texts, speakers)
    # The argument units get the speakers of their locutions and transitions through them.
    unit_texts = [p.text for p in props]
    unit_speakers = [speakers[anchors[p.id][0]] if anchors[p.id] else "" for p in props]
    by_loc: dict[int, list[int]] = defaultdict(list)
    for k, p in enumerate(props):
        for i in anchors[p.id]:
            by_loc[i].append(k)
    transitions = [(a, b) for x, y, _, _ in disc for a in by_loc[x] for b in by_loc[y]]
    analysis = Analysis(disc, argument_links(graph.settings, unit_texts, unit_speakers, transitions))
    loc_ids, unit_ids = [u.id for u in locs], [p.id for p in props]
    runs = runs_for(did, models(graph.settings))
    if request.write:
        runs = write_predictions(graph, did, analysis, loc_ids, unit_ids)
    units = DialogueUnits(did, corpus, speakers, texts, loc_ids, unit_ids, unit_texts)
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
