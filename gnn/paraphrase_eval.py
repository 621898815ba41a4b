"""ContextDeP data records and scores (Wegmann et al., EMNLP 2024), with no model dependency.

A :class:`ParaphrasePair` is one (guest, host) utterance pair with the aggregated annotation:
``guest_hl`` / ``host_hl`` hold, per token, the share of the *paraphrase-voting* annotators who
highlighted it, and ``votes`` / ``annotators`` the paraphrase votes. Gold follows the paper:

* a pair is a paraphrase when at least half of its annotators voted so (majority vote);
* the gold highlights of a side are the tokens that at least half of the paraphrase-voting
  annotators highlighted ("the tokens most annotators highlighted"), on every pair: a pair most
  annotators did not call a paraphrase still has gold highlights when its paraphrase voters
  agree, as in the paper's ``eval_token_classifier.py`` (highlights are scored apart from the
  classification);
* a model predicts a paraphrase when both sides have a token with probability >= 0.5 (the pair
  score, :attr:`PairPrediction.score`, at or above 0.5), and its highlights are the tokens with
  probability >= 0.5. A model with a decision rule (:attr:`PairPrediction.cut`) calls a pair a
  paraphrase only at or above its cut, and says "not sure" between its lower cut and its cut; a
  "not sure" pair is scored as not a paraphrase (as the official scoring reads the 0/1 column),
  and its highlights are scored all the same;
* highlight Jaccard of a side is averaged over the pairs where both the gold and the model
  highlight something on that side (as the paper's evaluation script does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gnn.metrics import PRF
from gnn.protocol import Pooled, seeded_share
from ontology.errors import LoaderError

THRESHOLD = 0.5
PARAPHRASE, NOT_PARAPHRASE, NOT_SURE = "paraphrase", "not_paraphrase", "not_sure"
"""The three answers of the pair decision."""


@dataclass(frozen=True)
class ParaphrasePair:
    """One ContextDeP item; the annotation fields are ``None`` for unlabelled input."""

    qid: str
    guest: list[str]
    host: list[str]
    guest_hl: list[float] | None = None
    host_hl: list[float] | None = None
    votes: int | None = None
    annotators: int | None = None

    @property
    def interview(self) -> str:
        """The MediaSum interview id (``CNN-378275-5`` -> ``CNN-378275``)."""
        return self.qid.rsplit("-", 1)[0]

    @property
    def share(self) -> float | None:
        """Share of annotators who voted paraphrase."""
        if self.votes is None or not self.annotators:
            return None
        return self.votes / self.annotators

    @property
    def label(self) -> bool:
        """Majority-vote gold label."""
        share = self.share
        if share is None:
            raise LoaderError(f"QID {self.qid}: no paraphrase votes, so no gold label")
        return share >= THRESHOLD

    def gold_highlights(self, side: str) -> set[int]:
        """Token positions at least half of the paraphrase-voting annotators highlighted.

        Non-paraphrase pairs are not skipped: the paper's evaluation thresholds the highlight
        shares of every pair, so a minority of voters who agree make gold highlights too.
        """
        hls = self.guest_hl if side == "guest" else self.host_hl
        if hls is None:
            return set()
        return {i for i, h in enumerate(hls) if h >= THRESHOLD}

    def targets(self, mode: str) -> tuple[list[float], list[float]]:
        """Per-token training targets for the guest and host side.

        ``share``: the share of *all* annotators who highlighted the token (what training on
        every single annotation estimates, as the paper does); ``majority``: the paraphrase
        voters' share on majority paraphrases and 0 elsewhere, so that the >= 0.5 rule reproduces
        the majority vote; ``mix``: the mean of the two.
        """
        if self.guest_hl is None or self.host_hl is None or self.share is None:
            raise LoaderError(f"QID {self.qid}: no highlights or votes to train on")
        share = self.share
        out: list[list[float]] = []
        for hls in (self.guest_hl, self.host_hl):
            by_share = [h * share for h in hls]
            by_majority = [h if self.label else 0.0 for h in hls]
            if mode == "share":
                out.append(by_share)
            elif mode == "majority":
                out.append(by_majority)
            elif mode == "mix":
                out.append([(a + b) / 2 for a, b in zip(by_share, by_majority, strict=True)])
            else:
                raise ValueError(f"unknown target mode {mode!r}; expected share, majority or mix")
        return out[0], out[1]


@dataclass(frozen=True)
class PairPrediction:
    """A model's output for one pair: one highlight probability per input token of each side, and the
    decision rule it is read with.

    Attributes:
        qid: The pair.
        guest_probs: Highlight probability per guest token.
        host_probs: Highlight probability per host token.
        cut: The pair is called a paraphrase when its score is at or above it (0.5: the paper's rule;
            above 1: never).
        low: The pair is called not a paraphrase when its score is below it; between ``low`` and ``cut``
            the answer is "not sure" (``low == cut``: no "not sure").
        pair: A pair model's probability that the pair is a paraphrase, which is then its score
            (``None``: the score is :attr:`strongest`).
    """

    qid: str
    guest_probs: list[float]
    host_probs: list[float]
    cut: float = THRESHOLD
    low: float = THRESHOLD
    pair: float | None = None

    @property
    def strongest(self) -> float:
        """The weaker side's strongest token (both sides have a token at 0.5 or more exactly when it is >= 0.5)."""
        g = max(self.guest_probs, default=0.0)
        h = max(self.host_probs, default=0.0)
        return min(g, h)

    @property
    def score(self) -> float:
        """Pair score: the pair model's probability when there is one, else :attr:`strongest`."""
        return self.strongest if self.pair is None else self.pair

    @property
    def paraphrase(self) -> bool:
        """Called a paraphrase: the score is at or above the cut."""
        return bool(self.score >= self.cut)

    @property
    def decision(self) -> str:
        """``paraphrase`` (score >= cut), ``not_paraphrase`` (score < low) or ``not_sure`` (in between)."""
        if self.paraphrase:
            return PARAPHRASE
        return NOT_PARAPHRASE if self.score < self.low else NOT_SURE

    def highlights(self, side: str) -> set[int]:
        """Token positions with probability >= 0.5 on ``side``."""
        probs = self.guest_probs if side == "guest" else self.host_probs
        return {i for i, p in enumerate(probs) if p >= THRESHOLD}


