"""How a :class:`~gnn.relations.model.RelationGNN` is trained and run: its :class:`~gnn.trainer.Fittable`
(batches of whole graphs, class-weighted cross-entropy plus listwise terms, selection on a tuning
score) for :class:`gnn.trainer.Trainer`, and batched inference."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Batch, HeteroData

from gnn.relations.heads import HeadChoice
from gnn.relations.model import PAIR, RelationEnsemble, RelationGNN
from gnn.trainer import Selection


def class_weights(graphs: Sequence[HeteroData], n_labels: int, power: float = 0.5) -> torch.Tensor:
    """Inverse-frequency label weights raised to ``power`` (rare conflicts count more), mean 1."""
    counts = np.ones(n_labels)
    for g in graphs:
        counts += np.bincount(g[PAIR].y.numpy(), minlength=n_labels)[:n_labels]
    w = (counts.sum() / counts) ** power
    return torch.tensor(w / w.mean(), dtype=torch.float32)


def head_choice_loss(logits: torch.Tensor, pairs: torch.Tensor, labels: torch.Tensor, term: HeadChoice) -> torch.Tensor:
    """Mean over source units of the listwise cross-entropy of :class:`~gnn.relations.heads.HeadChoice`.

    Args:
        logits: ``(Q, n_labels)`` pair logits.
        pairs: ``(Q, 2)`` ordered pairs (source, target), global unit ids.
        labels: ``(Q,)`` gold labels.
        term: Which labels make a choice, and whether only later targets compete.
    """
    if term.forward_only:
        keep = pairs[:, 1] > pairs[:, 0]
        logits, pairs, labels = logits[keep], pairs[keep], labels[keep]
    if not len(pairs):
        return logits.sum() * 0.0
    src = pairs[:, 0]
    chosen = torch.tensor(term.labels, device=logits.device)
    score = torch.logsumexp(logits[:, chosen], dim=1) - logits[:, 0]
    n = int(src.max()) + 1
    zeros = logits.new_zeros(n)
    # Shift by the per-source maximum (at least the "no partner" score 0) before exponentiating.
    top = zeros.scatter_reduce(0, src, score.detach(), "amax", include_self=True)
    e = torch.exp(score - top[src])
    # Shifted sum: its largest term is exp(0) = 1, so its log is finite.
    log_total = top + torch.log(torch.exp(-top) + zeros.index_add(0, src, e))
    gold = torch.isin(labels, chosen)
    has_gold = zeros.index_add(0, src, gold.to(logits.dtype)) > 0
    # The gold candidates' log-sum-exp, shifted by their own maximum (they may lie far below ``top``).
    gold_score = torch.where(gold, score, torch.full_like(score, -torch.inf))
    gold_top = torch.full_like(zeros, -torch.inf).scatter_reduce(0, src, gold_score.detach(), "amax")
    gold_top = torch.where(has_gold, gold_top, zeros)
    gold_sum = zeros.index_add(0, src, torch.exp(gold_score - gold_top[src]))
    log_picked = torch.where(has_gold, gold_top + torch.log(gold_sum.clamp_min(1e-30)), zeros)
    present = torch.zeros(n, dtype=torch.bool, device=logits.device)
    present[src] = True
    return (log_total - log_picked)[present].mean()


def _pairs(g: HeteroData) -> int:
    return int(g[PAIR].edge_index.shape[1])


class RelationFit:
    """One relation network's training run, as the :class:`gnn.trainer.Fittable` the trainer fits.

    The network is built when the trainer first asks for it, after the trainer has seeded torch:
    its initial weights come from the schedule's seed like the rest of the run.

    Args:
        build: Makes the untrained network.
        train: Training graphs (:func:`~gnn.relations.model.relation_graph`).
        tune: Graphs that select the epoch (``()``: none; a refit stops at a given epoch instead).
        score: Their label probabilities (one ``(pairs, labels)`` array per graph) -> the number to
            maximise.
        graphs_per_batch: Graphs per optimisation step.
        head_choices: Listwise terms added to the weighted cross-entropy.
        weight_power: Exponent of the inverse-frequency class weights.
    """

    def __init__(
        self,
        build: Callable[[], RelationGNN],
        train: Sequence[HeteroData],
        tune: Sequence[HeteroData] = (),
        score: Callable[[list[np.ndarray]], float] | None = None,
        *,
        graphs_per_batch: int = 16,
        head_choices: Sequence[HeadChoice] = (),
        weight_power: float = 0.5,
    ) -> None:
        self._build = build
        self._net: RelationGNN | None = None
        self.train = list(train)
        self.tune = list(tune)
        self.score = score
        self.graphs_per_batch = graphs_per_batch
        self.head_choices = tuple(head_choices)
        self.weight_power = weight_power
        self._loss_fn: nn.Module | None = None

    @property
    def module(self) -> RelationGNN:
        """The network (built on first use)."""
        if self._net is None:
            self._net = self._build()
        return self._net

    @property
    def device(self) -> torch.device:
        """Where the trainer put the network."""
        return next(self.module.parameters()).device

    def param_groups(self) -> Any:
        """Every parameter of the network."""
        return self.module.parameters()

    def batches(self, rng: np.random.Generator) -> list[Batch]:
        """The training graphs in ``rng``'s order, ``graphs_per_batch`` at a time; graphs without
        candidate pairs are dropped from their batch."""
        order = rng.permutation(len(self.train))
        out = []
        for s in range(0, len(order), self.graphs_per_batch):
            group = [self.train[k] for k in order[s : s + self.graphs_per_batch] if _pairs(self.train[k])]
            if group:
                out.append(Batch.from_data_list(group))
        return out

    def loss(self, batch: Batch) -> torch.Tensor:
        """Class-weighted cross-entropy of the pair labels plus the weighted listwise terms."""
        if self._loss_fn is None:
            weights = class_weights(self.train, self.module.n_labels, self.weight_power)
            self._loss_fn = nn.CrossEntropyLoss(weight=weights.to(self.device))
        batch = batch.to(self.device)
        logits = self.module(batch)
        pairs, labels = batch[PAIR].edge_index.t(), batch[PAIR].y
        loss = self._loss_fn(logits, labels)
        for term in self.head_choices:
            loss = loss + term.weight * head_choice_loss(logits, pairs, labels, term)
        return loss

    def select(self) -> Selection | None:
        """The tuning score of the current weights (``None`` without tuning graphs)."""
        if not self.tune or self.score is None:
            return None
        value = float(self.score(predict_probs(self.module, self.tune, str(self.device))))
        return Selection(value)


def predict_probs(
    model: RelationGNN | RelationEnsemble, graphs: Sequence[HeteroData], device: str = "cpu", batch: int = 32
) -> list[np.ndarray]:
    """Label probabilities ``(pairs, n_labels)`` of every graph, in order."""
    model.eval()
    n_labels = model.n_labels
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for s in range(0, len(graphs), batch):
            group = list(graphs[s : s + batch])
            nonempty = [g for g in group if _pairs(g)]
            probs = (
                torch.softmax(model(Batch.from_data_list(nonempty).to(device)), dim=1).cpu().numpy()
                if nonempty
                else np.zeros((0, n_labels), dtype=np.float32)
            )
            off = 0
            for g in group:
                n = _pairs(g)
                out.append(probs[off : off + n] if n else np.zeros((0, n_labels), np.float32))
                off += n
    return out
