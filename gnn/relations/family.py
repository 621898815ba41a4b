"""What the per-family relation tasks (QT30 maps, Sci-Arg papers) share.

Both families train the same :class:`~gnn.relations.model.RelationGNN` on groups of units (a map's
I-nodes, a paper's components) with candidate pairs inside each group; they differ in features,
split and scoring. The steps around that are one piece of code here: the training profile, the
text vectors (LSA fitted and stored next to the weights, or the encoder), embedding the units of
every group in one call, training the networks through :class:`gnn.trainer.Trainer`, the pair
texts of the TF-IDF baseline, timing held-out inference, and storing and loading a model (weights
as safetensors, the rest of what a family needs as JSON beside them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from gnn.relations.heads import HeadChoice
from gnn.relations.text import Lsa, TextVectors
from gnn.trainer import Progress
from ontology.errors import ModelError, UnknownProfileError


@dataclass
class PairTensors:
    """One graph of units (a map's I-nodes, a paper's components) and its candidate pairs, as arrays.

    Attributes:
        name: Map file stem or paper name.
        texts: Unit texts (for the encoder and the text-only baseline).
        prop_feats: ``(units, features)``.
        edges: ``(3, E)``: source, target, edge type.
        pairs: ``(P, 2)`` candidate ordered unit pairs.
        pair_feats: ``(P, features)``.
        labels: ``(P,)`` gold label index (0 when unknown or none).
        gold: Gold relations of the graph (all of them, candidates or not).
    """

    name: str
    texts: list[str]
    prop_feats: np.ndarray
    edges: np.ndarray
    pairs: np.ndarray
    pair_feats: np.ndarray
    labels: np.ndarray
    gold: dict[tuple[int, int], str]

    @property
    def pair_group(self) -> PairGroup:
        """Texts, candidate pairs and labels: what the text-only baseline reads."""
        return self.texts, self.pairs, self.labels


T = TypeVar("T", bound=PairTensors)


@dataclass(frozen=True)
class TrainOptions:
    """How every family of one training run is trained.

    Attributes:
        profile: ``quick`` (LSA text vectors) or ``full`` (the text encoder).
        seed: Seed of the text vectors, the weights and the batches.
        device: Torch device.
        encoder: Text encoder for the ``full`` profile (``None``: LSA).
        epochs: Overrides the profile's number of epochs.
        progress: Receives ``(stage, done, total)`` while features are computed and networks
            trained (:data:`gnn.trainer.Progress`); ``None``: nothing.
        log: Receives progress lines (one per epoch of every network).
    """

    profile: str = "quick"
    seed: int = 0
    device: str = "cpu"
    encoder: TextVectors | None = None
    epochs: int | None = None
    progress: Progress | None = None
    log: Callable[[str], None] = lambda _msg: None


@dataclass(frozen=True)
class Family(Generic[T]):
    """What one corpus family's relation model is made of, besides its features and scoring.

    Attributes:
        name: Family name for log lines, progress and errors.
        unit: What a group is, for log lines (``maps``, ``papers``).
        stem: Name of the family's files in the model directory (:attr:`weights`, :attr:`config`,
            :attr:`lsa_file`).
        dims: The model's input widths besides the text vectors (``prim_dim``, ``sec_dim``,
            ``pair_dim``, ``n_edge_types``, ``n_labels``).
        item_of: A group and its text vectors -> its graph (:func:`gnn.relations.model.relation_graph`).
        dev_score: Dev groups -> function of dev probabilities to maximise (model selection).
        graphs_per_batch: Groups per training batch.
        head_choices: Listwise terms added to the pairwise loss.
    """

    name: str
    unit: str
    stem: str
    dims: Mapping[str, int]
    item_of: Callable[[T, np.ndarray], Any]
    dev_score: Callable[[list[T]], Callable[[list[np.ndarray]], float]]
    graphs_per_batch: int = 16
    head_choices: tuple[HeadChoice, ...] = ()

    @property
    def weights(self) -> str:
        """The weights file (safetensors)."""
        return f"{self.stem}.safetensors"

    @property
    def config(self) -> str:
        """The JSON file beside the weights: the network's configuration, decoding and hyper-parameters."""
        return f"{self.stem}_config.json"

    @property
    def lsa_file(self) -> str:
        """The LSA text-vector file (models whose profile reads no encoder)."""
        return f"{self.stem}_lsa.npz"