# The figures ``ParaphraseMetrics.as_dict`` reports, in their JSON order; every rate is derived from the counts.
REPORTED = (
    "pairs",
    "positives",
    "predicted_positives",
    "true_positives",
    "precision",
    "recall",
    "f1",
    "accuracy",
    "jaccard_guest",
    "jaccard_host",
    "jaccard_guest_pairs",
    "jaccard_host_pairs",
    "floor_f1",
    "not_sure",
    "not_sure_share",
)


@dataclass
class ParaphraseMetrics:
    """Classification and highlight scores of predictions against the majority vote.

    Only counts are stored; precision, recall, F1, accuracy, the highlight means and the
    all-positive floor are derived from them, so they cannot disagree with the counts.
    """

    pairs: int
    positives: int
    predicted_positives: int
    true_positives: int
    correct: int
    guest_jaccards: list[float]
    host_jaccards: list[float]
    extra: dict[str, float] = field(default_factory=dict)
    not_sure: int = 0

    @property
    def precision(self) -> float:
        """True positives over predicted positives (0.0 when nothing is predicted)."""
        return _rate(self.true_positives, self.predicted_positives)

    @property
    def recall(self) -> float:
        """True positives over gold positives (0.0 without gold positives)."""
        return _rate(self.true_positives, self.positives)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        return PRF.from_counts(self.true_positives, self.predicted_positives, self.positives).f1

    @property
    def floor_f1(self) -> float:
        """F1 of predicting every pair a paraphrase: the score any model must beat."""
        return PRF.from_counts(self.positives, self.pairs, self.positives).f1

    @property
    def not_sure_share(self) -> float:
        """Share of the pairs answered "not sure" (scored as not paraphrases)."""
        return _rate(self.not_sure, self.pairs)

    @property
    def accuracy(self) -> float:
        """Share of pairs whose paraphrase decision matches the gold vote."""
        return _rate(self.correct, self.pairs)

    @property
    def jaccard_guest(self) -> float:
        """Mean guest-side highlight Jaccard over pairs with gold and predicted highlights."""
        return _rate(sum(self.guest_jaccards), len(self.guest_jaccards))

    @property
    def jaccard_host(self) -> float:
        """Mean host-side highlight Jaccard over pairs with gold and predicted highlights."""
        return _rate(sum(self.host_jaccards), len(self.host_jaccards))

    @property
    def jaccard_guest_pairs(self) -> int:
        """How many pairs the guest-side Jaccard averages over."""
        return len(self.guest_jaccards)

    @property
    def jaccard_host_pairs(self) -> int:
        """How many pairs the host-side Jaccard averages over."""
        return len(self.host_jaccards)

    def labels(self) -> Pooled:
        """Predicted against gold pairs per label (``paraphrase`` / ``not_paraphrase``): a model that calls
        every pair a paraphrase shows as no ``not_paraphrase`` predicted and a recall of 0 there. A "not
        sure" pair counts as predicted ``not_paraphrase``, as it is scored (how many there are:
        :attr:`not_sure`)."""
        tally = Pooled()
        tally.add(PARAPHRASE, self.positives, self.predicted_positives, self.true_positives)
        negatives, predicted = self.pairs - self.positives, self.pairs - self.predicted_positives
        tally.add(NOT_PARAPHRASE, negatives, predicted, self.correct - self.true_positives)
        return tally

    def as_dict(self) -> dict[str, float | int]:
        """Flat dictionary for JSON output and model cards."""
        out: dict[str, float | int] = {name: getattr(self, name) for name in REPORTED}
        out.update(self.extra)
        return out


