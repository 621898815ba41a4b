"""What fine-tuning the encoder buys the ContextDeP paraphrase highlighter: measured, not adopted.

The shipped highlighter (``gnn/models/paraphrase``) keeps all-MiniLM-L6-v2 frozen and trains a small
head on its word vectors. This script holds the fine-tuned kind (:class:`FineTunedHighlighter`, a
:class:`gnn.paraphrase.Highlighter` trained by :func:`gnn.paraphrase.fit_highlighter`): the
encoder's top ``--train-layers`` transformer layers (all six by default), or low-rank adapters on
them (``--lora-rank``), plus a linear token head. A word's logit is the mean of its sub-words'
logits (words cut off by the 512-token limit keep logit 0), and the frozen lower layers' outputs are
computed once per pair, so an epoch costs only the trained layers (about 30 s for all six over the
420 ContextDeP training pairs on the idle 2-core machine). It needs a BERT-like encoder
(``encoder.layer``).

It trains on the train file and scores exactly as the shipped model is scored, in the same run:

- the same targets (``ParaphrasePair.targets("share")``) and loss (binary cross-entropy per word);
- the same halves of the dev file (``split_by_interview``: tuning half and held-out half);
- the same pair rule (a paraphrase when both sides have a word with probability >= 0.5), the same
  offsets (``gnn.paraphrase.BIASES``) and the same selection criterion on the tuning half (F1 plus
  the mean of the two highlight Jaccards) for the epoch and the offset;
- the frozen shipped model's figures on the same halves, printed beside.

Figures: ``docs/experiments/paraphrase.md`` (held-out F1 0.746 against the frozen model's 0.738 on
the dev halves, F1 0.699 ± 0.050 out of fold under the grouped protocol, under the shipped model's
0.711 ± 0.029; the 43 MB of weights were too large to ship; adapters: 1.4 MB). Until it moved
here it was ``argweb model train paraphrase --profile finetune|lora`` and a benchmark.

Usage: ``python -m experiments.paraphrase_finetune [--data-dir DIR] [--epochs 10] [--train-layers 6]
[--lr 5e-5] [--lora-rank 0] [--seed 13] [--limit N] [--save DIR] [--json OUT]``
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gnn.paraphrase import CONFIG, Highlighter, HighlighterConfig, fit_highlighter, pair_encoding, pairs_from_file
from gnn.paraphrase_eval import ParaphraseMetrics, ParaphrasePair, score_predictions, split_by_interview
from gnn.registry import shipped_model
from gnn.trainer import FitResult, Progress, Schedule
from ontology.errors import ModelError
from ontology.formats.registry import SAMPLES

if TYPE_CHECKING:
    import torch

    from gnn.encoder import TextEncoder

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpora" / "contextdep"


@dataclass
class FineTuneConfig(HighlighterConfig):
    """The highlighter's hyper-parameters with those of fine-tuning.

    Attributes:
        finetune_layers: Trained top encoder layers.
        encoder_lr: Their learning rate (``lr`` is the head's).
        lora_rank: Low-rank adapters of this rank instead of whole trained layers (0: the layers).
    """

    finetune_layers: int = 6
    encoder_lr: float = 5e-5
    lora_rank: int = 0


# ``finetune`` fine-tunes all six MiniLM layers with a linear token head (about 6 minutes on the
# 2-core machine; 43 MB of weights). ``lora`` trains rank-8 adapters instead (1.4 MB; its encoder
# learning rate, 1e-3 rather than 5e-4, was chosen on the tuning half).
PROFILES: dict[str, dict[str, Any]] = {
    "finetune": {"epochs": 10, "finetune_layers": 6, "lr": 1e-3, "dropout": 0.1},
    "lora": {"epochs": 10, "finetune_layers": 6, "lora_rank": 8, "encoder_lr": 1e-3, "lr": 1e-3, "dropout": 0.1},
}
# The model-quality targets of docs/models/paraphrase.md (F1 at a precision of 0.65 or more, and the
# DeBERTa-v3-large token classifier's highlight Jaccards); the paper's GPT-4 row is an anchor there.
GOALS = {"f1": 0.75, "precision": 0.65, "jaccard_guest": 0.52, "jaccard_host": 0.66}


# The linear maps of a BERT layer that get adapters: attention query, key, value and output, and
# the feed-forward block's two projections.
LORA_TARGETS = (
    ("attention", "self", "query"),
    ("attention", "self", "key"),
    ("attention", "self", "value"),
    ("attention", "output", "dense"),
    ("intermediate", "dense"),
    ("output", "dense"),
)


def add_lora(layers: Any, rank: int, alpha: float | None = None) -> None:
    """Freeze ``layers`` and give each of their :data:`LORA_TARGETS` a trainable low-rank update.

    ``W x`` becomes ``W x + (alpha / rank) * B A x`` (Hu et al. 2022) with ``A`` (rank x in) drawn
    like a linear layer's weight and ``B`` (out x rank) zero, so training starts from the encoder
    as it is. The layer norms stay trainable (a few thousand parameters).
    """
    import math

    import torch

    class LoraLinear(torch.nn.Module):
        def __init__(self, base: torch.nn.Linear) -> None:
            super().__init__()
            self.base = base
            self.lora_a = torch.nn.Parameter(torch.empty(rank, base.in_features))
            self.lora_b = torch.nn.Parameter(torch.zeros(base.out_features, rank))
            torch.nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
            self.scale = (alpha if alpha is not None else 2.0 * rank) / rank

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.base(x) + (x @ self.lora_a.T @ self.lora_b.T) * self.scale

    for layer in layers:
        for p in layer.parameters():
            p.requires_grad_(False)
        for path in LORA_TARGETS:
            parent = layer
            for name in path[:-1]:
                parent = getattr(parent, name)
            setattr(parent, path[-1], LoraLinear(getattr(parent, path[-1])))
        for module in layer.modules():
            if isinstance(module, torch.nn.LayerNorm):
                for p in module.parameters():
                    p.requires_grad_(True)


def _through(layers: Any, x: Any, attention_mask: Any) -> Any:
    """``x`` (batch x sub-words x width) through BERT ``layers`` in turn (``attention_mask``: additive or ``None``)."""
    for layer in layers:
        out = layer(x, attention_mask=attention_mask)
        x = out[0] if isinstance(out, tuple) else out
    return x


class FineTunedHighlighter(Highlighter):
    """Frozen lower encoder layers, fine-tuned upper layers (or adapters on them) and a token head.

    Build one with :func:`train_finetuned` or :func:`load_finetuned`.
    Its inputs are each pair's frozen-layer states, their sub-words' word indices and its word count.

    Args:
        config: Hyper-parameters; ``finetune_layers`` is the number of trained top layers.
        encoder: The encoder whose layers are copied and trained.

    Raises:
        ModelError: The encoder has no BERT-like layer stack.
    """

    WEIGHTS = "paraphrase_encoder.safetensors"
    config: FineTuneConfig

    def __init__(self, config: FineTuneConfig, encoder: TextEncoder) -> None:
        import torch

        self.config, self.encoder = config, encoder
        self.tokenizer, self.base = encoder.load_transformer()
        stack = getattr(getattr(self.base, "encoder", None), "layer", None)
        if not isinstance(stack, torch.nn.ModuleList):
            raise ModelError(f"{encoder.model_dir}: no BERT-like layer stack (encoder.layer) to fine-tune")
        n_layers = len(stack)
        self.frozen = n_layers - max(1, min(config.finetune_layers, n_layers))
        self.layers = torch.nn.ModuleList(copy.deepcopy(stack[k]) for k in range(self.frozen, n_layers))
        if config.lora_rank > 0:
            add_lora(self.layers, config.lora_rank)
        self.width = int(self.base.config.hidden_size)
        self.head = torch.nn.Sequential(torch.nn.Dropout(config.dropout), torch.nn.Linear(self.width, 1))
        # Its state dict's keys ("layers.", "head.") are those of the weights file.
        self.module = torch.nn.ModuleDict({"layers": self.layers, "head": self.head})
        self.module.to(next(self.base.parameters()).device)

    @classmethod
    def restore(
        cls, state: dict[str, Any], config: HighlighterConfig, encoder: TextEncoder, cache_dir: Path | None = None
    ) -> FineTunedHighlighter:
        """The highlighter of stored layers (or adapters) and head; the rest is the encoder's own.

        Raises:
            ModelError: ``config`` is not a :class:`FineTuneConfig`.
            FileNotFoundError: The stored layers do not match the configuration.
        """
        if not isinstance(config, FineTuneConfig):
            raise ModelError("a fine-tuned highlighter needs a FineTuneConfig")
        model = cls(config, encoder)
        layers = {k[len("layers.") :] for k in state if k.startswith("layers.")}
        if layers != set(model.stored_layer_state()):
            raise FileNotFoundError(f"{cls.WEIGHTS}: its layer weights do not match the configuration")
        model.module.load_state_dict(state, strict=config.lora_rank == 0)
        model.module.eval()
        return model

    @property
    def notes(self) -> str:
        """What the model is, for its card."""
        tuned = f"rank-{self.config.lora_rank} adapters on" if self.config.lora_rank else "fine-tuned"
        return (
            f"{self.encoder.name} pair encoding (guest and host in one input), top {len(self.layers)} layers {tuned} "
            "(stored), the rest frozen + linear token head"
        )

    # -- inputs -------------------------------------------------------------------------------
    def read(self, pair: ParaphrasePair) -> tuple[Any, Any, int]:
        """Output of the frozen layers for one pair (float16, sub-words x width), its word index and word count.

        Only the embeddings and the frozen layers run: the encoder's own upper layers, which the
        trained copies replace, are skipped.
        """
        import torch

        enc, index = pair_encoding(self.tokenizer, pair.guest, pair.host, self.config.max_length)
        enc = enc.to(next(self.base.parameters()).device)
        with torch.inference_mode():
            x = self.base.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
            # One unpadded sequence: no attention mask is needed.
            states = _through(self.base.encoder.layer[: self.frozen], x, None)[0]
        return states.half().cpu(), torch.tensor(index), len(pair.guest) + len(pair.host)

    def word_logits(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        """One logit per guest-then-host word of each pair, from its :meth:`read` (in the module's mode)."""
        import torch

        device = next(self.head.parameters()).device
        length = max(s.shape[0] for s, _, _ in inputs)
        x = torch.zeros(len(inputs), length, self.width, device=device)
        mask = torch.zeros(len(inputs), length, device=device)
        for row, (s, _, _) in enumerate(inputs):
            x[row, : len(s)] = s.float().to(device)
            mask[row, : len(s)] = 1.0
        # Padding is masked out of every sub-word's attention (an additive mask the layers broadcast).
        additive = (1.0 - mask)[:, None, None, :] * -1e9
        # float32 words whatever the autocast precision of the layers (index_add keeps one dtype)
        logits = self.head(_through(self.layers, x, additive)).squeeze(-1).float()
        words = []
        for row, (_, index, n) in enumerate(inputs):
            index = index.to(device)
            keep = index >= 0
            total = torch.zeros(n, device=device).index_add(0, index[keep], logits[row, : len(index)][keep])
            count = torch.zeros(n, device=device).index_add(0, index[keep], torch.ones(int(keep.sum()), device=device))
            words.append(total / count.clamp_min(1.0))
        return words

    # -- prediction and training --------------------------------------------------------------
    def batches(self, inputs: Sequence[Any], targets: Sequence[np.ndarray], rng: np.random.Generator) -> list[Any]:
        """Batches of ``pair_batch`` pairs of about the same length (little padding), in a random order."""
        order = sorted(range(len(inputs)), key=lambda i: inputs[i][0].shape[0])
        chunks = [order[k : k + self.config.pair_batch] for k in range(0, len(order), self.config.pair_batch)]
        return [([inputs[i] for i in chunks[j]], [targets[i] for i in chunks[j]]) for j in rng.permutation(len(chunks))]

    def loss(self, batch: Any) -> torch.Tensor:
        """The mean word loss of the batch."""
        import torch

        inputs, targets = batch
        logits = torch.cat(self.word_logits(inputs))
        target = torch.from_numpy(np.concatenate(targets)).to(logits.device)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, target)

    def trainable(self) -> list[Any]:
        """The encoder-side parameters training updates (all of the copied layers, or their adapters)."""
        return [p for p in self.layers.parameters() if p.requires_grad]

    def param_groups(self) -> Any:
        """The layers at ``encoder_lr``, the head at ``lr``."""
        return [{"params": self.trainable(), "lr": self.config.encoder_lr}, {"params": self.head.parameters()}]

    def schedule(self) -> Schedule:
        """AdamW at constant learning rates, gradients clipped to norm 1."""
        c = self.config
        return Schedule(epochs=c.epochs, lr=c.lr, weight_decay=c.weight_decay, decay="none", clip=1.0, seed=c.seed)

    # -- storage ------------------------------------------------------------------------------
    def stored_layer_state(self) -> dict[str, Any]:
        """What is stored of the layers: everything, or with adapters only the trained tensors."""
        if self.config.lora_rank == 0:
            return dict(self.layers.state_dict())
        return {name: p for name, p in self.layers.named_parameters() if p.requires_grad}

    def state(self) -> dict[str, Any]:
        """The stored layers and the head (float32)."""
        state = {f"layers.{k}": v for k, v in self.stored_layer_state().items()}
        state |= {f"head.{k}": v for k, v in self.head.state_dict().items()}
        return {k: v.detach().cpu().contiguous() for k, v in state.items()}


def train_finetuned(
    train: Sequence[ParaphrasePair],
    tune: Sequence[ParaphrasePair],
    config: FineTuneConfig,
    encoder_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[FineTunedHighlighter, FitResult, dict[str, float | int]]:
    """Fit a fine-tuned highlighter on ``train``, keeping the epoch and offset best on ``tune``
    (:func:`gnn.paraphrase.fit_highlighter`, as the shipped kind is trained; ``cache_dir`` is not
    used: the frozen layers' outputs are recomputed, since they depend on ``finetune_layers``)."""
    from gnn.device import seed_everything
    from gnn.encoder import TextEncoder

    seed_everything(config.seed)
    encoder = TextEncoder(encoder_dir)
    config.base_model = config.base_model or encoder.name
    model = FineTunedHighlighter(config, encoder)
    inputs = model.inputs([*train, *tune], progress)
    fit, tuned = fit_highlighter(model, inputs, train, tune, progress, log)
    return model, fit, tuned


def load_finetuned(model_dir: Path, encoder_dir: Path | None = None) -> FineTunedHighlighter:
    """The fine-tuned highlighter :meth:`Highlighter.save` wrote to ``model_dir``.

    Raises:
        FileNotFoundError: ``model_dir`` lacks the configuration or the weights.
    """
    from safetensors.torch import load_file

    from gnn.encoder import TextEncoder

    config_path = model_dir / CONFIG
    if not config_path.is_file():
        raise FileNotFoundError(f"{config_path}: not a paraphrase model directory (no {CONFIG})")
    raw = json.loads(config_path.read_text(encoding="utf-8"))
    config = FineTuneConfig(**raw | {"layers": tuple(raw.get("layers", ()))})
    weights = model_dir / FineTunedHighlighter.WEIGHTS
    if not weights.is_file():
        raise FileNotFoundError(f"{weights}: no {FineTunedHighlighter.WEIGHTS}")
    return FineTunedHighlighter.restore(load_file(str(weights)), config, TextEncoder(encoder_dir))


def figures(m: ParaphraseMetrics) -> dict[str, float]:
    """F1, precision and the two highlight Jaccards, rounded."""
    return {
        "f1": round(m.f1, 3),
        "precision": round(m.precision, 3),
        "jaccard_guest": round(m.jaccard_guest, 3),
        "jaccard_host": round(m.jaccard_host, 3),
    }


def frozen_figures(tune: list[ParaphrasePair], held: list[ParaphrasePair]) -> dict[str, Any]:
    """The shipped frozen highlighter on both halves (its own trained offset)."""
    from gnn.paraphrase import load_highlighter

    model = load_highlighter(shipped_model("paraphrase"))
    return {
        "tune": figures(score_predictions(tune, model.predict(tune))),
        "held_out": figures(score_predictions(held, model.predict(held))),
    }


def main(argv: list[str] | None = None) -> int:
    """Fine-tune, select on the tuning half, print both models' figures against the goals."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="folder with the TRAIN and DEV *_TOKEN-annotations.tsv files")
    profile = FineTuneConfig(**PROFILES["finetune"])
    parser.add_argument("--epochs", type=int, default=profile.epochs)
    parser.add_argument("--train-layers", type=int, default=profile.finetune_layers, help="top layers to fine-tune")
    parser.add_argument("--lr", type=float, default=profile.encoder_lr, help="learning rate of the encoder layers")
    parser.add_argument("--lora-rank", type=int, default=profile.lora_rank, help="adapters instead of whole layers")
    parser.add_argument("--seed", type=int, default=profile.seed)
    parser.add_argument("--limit", type=int, help="at most this many training pairs (smoke runs)")
    parser.add_argument("--save", type=Path, help="write the selected model here (load it with load_finetuned)")
    parser.add_argument(
        "--cv", type=int, help="instead: K-fold cross-validation grouped by interview on the train and dev files pooled"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    import torch

    data_dir: Path = args.data_dir or (SHARED if SHARED.is_dir() else SAMPLES / "contextdep")
    train = pairs_from_file(data_dir / "ANON_TRAIN_TOKEN-annotations.tsv")[: args.limit]
    tune, held = split_by_interview(pairs_from_file(data_dir / "ANON_DEV_TOKEN-annotations.tsv"))
    if not (train and tune and held):
        parser.error(f"{data_dir}: need training pairs and both halves of the dev file")
    config = replace(
        profile,
        epochs=args.epochs,
        finetune_layers=args.train_layers,
        encoder_lr=args.lr,
        lora_rank=args.lora_rank,
        seed=args.seed,
    )
    if args.cv:
        return _cross_validate(data_dir, config, args.cv, args.json)
    print(f"{len(train)} training pairs, tuning half {len(tune)}, held-out half {len(held)}")
    model, result, tuned = train_finetuned(train, tune, config)
    for row in result.history:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}))
    fine = figures(score_predictions(held, model.predict(held)))
    frozen = frozen_figures(tune, held)
    print(
        f"{result.seconds:.0f} s; selected on the tuning half: epoch {result.best_epoch} of {config.epochs}, "
        f"offset {config.bias}; {config.finetune_layers} layers fine-tuned"
    )
    print(f"{'held-out half':28} {'F1':>6} {'P':>6} {'J guest':>8} {'J host':>8}")
    for name, fig in (("fine-tuned encoder", fine), ("frozen (shipped model)", frozen["held_out"])):
        print(
            f"{name:28} {fig['f1']:6.3f} {fig['precision']:6.3f} {fig['jaccard_guest']:8.3f} {fig['jaccard_host']:8.3f}"
        )
    print("goals: " + ", ".join(f"{k} >= {v}" for k, v in GOALS.items()))
    if args.save:
        model.save(args.save)
    if args.json:
        out = {
            "train_layers": config.finetune_layers,
            "threads": torch.get_num_threads(),
            "seconds": round(result.seconds, 1),
            "history": result.history,
            "selected": {"epoch": result.best_epoch, "bias": config.bias, "tune": tuned, "held_out": fine},
            "frozen": frozen,
            "config": asdict(config),
        }
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


def _cross_validate(data_dir: Path, config: FineTuneConfig, folds: int, out: Path | None) -> int:
    """The recipe under the grouped protocol, as ``argweb model evaluate paraphrase --cv K`` runs the shipped one."""
    from gnn.paraphrase import ParaphraseExample, cross_validate_pairs
    from gnn.task import Resources

    pairs = [p for name in ("TRAIN", "DEV") for p in pairs_from_file(data_dir / f"ANON_{name}_TOKEN-annotations.tsv")]
    examples = [ParaphraseExample(p, None) for p in pairs]
    with tempfile.TemporaryDirectory() as cache:
        report = cross_validate_pairs(
            examples, config, Resources(Path(cache), log=print), folds=folds, seed=config.seed, trainer=train_finetuned
        )
    result = {**report.document(), "pairs": report.items, "interviews": report.groups}
    for name, figure in sorted(result["figures"].items()):
        print(f"{name:16} {figure['mean']} ± {figure['std']} (folds {figure['folds']})")
    if out:
        out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
