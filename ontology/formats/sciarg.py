"""Sci-Arg (Lauscher, Glavaš & Ponzetto 2018): argument-annotated scientific papers in brat standoff.

Each paper is ``Axx.ann`` + ``Axx.txt``. The ``.txt`` still holds the GATE/XML markup of the
Dr. Inventor source and the ``.ann`` character offsets count it, so every span is sliced from the
raw text (read without newline translation). Span lines ``T1<TAB>own_claim 2417 2522<TAB>text``
(discontinuous: ``label s1 e1;s2 e2``, text = fragments joined by one space) become Propositions
(``own_claim`` / ``background_claim`` -> Claim, ``data`` -> Premise), numbered (``position``) in
the order of their spans in the text, whatever the order of the lines; relation lines
``R1<TAB>supports Arg1:T4 Arg2:T5`` become relation nodes (supports -> Support, contradicts ->
Attack, semantically_same -> Rephrase, parts_of_same -> SameUnit) with AIF edges
``Arg1 -> rel -> Arg2``.

The text part of each paper (from its ``<Title>`` on) is split into Sentence nodes by
:func:`split_sentences`, a small deterministic splitter; every component gets ``IN_SENTENCE``
edges to the sentences it overlaps so that sentence-level measures can be computed.
"""

from __future__ import annotations

import bisect
import itertools
import re
from pathlib import Path

from ontology.errors import LoaderError, OntologyError
from ontology.formats.common import corpus_bundle, decode_utf8, mismatch, read_bytes
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    EdgeRecord,
    NodeRecord,
    PropositionRecord,
    SentenceRecord,
    build,
    link,
    make_id,
    relation_from_scheme,
    scheme_term,
)

CORPUS = "sciarg"
NAME = "Sci-Arg: argument-annotated Dr. Inventor corpus (Lauscher, Glavaš & Ponzetto 2018)"
COMPONENTS = ("background_claim", "own_claim", "data")
RELATIONS = ("supports", "contradicts", "semantically_same", "parts_of_same")

_TAG = re.compile(r"<[^<>\n]*>")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
# End of a sentence: terminal punctuation, optional closing quotes/brackets, whitespace, then
# something that can start a sentence.
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"“‘(\[]?[A-Z0-9\[])")
_ABBREVIATIONS = frozenset(
    {"al", "e.g", "i.e", "fig", "figs", "eq", "eqs", "vs", "cf", "sec", "resp", "approx", "ref", "refs", "no", "dr"}
)
_TITLE = re.compile(r"<Title>(.*?)</Title>", re.DOTALL)
# Offsets of at most 15 digits: a longer number is no offset into any text (and past 4,300 digits
# Python refuses to convert it).
_SPAN = re.compile(r"^(\d{1,15}) (\d{1,15})$")
# brat lines that qualify another annotation: attributes (A, and the older M) and normalisations (N).
METADATA_LINES = ("A", "M", "N")


def _text_start(text: str) -> int:
    """Where the paper's text begins: its title (the header before holds ids, hashes and DOIs)."""
    title = text.find("<Title>")
    if title >= 0:
        return title
    document = re.search(r"<Document[^>]*>", text)
    return document.end() if document else 0


