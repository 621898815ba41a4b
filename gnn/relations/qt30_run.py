"""Train, store, load and apply the QT30 / DialAM-2024 task-A relation model."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gnn.progress import each
from gnn.relations import family
from gnn.relations.argmap import ArgMap, anchor_accuracy, without_locutions
from gnn.relations.metrics import dialam_scores, relation_macro
from gnn.relations.qt30 import (
    EDGE_TYPES,
    LABELS,
    N_CUE_FEATURES,
    N_LOC_FEATURES,
    N_PAIR_FEATURES,
    N_PROP_FEATURES,
    MapTensors,
    candidate_recall,
    map_tensors,
)
from gnn.relations.qt30_task import (
    OBJECTIVES,
    Decoding,
    biased_scores,
    decode,
    decoded_rows,
    dev_scorer,
    item,
    split_maps,
    summary,
    tune_decodings,
)
from gnn.relations.text import TextVectors
from gnn.trainer import Progress
from ontology.errors import ModelError

SPLIT_SEED = 13
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"epochs": 6, "text": "lsa", "window": 8, "lr": 3e-3},
    # Conflict cues in the pair features (gnn.relations.qt30.conflict_cues): out of fold the shares
    # decoding keeps general F1 >= 0.47 with them (docs/experiments/relations-history.md).
    "full": {"epochs": 8, "text": "encoder", "window": 8, "lr": 2e-3, "cues": True},
}
DIMS = {
    "prim_dim": N_PROP_FEATURES,
    "sec_dim": N_LOC_FEATURES,
    "pair_dim": N_PAIR_FEATURES,
    "n_edge_types": len(EDGE_TYPES),
    "n_labels": len(LABELS),
    "direct": True,
}
FAMILY: family.Family[MapTensors] = family.Family("QT30", "maps", "qt30", DIMS, item, dev_scorer)


def tensors_of(
    maps: Sequence[ArgMap], window: int, progress: Progress | None = None, cues: bool = False
) -> list[MapTensors]:
    """Features and graphs of ``maps`` (``progress`` hears ``("QT30 features", done, total)``); ``cues``
    appends the conflict cues to the pair features (:func:`gnn.relations.qt30.conflict_cues`)."""
    return each("QT30 features", maps, lambda m: map_tensors(m, window, cues), progress)


def widths(hp: dict[str, Any]) -> dict[str, int]:
    """The input widths a recipe's network reads besides :data:`DIMS` (the cue columns, when it has them)."""
    return {"pair_dim": N_PAIR_FEATURES + N_CUE_FEATURES} if hp.get("cues") else {}


def _baseline(
    train: Sequence[MapTensors], dev: Sequence[MapTensors], test: Sequence[MapTensors], seed: int
) -> dict[str, Any]:
    start = time.perf_counter()
    probs = family.tfidf_baseline([t.pair_group for t in train], len(LABELS), seed)
    dev_p, test_p = probs([t.pair_group for t in dev]), probs([t.pair_group for t in test])
    out: dict[str, Any] = {"seconds": round(time.perf_counter() - start, 1)}
    for objective, decoding in tune_decodings(dev, dev_p).items():
        out[f"tuned_{objective}"] = _report(test, test_p, decoding)
    return out


def _report(test: Sequence[MapTensors], probs: Sequence[np.ndarray], decoding: Decoding) -> dict[str, Any]:
    return _scores(decoded_rows(test, probs, decoding.bias, decoding.directions, decoding.gate))


def _reports(test: Sequence[MapTensors], probs: Sequence[np.ndarray], decodings: dict[str, Decoding]) -> dict[str, Any]:
    return {obj: _report(test, probs, decodings[obj]) for obj in OBJECTIVES}


def _scores(rows: Sequence[tuple[dict[tuple[int, int], str], dict[tuple[int, int], str], int]]) -> dict[str, Any]:
    """Official-style scores and relation macro-F1 of (gold, predicted, propositions) rows of maps."""
    return {"official_style": dialam_scores(rows), "relations": relation_macro([r[:2] for r in rows], LABELS[1:])}


