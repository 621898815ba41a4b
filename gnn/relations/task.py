"""The relations task on the task contract (:mod:`gnn.task`): argument relations between the units of a discourse.

One model directory holds a network per corpus family (:mod:`gnn.relations.pipeline`): QT30 /
DialAM AIF maps (``qt30.*``), Sci-Arg papers (``sciarg.*``); M-Arg debates are read by the QT30
network. Which family a corpus is, and which network reads it, is this task's business
(:data:`FAMILIES`); the services only hand it records.

* **Examples** (training, evaluation, cross-validation through :mod:`gnn.protocol`): the gold
  RA / CA / MA relations of AIF maps, one per relation, grouped by episode
  (:func:`gnn.relations.qt30_task.episodes`). A model is trained on the maps the examples come
  from; an example is scored by what the network predicts for its pair *inside its map* (the
  relation, or ``none``), so the figures are of the model as it is used.
* **Out-of-context pairs** (``argweb predict relations --in FILE``): each pair is shown to the QT30
  network as a two-proposition map (:func:`gnn.relations.qt30_run.classify_pairs`).
* **Stored discourses** (:meth:`RelationsTask.predict_scope`, reached through
  ``api.services.predictions.predict_scope``): AIF dialogues read back in the DialAM test-input
  form, Sci-Arg papers with their gold components, M-Arg debates in windows; the gold relations in
  scope only score the predictions. The run id derives from the model, its version, the QT30
  objective and the discourses (:meth:`RelationsTask.decoding`).

torch is imported inside the functions: the CLI imports this module eagerly.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnn.modelcard import read_card, write_card
from gnn.task import (
    CardVersion,
    Decoding,
    Fitted,
    PredictedRelation,
    Recipes,
    Resources,
    ScopePrediction,
    Task,
    TextPair,
    TrainReport,
)
from ontology.errors import ApiError, LoaderError
from ontology.labels import RelationLabel, scheme_label
from ontology.records import PredictedRelation as GraphRelation
from ontology.records import prediction_score
from ontology.scope import Scope, ScopeRecords

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder
    from gnn.relations.argmap import ArgMap
    from gnn.relations.qt30_run import Qt30Model
    from gnn.relations.sciarg_task import SciargModel
    from gnn.trainer import Schedule
    from ontology.records import CorpusBundle

NAME = "relations"
AIF, SCIARG, MARG = "aif", "sciarg", "marg"
FAMILIES = {"sciarg": SCIARG, "m-arg": MARG}
"""Corpora with a family of their own; every other corpus is read as AIF dialogues."""
AIF_LABELS = {t: scheme_label("qt30", t) for t in ("RA", "CA", "MA")}
SCIARG_TYPES = ("supports", "contradicts", "semantically_same", "parts_of_same")
SCIARG_LABELS = {t: scheme_label("sciarg", t) for t in SCIARG_TYPES}
MARG_LABELS = {t: scheme_label("m-arg", t) for t in ("Support", "Attack")}
NONE = RelationLabel.NONE.value

GRAPH_OBJECTIVE = "shares"
"""The decoding of the predictions written into the graph: there people count supports and attacks,
so each relation type's predicted count is kept near its gold count (:mod:`gnn.relations.qt30_task`)."""
FORMAT_OBJECTIVE = "general"
"""The decoding of the corpus-format commands (``predict aif``) and of the oAMF ``ari`` module: the
one tuned for DialAM's general score, as scorers expect."""
_UNITS = {AIF: "propositions (I-nodes)", SCIARG: "argument components", MARG: "sentences"}


def family_of(corpus: str) -> str:
    """The model family that predicts for ``corpus``."""
    return FAMILIES.get(corpus, AIF)


# -- recipes, examples, the loaded model ---------------------------------------------------------