def _rate(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def jaccard(a: set[int], b: set[int]) -> float:
    """|a & b| / |a | b| (1.0 for two empty sets)."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def score_predictions(pairs: Sequence[ParaphrasePair], predictions: Sequence[PairPrediction]) -> ParaphraseMetrics:
    """Score ``predictions`` (matched by QID) against the gold of ``pairs``.

    Raises:
        ValueError: A pair without a prediction, or a prediction whose token counts differ from the
            pair's token lists.
    """
    by_qid = {p.qid: p for p in predictions}
    tp = predicted = positives = correct = unsure = 0
    jac: dict[str, list[float]] = {"guest": [], "host": []}
    for pair in pairs:
        pred = by_qid.get(pair.qid)
        if pred is None:
            raise ValueError(f"QID {pair.qid}: no prediction")
        if len(pred.guest_probs) != len(pair.guest) or len(pred.host_probs) != len(pair.host):
            raise ValueError(
                f"QID {pair.qid}: {len(pred.guest_probs)}/{len(pred.host_probs)} probabilities for "
                f"{len(pair.guest)}/{len(pair.host)} guest/host tokens"
            )
        gold, guess = pair.label, pred.paraphrase
        positives += gold
        predicted += guess
        tp += gold and guess
        correct += gold == guess
        unsure += pred.decision == NOT_SURE
        for side in ("guest", "host"):
            g, m = pair.gold_highlights(side), pred.highlights(side)
            if g and m:
                jac[side].append(jaccard(g, m))
    return ParaphraseMetrics(len(pairs), positives, predicted, tp, correct, jac["guest"], jac["host"], not_sure=unsure)


def split_by_interview(
    pairs: Sequence[ParaphrasePair], held_out: float = 0.5, salt: str = "argweb-contextdep"
) -> tuple[list[ParaphrasePair], list[ParaphrasePair]]:
    """Deterministic (tune, held-out) split that keeps every interview on one side.

    The side of an interview depends only on a hash of its id, so the split does not move when
    pairs are added or reordered.
    """
    tune = [p for p in pairs if seeded_share(salt, p.interview) >= held_out]
    rest = [p for p in pairs if seeded_share(salt, p.interview) < held_out]
    return tune, rest
