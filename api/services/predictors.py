"""The predictors of ``POST /predict``: real models behind :func:`api.services.predict.register`.

* ``pair``: two texts -> the out-of-context pair model's label (support / attack / rephrase /
  none) of the first towards the second (the ``pairs`` task, :mod:`gnn.pairs`), and its probabilities;
  nothing is stored (the texts are not graph nodes).
* ``dialogue``: live mining of a stored dialogue -> the discourse parser's links between its
  locutions, then the relation model's links between its propositions (anchored by YA edges; a
  dialogue without propositions, such as Molweni's, is argued over its locutions) read with the
  *parser's* links as the dialogue's transitions, exactly as a transcript is mined (so a mined
  transcript read back from the graph gets the predictions it got when mined). It is not
  ``argweb predict relations --dialogue``, which reads a map's gold transitions (the main job's
  way into the graph, :func:`api.services.predictions.predict_scope`): its runs carry
  ``transitions: discourse`` and ids of their own (:func:`api.services.mine.jobs_for`). ``write``
  stores both runs beside the gold annotation through the one prediction job
  (:class:`api.services.predictions.PredictionJob`: ``pick``, rounded scores, run ids).
* ``transcript``: new utterances with speakers -> live mining (:mod:`api.services.mine`).

:func:`install` is called when the app is built; the models load on the first request that needs
them and are kept.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from api.services import mine
from api.services import predict as hook
from api.services.graph import Graph
from api.services.mine_summary import Analysis, DialogueUnits, MiningSummary, summarise
from graphstore.scopes import in_order
from ontology.errors import ApiError
from ontology.records import prediction_score
from ontology.terms import Label

MAX_PAIR_CHARS = 20_000


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


def predict_pair(request: hook.PredictionRequest, graph: Graph) -> hook.PredictionAnswer:
    """How the first text relates to the second (source -> target), out of context.

    Raises:
        ApiError: An empty or oversized text, or ``write`` (a pair is not stored).
    """
    from api.services import tasks
    from gnn.task import TextPair

    assert request.texts is not None
    first, second = (t.strip() for t in request.texts)
    if not first or not second or max(len(first), len(second)) > MAX_PAIR_CHARS:
        raise ApiError(f"a pair needs two non-empty texts of at most {MAX_PAIR_CHARS} characters")
    if request.write:
        raise ApiError("pair predictions are not stored: the texts are not graph nodes (use task transcript)")
    card = tasks.load(graph.settings, "pairs").card
    (found,) = tasks.predict(graph.settings, "pairs", [TextPair(first, second)])
    return hook.PredictionAnswer(
        task="pair",
        model=card.model,
        model_version=card.version,
        run_id=None,
        runs=[],
        written=False,
        dialogue_id=None,
        edges=[
            hook.PredictedEdge(
                "text:0", "text:1", found.label, prediction_score(found.score), "argument", card.model, card.version
            )
        ],
        probabilities={k: prediction_score(v) for k, v in found.probabilities.items()},
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
    disc = mine.discourse_links(graph.settings, texts, speakers)
    # The argument units get the speakers of their locutions and transitions through them.
    unit_texts = [p.text for p in props]
    unit_speakers = [speakers[anchors[p.id][0]] if anchors[p.id] else "" for p in props]
    by_loc: dict[int, list[int]] = defaultdict(list)
    for k, p in enumerate(props):
        for i in anchors[p.id]:
            by_loc[i].append(k)
    transitions = [(a, b) for x, y, _, _ in disc for a in by_loc[x] for b in by_loc[y]]
    analysis = Analysis(disc, mine.argument_links(graph.settings, unit_texts, unit_speakers, transitions))
    loc_ids, unit_ids = [u.id for u in locs], [p.id for p in props]
    runs = mine.runs_for(did, mine.models(graph.settings))
    if request.write:
        runs = mine.write_predictions(graph, did, analysis, loc_ids, unit_ids)
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
    summary = mine.mine_utterances(
        graph,
        mine.utterances_of(request.utterances),
        corpus=options.get("corpus") or mine.DEFAULT_CORPUS,
        name=options.get("name") or "transcript",
        source="POST /predict",
        write=request.write,
        k=int(options.get("k") or 3),
    )
    return _response("transcript", summary)


def predict_stored(task: str) -> hook.Predictor:
    """The predictor of a registered task over one stored dialogue: the one graph path, as
    ``argweb predict TASK --dialogue`` (:func:`api.services.predictions.predict_scope`), so both give
    the same edges and the same run id."""

    def predictor(request: hook.PredictionRequest, graph: Graph) -> hook.PredictionAnswer:
        from api.services.predictions import predict_scope

        options = {str(k): str(v) for k, v in request.options.items() if v is not None}
        done = predict_scope(
            graph, task, dialogue=request.dialogue_id, options=options, write=request.write, answer_rows=True
        )
        kind = "discourse" if task == "discourse" else "argument"
        edges = [
            hook.PredictedEdge(
                r.source, r.target, r.label.value, r.score, kind, done.model, done.model_version, done.run_id
            )
            for r in done.relations
        ]
        written = request.write and (done.written > 0 or done.already_present)
        return hook.PredictionAnswer(
            task, done.model, done.model_version, done.run_id, [], written, done.dialogue, edges
        )

    return predictor


def install() -> None:
    """Register the three predictors with the ``/predict`` hook (no model is loaded here)."""
    hook.register("pair", predict_pair)
    hook.register("dialogue", predict_dialogue)
    hook.register("transcript", predict_transcript)
    for task in hook.graph_tasks():
        hook.register(task, predict_stored(task))
