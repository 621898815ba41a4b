"""Molweni/STAC JSON written another valid way reads, and is parsed, the same.

JSON gives the order of an object's keys no meaning; a dialogue id may be a string or an integer
(``"1056"`` or ``1056``) and is any name the corpus gives it; ``relations`` may be absent (an
unannotated dialogue). The reader must give the same records up to ids, ``argweb parse
discourse`` the same relations, and its output must keep every dialogue, EDU and id as it came.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from api.services import discourse
from api.settings import Settings
from ontology.errors import LoaderError
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.perturb import retype_ids, shuffle_keys, without_key
from ontology.formats.registry import SAMPLES
from ontology.records import CorpusBundle, DiscourseRecord, LocutionRecord, NodeRecord, RelationRecord
from tests.invariance.perturb import canonical, differences

pytestmark = pytest.mark.invariance

FILES = {"molweni": SAMPLES / "molweni" / "DP" / "dev.json", "stac": SAMPLES / "stac" / "train.json"}
Dialogues = list[dict[str, Any]]


def _as_integers(data: Dialogues) -> Dialogues:
    # Molweni ids are numbers written as strings; STAC's are game names, which stay strings.
    return retype_ids(data, lambda i: int(i) if str(i).isdigit() else i)


def _renamed(data: Dialogues) -> Dialogues:
    return retype_ids(data, lambda i: f"s1-league1-{i}")


def _keys_shuffled(data: Dialogues) -> Dialogues:
    return shuffle_keys(data, seed=5)


def _all(data: Dialogues) -> Dialogues:
    # Numeric ids become integers, the others other names; keys in another order.
    renamed = retype_ids(data, lambda i: int(i) if str(i).isdigit() else f"s1-league1-{i}")
    return shuffle_keys(renamed, seed=9)


# Each variant and whether it keeps the dialogue ids (else records are compared up to ids).
VARIANTS: dict[str, tuple[Callable[[Dialogues], Dialogues], bool]] = {
    "integer ids": (_as_integers, True),
    "renamed ids": (_renamed, False),
    "keys shuffled": (_keys_shuffled, True),
    "all": (_all, False),
}


def _names(bundle: CorpusBundle) -> Callable[[NodeRecord], str | None]:
    """Dialogues named by their place in the file, EDUs and relations by their dialogue and place."""
    order = {n.id: f"dialogue {k}" for k, n in enumerate(x for x in bundle.nodes if isinstance(x, DiscourseRecord))}

    def name(node: NodeRecord) -> str | None:
        if isinstance(node, DiscourseRecord):
            return order[node.id]
        if isinstance(node, LocutionRecord | RelationRecord) and node.discourse in order:
            kind = "edu" if isinstance(node, LocutionRecord) else "relation"
            return f"{order[node.discourse]} {kind} {node.position}"
        return None

    return name


def _write(path: Path, data: Dialogues) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


# STAC ids are game names: there are no integer ids to write them as.
CASES = [(scheme, variant) for scheme in sorted(FILES) for variant in sorted(VARIANTS)]
CASES.remove(("stac", "integer ids"))


@pytest.mark.parametrize(("scheme", "variant"), CASES)
def test_reader_gives_the_same_records(scheme: str, variant: str, tmp_path: Path) -> None:
    convert, keeps_ids = VARIANTS[variant]
    raw = json.loads(FILES[scheme].read_text(encoding="utf-8"))
    given = convert(raw)
    assert json.dumps(given) != json.dumps(raw), "the rewrite must change the file"
    other = _write(tmp_path / FILES[scheme].name, given)
    plain_bundle = load_dialogue_json([FILES[scheme]], scheme)
    other_bundle = load_dialogue_json([other], scheme)
    if keeps_ids:
        plain, rewritten = canonical(plain_bundle), canonical(other_bundle)
    else:
        plain, rewritten = canonical(plain_bundle, _names(plain_bundle)), canonical(other_bundle, _names(other_bundle))
    assert rewritten == plain, differences(plain, rewritten)


def test_integer_ids_read_as_their_string_and_booleans_are_refused(tmp_path: Path) -> None:
    raw = json.loads(FILES["molweni"].read_text(encoding="utf-8"))
    bundle = load_dialogue_json([_write(tmp_path / "a.json", _as_integers(raw))], "molweni")
    assert [n.local_id for n in bundle.nodes if isinstance(n, DiscourseRecord)] == [d["id"] for d in raw]
    raw[1]["id"] = True
    with pytest.raises(LoaderError, match=r"b\.json: dialogue #1: field 'id' has type bool"):
        load_dialogue_json([_write(tmp_path / "b.json", raw)], "molweni")


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("dialogue-invariance")
    return Settings(cache_dir=root / "cache", data_dir=root / "data")


@pytest.fixture(scope="module")
def plain_parse(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Dialogues]:
    out = tmp_path_factory.mktemp("dialogue-plain")
    return {
        scheme: json.loads(
            Path(discourse.parse(settings, path, out / f"{scheme}.json").file).read_text(encoding="utf-8")
        )
        for scheme, path in FILES.items()
    }


@pytest.mark.parametrize("variant", ["all", "no relations"])
@pytest.mark.parametrize("scheme", sorted(FILES))
@pytest.mark.model
def test_parse_discourse_gives_the_same_relations(
    settings: Settings, plain_parse: dict[str, Dialogues], scheme: str, variant: str, tmp_path: Path
) -> None:
    raw = json.loads(FILES[scheme].read_text(encoding="utf-8"))
    given = _all(raw) if variant == "all" else without_key(_all(raw), "relations")
    src = _write(tmp_path / "in.json", given)
    # Without gold relations the file cannot show its scheme; it is named, as a user would.
    discourse.parse(settings, src, tmp_path / "out.json", scheme=scheme)
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    plain = plain_parse[scheme]
    assert sum(len(d["relations"]) for d in plain) > 0, "nothing predicted: the comparison would prove nothing"
    assert [d["relations"] for d in out] == [d["relations"] for d in plain]
    # Every dialogue, EDU and field comes back as it was given: an integer id stays an integer.
    assert len(out) == len(given)
    for o, g in zip(out, given, strict=True):
        assert {k: v for k, v in o.items() if k != "relations"} == {k: v for k, v in g.items() if k != "relations"}
        assert type(o["id"]) is type(g["id"])
    if scheme == "molweni":
        assert all(isinstance(d["id"], int) for d in out)
