"""TF-IDF + logistic-regression pair baseline, trained and scored in the same run as the models.

A pair is the concatenation of the TF-IDF vectors (words and bigrams) of its source and target
texts; a multinomial logistic regression with balanced class weights predicts the label (without
them the rare relation labels never win against "none" and the baseline is degenerate). It sees
the same candidate pairs as the models. No structure, no embeddings: the floor the relation models
must clear by 10 macro-F1 points.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class PairTfidfLR:
    """TF-IDF of both texts of a pair, then logistic regression.

    Args:
        c: Inverse regularisation strength.
        seed: Seed of the solver.
    """

    def __init__(self, c: float = 1.0, seed: int = 0) -> None:
        self.c = c
        self.seed = seed
        self.vectorizer: Any = None
        self.model: Any = None

    def _x(self, sources: Sequence[str], targets: Sequence[str]) -> object:
        from scipy.sparse import hstack

        vec = self.vectorizer
        assert vec is not None
        return hstack([vec.transform(sources), vec.transform(targets)]).tocsr()

    def fit(self, sources: Sequence[str], targets: Sequence[str], labels: Sequence[int]) -> PairTfidfLR:
        """Fit on text pairs and label indices."""
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=20000, sublinear_tf=True)
        self.vectorizer.fit(list(dict.fromkeys([*sources, *targets])))
        self.model = LogisticRegression(C=self.c, max_iter=200, class_weight="balanced", random_state=self.seed)
        self.model.fit(self._x(sources, targets), np.asarray(labels))
        return self

    def predict_proba(self, sources: Sequence[str], targets: Sequence[str], n_labels: int) -> np.ndarray:
        """``(n, n_labels)`` probabilities (labels never seen in training get 0)."""
        out = np.zeros((len(sources), n_labels), dtype=np.float32)
        if not len(sources):
            return out
        assert self.model is not None
        probs = self.model.predict_proba(self._x(sources, targets))
        for k, lab in enumerate(self.model.classes_):
            out[:, int(lab)] = probs[:, k]
        return out
