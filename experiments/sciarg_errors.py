"""Where the Sci-Arg pipeline's exact-span errors come from (an analysis, not a recipe that ships).

BAM's C counts a predicted component only when its label and both ends match a gold component, and
its R counts a relation only when both components are exact, so the tagger bounds the whole
pipeline. This script splits the tagger's misses into their causes on a set of papers (default the
development papers A21-A24, which choose the tagger's epoch; ``--papers`` picks others):

- **representable**: the share of gold components that the tagger's units can express at all (one
  sentence, one run of whole tokens; decoding the gold BIO tags gives the component back);
- **labelled / unlabelled exact F1**: the shipped (or ``--model``) tagger's exact-span F1 with and
  without the label, so that boundary errors and label errors are told apart, with the label
  confusions of the spans found and the wrong spans that share one end with a gold span;
- **citation fragments**: adjacent ``data`` components separated only by an opening bracket
  ("Foster and Fedkiw [" + "2001") are one split component (``parts_of_same``) in some papers and
  two unrelated ones in others; the share is printed per range of papers, because it moves the
  relation figures of a split without any model being at fault.

The headline figure is the labelled exact F1 against TRABAM's C (0.662, BAM Table 2). Its figures
(0.508 on A21-A24 at ``b95e0bb``; the causes split in ``docs/models/components.md``, "Where C and R
are lost") were measured with it while it was a benchmark; it is no longer part of ``make bench``.

Usage: ``python -m experiments.sciarg_errors [--data-dir DIR] [--papers A21 A22 ...] [--model DIR] [--json OUT]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gnn.bam import BratDocument  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora" / "sciarg" / "compiled_corpus"
DEV = ["A21", "A22", "A23", "A24"]
# The ranges the tagger and the relation model use: train, choose, held out.
RANGES = {"A01-A20": range(1, 21), "A21-A24": range(21, 25), "A25-A32": range(25, 33)}
TRABAM_C = 0.662
_BRACKET_GAP = re.compile(r"\s*[\[(]\s*")

Span = tuple[str, int, int]


def _single(doc: BratDocument) -> set[Span]:
    return {(c.label, *c.spans[0]) for c in doc.components.values() if len(c.spans) == 1}


def representable(docs: Mapping[str, tuple[BratDocument, str]]) -> tuple[int, int]:
    """(gold components, of which the tagger's units express exactly): decode(gold tags) == gold."""
    from gnn.components import decode, gold_tags, sentences_of

    total = ok = 0
    for doc, text in docs.values():
        sentences = sentences_of(doc, lambda a, b, t=text: t[a:b])  # type: ignore[misc]
        components = list(doc.components.values())
        decoded = {c for s in sentences for c in decode(s.spans, gold_tags(s, components))}
        total += len(components)
        ok += len(_single(doc) & decoded)
    return total, ok


def tagger_errors(docs: Mapping[str, tuple[BratDocument, str]], model: Path | None) -> dict[str, Any]:
    """Labelled and unlabelled exact-span scores of the tagger, label confusions and near misses."""
    from api.services.components import load_tagger
    from gnn.metrics import PRF

    tagger = load_tagger(model)
    tp = tp_span = n_pred = n_gold = near = 0
    confusions: Counter[str] = Counter()
    for doc, text in docs.values():
        pred = {(c.label, *c.spans[0]) for c in tagger.predict(doc, text)}
        gold = _single(doc)
        by_span_pred = {s[1:]: s[0] for s in pred}
        by_span_gold = {s[1:]: s[0] for s in gold}
        tp += len(pred & gold)
        shared = set(by_span_pred) & set(by_span_gold)
        tp_span += len(shared)
        n_pred, n_gold = n_pred + len(pred), n_gold + len(gold)
        for span in shared:
            if by_span_pred[span] != by_span_gold[span]:
                confusions[f"{by_span_gold[span]} -> {by_span_pred[span]}"] += 1
        for start, end in set(by_span_pred) - set(by_span_gold):
            near += any((start == gs) != (end == ge) for gs, ge in by_span_gold)
    return {
        "predicted": n_pred,
        "gold": n_gold,
        "exact_f1": PRF.from_counts(tp, n_pred, n_gold).f1,
        "exact_span_f1_unlabelled": PRF.from_counts(tp_span, n_pred, n_gold).f1,
        "label_confusions": dict(confusions.most_common()),
        "wrong_spans": n_pred - tp_span,
        "wrong_spans_sharing_one_end": near,
    }


def citation_fragments(docs: Mapping[str, tuple[BratDocument, str]]) -> dict[str, int]:
    """Adjacent data components with only a bracket between them, by gold relation (``none`` if unrelated)."""
    counts: Counter[str] = Counter()
    for doc, text in docs.values():
        relation = {frozenset((r.source, r.target)): r.label for r in doc.relations}
        ordered = sorted((c for c in doc.components.values() if len(c.spans) == 1), key=lambda c: c.spans[0])
        for a, b in itertools.pairwise(ordered):
            if a.label == b.label == "data" and _BRACKET_GAP.fullmatch(text[a.spans[0][1] : b.spans[0][0]]):
                counts[relation.get(frozenset((a.id, b.id)), "none")] += 1
    return dict(counts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--papers", nargs="+", default=DEV, help="papers the tagger is scored on (default A21-A24)")
    parser.add_argument("--model", type=Path, default=None, help="tagger directory (default: the shipped one)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    data_dir = args.data_dir if args.data_dir.is_absolute() else ROOT / args.data_dir
    from gnn.components import read_papers

    every = read_papers(data_dir)
    chosen = {n: every[n] for n in args.papers if n in every}
    if not chosen:
        parser.error(f"none of {args.papers} under {data_dir}")
    out: dict[str, Any] = {"papers": sorted(chosen)}
    total, ok = representable(every)
    out["representable"] = {"gold": total, "exact": ok, "share": ok / total if total else 0.0}
    print(f"gold components the tagger's units express exactly: {ok} / {total} ({out['representable']['share']:.1%})")
    out["citation_fragments"] = {}
    for label, numbers in RANGES.items():
        part = {n: v for n, v in every.items() if n[1:].isdigit() and int(n[1:]) in numbers}
        if part:
            counts = citation_fragments(part)
            out["citation_fragments"][label] = counts
            same = counts.get("parts_of_same", 0)
            print(f"'Author [Year' fragment pairs, {label}: {same} / {sum(counts.values())} parts_of_same {counts}")
    errors = tagger_errors(chosen, args.model)
    out["tagger"] = errors
    print(
        f"tagger on {', '.join(sorted(chosen))}: exact F1 {errors['exact_f1']:.3f} labelled, "
        f"{errors['exact_span_f1_unlabelled']:.3f} spans only ({errors['predicted']} predicted, {errors['gold']} gold)"
    )
    print(f"  label confusions of exact spans (gold -> predicted): {errors['label_confusions']}")
    near = errors["wrong_spans_sharing_one_end"]
    print(f"  wrong spans: {errors['wrong_spans']}, of which sharing one end with a gold span: {near}")
    print(f"  against TRABAM's C {TRABAM_C}: {errors['exact_f1'] / TRABAM_C:.2f} of it")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
