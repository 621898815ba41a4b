"""ContextDeP (Wegmann et al., EMNLP 2024): context-dependent paraphrases in news interviews.

Two kinds of tab-separated files:

* aggregated ``*_TOKEN-annotations.tsv`` (UTF-8): ``QID, Guest Tokens, Guest HLs, Host Tokens,
  Host HLs, Vote`` -- Python-literal token lists, per-token highlight shares and
  ``[paraphrase votes, annotators]``. Each QID (MediaSum interview id + utterance index) becomes a
  Dialogue with a guest and a host Locution (tokens, highlights, text = tokens joined by spaces)
  and one relation node ``guest -> rel -> host``: Rephrase (scheme Paraphrase) when at least half
  of the annotators voted paraphrase, else NonRelation (NonParaphrase), with ``votes``,
  ``annotator_count`` and ``vote_share``.
* per-annotator ``ANON_<split>.tsv`` (UTF-16 with BOM): ``QID, Category, Highlighted, Annotator,
  Session, Session_Start``, four rows per (QID, annotator) -- ``Referred`` (guest token indices),
  ``Paraphrase`` (host token indices), ``Is Referring`` (Yes/No), ``Comment``. Each group becomes
  one Judgement of the QID's relation: Paraphrase iff both index lists are non-empty (the corpus'
  rule, which reproduces every ``Vote`` of the aggregated files). The files number tokens from 1
  (no list ever holds 0, and only 1-based numbers reproduce the ``HLs`` shares); judgements store
  0-based positions into the locution's ``tokens`` (``source_tokens`` = Referred on the guest side,
  ``target_tokens`` = Paraphrase on the host side).

Which kind a file is comes from its name (``TOKEN`` in it -> aggregated); each kind must have its
documented encoding.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import Any

from ontology.errors import LoaderError
from ontology.formats.common import (
    Annotators,
    Row,
    corpus_bundle,
    decode_utf8,
    parse_delimited,
    read_bytes,
    require_columns,
    vote_fields,
)
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    build,
    link,
    make_id,
    relation_from_scheme,
)

CORPUS = "contextdep"
NAME = "ContextDeP: context-dependent paraphrases in news interviews (Wegmann et al. 2024)"
TOKEN_COLUMNS = ("qid", "guest_tokens", "guest_hls", "host_tokens", "host_hls", "vote")
ANNOTATION_COLUMNS = ("qid", "category", "highlighted", "annotator", "session", "session_start")
CATEGORIES = ("referred", "paraphrase", "is_referring", "comment")
PARAPHRASE, NON_PARAPHRASE = "Paraphrase", "NonParaphrase"
THRESHOLD = 0.5


def is_token_file(path: Path) -> bool:
    """Aggregated token files are named ``*_TOKEN-annotations.tsv``."""
    return "token" in path.name.lower()


def split_of(path: Path) -> str | None:
    """``ANON_DEV_TOKEN-annotations.tsv`` / ``ANON_dev.tsv`` -> ``dev``."""
    for split in ("train", "dev", "test", "all"):
        if f"_{split}" in path.stem.lower():
            return split
    return None


def decode_utf16(path: Path, data: bytes) -> str:
    """Decode UTF-16 with a byte-order mark; anything else is an error naming the file."""
    if not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise LoaderError(f"{path}: line 1: expected UTF-16 with a byte-order mark (per-annotator ContextDeP file)")
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError as e:
        # Two bytes per code unit: count UTF-16 newlines before the bad unit.
        line = data[: e.start].decode("utf-16", errors="replace").count("\n") + 1
        raise LoaderError(f"{path}: line {line}: not UTF-16 ({e.reason})") from e


def _literal(value: str, where: str, column: str) -> Any:
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise LoaderError(f"{where}: column {column!r} is not a Python literal: {value[:60]!r}") from e


def _str_list(value: str, where: str, column: str) -> list[str]:
    out = _literal(value, where, column)
    if not isinstance(out, list) or not all(isinstance(t, str) for t in out):
        raise LoaderError(f"{where}: column {column!r} is not a list of strings")
    return out


def _num_list(value: str, where: str, column: str) -> list[float]:
    out = _literal(value, where, column)
    if not isinstance(out, list) or not all(isinstance(t, int | float) and not isinstance(t, bool) for t in out):
        raise LoaderError(f"{where}: column {column!r} is not a list of numbers")
    return [float(t) for t in out]


def _indices(value: str, where: str, column: str, size: int) -> list[int]:
    """1-based highlighted token numbers as written -> 0-based positions in the token list."""
    out = _literal(value, where, column) if value.strip() else []
    if not isinstance(out, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in out):
        raise LoaderError(f"{where}: column {column!r} is not a list of token indices")
    bad = [t for t in out if not 1 <= t <= size]
    if bad:
        raise LoaderError(f"{where}: token index {bad[0]} outside the utterance (tokens 1..{size})")
    return [t - 1 for t in out]


class _Pair:
    def __init__(self, qid: str, guest: list[str], host: list[str], where: str) -> None:
        self.qid = qid
        self.guest = guest
        self.host = host
        self.where = where


def _token_table(path: Path, columns: tuple[str, ...], what: str) -> list[Row]:
    """The rows of a UTF-8 token file that has ``columns``."""
    data = read_bytes(path)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise LoaderError(f"{path}: line 1: UTF-16 byte-order mark, but aggregated token files are UTF-8")
    header, rows = parse_delimited(path, decode_utf8(path, data), delimiter="\t")
    require_columns(path, header, columns, what)
    return rows


def _pair_fields(path: Path, row: Row) -> tuple[str, str, list[str], list[str]]:
    """QID, where the row is (for messages), guest tokens and host tokens of a token-file row."""
    qid = row.get("qid").strip()
    where = f"{path}: line {row.line} (QID {qid})"
    if not qid:
        raise LoaderError(f"{where}: empty QID")
    guest = _str_list(row.get("guest_tokens"), where, "Guest Tokens")
    return qid, where, guest, _str_list(row.get("host_tokens"), where, "Host Tokens")


def _read_tokens(
    path: Path, nodes: list[NodeRecord], edges: list[EdgeRecord], pairs: dict[str, _Pair], relations: dict[str, str]
) -> None:
    split = split_of(path)
    for row in _token_table(path, TOKEN_COLUMNS, "ContextDeP token-annotation"):
        _token_row(path, row, split, nodes, edges, pairs, relations)


def _token_row(
    path: Path,
    row: Row,
    split: str | None,
    nodes: list[NodeRecord],
    edges: list[EdgeRecord],
    pairs: dict[str, _Pair],
    relations: dict[str, str],
) -> None:
    qid, where, guest, host = _pair_fields(path, row)
    if qid in pairs:
        raise LoaderError(f"{where}: QID also in {pairs[qid].where}")
    guest_hl = _num_list(row.get("guest_hls"), where, "Guest HLs")
    host_hl = _num_list(row.get("host_hls"), where, "Host HLs")
    for side, tokens, hls in (("Guest", guest, guest_hl), ("Host", host, host_hl)):
        if len(tokens) != len(hls):
            raise LoaderError(f"{where}: {len(tokens)} {side} Tokens but {len(hls)} {side} HLs")
    vote = _literal(row.get("vote"), where, "Vote")
    if (
        not isinstance(vote, list | tuple)
        or len(vote) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in vote)
        or not 0 <= vote[0] <= vote[1]
        or vote[1] == 0
    ):
        raise LoaderError(f"{where}: column 'Vote' must be [paraphrase votes, annotators], got {row.get('vote')!r}")
    pairs[qid] = _Pair(qid, guest, host, where)
    interview = qid.rsplit("-", 1)[0]
    dialogue = make_id(CORPUS, qid)
    nodes.append(
        build(
            DiscourseRecord,
            where,
            id=dialogue,
            corpus=CORPUS,
            kind="Dialogue",
            local_id=qid,
            name=interview,
            source=path.name,
            split=split,
        )
    )
    locutions = []
    # The host's turn answers the guest's, so the guest comes first.
    for position, (role, tokens, hls) in enumerate((("guest", guest, guest_hl), ("host", host, host_hl))):
        locution = build(
            LocutionRecord,
            where,
            id=make_id(CORPUS, qid, role),
            corpus=CORPUS,
            discourse=dialogue,
            local_id=f"{qid}:{role}",
            position=position,
            text=" ".join(tokens),
            speaker=role,
            tokens=tokens,
            highlights=hls,
        )
        locutions.append(locution)
        nodes.append(locution)
    tally = vote_fields(int(vote[0]), int(vote[1]))
    label = PARAPHRASE if tally["vote_share"] >= THRESHOLD else NON_PARAPHRASE
    relation = relation_from_scheme(
        CORPUS,
        label,
        where,
        id=make_id(CORPUS, qid, "rel"),
        corpus=CORPUS,
        discourse=dialogue,
        local_id=qid,
        **tally,
    )
    relations[qid] = relation.id
    nodes.append(relation)
    edges.extend(link(relation, [locutions[0].id], [locutions[1].id]))


def _read_annotations(
    path: Path,
    pairs: dict[str, _Pair],
    relations: dict[str, str],
    nodes: list[NodeRecord],
    annotators: Annotators,
    judged: dict[str, str],
) -> None:
    header, rows = parse_delimited(path, decode_utf16(path, read_bytes(path)), delimiter="\t")
    require_columns(path, header, ANNOTATION_COLUMNS, "ContextDeP per-annotator")
    groups: dict[tuple[str, str], dict[str, Row]] = defaultdict(dict)
    for row in rows:
        qid, annotator = row.get("qid").strip(), row.get("annotator").strip()
        where = f"{path}: line {row.line} (QID {qid}, annotator {annotator})"
        if not qid or not annotator:
            raise LoaderError(f"{where}: empty QID or Annotator")
        category = row.get("category").strip().lower().replace(" ", "_")
        if category not in CATEGORIES:
            raise LoaderError(f"{where}: unknown Category {row.get('category')!r}")
        group = groups[(qid, annotator)]
        if category in group:
            raise LoaderError(f"{where}: second {row.get('category')!r} row (first at line {group[category].line})")
        group[category] = row
    for (qid, annotator), group in groups.items():
        first = min(r.line for r in group.values())
        where = f"{path}: line {first} (QID {qid}, annotator {annotator})"
        missing = [c for c in CATEGORIES if c not in group]
        if missing:
            raise LoaderError(f"{where}: no {missing} row(s) for this annotator")
        pair = pairs.get(qid)
        if pair is None:
            raise LoaderError(f"{where}: QID not in the *_TOKEN-annotations files given")
        jid = make_id(CORPUS, qid, annotator)
        if jid in judged:
            raise LoaderError(f"{where}: judgement also in {judged[jid]}")
        judged[jid] = where
        referred = _indices(group["referred"].get("highlighted"), where, "Referred", len(pair.guest))
        paraphrase = _indices(group["paraphrase"].get("highlighted"), where, "Paraphrase", len(pair.host))
        referring = group["is_referring"].get("highlighted").strip().lower()
        if referring not in ("yes", "no", ""):
            raise LoaderError(f"{where}: 'Is Referring' must be Yes or No, got {referring!r}")
        comment = group["comment"].get("highlighted").strip()
        session = group["referred"].get("session").strip()
        started = group["referred"].get("session_start").strip()
        nodes.append(
            annotators.judgement(
                where,
                annotator,
                id=jid,
                relation=relations[qid],
                label=PARAPHRASE if referred and paraphrase else NON_PARAPHRASE,
                source_tokens=referred,
                target_tokens=paraphrase,
                is_referring=None if not referring else referring == "yes",
                reason=comment or None,
                session=session or None,
                created_at=started or None,
            )
        )


PAIR_COLUMNS = ("qid", "guest_tokens", "host_tokens")


def read_token_pairs(path: Path) -> list[tuple[str, list[str], list[str]]]:
    """(QID, guest tokens, host tokens) of a token file that may lack the annotation columns.

    Only ``QID``, ``Guest Tokens`` and ``Host Tokens`` are read (what a prediction needs): an
    aggregated file, or pairs nobody annotated in the same shape without the highlight and vote
    columns. Any file name.

    Raises:
        LoaderError: Wrong encoding, missing column, malformed list literal or repeated QID
            (file, line and QID named).
    """
    out: list[tuple[str, list[str], list[str]]] = []
    seen: dict[str, int] = {}
    for row in _token_table(path, PAIR_COLUMNS, "ContextDeP token"):
        qid, where, guest, host = _pair_fields(path, row)
        if qid in seen:
            raise LoaderError(f"{where}: QID also on line {seen[qid]}")
        seen[qid] = row.line
        out.append((qid, guest, host))
    return out


def load_contextdep(paths: list[Path]) -> CorpusBundle:
    """Load ContextDeP token-annotation and per-annotator files into one bundle.

    Args:
        paths: ``*_TOKEN-annotations.tsv`` and ``ANON_<split>.tsv`` files; every QID of a
            per-annotator file needs its aggregated row in one of the token files given.

    Raises:
        LoaderError: Wrong encoding, missing column, malformed list literal, incomplete
            annotator group or unknown QID; the message names the file, line and record.
    """
    tokens = sorted(p for p in paths if is_token_file(p))
    annotations = sorted(p for p in paths if not is_token_file(p))
    if not tokens:
        raise LoaderError(f"no *_TOKEN-annotations.tsv among {[str(p) for p in paths]}; ContextDeP needs them")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    pairs: dict[str, _Pair] = {}
    relations: dict[str, str] = {}
    for path in tokens:
        _read_tokens(path, nodes, edges, pairs, relations)
    annotators = Annotators(CORPUS)
    judged: dict[str, str] = {}
    for path in annotations:
        _read_annotations(path, pairs, relations, nodes, annotators, judged)
    nodes.extend(annotators.records.values())
    origin = ", ".join(str(p) for p in paths)
    return corpus_bundle(CORPUS, NAME, paths, nodes, edges, origin)
