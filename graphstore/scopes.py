"""Discourses of the graph read back as the records their corpus reader gives (views -> records).

A model task reads records (:mod:`ontology.records`), whether they come from files (the readers of
:mod:`ontology.formats`) or from the graph. Here the same records are rebuilt from read views (READ
transactions), so a map or paper stored in the graph gets exactly the predictions its file gets:

* ``aif`` -- **AIF dialogues** (QT30 / DialAM-2024, M-Arg, any corpus of AIF dialogues): the map in
  the DialAM test-input form -- L-nodes, I-nodes and gold TA transitions, numbered in file order
  without the YA/RA/CA/MA nodes (:func:`ontology.formats.aif_write.strip_relations`), since the
  relation model recovers each I-node's locution from that order. The gold YA/RA/CA/MA follow;
  they only score predictions.
* ``sciarg`` -- **Sci-Arg documents**: sentences, gold components (type, character span, the
  sentences they lie in) and gold relations.
* ``pairs`` -- **utterance pairs** (ContextDeP guest -> host): the two locutions, with their
  tokens, of every dialogue made of exactly two (:func:`graphstore.pairs.discourse_pairs`); other
  dialogues give no records.
* ``dialogues`` -- **Molweni/STAC-style dialogues**: each dialogue, its EDUs (locutions) in order
  with their speakers, and its gold discourse relations with their AIF edges.

A task names its reader with :meth:`gnn.task.Task.scope_read`; :func:`read_scope` is the one entry,
after :func:`resolve_scope` named the discourses. Live mining reads a stored dialogue's locutions
and argument units with :func:`stored_dialogue`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphstore import cypher
from graphstore.aif_export import read_discourses, resolve_discourse
from graphstore.pairs import discourse_pairs
from graphstore.reads import unit_view
from graphstore.store import GraphStore
from ontology.errors import ApiError, NotFoundError
from ontology.records import (
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    PropositionRecord,
    RelationRecord,
    SentenceRecord,
)
from ontology.scope import Scope, ScopeRecords
from ontology.terms import Label, Prop, RelType
from ontology.views import EdgeView, UnitView

# AIF nodes the DialAM test input leaves out (strip_relations drops the same).
_NOT_INPUT = ("YA", "RA", "CA", "MA")
BATCH = 100
"""Discourses read per READ transaction."""


def _gold(unit: UnitView) -> bool:
    return unit.node.get(Prop.ORIGIN, "gold") != "predicted"


def in_order(units: Iterable[UnitView]) -> list[UnitView]:
    """``units`` in file order: by stored position (none counts as 0), then id."""
    return sorted(units, key=lambda u: (u.position if u.position is not None else 0, u.id))


def _by_discourse(units: Mapping[str, UnitView]) -> dict[str | None, list[UnitView]]:
    """The units of each discourse (one pass, instead of one scan of every unit per discourse)."""
    grouped: dict[str | None, list[UnitView]] = {}
    for u in units.values():
        grouped.setdefault(u.discourse, []).append(u)
    return grouped


def _unit_fields(unit: UnitView, position: int | None) -> dict[str, Any]:
    node = unit.node
    return {
        "id": node.id,
        "corpus": node.corpus or "",
        "discourse": unit.discourse,
        "local_id": node.get(Prop.LOCAL_ID),
        "position": position,
        "text": node.text,
    }


def aif_records(
    units: Mapping[str, UnitView], edges: Sequence[EdgeView], ids: Sequence[str]
) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The AIF loader's records of the maps ``ids``, in the DialAM test-input numbering.

    L-, I- and gold TA nodes are numbered by their stored file position with the YA/RA/CA/MA nodes
    left out, as in the stripped file ``predict aif`` reads; the gold YA/RA/CA/MA nodes follow
    (they only carry the gold relations and anchoring, never features).
    """
    nodes: list[NodeRecord] = []
    grouped = _by_discourse(units)
    for did in ids:
        mine = [u for u in grouped.get(did, ()) if not u.node.has(Label.Relation) or _gold(u)]
        is_input = [u for u in mine if not u.node.has(Label.Relation) or u.node.get(Prop.AIF_TYPE) not in _NOT_INPUT]
        input_ids = {u.id for u in is_input}
        for k, u in enumerate(in_order(is_input)):
            fields = _unit_fields(u, k)
            if u.node.has(Label.Locution):
                nodes.append(LocutionRecord(**fields, speaker=u.node.get(Prop.SPEAKER)))
            elif u.node.has(Label.Proposition):
                nodes.append(PropositionRecord(**fields))
            else:
                nodes.append(_relation(u, fields))
        for u in in_order(u for u in mine if u.id not in input_ids):
            nodes.append(_relation(u, _unit_fields(u, None)))
    return nodes, _aif_edges(nodes, edges)


