"""Token shape and citation features as extra inputs of the component tagger (a lever measured and not adopted).

Frozen MiniLM sub-word vectors blur what decides many of the tagger's boundaries: a citation's year
and brackets, a capitalised author name, a comma, the single words "in", "by", "which" that open or
close a component. This recipe appends to each token's input row (word vector and four position
features, :func:`gnn.components.net.paper_rows`) a small binary vector (:func:`shape_features`):
capitalised, all capitals, lower case, digits, a year, alphanumeric mix, inside brackets, "et
al.", a token of an author-year citation, first and last token of the sentence, the neighbours
citation tokens, one letter; a punctuation class; and one feature per frequent boundary word (a
learned embedding of those words through the network's input projection). Everything else is the
shipped recipe (the ``full`` profile, its seed, its epoch choice).

The folds are those of ``argweb model evaluate components --cv 5`` (the 32 papers A01-A32 grouped by
paper, fold seed 13, 4 of 24 training papers choose the epoch); ``--folds`` runs some of them, and
``--plain`` runs the shipped recipe itself in the same process, so that both are measured under the
same thread settings. Each fold's tagger is also scored with ``join_citations`` flipped (a decoding
after the tagger, :func:`gnn.components.join_citations`): the citation join measured out of fold
on the same weights. Figures and what they mean: ``docs/experiments/components.md`` ("Token shape
and citation features"). The same features were a recipe option of the product in commit ``f9a68ac``.

Usage::

    python -m experiments.sciarg_shape --out DIR [--folds 0 1 2 3 4] [--plain] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gnn.bam import BratDocument, Component  # noqa: E402
from gnn.components import (  # noqa: E402
    _YEAR,
    SHIPPED_PAPERS,
    TASK,
    TUNE_SHARE,
    Paper,
    TaggerConfig,
    _Sentence,
    gold_tags,
    paper_scores,
    read_papers,
    schedule,
    sentences_of,
)
from gnn.components.net import (  # noqa: E402
    BiLstmCrf,
    ComponentTagger,
    TaggerFit,
    TokenVectors,
    input_width,
    paper_rows,
)
from gnn.protocol import fold_plan  # noqa: E402
from gnn.trainer import Trainer  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora" / "sciarg" / "compiled_corpus"

BOUNDARY_WORDS = ("in", "by", "which", "that", "we", "as", "for", "to", "of", "and", "the", "with", "is")
_PUNCT_CLASSES = ("([{", ")]}", ",", ".!?", ";:")
_CITATION_WORDS = {"and", "et", "al", "&", ".", ",", "(", "[", "-", "'"}
N_SHAPE = 14 + len(_PUNCT_CLASSES) + 1 + len(BOUNDARY_WORDS)


def citation_tokens(words: Sequence[str]) -> np.ndarray:
    """Tokens of author-year citations: a year, and the names, ``and``/``et al.``, commas and brackets
    running back from it (at most eight tokens), then what closes it. A year with neither a name nor
    a bracket before it ("in 1996") is no citation."""
    inside = np.zeros(len(words), bool)
    for j, word in enumerate(words):
        if not _YEAR.fullmatch(word):
            continue
        marked, cited = [j], False
        for i in range(j - 1, max(j - 9, -1), -1):
            w = words[i]
            if w[:1].isupper() and w.isalpha():
                cited = True
            elif w.lower() not in _CITATION_WORDS:
                break
            cited = cited or w in "(["
            marked.append(i)
        if not cited:
            continue
        k = j + 1
        while k < len(words) and k <= j + 2 and words[k] in (")", "]", ";", ","):
            marked.append(k)
            k += 1
        inside[marked] = True
    return inside


def shape_features(words: Sequence[str]) -> np.ndarray:
    """Binary shape, punctuation, citation and boundary-word features of a sentence's tokens: ``(tokens, N_SHAPE)``."""
    n = len(words)
    out = np.zeros((n, N_SHAPE), np.float32)
    citation = citation_tokens(words)
    depth = 0
    for i, word in enumerate(words):
        lower, alpha = word.lower(), word.isalpha()
        out[i, 0] = word[:1].isupper()
        out[i, 1] = alpha and len(word) > 1 and word.isupper()
        out[i, 2] = alpha and word.islower()
        out[i, 3] = word.isdigit()
        out[i, 4] = bool(_YEAR.fullmatch(word))
        out[i, 5] = not alpha and not word.isdigit() and word.isalnum()
        out[i, 6] = depth > 0  # after an opening bracket, up to its closing one
        out[i, 7] = (lower == "et" and i + 1 < n and words[i + 1] == "al") or (
            lower == "al" and i > 0 and words[i - 1].lower() == "et"
        )
        out[i, 8] = citation[i]
        out[i, 9] = i == 0
        out[i, 10] = i == n - 1
        out[i, 11] = i > 0 and citation[i - 1]
        out[i, 12] = i + 1 < n and citation[i + 1]
        out[i, 13] = len(word) == 1 and alpha
        if not word.isalnum() and word != "_":
            classes = [k for k, chars in enumerate(_PUNCT_CLASSES) if word in chars]
            out[i, 14 + (classes[0] if classes else len(_PUNCT_CLASSES))] = 1.0
            depth = depth + (word in "([{") - (word in ")]}" and depth > 0)
        if lower in BOUNDARY_WORDS:
            out[i, 15 + len(_PUNCT_CLASSES) + BOUNDARY_WORDS.index(lower)] = 1.0
    return out