def profile_hp(profiles: Mapping[str, Mapping[str, Any]], profile: str, epochs: int | None) -> dict[str, Any]:
    """A copy of the hyper-parameters of ``profile``, with ``epochs`` overriding the profile's.

    Raises:
        UnknownProfileError: ``profile`` is not one of ``profiles``.
    """
    UnknownProfileError.check(profile, profiles, "relations")
    hp = dict(profiles[profile])
    if epochs is not None:
        hp["epochs"] = epochs
    return hp


def fit_text_vectors(
    hp: dict[str, Any], encoder: TextVectors | None, texts: Sequence[str], lsa_path: Path, seed: int
) -> tuple[TextVectors, list[str]]:
    """The text vectors a model trains on, recorded in ``hp`` (``text``, ``text_model``).

    The ``lsa`` profile, or any profile without an encoder, fits an LSA on ``texts`` and saves it to
    ``lsa_path``; otherwise ``encoder`` is used as it is.

    Returns:
        The text vectors and the names of the files written into the model directory.
    """
    if hp["text"] == "lsa" or encoder is None:
        hp["text"] = "lsa"
        lsa = Lsa.fit(texts, seed=seed)
        lsa.save(lsa_path)
        hp["text_model"] = lsa.name
        return lsa, [lsa_path.name]
    hp["text_model"] = getattr(encoder, "name", "encoder")
    return encoder, []


def graphs_of(spec: Family[T], groups: Sequence[T], text: TextVectors, progress: bool = False) -> list[Any]:
    """The graphs the family's network reads of ``groups``, the texts of all their units encoded by
    ``text`` in one call (``progress``: the encoder's progress bar)."""
    flat = [s for t in groups for s in t.texts]
    vecs = text.encode(flat, progress=progress) if flat else np.zeros((0, text.dim), np.float32)
    embs = split_rows(vecs, [len(t.texts) for t in groups])
    return [spec.item_of(t, e) for t, e in zip(groups, embs, strict=True)]