def _relation(unit: UnitView, fields: dict[str, Any]) -> RelationRecord:
    return RelationRecord(
        **fields,
        kind=Label(unit.node.kind),
        aif_type=unit.node.get(Prop.AIF_TYPE),
        scheme_label=unit.node.get(Prop.SCHEME_LABEL),
    )


def _aif_edges(nodes: Sequence[NodeRecord], edges: Sequence[EdgeView]) -> list[EdgeRecord]:
    kept = {n.id: n.corpus for n in nodes}
    return [
        EdgeRecord(type=RelType.AIF_EDGE, source=e.source, target=e.target, corpus=kept[e.target], id=e.id)
        for e in sorted(edges, key=lambda e: (e.id or "", e.source, e.target))
        if e.source in kept and e.target in kept
    ]


def sciarg_records(
    units: Mapping[str, UnitView],
    edges: Sequence[EdgeView],
    sentences: Mapping[str, Sequence[str]],
    ids: Sequence[str],
) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The Sci-Arg loader's records of the documents ``ids``: sentences, gold components and gold relations.

    Args:
        units: Units of the documents (read views), their sentences included.
        edges: AIF edges touching them.
        sentences: Per component id, the ids of the sentences it lies in, in text order.
        ids: Document ids.
    """
    nodes: list[NodeRecord] = []
    grouped = _by_discourse(units)
    for did in ids:
        mine = sorted(grouped.get(did, ()), key=lambda u: (u.position or 0, u.id))
        for u in mine:
            if u.node.has(Label.Proposition):
                nodes.append(
                    PropositionRecord(
                        **_unit_fields(u, u.position),
                        scheme_label=u.node.get(Prop.SCHEME_LABEL),
                        char_start=u.node.get(Prop.CHAR_START),
                        char_end=u.node.get(Prop.CHAR_END),
                        sentences=list(sentences.get(u.id, ())),
                    )
                )
            elif u.node.has(Label.Relation) and _gold(u):
                nodes.append(_relation(u, _unit_fields(u, u.position)))
            elif u.node.has(Label.Sentence):
                nodes.append(
                    SentenceRecord(
                        **_unit_fields(u, u.position),
                        char_start=u.node.get(Prop.CHAR_START),
                        char_end=u.node.get(Prop.CHAR_END),
                    )
                )
    return nodes, _aif_edges(nodes, edges)


def dialogue_records(
    units: Mapping[str, UnitView], edges: Sequence[EdgeView], ids: Sequence[str], corpus: str | None = None
) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The records of the dialogues ``ids``: a dialogue record, its locutions, its gold discourse relations.

    Locutions come in file order (:func:`in_order`), numbered from 0, with the speaker's name (else
    its id); a dialogue's corpus is its first locution's (else ``corpus``). Only the gold discourse
    relations are kept, with the AIF edges into and out of them.
    """
    nodes: list[NodeRecord] = []
    grouped = _by_discourse(units)
    for did in ids:
        mine = grouped.get(did, [])
        locutions = in_order(u for u in mine if u.node.has(Label.Locution))
        owner = (locutions[0].node.corpus if locutions else None) or corpus or ""
        nodes.append(DiscourseRecord(id=did, corpus=owner, kind="Dialogue", local_id=did))
        for k, u in enumerate(locutions):
            fields = _unit_fields(u, k) | {"corpus": u.node.corpus or owner}
            nodes.append(LocutionRecord(**fields, speaker=u.speaker or u.speaker_id or ""))
        for u in in_order(u for u in mine if u.node.has(Label.DiscourseRelation) and _gold(u)):
            nodes.append(
                RelationRecord(
                    **_unit_fields(u, u.position) | {"corpus": u.node.corpus or owner},
                    kind=Label.DiscourseRelation,
                    sense=u.node.get(Prop.SENSE),
                    scheme_label=u.node.get(Prop.SCHEME_LABEL),
                )
            )
    return nodes, _aif_edges(nodes, edges)


def _read_aif(store: GraphStore, ids: Sequence[str]) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    units, edges = read_discourses(store, ids)
    return aif_records(units, edges, ids)


def _read_sciarg(store: GraphStore, ids: Sequence[str]) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    units, edges = read_discourses(store, ids)
    # The words between and before two components are read from the sentences' texts.
    units.update((row["id"], unit_view(row)) for row in store.read(cypher.discourse_sentences(), ids=list(ids)))
    comps = sorted(u.id for u in units.values() if u.node.has(Label.Proposition))
    rows = store.read(cypher.unit_sentences(), ids=comps) if comps else []
    return sciarg_records(units, edges, {r["id"]: list(r["sentences"]) for r in rows}, ids)


