"""Training and inference loops of :class:`~gnn.relations.model.RelationGNN` (full-batch per group of graphs)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from gnn.relations.heads import HeadChoice
from gnn.relations.model import GraphBatch, RelationGNN, collate

Item = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def class_weights(items: Sequence[Item], n_labels: int, power: float = 0.5) -> torch.Tensor:
    """Inverse-frequency label weights raised to ``power`` (rare conflicts count more), mean 1."""
    counts = np.ones(n_labels)
    for it in items:
        counts += np.bincount(it[6], minlength=n_labels)[:n_labels]
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


def _batches(items: Sequence[Item], size: int, rng: np.random.Generator | None) -> list[GraphBatch]:
    order = np.arange(len(items)) if rng is None else rng.permutation(len(items))
    out = []
    for s in range(0, len(order), size):
        group = [items[k] for k in order[s : s + size] if len(items[k][4])]
        if group:
            out.append(collate(group))
    return out


def predict_probs(model: RelationGNN, items: Sequence[Item], device: str = "cpu", batch: int = 32) -> list[np.ndarray]:
    """Label probabilities ``(pairs, n_labels)`` of every item, in order."""
    model.eval()
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for s in range(0, len(items), batch):
            group = list(items[s : s + batch])
            nonempty = [it for it in group if len(it[4])]
            probs = (
                torch.softmax(model(collate(nonempty).to(device)), dim=1).cpu().numpy()
                if nonempty
                else np.zeros((0, 1), dtype=np.float32)
            )
            off = 0
            for it in group:
                n = len(it[4])
                out.append(probs[off : off + n] if n else np.zeros((0, model.n_labels), np.float32))
                off += n
    return out


def fit(
    model: RelationGNN,
    train: Sequence[Item],
    dev: Sequence[Item],
    score: Callable[[list[np.ndarray]], float],
    *,
    epochs: int,
    seed: int,
    device: str = "cpu",
    lr: float = 2e-3,
    graphs_per_batch: int = 16,
    weight_power: float = 0.5,
    head_choices: Sequence[HeadChoice] = (),
    progress: bool = False,
    desc: str = "training",
    stop_after: int | None = None,
) -> dict[str, object]:
    """Train with weighted cross-entropy (plus any listwise terms); keep the epoch whose dev ``score`` is best.

    With ``stop_after`` (a refit on more data, its epoch chosen by an earlier run) training ends after
    that epoch and keeps its weights, without scoring ``dev``; the learning-rate schedule still
    spans ``epochs``, so the weights are those the same epoch of a full run would have.

    Args:
        model: The model (trained in place; the best epoch's weights are restored).
        train: Training graphs.
        dev: Development graphs (for model selection).
        score: Dev probabilities -> number to maximise.
        epochs: Passes over ``train``.
        seed: Seed of the batch order.
        device: Torch device.
        lr: AdamW learning rate.
        graphs_per_batch: Graphs per optimisation step.
        weight_power: Exponent of the inverse-frequency class weights.
        head_choices: Listwise terms added to the weighted cross-entropy.
        progress: Show a progress bar.
        desc: Progress bar label.
        stop_after: Last epoch to train (0-based); ``None``: all ``epochs``, selected on ``dev``.

    Returns:
        History: per-epoch loss and dev score, best epoch, seconds.
    """
    rng = np.random.default_rng(seed)
    model.to(device)
    loss_fn = nn.CrossEntropyLoss(weight=class_weights(train, model.n_labels, weight_power).to(device))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
    best, best_state, best_epoch = -1.0, copy.deepcopy(model.state_dict()), -1
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=epochs if stop_after is None else stop_after + 1, desc=desc, unit="epoch")
    last = epochs if stop_after is None else min(stop_after + 1, epochs)
    try:
        for epoch in range(last):
            model.train()
            total, n = 0.0, 0
            for batch in _batches(train, graphs_per_batch, rng):
                batch = batch.to(device)
                logits = model(batch)
                loss = loss_fn(logits, batch.labels)
                for term in head_choices:
                    loss = loss + term.weight * head_choice_loss(logits, batch.pairs, batch.labels, term)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                total += float(loss.detach()) * len(batch.labels)
                n += len(batch.labels)
            sched.step()
            if stop_after is not None:
                history.append({"epoch": epoch, "loss": round(total / max(n, 1), 5)})
                best_epoch = epoch
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{total / max(n, 1):.3f}")
                continue
            dev_score = score(predict_probs(model, dev, device)) if dev else -float(total / max(n, 1))
            history.append({"epoch": epoch, "loss": round(total / max(n, 1), 5), "dev": round(dev_score, 4)})
            if dev_score > best:
                best, best_state, best_epoch = dev_score, copy.deepcopy(model.state_dict()), epoch
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{total / max(n, 1):.3f}", dev=f"{dev_score:.3f}")
    finally:
        if bar is not None:
            bar.close()
    if stop_after is None:
        model.load_state_dict(best_state)
    return {
        "history": history,
        "best_epoch": best_epoch,
        "best_dev": round(best, 4),
        "seconds": time.perf_counter() - start,
    }