def train_qt30(
    maps: Sequence[ArgMap],
    out_dir: Path,
    options: family.TrainOptions,
) -> dict[str, Any]:
    """Train on the train maps of the fixed split, tune on dev, report on the held-out maps.

    The split is by map, from ``sha1(13:<map name>)`` (see :func:`split_maps`): 15% held out,
    10% of the rest for development; it does not depend on ``seed``.

    Args:
        maps: Annotated maps (``my_train``).
        out_dir: Model directory (``qt30.safetensors``, ``qt30_config.json`` and, for LSA text
            vectors, ``qt30_lsa.npz``).
        options: Profile (``quick``: LSA text vectors, 6 epochs; ``full``: encoder, 8 epochs),
            seed, device, encoder, epochs, progress and log.

    Returns:
        The model card section: data, hyper-parameters, metrics, seconds, weight files.
    """
    from gnn.relations.train import predict_probs

    hp = family.profile_hp(PROFILES, options.profile, options.epochs)
    cues = bool(hp.get("cues"))
    start = time.perf_counter()
    split = split_maps([m.name for m in maps], SPLIT_SEED)
    tensors = tensors_of(maps, hp["window"], options.progress, cues)
    parts = {s: [t for t in tensors if split[t.name] == s] for s in ("train", "dev", "test")}
    if not parts["train"]:
        raise ModelError(f"QT30: {len(maps)} map(s) are too few: none falls into the training split")
    trained, decodings = _fit_and_tune(parts, hp, options, out_dir)
    model, config, tuning = trained.model, trained.config, trained.tuning_model
    # Propositions-only copies (no L-nodes, no TA) of the development and held-out maps: the model
    # reads such a map as a dialogue whose turns were all lost, so the biases tuned on dialogue maps
    # over-relate it; the copies of the development maps (the ones train_gnn selected on) tune a
    # decoding of its own. Training on such copies too was measured and not adopted: it cost the
    # dialogue maps 0.05 focused F1 on the development maps.
    names = {s: {t.name for t in parts[s]} for s in ("dev", "test")}
    bare = {
        s: tensors_of([without_locutions(m) for m in maps if m.name in names[s]], hp["window"], cues=cues)
        for s in names
    }
    bare_items = {s: family.graphs_of(FAMILY, bare[s], trained.text) for s in ("dev", "test")}
    bare_decodings = tune_decodings(bare["dev"], predict_probs(tuning, bare_items["dev"], options.device))
    family.save_stored(
        out_dir,
        FAMILY,
        model.state_dict(),
        {
            "config": config,
            "bias": {obj: list(d.bias) for obj, d in decodings.items()},
            "directions": {obj: d.directions for obj, d in decodings.items()},
            "gate": {obj: d.gate for obj, d in decodings.items() if d.gate is not None},
            "propositions_only": {
                obj: [list(d.bias), d.directions, *([] if d.gate is None else [d.gate])]
                for obj, d in bare_decodings.items()
            },
            "hp": hp,
            "labels": list(LABELS),
        },
    )
    metrics: dict[str, Any] = {}
    if parts["test"]:
        metrics = family.heldout_metrics(trained, lambda p: _reports(parts["test"], p, decodings), options.device)
        if bare["test"]:
            bare_p = predict_probs(model, bare_items["test"], options.device)
            metrics["heldout_propositions_only"] = _reports(bare["test"], bare_p, bare_decodings)
        options.log("QT30: training the TF-IDF + LR baseline")
        metrics["baseline_tfidf_lr"] = _baseline(parts["train"], parts["dev"], parts["test"], options.seed)
    right, total = anchor_accuracy([m for m in maps if split[m.name] == "test"])
    return {
        "files": trained.files,
        "data": {
            "maps": len(maps),
            "split": "by map: sha1('13:'+name) < 0.15 -> held-out; of the rest 10% dev (decoding, model selection)",
            "train_maps": len(parts["train"]),
            "dev_maps": len(parts["dev"]),
            "heldout_maps": sorted(t.name for t in parts["test"]),
            "candidate_recall_heldout": round(candidate_recall(parts["test"]), 4) if parts["test"] else None,
            "anchor_accuracy_heldout": round(right / total, 4) if total else None,
        },
        "hyperparameters": {
            **hp,
            **config,
            "seed": options.seed,
            **({} if trained.refit_epochs is None else {"refit_epochs": trained.refit_epochs}),
            "bias": summary(decodings),
            "bias_propositions_only": summary(bare_decodings),
        },
        "metrics": metrics,
        "seconds": round(time.perf_counter() - start, 1),
        "train_seconds": round(trained.train_seconds, 1),
    }


def _fit_and_tune(
    parts: dict[str, list[MapTensors]], hp: dict[str, Any], options: family.TrainOptions, out_dir: Path
) -> tuple[family.Trained, dict[str, Decoding]]:
    """Train on ``parts["train"]`` (selection on dev) and tune each objective's decoding on dev."""
    from gnn.relations.train import predict_probs

    trained = family.train_gnn(parts, hp, options, out_dir, FAMILY, (widths(hp),), refit=bool(hp.get("refit")))
    # A refit model has trained on the dev maps: the decodings are tuned on the selected network.
    dev_p = predict_probs(trained.tuning_model, trained.items["dev"], options.device)
    return trained, tune_decodings(parts["dev"], dev_p)


