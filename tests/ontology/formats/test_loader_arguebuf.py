"""SADFace, ArgDown, Kialo and brat maps read through arguebuf and mapped onto the ontology (no database)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ontology.errors import LoaderError
from ontology.formats.arguebuf_maps import load_arguebuf
from ontology.records import CorpusBundle, DiscourseRecord, PropositionRecord, RelationRecord
from ontology.terms import Label, RelType

FILES = Path(__file__).resolve().parents[2] / "data" / "formats" / "arguebuf"
SADFACE = FILES / "uniforms_sadface.json"
ARGDOWN = FILES / "four_day_week_argdown.json"
KIALO = FILES / "car_free_centres_kialo.txt"
BRAT = FILES / "cooperation_essay.ann"


def relations(bundle: CorpusBundle) -> Counter[tuple[str, str, str]]:
    """(premise text, relation label, conclusion text) of every relation node, read off its AIF edges."""
    text = {n.id: n.text for n in bundle.nodes if isinstance(n, PropositionRecord)}
    kind = {n.id: n.kind.value for n in bundle.nodes if isinstance(n, RelationRecord)}
    aif = [e for e in bundle.edges if e.type == RelType.AIF_EDGE]
    into = {e.target: e.source for e in aif if e.target in kind}
    out = {e.source: e.target for e in aif if e.source in kind}
    return Counter((text[into[r]], kind[r], text[out[r]]) for r in kind)


def test_sadface() -> None:
    bundle = load_arguebuf([SADFACE], "maps")
    bundle.validate()
    assert relations(bundle) == Counter(
        {
            ("Uniforms hide differences in family income.", "Support", "Schools should require uniforms."): 1,
            ("Uniforms restrict how pupils express themselves.", "Attack", "Schools should require uniforms."): 1,
            (
                "Pupils can express themselves in what they say and do.",
                "Attack",
                "Uniforms restrict how pupils express themselves.",
            ): 1,
        }
    )
    doc = next(n for n in bundle.nodes if isinstance(n, DiscourseRecord))
    assert (doc.kind, doc.name, doc.source) == ("Document", "School uniforms", SADFACE.name)
    assert doc.id == "maps:uniforms_sadface"
    ids = {n.local_id for n in bundle.nodes if isinstance(n, PropositionRecord | RelationRecord)}
    assert ids == {"a1", "a2", "a3", "a4", "s1", "s2", "s3"}, "SADFace's own ids are kept"


def test_argdown_drops_arguebufs_direct_edges_but_keeps_each_relation_once() -> None:
    bundle = load_arguebuf([ARGDOWN], "maps")
    bundle.validate()
    assert relations(bundle) == Counter(
        {
            ("Rested staff make fewer mistakes.", "Support", "Firms should move to a four-day week."): 1,
            ("Shops must stay open five days a week.", "Attack", "Firms should move to a four-day week."): 1,
            ("Trials found output held steady on four days.", "Support", "Firms should move to a four-day week."): 1,
        }
    )
    assert sum(1 for e in bundle.edges if e.type.value == "AIF_EDGE") == 6


def test_kialo_with_a_continued_line_and_a_reference() -> None:
    bundle = load_arguebuf([KIALO], "maps")
    bundle.validate()
    got = relations(bundle)
    assert got[("Car-free centres have cleaner air.", "Support", "Cities should ban cars from their centres.")] == 1
    assert (
        got[
            (
                "Delivery vans would still drive in\nand they cause much of the pollution.",
                "Attack",
                "Car-free centres have cleaner air.",
            )
        ]
        == 1
    )
    # "1.2.2. Con: -> See 1.1." is the claim 1.1 attacking 1.2, not a claim of its own.
    assert got[("Car-free centres have cleaner air.", "Attack", "Shops in the centre would lose customers.")] == 1
    assert sum(got.values()) == 5
    assert sum(1 for n in bundle.nodes if isinstance(n, PropositionRecord)) == 5
    doc = next(n for n in bundle.nodes if isinstance(n, DiscourseRecord))
    assert doc.name == "Should cities ban cars from their centres?"


def test_brat_essay_and_stable_ids() -> None:
    first, again = load_arguebuf([BRAT], "maps"), load_arguebuf([BRAT], "maps")
    first.validate()
    major = "we should attach more importance to cooperation during primary education"
    assert relations(first) == Counter(
        {
            ("through cooperation, children can learn about interpersonal skills", "Support", major): 1,
            (
                "what we acquired from team work is how to get along with others",
                "Support",
                "through cooperation, children can learn about interpersonal skills",
            ): 1,
            ("competition makes children try harder", "Attack", major): 1,
        }
    )
    assert [n.id for n in first.nodes] == [n.id for n in again.nodes], "invented ids are numbered, not random"


def test_one_load_of_four_formats_names_them_in_the_corpus(tmp_path: Path) -> None:
    (tmp_path / BRAT.with_suffix(".txt").name).write_text("the essay text", encoding="utf-8")
    paths = [SADFACE, ARGDOWN, KIALO, BRAT, tmp_path / BRAT.with_suffix(".txt").name]
    bundle = load_arguebuf([*paths[:4]], "maps")
    bundle.validate()
    assert "arguebuf" in bundle.corpus.name
    assert all(f in bundle.corpus.name for f in ("sadface", "argdown", "kialo", "brat"))
    labels = Counter(n.labels()[0] for n in bundle.nodes)
    assert labels[Label.Document] == 4 and labels[Label.Support] == 7 and labels[Label.Attack] == 7
    # A brat essay's .txt beside its .ann is its text, not a Kialo export.
    beside = tmp_path / BRAT.name
    beside.write_text(BRAT.read_text(encoding="utf-8"), encoding="utf-8")
    assert len(load_arguebuf([beside, tmp_path / "cooperation_essay.txt"], "maps").nodes) == len(
        load_arguebuf([BRAT], "maps").nodes
    )


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _sadface_with(change: object) -> str:
    data = json.loads(SADFACE.read_text(encoding="utf-8"))
    change(data)  # type: ignore[operator]
    return json.dumps(data)


@pytest.mark.parametrize(
    ("name", "text", "expect"),
    [
        ("x.ann", BRAT.read_text().replace("supports Arg1", "contradicts Arg1"), "line 5 (R1): relation 'contradicts'"),
        ("x.ann", "T1\town_claim 0 4\tthis\n", "line 1 (T1): unit label 'own_claim'"),
        ("x.ann", BRAT.read_text().replace("Stance T4", "Stance T9"), "line 7 (A2): refers to T9"),
        ("x.json", ARGDOWN.read_text().replace('"attack"', '"contrary"'), "edge e1: relationType 'contrary'"),
        ("x.json", ARGDOWN.read_text().replace('"to": "n0"', '"to": "n7"', 1), "edge e0: target 'n7' is not a node"),
        (
            "x.json",
            _sadface_with(lambda d: d["edges"][2].update(source_id="zz")),
            "edge e3: source_id 'zz' is not a node",
        ),
        (
            "x.json",
            _sadface_with(lambda d: d["nodes"][5].update(name="preference")),
            "node s2: scheme name 'preference'",
        ),
        ("x.json", _sadface_with(lambda d: d["nodes"].append(dict(d["nodes"][0]))), "node a1: duplicate id"),
        ("x.txt", KIALO.read_text().replace("1.2.1. Pro", "1.4.1. Pro"), "line 8 (1.4.1.): its parent 1.4."),
        ("x.txt", KIALO.read_text().replace("See 1.1.", "See 1.9."), "line 9 (1.2.2.): refers to 1.9."),
        ("x.txt", "1. A thesis\n", "line 1: a Kialo export starts with 'Discussion Title: '"),
        ("x.json", '{"nodes": [', "line 1, column 12: invalid JSON"),
        ("x.json", '{"graph": {}}', "neither SADFace (nodes, edges) nor ArgDown JSON"),
        ("x.csv", "a,b\n", "cannot tell the format from the extension '.csv'"),
    ],
)
def test_bad_files_are_refused_naming_file_and_record(tmp_path: Path, name: str, text: str, expect: str) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(LoaderError) as caught:
        load_arguebuf([path], "maps")
    assert str(path) in str(caught.value) and expect in str(caught.value), str(caught.value)


def test_a_named_format_overrides_detection(tmp_path: Path) -> None:
    renamed = _write(tmp_path, "discussion.md", KIALO.read_text(encoding="utf-8"))
    assert len(load_arguebuf([renamed], "maps", variant="kialo").nodes) == len(load_arguebuf([KIALO], "maps").nodes)
    with pytest.raises(LoaderError, match="unknown arguebuf format 'aml'"):
        load_arguebuf([KIALO], "maps", variant="aml")


def test_a_map_without_claims_is_refused(tmp_path: Path) -> None:
    """A file that loads nothing (its Document alone) is refused, not recorded (issue 47, item 11)."""
    empty = tmp_path / "empty.json"
    empty.write_text('{"nodes": [], "edges": []}', encoding="utf-8")
    with pytest.raises(LoaderError, match=r"empty\.json: no claim in the sadface map"):
        load_arguebuf([empty])