@dataclass(frozen=True)
class RelationsConfig:
    """A relations recipe.

    Attributes:
        profile: ``quick`` (LSA text vectors) or ``full`` (the text encoder).
        seed: Seed of the text vectors, the weights and the batches.
        epochs: Overrides the profile's number of epochs (``None``: the profile's).
        objective: The QT30 decoding that labels examples in evaluation and cross-validation.
    """

    profile: str = "quick"
    seed: int = 0
    epochs: int | None = None
    objective: str = FORMAT_OBJECTIVE


def schedule_of(config: RelationsConfig) -> Schedule:
    """The optimiser schedule of a recipe (epochs and learning rate of the QT30 network's profile)."""
    from gnn.relations.family import profile_hp
    from gnn.relations.qt30_run import PROFILES
    from gnn.trainer import Schedule

    hp = profile_hp(PROFILES, config.profile, config.epochs)
    return Schedule(epochs=int(hp["epochs"]), lr=float(hp["lr"]), seed=config.seed)


@dataclass(frozen=True)
class RelationExample:
    """One gold relation of an AIF map: from ``source`` to ``target`` (texts), its label and map.

    Attributes:
        source: The source proposition's text.
        target: The target proposition's text.
        label: ``support``, ``attack`` or ``rephrase``.
        group: The map's episode (what keeps it on one side of a fold).
        amap: The map it is a relation of.
        pair: Source and target local ids in the map.
    """

    source: str
    target: str
    label: str
    group: str
    amap: ArgMap = field(compare=False, repr=False)
    pair: tuple[str, str]


def _maps(examples: Sequence[RelationExample]) -> list[ArgMap]:
    """The distinct maps of ``examples``, in first-seen order."""
    seen: dict[str, ArgMap] = {}
    for e in examples:
        seen.setdefault(e.amap.name, e.amap)
    return list(seen.values())


class RelationsModel:
    """A relations model directory, its networks loaded on first use (M-Arg reads the QT30 one).

    Attributes:
        path: The model directory.
        name: The model name its card gives.
        version: The version label its predictions carry (:attr:`gnn.modelcard.ModelCard.written_version`).
    """

    def __init__(
        self,
        path: Path | None,
        name: str,
        version: str,
        *,
        encoder: Any = None,
        device: str | None = "cpu",
        qt30: Qt30Model | None = None,
    ) -> None:
        self.path, self.name, self.version = path, name, version
        self._encoder, self._device = encoder, device or "cpu"
        self._qt30: Qt30Model | None = qt30
        self._sciarg: SciargModel | None = None
        self._lock = threading.Lock()

    @property
    def qt30(self) -> Qt30Model:
        """The QT30 network (AIF maps, M-Arg debates, out-of-context pairs).

        Raises:
            ModelError: The directory has no usable QT30 network.
        """
        from gnn.relations.qt30_run import load_qt30

        with self._lock:
            if self._qt30 is None:
                assert self.path is not None
                self._qt30 = load_qt30(self.path, device=self._device, encoder=self._encoder)
            return self._qt30

    @property
    def sciarg(self) -> SciargModel:
        """The Sci-Arg network.

        Raises:
            ModelError: The directory has no usable Sci-Arg network.
        """
        from gnn.relations.sciarg_task import load_sciarg

        with self._lock:
            if self._sciarg is None:
                assert self.path is not None
                self._sciarg = load_sciarg(self.path, device=self._device, encoder=self._encoder)
            return self._sciarg


# -- the task ---------------------------------------------------------------------------------------


