"""Dialogues as plain objects, built from ontology records or read views, and leak-free splits.

``gnn`` never reads corpus files or the graph itself: the JSON loader
(``ontology.formats.dialogue_json``) produces ontology records, the graph produces
:class:`~ontology.views.DiscourseView` s, and both are turned into :class:`Dialogue` here.

Dialogues are keyed by their position (``<source>#<index>``), never by their id alone: STAC reuses
dialogue ids (41 ids over 1,086 training dialogues).

Splits are made over groups of dialogues that must not be separated: Molweni dev dialogues are
overlapping windows of the same chat sessions, so dialogues sharing an EDU text are grouped
(union-find); STAC dialogues sharing an id come from the same game and are grouped as well.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ontology.errors import ModelError
from ontology.records import CorpusBundle, DiscourseRecord, LocutionRecord, RelationRecord
from ontology.terms import Label, RelType, Sense
from ontology.views import DiscourseView

DOMAINS = ("molweni", "stac")
# Texts shorter than this ("ok", "thanks") occur everywhere and say nothing about shared sessions.
MIN_SHARED_TEXT = 20


@dataclass
class Dialogue:
    """One dialogue: EDUs in order with speakers, and its (gold) discourse relations.

    Attributes:
        key: Position-based key, unique within a run (``stac#12``).
        local_id: The id in the corpus file (may repeat in STAC).
        domain: ``molweni`` or ``stac``: which corpus style the dialogue follows.
        texts: EDU texts in order.
        speakers: Speaker of each EDU.
        relations: ``(x, y, sense)``: EDU ``x`` is a parent of EDU ``y`` with that sense.
        unit_ids: Graph ids of the EDUs, when the dialogue comes from records or views.
        graph_id: Graph id of the dialogue node, if any.
    """

    key: str
    local_id: str
    domain: str
    texts: list[str]
    speakers: list[str]
    relations: list[tuple[int, int, Sense]] = field(default_factory=list)
    unit_ids: list[str] | None = None
    graph_id: str | None = None

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.speakers):
            raise ModelError(f"dialogue {self.key}: {len(self.texts)} texts but {len(self.speakers)} speakers")
        if self.domain not in DOMAINS:
            raise ModelError(f"dialogue {self.key}: unknown domain {self.domain!r}; expected one of {DOMAINS}")
        for x, y, _ in self.relations:
            if not (0 <= x < len(self.texts) and 0 <= y < len(self.texts)):
                raise ModelError(f"dialogue {self.key}: relation {x} -> {y} out of range ({len(self.texts)} EDUs)")

    def __len__(self) -> int:
        return len(self.texts)

    def links(self) -> set[tuple[int, int, str]]:
        """Its relations as scoring triples ``(x, y, sense)``."""
        return {(x, y, s.value) for x, y, s in self.relations}


def dialogues_from_bundle(
    bundle: CorpusBundle, domain: str | None = None, source: str = "", *, per_file: bool = False
) -> list[Dialogue]:
    """The dialogues of a loaded Molweni/STAC bundle, in file order.

    Args:
        bundle: What ``ontology.formats.dialogue_json.load_dialogue_json`` returned.
        domain: ``molweni`` or ``stac``; default: the bundle's corpus id.
        source: Prefix of the position keys (default: the corpus id).
        per_file: Records of several files (:func:`ontology.formats.dialogue_json.load_dialogue_files`):
            each dialogue's domain is its record's corpus and its key ``<file name>#<position in
            its file>``, as if each file had been read alone.

    Raises:
        ModelError: A relation is not a discourse relation between EDUs of one dialogue.
    """
    domain = domain or bundle.corpus.id
    source = source or bundle.corpus.id
    dialogues: dict[str, Dialogue] = {}
    position: dict[str, tuple[str, int]] = {}
    rel_dialogue: dict[str, str] = {}
    rel_sense: dict[str, Sense] = {}
    in_file: dict[str, int] = defaultdict(int)
    for node in bundle.nodes:
        if isinstance(node, DiscourseRecord):
            file = (node.source or node.corpus) if per_file else source
            dialogues[node.id] = Dialogue(
                key=f"{file}#{in_file[file]}",
                local_id=node.local_id,
                domain=node.corpus if per_file else domain,
                texts=[],
                speakers=[],
                unit_ids=[],
                graph_id=node.id,
            )
            in_file[file] += 1
    for node in bundle.nodes:
        if isinstance(node, LocutionRecord) and node.discourse in dialogues:
            d = dialogues[node.discourse]
            assert d.unit_ids is not None
            position[node.id] = (node.discourse, len(d.texts))
            d.texts.append(node.text or "")
            d.speakers.append(node.speaker or "")
            d.unit_ids.append(node.id)
        elif isinstance(node, RelationRecord) and node.kind is Label.DiscourseRelation and node.discourse:
            if node.sense is None:
                raise ModelError(f"relation {node.id} has no sense")
            rel_dialogue[node.id] = node.discourse
            rel_sense[node.id] = Sense(node.sense)
    ends: dict[str, dict[str, list[str]]] = defaultdict(lambda: {"in": [], "out": []})
    for edge in bundle.edges:
        if edge.type is not RelType.AIF_EDGE:
            continue
        if edge.target in rel_sense:
            ends[edge.target]["in"].append(edge.source)
        elif edge.source in rel_sense:
            ends[edge.source]["out"].append(edge.target)
    for rel_id, sense in rel_sense.items():
        srcs, tgts = ends[rel_id]["in"], ends[rel_id]["out"]
        d = dialogues[rel_dialogue[rel_id]]
        for s in srcs:
            for t in tgts:
                if s not in position or t not in position:
                    raise ModelError(f"relation {rel_id} links a unit outside dialogue {d.local_id}")
                d.relations.append((position[s][1], position[t][1], sense))
    return list(dialogues.values())


def dialogue_from_view(view: DiscourseView, domain: str, key: str, origin: str = "gold") -> Dialogue:
    """A dialogue read from the graph, with its relations of one origin (``gold`` by default).

    Units keep the view's order (position, then id).
    """
    index = {u.id: i for i, u in enumerate(view.units)}
    relations: list[tuple[int, int, Sense]] = []
    for rel in view.relations:
        if rel.kind != Label.DiscourseRelation.value or rel.origin != origin or rel.sense is None:
            continue
        for s in rel.sources:
            for t in rel.targets:
                if s in index and t in index:
                    relations.append((index[s], index[t], Sense(rel.sense)))
    return Dialogue(
        key=key,
        local_id=str(view.local_id or view.id),
        domain=domain,
        texts=[u.text for u in view.units],
        speakers=[u.speaker or u.speaker_id or "" for u in view.units],
        relations=relations,
        unit_ids=[u.id for u in view.units],
        graph_id=view.id,
    )


def session_groups(dialogues: Sequence[Dialogue]) -> list[list[int]]:
    """Groups of dialogue indices that must stay on one side of a split.

    Two dialogues are grouped when they share an EDU text of at least ``MIN_SHARED_TEXT``
    characters (Molweni windows of one session; repeated STAC games) or, in STAC, the same id.
    Groups come in order of their first dialogue.
    """
    parent = list(range(len(dialogues)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    first: dict[tuple[str, str], int] = {}
    for i, d in enumerate(dialogues):
        keys: Iterable[tuple[str, str]] = [("text", t.strip().lower()) for t in d.texts]
        if d.domain == "stac":
            keys = [*keys, ("id", d.local_id)]
        for k in keys:
            if k[0] == "text" and len(k[1]) < MIN_SHARED_TEXT:
                continue
            if k in first:
                union(i, first[k])
            else:
                first[k] = i
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(dialogues)):
        groups[find(i)].append(i)
    return [groups[r] for r in sorted(groups)]


def split_by_groups(dialogues: Sequence[Dialogue], fractions: Sequence[float], seed: int = 0) -> list[list[int]]:
    """Split dialogue indices into parts of about ``fractions`` of the EDUs, never cutting a group.

    Args:
        dialogues: The dialogues.
        fractions: Share of EDUs wanted in each part but the first (``[tune, test]`` gives
            ``[train, tune, test]``); the first part gets the rest.
        seed: Shuffle seed of the groups.

    Returns:
        One sorted list of dialogue indices per part (``len(fractions) + 1`` parts).
    """
    groups = session_groups(dialogues)
    random.Random(seed).shuffle(groups)
    total = sum(len(d) for d in dialogues)
    parts: list[list[int]] = [[] for _ in range(len(fractions) + 1)]
    sizes = [0] * len(parts)
    for g in groups:
        n = sum(len(dialogues[i]) for i in g)
        target = 0
        for k, frac in enumerate(fractions, start=1):
            if sizes[k] + n / 2 <= frac * total:
                target = k
                break
        parts[target].extend(g)
        sizes[target] += n
    return [sorted(p) for p in parts]