def cross_validate_qt30(maps: Sequence[ArgMap], options: family.TrainOptions, folds: int = 5) -> dict[str, Any]:
    """Out-of-fold official-style scores of the QT30 model under the grouped protocol.

    Maps are grouped by episode (:func:`~gnn.relations.qt30_task.episodes`); each fold's model is
    trained on the other folds, with about a tenth of their maps (whole episodes) choosing the
    epoch and tuning every decoding of :data:`OBJECTIVES` (:func:`gnn.protocol.cross_validate`),
    and scored on its fold. Figures and predicted-against-gold counts are reported per decoding
    (``tuned_<objective>``).
    """
    import tempfile

    from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate
    from gnn.relations.qt30_task import episodes
    from gnn.relations.train import predict_probs

    hp = family.profile_hp(PROFILES, options.profile, options.epochs)
    tensors = tensors_of(maps, hp["window"], options.progress, bool(hp.get("cues")))
    groups = episodes([t.name for t in tensors])

    def run_fold(fold: Fold) -> FoldOutcome:
        parts = {name: [tensors[k] for k in getattr(fold, part)] for name, part in PARTS.items()}
        with tempfile.TemporaryDirectory(prefix="argweb-qt30-cv-") as tmp:
            trained, decodings = _fit_and_tune(parts, hp, options, Path(tmp))
            test_p = predict_probs(trained.model, trained.items["test"], options.device)
        figures: dict[str, float] = {}
        labels: dict[str, Pooled] = {}
        for obj in OBJECTIVES:
            report = _report(parts["test"], test_p, decodings[obj])
            for kind in ("general", "focused"):
                figures[f"tuned_{obj}.{kind}_f1"] = report["official_style"][kind]["f1"]
            figures[f"tuned_{obj}.relation_macro_f1"] = report["relations"]["macro_f1"]
            tally = labels[f"tuned_{obj}"] = Pooled()
            for label, row in report["relations"]["per_label"].items():
                tally.add(label, row["gold"], row["predicted"], row["right"])
        return FoldOutcome(figures, labels, {"epochs": trained.selected_epochs, "bias": summary(decodings)})

    protocol = (
        "QT30 / DialAM task A, maps grouped by episode (runs of nodeset numbers, gap > 20); in each fold about "
        "1/10 of the training maps (whole episodes) select the epoch and tune the decodings; official-style DialAM "
        "scores of the held-out fold"
    )
    out = cross_validate(groups, run_fold, folds, options.seed, protocol, log=options.log, what="QT30 cross-validation")
    return {**out, "maps": len(tensors), "episodes": len(set(groups)), "profile": options.profile}


# The protocol's parts of a fold, by the names train_gnn gives them.
PARTS = {"train": "train", "dev": "tune", "test": "test"}


@dataclass
class Qt30Model:
    """A trained QT30 model loaded from a model directory."""

    model: Any
    decodings: dict[str, Decoding]
    text: TextVectors
    window: int
    device: str
    bare_decodings: dict[str, Decoding] = field(default_factory=dict)
    cues: bool = False

    @property
    def objectives(self) -> list[str]:
        """The objectives of :data:`OBJECTIVES` this model has a decoding for (older models lack ``shares``)."""
        return [obj for obj in OBJECTIVES if obj in self.decodings]

    def decoding(self, objective: str, propositions_only: bool = False) -> Decoding:
        """The decoding tuned for ``objective`` (for maps without L-nodes, the one tuned on such maps
        when the model has it).

        Raises:
            ModelError: The model has no decoding for ``objective``.
        """
        if objective not in OBJECTIVES:
            raise ModelError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
        if objective not in self.decodings:
            raise ModelError(
                f"the model has no {objective!r} decoding (it has {', '.join(self.objectives)}); a model trained "
                f"before that decoding existed needs `argweb model train relations` again"
            )
        if propositions_only and objective in self.bare_decodings:
            return self.bare_decodings[objective]
        return self.decodings[objective]

    def predict(
        self, maps: Sequence[ArgMap], objective: str = "general", progress: bool = False
    ) -> list[list[tuple[str, str, str, float]]]:
        """Per map: (source I local id, target I local id, RA|CA|MA, probability).

        ``progress`` shows the encoder's progress bar while texts are embedded.
        """
        from gnn.relations.train import predict_probs

        self.decoding(objective)  # an unknown objective fails before any map is encoded
        tensors = tensors_of(maps, self.window, cues=self.cues)
        probs = predict_probs(self.model, family.graphs_of(FAMILY, tensors, self.text, progress), self.device)
        out = []
        for amap, t, p in zip(maps, tensors, probs, strict=True):
            decoding = self.decoding(objective, propositions_only=not amap.locutions)
            rels = decode(t.pairs, p, decoding.bias, directions=decoding.directions, gate=decoding.gate)
            out.append(
                [(amap.props[i].local_id, amap.props[j].local_id, lab, s) for (i, j), (lab, s) in sorted(rels.items())]
            )
        return out