def shaped_rows(sentences: Sequence[_Sentence], vectors: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The shipped input rows, each token's shape features appended."""
    rows = paper_rows(sentences, vectors)
    return [np.concatenate([r, shape_features(s.words)], axis=1) for r, s in zip(rows, sentences, strict=True)]


class ShapeTagger(ComponentTagger):
    """The tagger reading the shaped rows."""

    def predict(self, doc: BratDocument, text: str) -> list[Component]:
        """Components of ``doc``, as :meth:`ComponentTagger.predict` with the shaped rows."""
        sentences = sentences_of(doc, lambda s, e: text[s:e])
        if not sentences:
            return []
        found = set().union(*self.components(sentences, shaped_rows(sentences, self.vectors.of(sentences))))
        ordered = sorted(found, key=lambda c: (c[1], c[2]))
        return [Component(f"T{i}", label, ((s, e),)) for i, (label, s, e) in enumerate(ordered, 1)]


@dataclass(eq=False)
class ShapeFit(TaggerFit):
    """The tagger's fit with the wider input."""

    @cached_property
    def module(self) -> BiLstmCrf:
        """The network, its input widened by the shape features."""
        return BiLstmCrf(input_width(self.vectors.dim) + N_SHAPE, self.config)


def train(
    train_papers: Mapping[str, Paper], tune_papers: Mapping[str, Paper], config: TaggerConfig, vectors: TokenVectors
) -> tuple[ShapeTagger, int]:
    """The shaped tagger trained as :func:`gnn.components.net.train_tagger` trains the shipped one; its chosen epoch."""

    def prepared(papers: Mapping[str, Paper]) -> tuple[list[_Sentence], list[np.ndarray]]:
        sentences: list[_Sentence] = []
        rows: list[np.ndarray] = []
        for doc, text in papers.values():
            mine = sentences_of(doc, lambda a, b, t=text: t[a:b])  # type: ignore[misc]
            for s in mine:
                s.tags = gold_tags(s, list(doc.components.values()))
            sentences.extend(mine)
            rows.extend(shaped_rows(mine, vectors.of(mine)) if mine else [])
        return sentences, rows

    train_s, rows = prepared(train_papers)
    job = ShapeFit(config, vectors, rows, [s.tags for s in train_s if s.tags is not None], *prepared(tune_papers))
    result = Trainer(schedule(config)).fit(job)
    return ShapeTagger(job.module, config, vectors), result.best_epoch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--plain", action="store_true", help="the shipped recipe, without the features")
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--profile", default="full", help="the recipe's profile (quick: a smoke run)")
    parser.add_argument("--papers", nargs="+", default=None, help="a subset of A01-A32 (a smoke run)")
    options = parser.parse_args(argv)

    from api.settings import get_settings
    from gnn.components.net import train_tagger
    from gnn.encoder import TextEncoder

    papers = read_papers(options.data_dir, options.papers or SHIPPED_PAPERS)
    names = sorted(papers)
    config = TASK.recipes.config(options.profile)
    cache = get_settings().cache_dir / "embeddings" / "sciarg-tokens"
    vectors = TokenVectors(TextEncoder(), config.layers, config.max_length, cache)
    options.out.mkdir(parents=True, exist_ok=True)
    for fold in fold_plan(names, 5, 13, TUNE_SHARE):
        if fold.index not in options.folds:
            continue
        started = time.perf_counter()
        part = {key: {names[i]: papers[names[i]] for i in getattr(fold, key)} for key in ("train", "tune", "test")}
        if options.plain:
            tagger, fit = train_tagger(part["train"], part["tune"], config, vectors=vectors)
            model, epoch = tagger, fit.best_epoch
        else:
            model, epoch = train(part["train"], part["tune"], config, vectors)
        scored = paper_scores(model, part["test"])
        # The same weights decoded the other way round (join_citations is applied after decoding).
        other = replace(model.config, join_citations=not model.config.join_citations)
        flipped = paper_scores(type(model)(model.network, other, model.vectors), part["test"])
        row = {
            "fold": fold.index,
            "recipe": "plain" if options.plain else "shape",
            "join_citations": model.config.join_citations,
            "figures": {k: round(v, 4) for k, v in scored.figures.items()},
            "labels": scored.labels.as_dict(),
            "figures_join_flipped": {k: round(v, 4) for k, v in flipped.figures.items()},
            "labels_join_flipped": flipped.labels.as_dict(),
            "epoch": epoch,
            "papers": sorted(part["test"]),
            "seconds": round(time.perf_counter() - started, 1),
        }
        shown = ("fold", "recipe", "join_citations", "figures", "figures_join_flipped", "epoch", "seconds")
        print(json.dumps({k: row[k] for k in shown}), flush=True)
        name = f"{row['recipe']}-fold{fold.index}.json"
        (options.out / name).write_text(json.dumps(row, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