def split_rows(flat: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """Consecutive row blocks of ``flat``, one of each size."""
    out, off = [], 0
    for n in sizes:
        out.append(flat[off : off + n])
        off += n
    return out


PairGroup = tuple[Sequence[str], np.ndarray, np.ndarray]
"""A group's unit texts, its ``(n, 2)`` candidate pairs and their ``(n,)`` label indices."""


def pair_texts(groups: Sequence[PairGroup]) -> tuple[list[str], list[str], list[int]]:
    """Source texts, target texts and label indices of every candidate pair of ``groups``."""
    src, tgt, lab = [], [], []
    for texts, pairs, labels in groups:
        for (i, j), y in zip(pairs.tolist(), labels.tolist(), strict=True):
            src.append(texts[i])
            tgt.append(texts[j])
            lab.append(y)
    return src, tgt, lab


def tfidf_baseline(
    train: Sequence[PairGroup], n_labels: int, seed: int
) -> Callable[[Sequence[PairGroup]], list[np.ndarray]]:
    """Fit the TF-IDF + LR pair baseline on the candidate pairs of ``train``.

    Returns:
        A function giving, for groups of the same form, one ``(pairs, n_labels)`` probability block per group.
    """
    from gnn.relations.baseline import PairTfidfLR

    model = PairTfidfLR(seed=seed).fit(*pair_texts(train))

    def probs(groups: Sequence[PairGroup]) -> list[np.ndarray]:
        src, tgt, _ = pair_texts(groups)
        return split_rows(model.predict_proba(src, tgt, n_labels), [len(pairs) for _, pairs, _ in groups])

    return probs


def heldout_metrics(
    trained: Trained, report: Callable[[list[np.ndarray]], dict[str, Any]], device: str
) -> dict[str, Any]:
    """``heldout``: ``report`` of the model's probabilities of the held-out groups and its throughput
    (``pairs_per_second``, candidate pairs); ``heldout_before_refit``: that of the selected networks
    when the model was refit."""
    from gnn.relations.train import predict_probs

    start = time.perf_counter()
    probs = predict_probs(trained.model, trained.items["test"], device)
    pairs_per_second = round(sum(len(p) for p in probs) / max(time.perf_counter() - start, 1e-9), 1)
    out = {"heldout": {**report(probs), "pairs_per_second": pairs_per_second}}
    if trained.selection_model is not None:
        out["heldout_before_refit"] = report(predict_probs(trained.selection_model, trained.items["test"], device))
    return out


def save_stored(out_dir: Path, spec: Family[Any], state: Mapping[str, Any], stored: Mapping[str, Any]) -> None:
    """Write a family's network: ``state`` (tensors, in their dtype) as safetensors, ``stored`` as JSON.

    Args:
        out_dir: Model directory.
        spec: The family (file names).
        state: The network's state dict as it is to be stored.
        stored: ``config`` (the network's :func:`~gnn.relations.model.build_model` configuration),
            ``hp`` and whatever else the family reads back (biases, decodings ...).
    """
    from gnn.weights import save_weights

    save_weights(out_dir, spec.weights, state, spec.config, stored)


def load_stored(
    model_dir: Path, spec: Family[Any], device: str, encoder: TextVectors | None
) -> tuple[Any, dict[str, Any], TextVectors]:
    """Load a relation network saved by :func:`save_stored` and its text vectors.

    Returns:
        The model (in eval mode on ``device``), what was stored beside it (``config``, ``hp``,
        ``bias`` ...) and the text vectors.

    Raises:
        ModelError: Missing or unreadable weights (a model stored in torch's pickle format by a
            version before 0.8.0 included), or an encoder-based model without ``encoder``.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from gnn.relations.model import build_model

    path = model_dir / spec.weights
    if not path.is_file():
        if (model_dir / f"{spec.stem}.pt").is_file():
            raise ModelError(
                f"{model_dir / f'{spec.stem}.pt'}: a {spec.name} relation model in torch's pickle format, which is "
                f"no longer read; train it again with `argweb train relations` ({spec.weights} and {spec.config})"
            )
        raise ModelError(f"{model_dir}: no {spec.name} relation model ({spec.weights} is missing)")
    try:
        stored = json.loads((model_dir / spec.config).read_text(encoding="utf-8"))
        model = build_model(stored["config"])
        model.load_state_dict(load_file(str(path)))
    except (OSError, RuntimeError, KeyError, TypeError, ValueError, SafetensorError) as e:
        raise ModelError(f"{path}: unreadable {spec.name} model ({e})") from e
    model.to(device).eval()
    hp = stored["hp"]
    if hp["text"] == "lsa":
        text: TextVectors = Lsa.load(model_dir / spec.lsa_file)
    elif encoder is None:
        raise ModelError(f"{path}: the model uses encoder {hp.get('text_model')!r}; pass a text encoder")
    else:
        text = encoder
    return model, stored, text


@dataclass
class Trained:
    """A relation GNN trained by :func:`train_gnn`, with what its family needs to tune, save and report."""

    model: Any
    config: dict[str, Any]
    text: TextVectors
    files: list[str]
    items: dict[str, list[Any]]
    train_seconds: float
    selection_model: Any = None
    # Per member, how many epochs the refit trained (its selected epoch, counted from 1).
    refit_epochs: list[int] | None = None
    # Per member, the epoch (from 1) its tuning score chose.
    selected_epochs: list[int] = field(default_factory=list)

    @property
    def tuning_model(self) -> Any:
        """The model to tune on dev: the selected networks when ``model`` was refit on dev too."""
        return self.model if self.selection_model is None else self.selection_model


def train_gnn(
    parts: dict[str, list[T]],
    hp: dict[str, Any],
    options: TrainOptions,
    out_dir: Path,
    spec: Family[T],
    members: Sequence[Mapping[str, int]] = ({},),
    refit: bool = False,
) -> Trained:
    """Fit the text vectors and train :class:`~gnn.relations.model.RelationGNN` networks on ``parts``.

    Every network is fitted by :class:`gnn.trainer.Trainer` (AdamW, weight decay 1e-4, cosine
    decay over ``hp["epochs"]``, gradient norm clipped to 1, seeded by ``options.seed``), keeping the
    epoch with the best ``spec.dev_score`` on the dev groups.

    Args:
        parts: ``train``, ``dev`` and ``test`` groups (maps, papers); an empty ``dev`` is replaced
            by the last training group (tiny inputs select and tune on it rather than fail).
        hp: Hyper-parameters (``epochs``, ``lr``, ``text``); the text model is recorded in it.
        options: Encoder, seed, device, progress and log of the run.
        out_dir: Model directory (the LSA file is written there).
        spec: The family.
        members: One entry per network to train: widths that override ``spec.dims`` for it (a
            member with a smaller ``prim_dim`` reads only the first node-feature columns). More
            than one makes a :class:`~gnn.relations.model.RelationEnsemble`; every member is
            trained from the same seed and selected on dev alone, so members should differ in
            their inputs.
        refit: After selection, train every member again from the same seed on train and dev
            together, stopping at its selected epoch; the result is ``model``, the selected
            networks are kept as ``selection_model`` (dev probabilities to tune on).
    """
    from gnn.relations.model import RelationEnsemble, RelationGNN
    from gnn.relations.train import RelationFit
    from gnn.trainer import FitResult, Schedule, Trainer

    # Without dev groups there is nothing to refit on.
    refit = refit and bool(parts["dev"])
    if not parts["dev"]:
        parts["dev"] = parts["train"][-1:]
    texts = [s for t in parts["train"] + parts["dev"] for s in t.texts]
    text, lsa_files = fit_text_vectors(hp, options.encoder, texts, out_dir / spec.lsa_file, options.seed)
    sizes = f"{len(parts['train'])} train / {len(parts['dev'])} dev / {len(parts['test'])} held-out"
    options.log(f"{spec.name}: {sizes} {spec.unit}")
    items = {split: graphs_of(spec, groups, text, options.progress is not None) for split, groups in parts.items()}
    base: dict[str, int] = {"emb_dim": text.dim, **spec.dims}
    configs = [{**base, **dict(m)} for m in members]
    # float32 throughout: the recipe was tuned so, and the block-sparse R-GCN product is untested under bf16.
    schedule = Schedule(epochs=hp["epochs"], lr=hp["lr"], weight_decay=1e-4, seed=options.seed, autocast=False)
    score = spec.dev_score(parts["dev"])

    def train_member(k: int, train: list[Any], tune: list[Any], what: str, stop_after: int | None = None) -> Any:
        """Member ``k`` from the run's seed: its network and the trainer's result."""
        label = f"{spec.name} {what}" + (f" {k + 1}/{len(configs)}" if len(configs) > 1 else "")
        job = RelationFit(
            partial(RelationGNN, **configs[k]),
            train,
            tune,
            score,
            graphs_per_batch=spec.graphs_per_batch,
            head_choices=spec.head_choices,
            # A recipe may weight rare labels (conflicts) harder than the default square root.
            weight_power=float(hp.get("weight_power", 0.5)),
        )
        progress = options.progress
        trainer = Trainer(
            schedule,
            options.device,
            progress=None if progress is None else lambda _stage, done, total: progress(label, done, total),
            log=options.log,
            label=f"{label}: ",
        )
        result: FitResult = trainer.fit(job, stop_after=stop_after)
        return job.module, result

    start = time.perf_counter()
    selected = [train_member(k, items["train"], items["dev"], "relation GNN") for k in range(len(configs))]
    nets = [net for net, _ in selected]
    chosen = [result.best_epoch for _, result in selected]
    refit_nets = [
        train_member(k, items["train"] + items["dev"], [], "refit on train + dev", stop_after=chosen[k])[0]
        for k in range(len(configs))
        if refit
    ]

    def combined(networks: Sequence[Any]) -> Any:
        return networks[0] if len(networks) == 1 else RelationEnsemble(configs, networks)

    return Trained(
        combined(refit_nets or nets),
        configs[0] if len(configs) == 1 else {"members": configs},
        text,
        [spec.weights, spec.config, *lsa_files],
        items,
        time.perf_counter() - start,
        selection_model=combined(nets) if refit_nets else None,
        refit_epochs=chosen if refit_nets else None,
        selected_epochs=chosen,
    )
