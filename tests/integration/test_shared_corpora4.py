"""M-Arg, Sci-Arg and ContextDeP from ``../shared/corpora`` (or ``$ARGWEB_CORPORA``), end to end.

Expected numbers are computed here from the corpus files (and checked against each
PROVENANCE.md), then the loaders' bundles and the graph are compared with them; a second ingest
must change nothing.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from ontology.records import CorpusBundle
from tests.conftest import shared_corpora

pytestmark = pytest.mark.corpora


@pytest.fixture(scope="module")
def root() -> Path:
    found = shared_corpora()
    if found is None:
        pytest.skip("../shared/corpora is absent")
    return found


def load(name: str, root: Path) -> CorpusBundle:
    spec = CORPORA[name]
    bundle = spec.load(spec.find(root))
    bundle.validate()
    return bundle


def graph_state(store: GraphStore, corpus: str) -> tuple[dict[str, int], dict[str, int], str]:
    labels = store.run("MATCH (n:Node {corpus: $c}) UNWIND labels(n) AS l RETURN l, count(*) AS n", c=corpus)
    rels = store.run("MATCH ()-[r]->() WHERE r.corpus = $c RETURN type(r) AS t, count(*) AS n", c=corpus)
    # Fingerprint of every node's properties (ingest bookkeeping left out).
    nodes = store.run("MATCH (n:Node {corpus: $c}) RETURN n.id AS id, properties(n) AS p", c=corpus)
    digest = hashlib.sha256()
    for row in sorted(nodes, key=lambda r: r["id"]):
        props = {k: v for k, v in row["p"].items() if k not in ("batch", "ingest_run", "counts")}
        digest.update(repr(sorted(props.items())).encode())
    return {r["l"]: r["n"] for r in labels}, {r["t"]: r["n"] for r in rels}, digest.hexdigest()


def ingest_twice(store: GraphStore, bundle: CorpusBundle) -> tuple[dict[str, int], dict[str, int]]:
    store.ingest(bundle)
    first = graph_state(store, bundle.corpus.id)
    store.ingest(bundle)
    assert graph_state(store, bundle.corpus.id) == first
    return first[0], first[1]


def test_marg(root: Path, store: GraphStore) -> None:
    folder = root / "m-arg"
    with open(folder / "dataset_context_definition.csv", encoding="utf-8", newline="") as fh:
        sentences = list(csv.DictReader(fh))
    with open(folder / "full_dataset_processing.csv", encoding="utf-8", newline="") as fh:
        gold = list(csv.DictReader(fh))
    assert len(sentences) == 6527 and len(gold) == 103  # PROVENANCE.md
    pairs = {r["pair_id"]: r["relation_gold"] for r in gold}
    assert len(pairs) == 102
    by_label = Counter(pairs.values())
    assert by_label == {"Neither": 60, "Support": 28, "Attack": 14}
    speakers = {r["speaker"] for r in sentences if r["speaker"] != "error"}

    bundle = load("m-arg", root)
    counts = bundle.counts()
    assert counts["Locution"] == counts["Proposition"] == counts["Illocution"] == 6527
    assert counts["Dialogue"] == len({r["debate"] for r in sentences}) == 17
    assert counts["Speaker"] == len(speakers) == 29
    assert (counts["Support"], counts["Attack"], counts["NonRelation"]) == (28, 14, 60)
    assert counts["SPOKEN_BY"] == sum(1 for r in sentences if r["speaker"] != "error")

    labels, rels = ingest_twice(store, bundle)
    assert labels["Locution"] == 6527 and labels["Relation"] == 6527 + 102
    assert rels["AIF_EDGE"] == 2 * (6527 + 102)
    texts = store.run(
        "MATCH (p1:Proposition)-[:AIF_EDGE]->(r:Relation {corpus: 'm-arg'})-[:AIF_EDGE]->(p2:Proposition) "
        "WHERE r.local_id STARTS WITH 'n' AND size(r.local_id) = 15 "
        "RETURN r.local_id AS pair, p1.text AS s1, p2.text AS s2, r.scheme_label AS label"
    )
    assert len(texts) == 102
    for row in texts:
        src = next(g for g in gold if g["pair_id"] == row["pair"])
        assert (row["s1"], row["s2"], row["label"]) == (src["sentence_1"], src["sentence_2"], src["relation_gold"])


def sciarg_counts(folder: Path) -> tuple[Counter[str], Counter[str], int]:
    spans: Counter[str] = Counter()
    relations: Counter[str] = Counter()
    discontinuous = 0
    for ann in sorted(folder.glob("A*.ann")):
        for line in ann.read_bytes().decode("utf-8").splitlines():
            if line.startswith("T"):
                label, offsets = line.split("\t")[1].split(" ", 1)
                spans[label] += 1
                discontinuous += ";" in offsets
            elif line.startswith("R"):
                relations[line.split("\t")[1].split()[0]] += 1
    return spans, relations, discontinuous


def test_sciarg(root: Path, store: GraphStore) -> None:
    folder = root / "sciarg" / "compiled_corpus"
    papers = sorted(p.stem for p in folder.glob("A*.ann"))
    assert papers == [f"A{i:02d}" for i in range(1, 33)]
    spans, relations, discontinuous = sciarg_counts(folder)
    # Counted from the 32 papers present (PROVENANCE's 13,592 / 7,830 include A33-A40).
    assert spans == {"own_claim": 4899, "data": 3504, "background_claim": 2658}
    assert relations == {"supports": 4611, "parts_of_same": 1042, "contradicts": 576, "semantically_same": 44}
    assert discontinuous == 6

    bundle = load("sciarg", root)
    counts = bundle.counts()
    assert counts["Document"] == 32
    assert counts["Claim"] == spans["own_claim"] + spans["background_claim"] and counts["Premise"] == spans["data"]
    assert (counts["Support"], counts["Attack"], counts["Rephrase"], counts["SameUnit"]) == (
        relations["supports"],
        relations["contradicts"],
        relations["semantically_same"],
        relations["parts_of_same"],
    )
    assert counts["AIF_EDGE"] == 2 * sum(relations.values())
    # Every component lies in at least one sentence.
    assert counts["IN_SENTENCE"] >= sum(spans.values())

    labels, _ = ingest_twice(store, bundle)
    assert labels["Proposition"] == sum(spans.values()) == 11061
    assert labels["Relation"] == sum(relations.values()) == 6273
    orphans = store.run(
        "MATCH (p:Proposition {corpus: 'sciarg'}) WHERE NOT (p)-[:IN_SENTENCE]->(:Sentence) RETURN count(p) AS n"
    )
    assert orphans == [{"n": 0}]


def contextdep_expected(folder: Path) -> tuple[dict[str, list[int]], dict[tuple[str, str], dict[str, str]]]:
    votes: dict[str, list[int]] = {}
    for name in ("ANON_TRAIN_TOKEN-annotations.tsv", "ANON_DEV_TOKEN-annotations.tsv"):
        with open(folder / name, encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh, delimiter="\t"):
                votes[r["QID"]] = list(ast.literal_eval(r["Vote"]))
    groups: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for name in ("ANON_train.tsv", "ANON_dev.tsv"):
        text = (folder / name).read_bytes().decode("utf-16")
        for r in csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"):
            groups[(r["QID"], r["Annotator"])][r["Category"]] = r["Highlighted"]
    return votes, groups


def test_contextdep(root: Path, store: GraphStore) -> None:
    folder = root / "contextdep"
    votes, groups = contextdep_expected(folder)
    assert len(votes) == 508 and len(groups) == 4738 == sum(v[1] for v in votes.values())  # PROVENANCE.md
    paraphrase = sum(1 for v in votes.values() if v[0] / v[1] >= 0.5)

    bundle = load("contextdep", root)
    counts = bundle.counts()
    assert counts["Dialogue"] == 508 and counts["Locution"] == 2 * 508
    assert counts["Judgement"] == counts["JUDGES"] == 4738
    assert counts["Rephrase"] == paraphrase and counts["NonRelation"] == 508 - paraphrase
    assert counts["Annotator"] == len({a for _, a in groups})

    labels, _ = ingest_twice(store, bundle)
    assert labels["Judgement"] == 4738
    rows: list[dict[str, Any]] = store.run(
        "MATCH (j:Judgement {corpus: 'contextdep'})-[:JUDGES]->(r:Relation) "
        "RETURN r.local_id AS qid, r.votes AS votes, r.annotator_count AS total, "
        "sum(CASE j.label WHEN 'Paraphrase' THEN 1 ELSE 0 END) AS p, count(j) AS n"
    )
    assert len(rows) == 508
    for row in rows:
        assert [row["p"], row["n"]] == [row["votes"], row["total"]] == votes[row["qid"]]
