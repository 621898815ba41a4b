"""Molweni and STAC discourse-parsing JSON (the Shi & Huang format).

A file is a JSON array of dialogues ``{"id", "edus": [{"text", "speaker"}], "relations":
[{"x", "y", "type"}]}`` (``relations`` may be absent: an unannotated dialogue); ``x -> y`` are
0-based EDU indices and ``type`` one of the 16 SDRT labels of the corpus scheme. Each EDU becomes
a Locution, each relation a DiscourseRelation (AIF TA-node) with AIF edges from EDU ``x`` into it
and from it to EDU ``y``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path

from ontology.errors import LoaderError
from ontology.formats.common import corpus_bundle, read_json, require
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    SpeakerRecord,
    build,
    check_fields,
    link,
    make_id,
    relation_from_scheme,
)
from ontology.terms import SCHEME_TERMS, Sense

SCHEMES = {"molweni": "Molweni DP (Li et al. 2020)", "stac": "STAC (Asher et al. 2016)"}
# Labels only one of the two schemes spells that way (how a file reveals its scheme).
_DISTINCT = {
    scheme: [
        t
        for t in SCHEME_TERMS
        if t.corpus == scheme and not any(o.raw == t.raw for o in SCHEME_TERMS if o.corpus == other)
    ]
    for scheme, other in (("molweni", "stac"), ("stac", "molweni"))
}


def load_dialogue_json(
    paths: list[Path], corpus: str, scheme: str | None = None, split: str | None = None
) -> CorpusBundle:
    """Load one or more Molweni/STAC JSON files into one bundle.

    Args:
        paths: JSON files (each a list of dialogues).
        corpus: Corpus id for the graph (``molweni`` or ``stac``).
        scheme: Scheme whose labels the files use; defaults to ``corpus``.
        split: Split name stored on dialogues; defaults to each file's stem.

    Raises:
        LoaderError: Malformed file; the message names file, dialogue and record.
    """
    scheme = scheme or corpus
    if scheme not in SCHEMES:
        raise LoaderError(f"unknown dialogue scheme {scheme!r}; expected one of {sorted(SCHEMES)}")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    speakers: dict[str, SpeakerRecord] = {}
    seen: Counter[str] = Counter()
    # Where each dialogue id was first read: a repeat inside one file is numbered (STAC repeats game
    # ids), one in another file is the same dialogue loaded twice and refused.
    first: dict[str, tuple[Path, int]] = {}
    for path in paths:
        data = read_json(path)
        if not isinstance(data, list):
            raise LoaderError(f"{path}: expected a JSON array of dialogues, got {type(data).__name__}")
        if not data:
            raise LoaderError(f"{path}: an empty array, no dialogue; a file that loads nothing is refused")
        for k, dlg in enumerate(data):
            where = f"{path}: dialogue #{k}"
            local = require(dlg, "id", (str, int), where)
            if isinstance(local, bool):
                # JSON true/false are ints to Python; str() would make them the ids "True"/"False".
                raise LoaderError(f"{where}: field 'id' has type bool")
            # "1056" and 1056 name the same dialogue; the file itself keeps its form (write_dialogue_json).
            local = str(local)
            check_fields([("id", local)], where)
            if local in first and first[local][0] != path:
                other, index = first[local]
                raise LoaderError(
                    f"{where}: dialogue id {local!r} is also dialogue #{index} of {other}; a dialogue id may "
                    "repeat within one file (numbered ~2, ~3...), not across the files of one load"
                )
            first.setdefault(local, (path, k))
            where = f"{path}: dialogue #{k} (id {local})"
            edus = require(dlg, "edus", list, where)
            # A dialogue without "relations" is an unannotated one: what a user parses.
            relations = require(dlg, "relations", list, where) if "relations" in dlg else []
            seen[local] += 1
            # STAC repeats some game ids; later occurrences get a suffix so each stays a node.
            key = local if seen[local] == 1 else f"{local}~{seen[local]}"
            dlg_id = make_id(corpus, key)
            nodes.append(
                build(
                    DiscourseRecord,
                    where,
                    id=dlg_id,
                    corpus=corpus,
                    kind="Dialogue",
                    local_id=local,
                    source=path.name,
                    split=split or path.stem,
                )
            )
            edu_ids: list[str] = []
            for i, edu in enumerate(edus):
                ewhere = f"{where}, edu {i}"
                text = require(edu, "text", str, ewhere)
                speaker = require(edu, "speaker", str, ewhere)
                speaker_id = make_id(corpus, "speaker", speaker)
                if speaker_id not in speakers:
                    speakers[speaker_id] = build(SpeakerRecord, ewhere, id=speaker_id, corpus=corpus, name=speaker)
                edu_id = make_id(corpus, key, "edu", i)
                edu_ids.append(edu_id)
                nodes.append(
                    build(
                        LocutionRecord,
                        ewhere,
                        id=edu_id,
                        corpus=corpus,
                        discourse=dlg_id,
                        local_id=str(i),
                        position=i,
                        text=text,
                        speaker=speaker,
                        speaker_id=speaker_id,
                    )
                )
            for j, rel in enumerate(relations):
                rwhere = f"{where}, relation {j}"
                x = require(rel, "x", int, rwhere)
                y = require(rel, "y", int, rwhere)
                label = require(rel, "type", str, rwhere)
                for name, idx in (("x", x), ("y", y)):
                    if not 0 <= idx < len(edu_ids):
                        raise LoaderError(f"{rwhere}: {name}={idx} is out of range (dialogue has {len(edu_ids)} EDUs)")
                record = relation_from_scheme(
                    scheme,
                    label,
                    rwhere,
                    id=make_id(corpus, key, "rel", j),
                    corpus=corpus,
                    discourse=dlg_id,
                    local_id=str(j),
                    position=j,
                )
                nodes.append(record)
                edges.extend(link(record, [edu_ids[x]], [edu_ids[y]]))
    nodes.extend(speakers.values())
    listed = ", ".join(str(p) for p in paths)
    return corpus_bundle(corpus, SCHEMES[scheme], paths, nodes, edges, listed, source=listed)


# -- writing predictions back -----------------------------------------------------------------------


def scheme_label(scheme: str, sense: Sense | str) -> str:
    """The label ``scheme`` spells ``sense`` with (``QuestionAnswerPair`` -> ``QAP`` in Molweni).

    Raises:
        LoaderError: The scheme has no label for that sense.
    """
    for term in SCHEME_TERMS:
        if term.corpus == scheme and term.sense is not None and term.sense.value == str(sense):
            return term.raw
    raise LoaderError(f"the {scheme} scheme has no label for sense {sense!r}")


def detect_scheme(path: Path, default: str = "molweni") -> str:
    """Which scheme's spelling a Molweni/STAC file uses, from its relation labels.

    The two schemes differ only in the question-answer label (``QAP`` vs ``Question-answer_pair``);
    a file without that label gets ``default``.

    Raises:
        LoaderError: The file mixes the two spellings or is malformed.
    """
    data = read_json(path)
    if not isinstance(data, list):
        raise LoaderError(f"{path}: expected a JSON array of dialogues, got {type(data).__name__}")
    labels = {
        rel.get("type")
        for dlg in data
        if isinstance(dlg, dict)
        for rel in dlg.get("relations", [])
        if isinstance(rel, dict)
    }
    found = {scheme for scheme in SCHEMES if any(t.corpus == scheme and t.raw in labels for t in _DISTINCT[scheme])}
    if len(found) > 1:
        raise LoaderError(f"{path}: mixes Molweni and STAC relation labels")
    return found.pop() if found else default


def write_dialogue_json(source: Path, out: Path, relations: list[list[tuple[int, int, str]]]) -> Path:
    """Write ``source`` again to ``out`` with each dialogue's ``relations`` replaced.

    Dialogues keep their order and every other field (ids, EDUs and any extra keys) unchanged;
    new relation objects use the key order of the file's first relation (``x, y, type`` when it has
    none). The file is written to a temporary name and renamed, so a failure leaves nothing.

    Args:
        source: The Molweni/STAC JSON file the predictions were made for.
        out: Where to write.
        relations: Per dialogue (by position), ``(x, y, label)`` with the label as the file spells it.

    Raises:
        LoaderError: The number of dialogues differs, or an index is out of range.
    """
    data = read_json(source)
    if not isinstance(data, list):
        raise LoaderError(f"{source}: expected a JSON array of dialogues, got {type(data).__name__}")
    if len(data) != len(relations):
        raise LoaderError(f"{source}: {len(data)} dialogues but predictions for {len(relations)}")
    order = ["x", "y", "type"]
    for dlg in data:
        rels = dlg.get("relations") if isinstance(dlg, dict) else None
        if rels and isinstance(rels[0], dict) and set(rels[0]) >= set(order):
            order = [k for k in rels[0] if k in order]
            break
    for k, (dlg, predicted) in enumerate(zip(data, relations, strict=True)):
        n = len(require(dlg, "edus", list, f"{source}: dialogue #{k}"))
        new = []
        for x, y, label in predicted:
            if not (0 <= x < n and 0 <= y < n):
                raise LoaderError(f"{source}: dialogue #{k}: predicted relation {x} -> {y} out of range ({n} EDUs)")
            values = {"x": x, "y": y, "type": label}
            new.append({key: values[key] for key in order})
        dlg["relations"] = new
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def load_dialogue_files(paths: list[Path]) -> CorpusBundle:
    """The records of Molweni/STAC files of either scheme, each read alone in its own scheme, as one bundle.

    What a model task reads (never ingested): each file's records keep their corpus (the scheme
    it is spelled in, :func:`detect_scheme`) and their dialogues name the file (``source``). The
    bundle's corpus record is the first file's.

    Raises:
        LoaderError: No file, a malformed one, or a dialogue id of two files of one scheme (named).
    """
    if not paths:
        raise LoaderError("no Molweni/STAC files to read")
    bundles = [load_dialogue_json([path], scheme, scheme=scheme) for path in paths for scheme in [detect_scheme(path)]]
    seen: dict[str, Path] = {}
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for path, bundle in zip(paths, bundles, strict=True):
        for node in bundle.nodes[1:]:
            if isinstance(node, DiscourseRecord):
                if node.id in seen:
                    raise LoaderError(f"{path}: dialogue {node.local_id!r} is also in {seen[node.id]}")
                seen[node.id] = path
        nodes += bundle.nodes[1:]
        edges += bundle.edges
    return CorpusBundle(bundles[0].corpus, nodes, edges, ", ".join(map(str, paths)))
