"""Fixes found by the failure drills (issue 11) that need no database: loaders, bundles, claim owners."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from graphstore.store import owner_gone, process_token
from ontology.errors import LoaderError
from ontology.formats.aif import load_aif
from ontology.formats.common import describe_sources, mismatch
from ontology.records import CorpusBundle, CorpusRecord, EdgeRecord, PropositionRecord
from ontology.terms import RelType


def test_mismatch_shows_where_two_long_strings_differ() -> None:
    common = "We propose a method for the joint extraction of argument components " * 2
    text = common + "and relations from scientific text."
    annotation = common + "and relation from scientific text."
    message = mismatch(text, annotation)
    assert f"differ from character {len(common) + 12} on" in message
    assert "components and relations from scientific" in message and "and relation from scientific" in message
    # The shown excerpts differ: the old message cut both to the same 60-character prefix.
    shown = message.split("the text has ")[1].split(", the annotation says ")
    assert shown[0] != shown[1]


def test_corpus_source_describes_every_file_of_the_load(tmp_path: Path) -> None:
    maps = []
    for k in range(3):
        path = tmp_path / ("a" if k < 2 else "b") / f"map{k}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"nodes": [{"nodeID": "1", "type": "I", "text": f"p{k}"}], "edges": []}))
        maps.append(path)
    bundle = load_aif(maps)
    assert bundle.corpus.source == f"{tmp_path.resolve()} (3 files)"
    assert describe_sources(maps[:1]) == str(maps[0])


def test_bundle_refuses_duplicate_edge_ids_and_folds_repeated_structural_edges() -> None:
    corpus = CorpusRecord(id="t", corpus="t", name="t")
    a = PropositionRecord(id="t:a", corpus="t", text="a")
    b = PropositionRecord(id="t:b", corpus="t", text="b")
    repeated = [EdgeRecord(type=RelType.PART_OF, source="t:a", target="t", corpus="t") for _ in range(2)]
    bundle = CorpusBundle(corpus, [a, b], repeated)
    bundle.validate()
    assert bundle.counts()["PART_OF"] == 1  # Neo4j MERGEs the repeat into one: the counts agree
    twice = [EdgeRecord(type=RelType.AIF_EDGE, source=s, target="t:b", corpus="t", id="t:e1") for s in ("t:a", "t:b")]
    with pytest.raises(LoaderError, match=r"hand-made: duplicate edge id\(s\) \['t:e1'\]"):
        CorpusBundle(corpus, [a, b], twice, origin="hand-made").validate()
    # Two ids for one edge (same type and ends): the store keeps one relationship, so it is refused.
    renamed = [EdgeRecord(type=RelType.AIF_EDGE, source="t:a", target="t:b", corpus="t", id=i) for i in ("e1", "e2")]
    with pytest.raises(LoaderError, match=r"hand-made: edges 'e1' and 'e2' both link t:a -> t:b"):
        CorpusBundle(corpus, [a, b], renamed, origin="hand-made").validate()


def test_claim_owner_of_a_dead_or_reused_pid_is_gone() -> None:
    me = process_token()
    # A run of this very process that is no longer in progress was interrupted: gone as well.
    assert owner_gone(me, "a-run-that-is-not-in-progress")
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = me.split(":", 1)[0]
    assert owner_gone(f"{host}:{dead.pid}:12345")
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert not owner_gone(process_token(sleeper.pid))
        assert owner_gone(f"{host}:{sleeper.pid}:1")  # same pid, another process start: reused
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not owner_gone(f"another-host:{dead.pid}:1")  # only its lease can tell
    assert owner_gone(None)
