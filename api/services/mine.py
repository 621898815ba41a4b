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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.services.aif import refuse_gold
from api.services.graph import Graph
from api.services.mine_summary import Analysis, DialogueUnits, MiningSummary, NeighbourHit, summarise
from api.services.predictions import PredictionJob
from api.services.reporting import SILENT, Reporter
from api.settings import Settings
from gnn.relations.task import GRAPH_OBJECTIVE
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
from ontology.records import (
    SCORE_DIGITS,
    CorpusBundle,
    DiscourseRecord,
    LocutionRecord,
    PredictedRelation,
    PredictionRun,
    PropositionRecord,
    prediction_score,
)
from ontology.terms import Label
from ontology.views import SemanticHit

DEFAULT_CORPUS = "mined"
# The parser tunes a link threshold per training domain; Molweni (multi-party chat, 9k dialogues in
# training) is the closer of its two domains to a debate transcript.
DISCOURSE_DOMAIN = "molweni"


@dataclass(frozen=True)
class LoadedModel:
    """A model kept in memory with the name and version its predictions carry."""

    name: str
    version: str
    path: Path
    model: Any


def discourse_model(settings: Settings) -> LoadedModel:
    """The shipped discourse parser, loaded once per process (:func:`api.services.tasks.load`)."""
    from api.services import tasks

    loaded = tasks.load(settings, "discourse")
    return LoadedModel(loaded.card.model, loaded.card.version, loaded.path, loaded.model)


def relation_model(settings: Settings) -> LoadedModel:
    """The shipped relation model's QT30 network, loaded once per process (the one model cache:
    :func:`api.services.tasks.load`)."""
    from api.services import tasks

    loaded = tasks.load(settings, "relations")
    return LoadedModel(loaded.card.model, loaded.card.version, loaded.path, loaded.model.qt30)


def discourse_links(
    settings: Settings, texts: Sequence[str], speakers: Sequence[str]
) -> list[tuple[int, int, str, float]]:
    """The discourse parser's links between utterances: ``(x, y, sense, score)``.

    Scores are rounded to 4 digits, so that a repeated run is recognised as the same content.
    """
    from gnn.discourse.data import Dialogue

    if not texts:
        return []
    dialogue = Dialogue("mined#0", "mined", DISCOURSE_DOMAIN, list(texts), list(speakers))
    (links,) = discourse_model(settings).model.predict([dialogue])
    return [(p.x, p.y, p.sense.value, prediction_score(p.score)) for p in links]


def argument_links(
    settings: Settings, texts: Sequence[str], speakers: Sequence[str], transitions: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str, float]]:
    """The relation model's support / attack / rephrase links between argument units: ``(s, t, label, score)``.

    Args:
        settings: Where the models live.
        texts: Argument unit texts in order.
        speakers: Speaker of each unit.
        transitions: ``(earlier, later)`` unit indices linked in the dialogue (the parser's links).
    """
    from gnn.relations.live import predict_dialogue

    model = relation_model(settings).model
    return [
        (s, t, lab, prediction_score(p))
        # Mined debates go into the graph: its decoding (each relation type's count near its gold share).
        for s, t, lab, p in predict_dialogue(model, texts, speakers, transitions, GRAPH_OBJECTIVE)
    ]


def models(settings: Settings) -> tuple[LoadedModel, LoadedModel]:
    """The discourse parser and the relation model (loaded on first use)."""
    return discourse_model(settings), relation_model(settings)


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
    from api.services.ingest import write_bundle

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
