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
* ``transcript``: new utterances with speakers -> live mining.

The ``dialogue`` and ``transcript`` doors are live mining and live with it
(:func:`api.services.mine.predict_dialogue`, :func:`api.services.mine.predict_transcript`,
installed by :func:`api.services.mine.install`); here are the ``pair`` door and one door per
registered task that predicts over stored dialogues (:func:`predict_stored`).

:func:`install` is called when the app is built; the models load on the first request that needs
them and are kept.
"""

from __future__ import annotations

from api.services import predict as hook
from api.services.graph import Graph
from ontology.errors import ApiError
from ontology.records import prediction_score

MAX_PAIR_CHARS = 20_000


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
        model_version=card.written_version,
        run_id=None,
        runs=[],
        written=False,
        dialogue_id=None,
        edges=[
            hook.PredictedEdge(
                "text:0",
                "text:1",
                found.label,
                prediction_score(found.score),
                "argument",
                card.model,
                card.written_version,
            )
        ],
        probabilities={k: prediction_score(v) for k, v in found.probabilities.items()},
    )


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
    for task in hook.graph_tasks():
        hook.register(task, predict_stored(task))