def pair_map(index: int, source: str, target: str) -> ArgMap:
    """A two-proposition map asking the QT30 model about ``source`` -> ``target`` out of context.

    Each text is said by its own speaker in its own locution, with no transition between them:
    the pair comes from different discourses, so the structural features say "not adjacent,
    no reply", and the label rests on the texts.
    """
    from gnn.relations.argmap import Loc, Prop

    return ArgMap(
        id=f"pair:{index}",
        name=f"pair{index}",
        locutions=[Loc("L0", "L0", 0, f"A : {source}", "A", False), Loc("L1", "L1", 2, f"B : {target}", "B", False)],
        props=[Prop("I0", "I0", 1, source), Prop("I1", "I1", 3, target)],
    )


def _pair_probs(qt: Qt30Model, pairs: Sequence[tuple[str, str]], batch: int = 512) -> np.ndarray:
    """``(len(pairs), 4)`` probabilities over :data:`LABELS` of source -> target."""
    from gnn.relations.train import predict_probs

    out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
    for s in range(0, len(pairs), batch):
        chunk = pairs[s : s + batch]
        tensors = tensors_of([pair_map(s + i, a, b) for i, (a, b) in enumerate(chunk)], qt.window, cues=qt.cues)
        probs = predict_probs(qt.model, family.graphs_of(FAMILY, tensors, qt.text), qt.device)
        for i, (t, p) in enumerate(zip(tensors, probs, strict=True)):
            row = [k for k, (a, b) in enumerate(t.pairs.tolist()) if (a, b) == (0, 1)]
            out[s + i] = p[row[0]]
    return out


def classify_pairs(
    qt: Qt30Model, pairs: Sequence[tuple[str, str]], objective: str = "general"
) -> list[tuple[str, float, dict[str, float]]]:
    """Label each (source, target) text pair with the QT30 model: ``(label, probability, probabilities)``.

    The label is ``none``, ``RA``, ``CA`` or ``MA``: the relation with the highest biased
    log-probability (the model's tuned bias of ``objective``) when it beats ``none``, else ``none``.
    The probability is the model's probability of that label; ``probabilities`` has all four.
    """
    bias = qt.decoding(objective).bias
    if not pairs:
        return []
    probs = _pair_probs(qt, pairs)
    scores = biased_scores(probs, bias)
    out = []
    for p, sc in zip(probs, scores, strict=True):
        k = int(sc.argmax())
        out.append((LABELS[k], float(p[k]), {lab: float(v) for lab, v in zip(LABELS, p, strict=True)}))
    return out


def load_qt30(model_dir: Path, *, device: str = "cpu", encoder: TextVectors | None = None) -> Qt30Model:
    """Load the QT30 network (``qt30.safetensors``, ``qt30_config.json``, any LSA file) from ``model_dir``.

    Raises:
        ModelError: Missing or unreadable weights, or an encoder-based model without ``encoder``.
    """
    model, stored, text = family.load_stored(model_dir, FAMILY, device, encoder)
    directions = stored["directions"]
    # Models stored before the conflict gate have none.
    gates = stored.get("gate", {})
    decodings = {obj: Decoding(tuple(bias), directions[obj], gates.get(obj)) for obj, bias in stored["bias"].items()}
    bare = {obj: Decoding(tuple(v[0]), v[1], *v[2:3]) for obj, v in stored["propositions_only"].items()}
    cues = bool(stored["hp"].get("cues"))
    return Qt30Model(model, decodings, text, int(stored["hp"]["window"]), device, bare, cues)


def score_maps(maps: Sequence[ArgMap], predicted: Sequence[Sequence[tuple[str, str, str, float]]]) -> dict[str, Any]:
    """Official-style scores of predictions against the maps' gold relations."""
    rows = []
    for amap, preds in zip(maps, predicted, strict=True):
        index = {p.local_id: k for k, p in enumerate(amap.props)}
        rows.append((amap.gold, {(index[s], index[t]): lab for s, t, lab, _ in preds}, len(amap.props)))
    return _scores(rows)


def baseline_on(train: Sequence[ArgMap], test: Sequence[ArgMap], seed: int = 0) -> dict[str, Any]:
    """TF-IDF + LR trained on ``train`` maps (10% of them for bias tuning), scored on ``test``."""
    window = PROFILES["quick"]["window"]
    split = split_maps([m.name for m in train], SPLIT_SEED, test_share=0.0)
    tr = tensors_of([m for m in train if split[m.name] == "train"], window)
    dv = tensors_of([m for m in train if split[m.name] == "dev"], window) or tr[-1:]
    return _baseline(tr, dv, tensors_of(test, window), seed)