def _is_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    start = dot
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    word = text[start:dot]
    # Initials ("John P. Lewis") and listed abbreviations ("et al.", "Fig.") do not end sentences.
    return (len(word) == 1 and word.isupper()) or word.lower() in _ABBREVIATIONS


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Deterministic sentence spans of ``text[start:end]`` as offsets into ``text``.

    Markup tags and blank lines always separate sentences; inside a block a sentence ends at
    ``.``, ``!`` or ``?`` (plus closing quotes/brackets) followed by whitespace and an upper-case
    letter, digit, quote or bracket, unless the period closes an initial or a common
    abbreviation. Spans are stripped of surrounding whitespace; every non-blank fragment is kept
    (formula debris and page numbers too) so that every annotated span lies in some sentence.
    """
    end = len(text) if end is None else end
    separators = sorted(
        [(m.start(), m.end()) for m in _TAG.finditer(text, start, end)]
        + [(m.start(), m.end()) for m in _BLANK_LINE.finditer(text, start, end)]
    )
    blocks: list[tuple[int, int]] = []
    pos = start
    for s, e in separators:
        if s > pos:
            blocks.append((pos, s))
        pos = max(pos, e)
    if pos < end:
        blocks.append((pos, end))
    spans: list[tuple[int, int]] = []
    for b_start, b_end in blocks:
        cuts = [b_start]
        for m in _BOUNDARY.finditer(text, b_start, b_end):
            if not _is_abbreviation(text, m.start()):
                cuts.append(m.end())
        cuts.append(b_end)
        for s, e in itertools.pairwise(cuts):
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if s < e:
                spans.append((s, e))
    return spans


def _pairs(paths: list[Path]) -> list[tuple[str, Path, Path]]:
    stems: dict[str, Path] = {}
    for path in paths:
        if path.suffix not in (".ann", ".txt"):
            raise LoaderError(f"{path}: not a brat .ann or .txt file")
        ann = path.with_suffix(".ann")
        if path.stem in stems and stems[path.stem].resolve() != ann.resolve():
            # Papers are named by their file name: a second A01 would be the same document.
            raise LoaderError(
                f"{ann}: a paper named {path.stem!r} is also given as {stems[path.stem]}; "
                "paper names (file names) must differ within one load"
            )
        stems.setdefault(path.stem, ann)
    out = []
    for stem in sorted(stems):
        ann = stems[stem]
        txt = ann.with_suffix(".txt")
        for needed in (ann, txt):
            if not needed.is_file():
                raise LoaderError(f"{needed}: missing (every Sci-Arg paper needs its .ann and .txt)")
        out.append((stem, ann, txt))
    return out


def _parse_spans(raw: str, where: str, size: int) -> list[tuple[int, int]]:
    spans = []
    for fragment in raw.split(";"):
        m = _SPAN.match(fragment.strip())
        if m is None:
            shown = fragment if len(fragment) <= 80 else f"{fragment[:40]}…({len(fragment)} characters)"
            raise LoaderError(f"{where}: malformed span {shown!r}; expected 'start end' (offsets of at most 15 digits)")
        s, e = int(m.group(1)), int(m.group(2))
        if not 0 <= s <= e <= size:
            raise LoaderError(f"{where}: span {s}-{e} lies outside the text ({size} characters)")
        spans.append((s, e))
    return spans


def load_paper(
    stem: str, ann: Path, txt: Path, nodes: list[NodeRecord], edges: list[EdgeRecord]
) -> tuple[int, int, int]:
    """Append one paper's records; returns (components, relations, sentences)."""
    # The offsets count every character as stored ("\r", a BOM): no newline translation, no stripping.
    text = decode_utf8(txt, read_bytes(txt), keep_bom=True)
    annotation = decode_utf8(ann, read_bytes(ann))
    doc_id = make_id(CORPUS, stem)
    title = _TITLE.search(text)
    nodes.append(
        build(
            DiscourseRecord,
            str(txt),
            id=doc_id,
            corpus=CORPUS,
            kind="Document",
            local_id=stem,
            name=" ".join(title.group(1).split()) if title else stem,
            source=txt.name,
        )
    )
    sentence_spans = split_sentences(text, _text_start(text))
    sentence_ids = [make_id(CORPUS, stem, "S", i) for i in range(len(sentence_spans))]
    for i, (s, e) in enumerate(sentence_spans):
        nodes.append(
            build(
                SentenceRecord,
                f"{txt}: sentence {i}",
                id=sentence_ids[i],
                corpus=CORPUS,
                discourse=doc_id,
                local_id=str(i),
                position=i,
                text=text[s:e],
                char_start=s,
                char_end=e,
            )
        )
    starts = [s for s, _ in sentence_spans]

    def overlapping(spans: list[tuple[int, int]]) -> list[str]:
        hits: set[int] = set()
        for s, e in spans:
            k = max(bisect.bisect_right(starts, s) - 1, 0)
            while k < len(sentence_spans) and sentence_spans[k][0] < max(e, s + 1):
                if sentence_spans[k][1] > s:
                    hits.add(k)
                k += 1
        return [sentence_ids[k] for k in sorted(hits)]

    components: dict[str, str] = {}
    relations: list[tuple[int, str, str, str, str]] = []
    # Propositions are numbered by their place in the text once all are read: brat gives the order
    # of an .ann file's lines no meaning, and tools write them in different orders.
    pending: list[tuple[tuple[list[tuple[int, int]], str, str], str, dict[str, object]]] = []
    for number, line in enumerate(annotation.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        where = f"{ann}: line {number}"
        fields = line.split("\t", 2)
        key = fields[0]
        if key.startswith("#"):
            continue
        if len(fields) < 2:
            raise LoaderError(f"{where}: expected tab-separated fields, got {line[:60]!r}")
        where = f"{ann}: line {number} ({key})"
        if key.startswith("T"):
            if len(fields) < 3:
                raise LoaderError(f"{where}: span line without its text field")
            label, _, raw_spans = fields[1].partition(" ")
            if label not in COMPONENTS:
                raise LoaderError(f"{where}: unknown Sci-Arg component {label!r}; expected one of {COMPONENTS}")
            spans = _parse_spans(raw_spans, where, len(text))
            sliced = " ".join(text[s:e] for s, e in spans)
            if sliced != fields[2]:
                raise LoaderError(f"{where}: offsets {raw_spans} of {txt.name} {mismatch(sliced, fields[2])}")
            if key in components:
                raise LoaderError(f"{where}: duplicate span id")
            comp_id = make_id(CORPUS, stem, key)
            components[key] = comp_id
            try:
                term = scheme_term(CORPUS, label)
            except OntologyError as e:
                raise LoaderError(f"{where}: {e}") from e
            proposition: dict[str, object] = {
                "id": comp_id,
                "corpus": CORPUS,
                "discourse": doc_id,
                "local_id": key,
                "text": sliced,
                "scheme_label": label,
                "scheme_class": term.iri,
                "char_start": spans[0][0],
                "char_end": spans[-1][1],
                "spans": ";".join(f"{s} {e}" for s, e in spans),
                "sentences": overlapping(spans),
            }
            pending.append(((spans, label, sliced), where, proposition))
        elif key.startswith("R"):
            parts = fields[1].split()
            if len(parts) != 3 or not parts[1].startswith("Arg1:") or not parts[2].startswith("Arg2:"):
                raise LoaderError(f"{where}: expected 'label Arg1:T.. Arg2:T..', got {fields[1]!r}")
            relations.append((number, key, parts[0], parts[1][5:], parts[2][5:]))
        elif key[:1] in METADATA_LINES:
            # Attributes and normalisations qualify a span or relation; Sci-Arg's scheme has none,
            # so a file that carries some (another annotation round, a tool's flags) still loads.
            if len(fields[1].split()) < 2:
                raise LoaderError(f"{where}: expected '<type> <annotation id> ...', got {fields[1]!r}")
        else:
            raise LoaderError(
                f"{where}: unsupported brat annotation type {key[:1]!r}; Sci-Arg has T and R lines "
                f"(and {', '.join(METADATA_LINES)} or # lines, which are kept but not used)"
            )

    # Components that share spans, type and text are the same component twice: their order is moot.
    pending.sort(key=lambda item: item[0])
    for position, (_, where, proposition) in enumerate(pending):
        nodes.append(build(PropositionRecord, where, position=position, **proposition))

    seen: set[str] = set()
    for number, key, label, arg1, arg2 in relations:
        where = f"{ann}: line {number} ({key})"
        if label not in RELATIONS:
            raise LoaderError(f"{where}: unknown Sci-Arg relation {label!r}; expected one of {RELATIONS}")
        if key in seen:
            raise LoaderError(f"{where}: duplicate relation id")
        seen.add(key)
        for arg in (arg1, arg2):
            if arg not in components:
                raise LoaderError(f"{where}: refers to span {arg!r}, which {ann.name} does not define")
        record = relation_from_scheme(
            CORPUS, label, where, id=make_id(CORPUS, stem, key), corpus=CORPUS, discourse=doc_id, local_id=key
        )
        nodes.append(record)
        edges.extend(link(record, [components[arg1]], [components[arg2]]))
    return len(components), len(relations), len(sentence_spans)


def load_sciarg(paths: list[Path]) -> CorpusBundle:
    """Load Sci-Arg papers (``.ann`` files, each with its ``.txt`` next to it) into one bundle.

    Args:
        paths: ``.ann`` (or ``.txt``) files; each paper is loaded once.

    Raises:
        LoaderError: Missing ``.txt``, wrong encoding, offsets outside the text, a slice that does
            not match the annotated text, unknown labels or dangling relation arguments; the
            message names the file and line.
    """
    papers = _pairs(paths)
    if not papers:
        raise LoaderError("no Sci-Arg papers given")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for stem, ann, txt in papers:
        load_paper(stem, ann, txt, nodes, edges)
    origin = f"{len(papers)} Sci-Arg paper(s) from {papers[0][1].parent}"
    return corpus_bundle(CORPUS, NAME, [p for _, ann, txt in papers for p in (ann, txt)], nodes, edges, origin)