def _read_pairs(store: GraphStore, ids: Sequence[str]) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    nodes: list[NodeRecord] = []
    for _, guest, host in discourse_pairs(store, ids):
        for position, unit in enumerate((guest, host)):
            node = unit.node
            nodes.append(
                LocutionRecord(
                    **_unit_fields(unit, position),
                    speaker=node.get(Prop.SPEAKER),
                    tokens=list(node.get(Prop.TOKENS) or []),
                )
            )
    return nodes, []


def _read_dialogues(store: GraphStore, ids: Sequence[str]) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    units, edges = read_discourses(store, ids)
    return dialogue_records(units, edges, ids)


READERS: dict[str, Callable[[GraphStore, Sequence[str]], tuple[list[NodeRecord], list[EdgeRecord]]]] = {
    "aif": _read_aif,
    "sciarg": _read_sciarg,
    "pairs": _read_pairs,
    "dialogues": _read_dialogues,
}
"""Reader name -> how it reads the records of some discourses (a task names one in ``scope_read``)."""


def read_scope(
    store: GraphStore, reader: str, scope: Scope, advance: Callable[[int], None] | None = None
) -> ScopeRecords:
    """The records of ``scope``'s discourses as ``reader`` rebuilds them, read :data:`BATCH` discourses at a time.

    Args:
        store: The graph.
        reader: A name of :data:`READERS`.
        scope: The discourses.
        advance: Told how many discourses each batch read.

    Raises:
        ApiError: Unknown reader.
    """
    read = READERS.get(reader)
    if read is None:
        raise ApiError(f"unknown graph reader {reader!r}; expected one of {sorted(READERS)}")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for start in range(0, len(scope.ids), BATCH):
        chunk = scope.ids[start : start + BATCH]
        got_nodes, got_edges = read(store, chunk)
        nodes += got_nodes
        edges += got_edges
        if advance is not None:
            advance(len(chunk))
    return ScopeRecords(scope, tuple(nodes), tuple(edges))


def resolve_scope(store: GraphStore, corpus: str | None, dialogue: str | None) -> Scope:
    """The discourses of ``corpus`` or the one ``dialogue`` (exactly one of them).

    Raises:
        ApiError: Both or neither given. NotFoundError: Unknown corpus or dialogue.
    """
    if (corpus is None) == (dialogue is None):
        raise ApiError("give exactly one of --corpus and --dialogue")
    if dialogue is not None:
        did = resolve_discourse(store, dialogue, corpus)
        row = store.read(cypher.discourse_refs(), ref=did, corpus=None)[0]
        return Scope(str(row["corpus"]), did, (did,), (row["local_id"],))
    assert corpus is not None
    rows = store.read(cypher.corpus_discourses(), corpus=corpus)
    if not rows:
        raise NotFoundError(f"no dialogues or documents of corpus {corpus!r} in the graph")
    return Scope(corpus, None, tuple(str(r["id"]) for r in rows), tuple(r["local_id"] for r in rows))


@dataclass(frozen=True)
class StoredDialogue:
    """A stored dialogue as live mining reads it: its locutions and the argument units said in them.

    Attributes:
        id: Graph id of the dialogue.
        corpus: Its corpus.
        locutions: Its locutions in file order.
        units: Its propositions in file order (its locutions when it has none, as Molweni's).
        anchors: Per unit id, the indices of the locutions it was said in (L -> YA -> I).
    """

    id: str
    corpus: str | None
    locutions: list[UnitView]
    units: list[UnitView]
    anchors: dict[str, list[int]]


def stored_dialogue(store: GraphStore, ref: str) -> StoredDialogue:
    """The locutions and argument units of the stored dialogue ``ref`` (its id or local id).

    Raises:
        NotFoundError: No such dialogue. ApiError: It has no locutions.
    """
    did = resolve_discourse(store, ref)
    units, edges = read_discourses(store, [did])
    own = [u for u in units.values() if u.discourse == did]
    locs = in_order(u for u in own if u.node.has(Label.Locution))
    props = in_order(u for u in own if u.node.has(Label.Proposition))
    if not locs:
        raise ApiError(f"dialogue {did} has no locutions to predict over")
    loc_index = {u.id: i for i, u in enumerate(locs)}
    # L -> YA -> I: which locution(s) each proposition was said in.
    into: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        into[e.target].append(e.source)
    illocutions = {u.id for u in units.values() if u.node.has(Label.Illocution)}
    anchors = {
        p.id: sorted({loc_index[s] for ya in into[p.id] if ya in illocutions for s in into[ya] if s in loc_index})
        for p in props
    }
    if not props:
        props = locs
        anchors = {u.id: [i] for i, u in enumerate(locs)}
    return StoredDialogue(did, locs[0].node.corpus, locs, props, anchors)
