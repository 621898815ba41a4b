"""Molweni and STAC discourse-parsing JSON (the Shi & Huang format).

A file is a JSON array of dialogues ``{"id", "edus": [{"text", "speaker"}], "relations":
[{"x", "y", "type"}]}``; ``x -> y`` are 0-based EDU indices and ``type`` one of the 16 SDRT
labels of the corpus scheme. Each EDU becomes a Locution, each relation a DiscourseRelation
(AIF TA-node) with AIF edges from EDU ``x`` into it and from it to EDU ``y``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from graphstore.loaders.common import read_json, require
from ontology.errors import LoaderError
from ontology.records import (
    CorpusBundle,
    CorpusRecord,
    DiscourseRecord,
    EdgeRecord,
    LocutionRecord,
    NodeRecord,
    SpeakerRecord,
    build,
    link,
    make_id,
    relation_from_scheme,
)

SCHEMES = {"molweni": "Molweni DP (Li et al. 2020)", "stac": "STAC (Asher et al. 2016)"}


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
    for path in paths:
        data = read_json(path)
        if not isinstance(data, list):
            raise LoaderError(f"{path}: expected a JSON array of dialogues, got {type(data).__name__}")
        for k, dlg in enumerate(data):
            where = f"{path}: dialogue #{k}"
            local = require(dlg, "id", (str, int), where)
            local = str(local)
            where = f"{path}: dialogue #{k} (id {local})"
            edus = require(dlg, "edus", list, where)
            relations = require(dlg, "relations", list, where)
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
    corpus_record = CorpusRecord(
        id=corpus, corpus=corpus, name=SCHEMES[scheme], source=", ".join(str(p) for p in paths)
    )
    nodes.extend(speakers.values())
    return CorpusBundle(corpus_record, nodes, edges, origin=", ".join(str(p) for p in paths))