class RelationsTask(Task[RelationsConfig, RelationExample, RelationsModel]):
    """Argument relations (support, attack, rephrase) between the units of a dialogue or paper."""

    name = NAME
    model_name = "relation-gnn"
    version = 9  # the shipped weights (gnn.relations.pipeline.VERSION, which the multi-family training writes)
    reads = "aif"
    default_data = ("dialam-2024", "my_train")
    graph_corpora = ("qt30", "sciarg", "m-arg")
    recipes = Recipes(
        {"quick": RelationsConfig("quick"), "full": RelationsConfig("full")},
        "quick",
        schedule_of,
    )

    def examples(self, records: CorpusBundle, config: RelationsConfig) -> list[RelationExample]:
        """Every gold RA / CA / MA relation of the records' maps.

        Raises:
            LoaderError: The records hold no gold relation between I-nodes.
        """
        from gnn.relations.argmap import maps_from_records
        from gnn.relations.qt30_task import episodes

        maps = maps_from_records(records.nodes, records.edges)
        groups = dict(zip([m.name for m in maps], episodes([m.name for m in maps]), strict=True))
        found = [
            RelationExample(
                m.props[i].text,
                m.props[j].text,
                AIF_LABELS[lab].value,
                groups[m.name],
                m,
                (m.props[i].local_id, m.props[j].local_id),
            )
            for m in maps
            for (i, j), lab in sorted(m.gold.items())
        ]
        if not found:
            raise LoaderError("no gold RA/CA/MA relation between I-nodes in the maps read")
        return found

    def group(self, example: RelationExample) -> str:
        return example.group

    def gold(self, example: RelationExample) -> str:
        return example.label

    def inputs(self, example: RelationExample) -> TextPair:
        return TextPair(example.source, example.target)

    def protocol(self, examples: Sequence[RelationExample]) -> str:
        maps = _maps(examples)
        return (
            f"{len(examples)} gold relations of {len(maps)} QT30 / DialAM maps grouped by episode (runs of nodeset "
            "numbers, gap > 20); the tuning part selects the epoch and tunes the decodings; each held-out relation "
            "is labelled by what the network predicts for its pair inside its map"
        )

    def encoder_name(self, config: RelationsConfig, resources: Resources) -> str | None:
        return resources.encoder(None).name if config.profile == "full" else None

    def _options(self, config: RelationsConfig, resources: Resources) -> Any:
        from gnn.relations.family import TrainOptions

        encoder = resources.encoder(None) if config.profile == "full" else None
        device = resources.device or "cpu"
        return TrainOptions(config.profile, config.seed, device, encoder, config.epochs, log=resources.log)

    def fit(
        self,
        train: Sequence[RelationExample],
        tune: Sequence[RelationExample],
        config: RelationsConfig,
        resources: Resources,
    ) -> Fitted[RelationsModel]:
        """A QT30 network trained on the maps of ``train``, its epoch and decodings chosen on those of ``tune``.

        With no tuning maps (training folds of a single episode), the training maps choose them.
        """
        from gnn.relations.family import profile_hp
        from gnn.relations.qt30_run import PROFILES, Qt30Model, _fit_and_tune, tensors_of
        from gnn.relations.qt30_task import summary

        options = self._options(config, resources)
        hp = profile_hp(PROFILES, config.profile, config.epochs)
        train_maps = _maps(train)
        tune_maps = _maps(tune) or train_maps
        cues = bool(hp.get("cues"))
        parts = {
            "train": tensors_of(train_maps, hp["window"], cues=cues),
            "dev": tensors_of(tune_maps, hp["window"], cues=cues),
            "test": [],
        }
        with tempfile.TemporaryDirectory(prefix="argweb-relations-fit-") as tmp:
            trained, decodings = _fit_and_tune(parts, hp, options, Path(tmp))
        qt = Qt30Model(trained.model, decodings, trained.text, int(hp["window"]), options.device, cues=cues)
        model = RelationsModel(None, self.model_name, str(self.version), qt30=qt)
        return Fitted(model, {"epochs": trained.selected_epochs, "bias": summary(decodings)})

    def train(
        self,
        examples: Sequence[RelationExample],
        out: Path,
        config: RelationsConfig,
        profile: str,
        resources: Resources,
    ) -> TrainReport:
        """Train the relations model on the maps of ``examples`` into ``out``.

        The model directory and card are :func:`gnn.relations.pipeline.train_relations`'s, with the
        card's version in the one scheme (:class:`gnn.task.CardVersion`).
        """
        from gnn.relations.pipeline import RelationData, train_relations

        options = self._options(config, resources)
        card = train_relations(
            RelationData(qt30=_maps(examples)),
            out,
            profile=config.profile,
            seed=config.seed,
            device=options.device,
            encoder=options.encoder,
            epochs=config.epochs,
            log=resources.log,
        )
        # The one version scheme of cards: an integer, the training date and commit beside it.
        card = replace(
            card,
            version=str(self.version),
            hyperparameters={**card.hyperparameters, "recipe": profile},
            data={**card.data, "files": [str(p) for p in resources.data_files]},
        )
        write_card(out, card)
        return TrainReport(
            self.name,
            out,
            card,
            CardVersion.of(card),
            f"relations model written: {out} ({card.training_seconds} s)",
        )

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> RelationsModel:
        """The model directory (its networks load when first asked for).

        Raises:
            ModelError: Not a relations model.
        """
        from gnn.device import configured_torch

        card = read_card(model_dir, NAME)
        # The process-wide torch settings the relation networks expect (sparse adjacency, no warning).
        configured_torch()
        return RelationsModel(model_dir, card.model, card.written_version, encoder=encoder, device=device)

    def predict(self, loaded: RelationsModel, records: Sequence[TextPair]) -> list[PredictedRelation]:
        """Each pair as a two-proposition map, out of context (:func:`gnn.relations.qt30_run.classify_pairs`)."""
        from gnn.relations.live import ARGUMENT
        from gnn.relations.qt30_run import classify_pairs

        found = classify_pairs(loaded.qt30, [(r.source, r.target) for r in records])
        return [
            PredictedRelation(
                r.source, r.target, ARGUMENT[label], score, {ARGUMENT[k]: v for k, v in probabilities.items()}
            )
            for r, (label, score, probabilities) in zip(records, found, strict=True)
        ]

    def predicted_labels(self, loaded: RelationsModel, examples: Sequence[RelationExample]) -> list[str]:
        """What the network predicts for each example's pair inside its map (``none``: no relation)."""
        from gnn.relations.live import ARGUMENT

        maps = _maps(examples)
        objective = FORMAT_OBJECTIVE
        predicted = loaded.qt30.predict(maps, objective) if maps else []
        by_pair = {
            (m.name, s, t): ARGUMENT[lab] for m, rels in zip(maps, predicted, strict=True) for s, t, lab, _ in rels
        }
        return [by_pair.get((e.amap.name, *e.pair), NONE) for e in examples]

    def figures(
        self,
        loaded: RelationsModel,
        examples: Sequence[RelationExample],
        gold: Sequence[str],
        predicted: Sequence[str],
    ) -> dict[str, float]:
        """The share of gold relations predicted with their label, and the official-style DialAM scores
        of the examples' maps under each QT30 decoding the model has (``tuned_<objective>.*``)."""
        from gnn.relations.qt30_run import score_maps

        figures = self.scores(gold, predicted)
        maps = _maps(examples)
        for objective in loaded.qt30.objectives:
            report = score_maps(maps, loaded.qt30.predict(maps, objective))
            for kind in ("general", "focused"):
                figures[f"tuned_{objective}.{kind}_f1"] = report["official_style"][kind]["f1"]
            figures[f"tuned_{objective}.relation_macro_f1"] = report["relations"]["macro_f1"]
        return figures

    # -- stored discourses ------------------------------------------------------------------------

    def scope_read(self, corpus: str) -> str:
        """Sci-Arg papers are read with their components; every other corpus as AIF dialogues."""
        return SCIARG if family_of(corpus) == SCIARG else AIF

    def decoding(self, loaded: RelationsModel, model_dir: Path, scope: Scope, options: Mapping[str, str]) -> Decoding:
        """The run id parts (model, version, QT30 objective, scope) and the stored parameters.

        Options: ``objective`` (:data:`gnn.relations.qt30_task.OBJECTIVES`; default
        :data:`GRAPH_OBJECTIVE`).

        Raises:
            ApiError: An unknown option or objective.
        """
        from gnn.relations.qt30_task import OBJECTIVES

        unknown = sorted(set(options) - {"objective"})
        if unknown:
            raise ApiError(f"unknown relations option(s) {', '.join(unknown)}; expected objective")
        objective = options.get("objective") or GRAPH_OBJECTIVE
        if objective not in OBJECTIVES:
            raise ApiError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
        parameters = {
            "model_dir": str(model_dir),
            "family": family_of(scope.corpus),
            "objective": objective,
            "corpus": scope.corpus if scope.dialogue is None else None,
            "dialogue": scope.dialogue,
            "discourses": len(scope.ids),
        }
        parts = (NAME, loaded.name, loaded.version, objective, scope.corpus, scope.dialogue or "", *scope.ids)
        return Decoding(parts, parameters)

    def predict_scope(
        self, loaded: RelationsModel, records: ScopeRecords, options: Mapping[str, str]
    ) -> ScopePrediction:
        """The relations of each discourse of the scope, by its family's network, scored against the gold ones.

        Raises:
            ApiError: Nothing to predict over (no propositions, components or sentences in scope).
        """
        objective = options.get("objective") or GRAPH_OBJECTIVE
        scope = records.scope
        family = family_of(scope.corpus)
        nodes, edges = list(records.nodes), list(records.edges)
        items: list[Any]
        # Per predicted item, the graph id of each unit the model names (by local id or sentence).
        if family == AIF:
            from gnn.relations.argmap import maps_from_records

            items = [m for m in maps_from_records(nodes, edges) if m.props]
            raw = loaded.qt30.predict(items, objective) if items else []
            graph_ids = [{p.local_id: p.id for p in amap.props} for amap in items]
            labels, gold = AIF_LABELS, sum(len(m.gold) for m in items)
        elif family == MARG:
            from gnn.relations.marg_task import debates_from_records, pairs_from_records, predict_debates

            debates = [d for d in debates_from_records(nodes) if d.sentences]
            pairs = pairs_from_records(nodes, edges)
            raw = predict_debates(loaded.qt30, debates, objective) if debates else []
            graph_ids = [dict(zip(d.sentences, d.node_ids, strict=True)) for d in debates]
            sentences = [set(d.sentences) for d in debates]
            items = [(d, [p for p in pairs if p.source_id in ids]) for d, ids in zip(debates, sentences, strict=True)]
            labels, gold = MARG_LABELS, sum(p.label in MARG_LABELS for p in pairs)
        else:
            from gnn.relations.sciarg_task import papers_from_records

            items = [p for p in papers_from_records(nodes, edges) if p.comps]
            raw = loaded.sciarg.predict(items) if items else []
            graph_ids = [{c.local_id: c.id for c in paper.comps} for paper in items]
            labels, gold = SCIARG_LABELS, sum(len(p.gold) for p in items)
        if not items:
            where = scope.dialogue or f"corpus {scope.corpus}"
            raise ApiError(f"nothing to predict: no {_UNITS[family]} in {where}")
        rows = tuple(
            GraphRelation(source=g[s], target=g[t], label=labels[lab], score=prediction_score(p), scheme_label=lab)
            for g, rels in zip(graph_ids, raw, strict=True)
            for s, t, lab, p in rels
        )
        # M-Arg's annotated pairs score the predictions even when all of them are Neither.
        annotated = family == MARG and any(found for _, found in items)
        scored = bool(gold or annotated)
        return ScopePrediction(
            rows,
            len(items),
            gold if scored else None,
            _scores(family, items, raw) if scored else None,
            "predicted argument relations",
        )


def _scores(family: str, inputs: list[Any], raw: list[Any]) -> dict[str, Any]:
    """Scores of the predictions against the gold relations in scope (DialAM official-style, or BAM's R)."""
    if family == AIF:
        from gnn.relations.qt30_run import score_maps

        return score_maps(inputs, raw)
    if family == MARG:
        from gnn.relations.marg_task import score_transfer

        return score_transfer([p for _, pairs in inputs for p in pairs], raw)
    from gnn.relations.sciarg_task import score_papers

    return score_papers(inputs, raw)


TASK = RelationsTask()
