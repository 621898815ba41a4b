"""Synthetic corpora of any size, shaped like QT30 (AIF maps) and Molweni/STAC (dialogue JSON).

Deterministic by seed. The shape comes from a small profile measured once on the real corpora
(``bench/data/synth_profile.json``; ``--measure DIR`` rebuilds it): the per-map counts of L, I,
YA, TA, RA, CA and MA nodes of every QT30 training map (a map is drawn from them), text-length
deciles, scheme-name shares, the share of locutions with a speaker, and for dialogues the EDU and
relation counts per dialogue, the relation-label shares and speakers per dialogue.

The edges follow AIF's anchoring pattern, which gives QT30's edge/node ratio (~0.98): each
transition links consecutive locutions (L -> TA -> L), illocutions anchor locutions in
propositions (L -> YA -> I) and then relations in transitions (TA -> YA -> RA/CA/MA), and every
RA/CA/MA links two propositions (I -> RA -> I).

Output is sharded so that no corpus bundle exceeds ``--shard-items`` graph items (a bulk or
transactional load holds one bundle in memory at a time): ``aif-NNN/nodesetK.json`` map files,
``molweni-NNN.json`` / ``stac-NNN.json`` dialogue files, and ``manifest.json`` listing each shard
with its corpus id, loader and expected item count. Everything loads through the normal loaders
(:func:`bundle_sources`).

Usage: ``python bench/synth.py --items 1000000 --out DIR [--seed 0] [--dialogue-share 0.2]``
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PROFILE = Path(__file__).resolve().parent / "data" / "synth_profile.json"
AIF_TYPES = ("L", "I", "YA", "TA", "RA", "CA", "MA")
WORDS_SEED_TEXT = 1 << 20  # characters of pseudo-text texts are cut from


# -- profile ---------------------------------------------------------------------------------------


def _deciles(values: list[int]) -> list[int]:
    values = sorted(values)
    if len(values) < 2:
        return [values[0] if values else 0] * 11
    inner = statistics.quantiles(values, n=10)
    return [values[0], *(round(v) for v in inner), values[-1]]


def _shares(counter: Counter[Any]) -> dict[str, float]:
    total = sum(counter.values()) or 1
    return {("" if k is None else str(k)): round(v / total, 6) for k, v in counter.most_common()}


def measure(corpora: Path) -> dict[str, Any]:
    """Measure the profile on a corpora directory (``dialam-2024/my_train``, ``molweni``, ``stac``)."""
    maps: list[list[int]] = []
    text_len: dict[str, list[int]] = {"L": [], "I": []}
    schemes: dict[str, Counter[Any]] = {t: Counter() for t in AIF_TYPES[2:]}
    nodes = edges = locs = with_person = 0
    persons: set[str] = set()
    files = sorted((corpora / "dialam-2024" / "my_train").glob("*.json"))
    for path in files:
        data = json.loads(path.read_text())
        kinds = Counter(n["type"] for n in data["nodes"])
        maps.append([kinds.get(t, 0) for t in AIF_TYPES])
        nodes += len(data["nodes"])
        edges += len(data["edges"])
        for n in data["nodes"]:
            if n["type"] in text_len:
                text_len[n["type"]].append(len(n.get("text") or ""))
            elif n["type"] in schemes:
                schemes[n["type"]][n.get("scheme")] += 1
        for loc in data.get("locutions", []):
            locs += 1
            if loc.get("personID") is not None:
                with_person += 1
                persons.add(str(loc["personID"]))
    dialogue: dict[str, Any] = {}
    for name, rel in (("molweni", "molweni/DP/*.json"), ("stac", "stac/*.json")):
        edus_n: list[int] = []
        rels_n: list[int] = []
        spk_n: list[int] = []
        lens: list[int] = []
        labels: Counter[str] = Counter()
        for path in sorted(corpora.glob(rel)):
            for dlg in json.loads(path.read_text()):
                edus_n.append(len(dlg["edus"]))
                rels_n.append(len(dlg["relations"]))
                spk_n.append(len({e["speaker"] for e in dlg["edus"]}))
                lens.extend(len(e["text"]) for e in dlg["edus"])
                labels.update(r["type"] for r in dlg["relations"])
        if edus_n:
            dialogue[name] = {
                "dialogues": len(edus_n),
                "edus_per_dialogue": _deciles(edus_n),
                "relations_per_edu": round(sum(rels_n) / max(sum(edus_n), 1), 4),
                "speakers_per_dialogue": _deciles(spk_n),
                "text_length": _deciles(lens),
                "labels": _shares(labels),
            }
    return {
        "source": "QT30 (DialAM-2024 my_train), Molweni DP dev, STAC train",
        "aif": {
            "types": list(AIF_TYPES),
            "maps": maps,
            "edges_per_node": round(edges / max(nodes, 1), 4),
            "text_length": {t: _deciles(v) for t, v in text_len.items()},
            "schemes": {t: _shares(c) for t, c in schemes.items()},
            "locution_share": round(locs / max(text_len_count(maps, "L"), 1), 4),
            "person_share": round(with_person / max(locs, 1), 4),
            "persons_per_map": round(len(persons) / max(len(maps), 1), 4),
        },
        "dialogue": dialogue,
    }


def text_len_count(maps: list[list[int]], kind: str) -> int:
    """Number of nodes of AIF type ``kind`` over all profile maps."""
    k = AIF_TYPES.index(kind)
    return sum(m[k] for m in maps)


def load_profile(path: Path = PROFILE) -> dict[str, Any]:
    """The stored profile."""
    return dict(json.loads(path.read_text()))


# -- sampling helpers ------------------------------------------------------------------------------


class Sampler:
    """Deterministic draws of texts, lengths and labels from the profile."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        syllables = ["ar", "gu", "ment", "we", "the", "con", "pro", "so", "tion", "is", "in", "de", "bate", "ca"]
        words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(4000)]
        pieces: list[str] = []
        size = 0
        while size < WORDS_SEED_TEXT:
            w = rng.choice(words)
            pieces.append(w)
            size += len(w) + 1
        self.pool = " ".join(pieces)

    def length(self, deciles: list[int]) -> int:
        """A length drawn piecewise-uniformly between the profile's deciles."""
        k = self.rng.randrange(10)
        lo, hi = deciles[k], deciles[k + 1]
        return max(1, self.rng.randint(min(lo, hi), max(lo, hi)))

    def text(self, deciles: list[int]) -> str:
        """Pseudo-text of a profile length, cut at word boundaries from the shared pool."""
        n = self.length(deciles)
        start = self.rng.randrange(len(self.pool) - n - 64)
        start = self.pool.find(" ", start) + 1
        end = self.pool.find(" ", start + n)
        return self.pool[start:end].capitalize() + "."

    def choice(self, shares: dict[str, float]) -> str | None:
        """A key drawn by its share (``""`` stands for absent)."""
        keys = list(shares)
        key = self.rng.choices(keys, weights=[shares[k] for k in keys])[0]
        return key or None


# -- AIF maps ------------------------------------------------------------------------------------


@dataclass
class MapItems:
    """One generated map and the graph items it will become."""

    data: dict[str, Any]
    items: int
    persons: set[str]


def aif_map(s: Sampler, profile: dict[str, Any], map_no: int, person_pool: int) -> MapItems:
    """One AIF map (QT30 JSON) with counts drawn from a real map of the profile."""
    aif = profile["aif"]
    counts = dict(zip(aif["types"], s.rng.choice(aif["maps"]), strict=True))
    base = 1_000_000 + map_no * 10_000
    ids: dict[str, list[str]] = {t: [] for t in aif["types"]}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    stamp = f"2020-{1 + map_no % 12:02d}-{1 + map_no % 28:02d} 19:{map_no % 60:02d}:00"
    next_id = base

    def add(kind: str, text: str, scheme: str | None = None) -> str:
        nonlocal next_id
        nid = str(next_id)
        next_id += 1
        node: dict[str, Any] = {"nodeID": nid, "text": text, "type": kind, "timestamp": stamp}
        if kind not in ("L", "I"):
            node["scheme"] = scheme
            node["schemeID"] = None if scheme is None else str(zlib.crc32(scheme.encode()) % 100)
        nodes.append(node)
        ids[kind].append(nid)
        return nid

    def edge(a: str, b: str) -> None:
        edges.append({"edgeID": str(base + 5000 + len(edges)), "fromID": a, "toID": b, "formEdgeID": None})

    persons = [str(1000 + s.rng.randrange(person_pool)) for _ in range(max(1, round(aif["persons_per_map"])))]
    names = {p: f"Speaker {p}" for p in persons}
    locutions: list[dict[str, Any]] = []
    spoken: set[str] = set()
    for _ in range(counts["L"]):
        person = s.rng.choice(persons)
        nid = add("L", f"{names[person]} : {s.text(aif['text_length']['L'])}")
        if s.rng.random() < aif["locution_share"]:
            loc: dict[str, Any] = {"nodeID": nid, "timestamp": stamp, "start": stamp, "end": None, "source": None}
            if s.rng.random() < aif["person_share"]:
                loc["personID"] = person
                spoken.add(person)
            locutions.append(loc)
    for _ in range(counts["I"]):
        add("I", s.text(aif["text_length"]["I"]))
    for kind in ("TA", "RA", "CA", "MA"):
        for _ in range(counts[kind]):
            scheme = s.choice(aif["schemes"][kind])
            add(kind, scheme or f"Default {kind}", scheme)
    locs, props = ids["L"], ids["I"]
    for k, ta in enumerate(ids["TA"]):
        if len(locs) >= 2:
            i = k % (len(locs) - 1)
            edge(locs[i], ta)
            edge(ta, locs[i + 1])
    for kind in ("RA", "CA", "MA"):
        for rel in ids[kind]:
            if props:
                a = s.rng.randrange(len(props))
                b = (a + 1 + s.rng.randrange(max(len(props) - 1, 1))) % len(props)
                edge(props[a], rel)
                edge(rel, props[b])
    relations = ids["RA"] + ids["CA"] + ids["MA"]
    for k in range(counts["YA"]):
        scheme = s.choice(aif["schemes"]["YA"])
        ya = add("YA", scheme or "Default Illocuting", scheme)
        if k < len(locs) and props:
            edge(locs[k], ya)
            edge(ya, props[k % len(props)])
        elif ids["TA"] and relations:
            edge(ids["TA"][k % len(ids["TA"])], ya)
            edge(ya, relations[k % len(relations)])
    data = {"nodes": nodes, "edges": edges, "locutions": locutions}
    with_speaker = {loc["nodeID"] for loc in locutions if "personID" in loc}
    # Dialogue + PART_OF to the corpus; a PART_OF per unit; AIF edges; SPOKEN_BY per located speaker.
    items = 2 + 2 * len(nodes) + len(edges) + len(with_speaker)
    return MapItems(data, items, spoken)


# -- dialogues -----------------------------------------------------------------------------------


def dialogue(s: Sampler, spec: dict[str, Any], no: int) -> tuple[dict[str, Any], int, set[str]]:
    """One Molweni/STAC dialogue ``{id, edus, relations}``; returns it, its items and speakers."""
    n_edus = max(2, s.length(spec["edus_per_dialogue"]))
    n_spk = max(2, min(n_edus, s.length(spec["speakers_per_dialogue"])))
    speakers = [f"user{s.rng.randrange(100_000)}" for _ in range(n_spk)]
    edus = [{"text": s.text(spec["text_length"]), "speaker": s.rng.choice(speakers)} for _ in range(n_edus)]
    n_rel = round(n_edus * spec["relations_per_edu"])
    relations = []
    for _ in range(n_rel):
        y = s.rng.randrange(1, n_edus)
        x = s.rng.randrange(0, y)
        relations.append({"x": x, "y": y, "type": s.choice(spec["labels"])})
    data = {"id": f"synth{no}", "edus": edus, "relations": relations}
    # Dialogue + PART_OF; per EDU a Locution, PART_OF and SPOKEN_BY; per relation a node, PART_OF, 2 AIF edges.
    items = 2 + 3 * n_edus + 4 * n_rel
    return data, items, {e["speaker"] for e in edus}


# -- generation ----------------------------------------------------------------------------------


@dataclass
class Shard:
    """One generated corpus: what to load and with which loader."""

    corpus: str
    loader: str  # "aif" or "dialogue"
    scheme: str | None
    path: str  # directory of map files, or one dialogue JSON file (relative to the manifest)
    items: int


def _aif_shards(
    out: Path, target: int, shard_items: int, profile: dict[str, Any], rng: random.Random, s: Sampler
) -> Iterator[Shard]:
    made = 0
    map_no = 0
    shard_no = 0
    person_pool = max(10, target // 400)
    while made < target:
        directory = out / f"aif-{shard_no:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        items = 1  # the corpus node
        persons: set[str] = set()
        while made + items < target and items < shard_items:
            m = aif_map(s, profile, map_no, person_pool)
            new = m.persons - persons
            persons |= new
            items += m.items + len(new)
            (directory / f"nodeset{map_no}.json").write_text(json.dumps(m.data))
            map_no += 1
        made += items
        yield Shard(f"synth-aif-{shard_no:03d}", "aif", None, directory.name, items)
        shard_no += 1


def _dialogue_shards(
    out: Path, scheme: str, target: int, shard_items: int, profile: dict[str, Any], s: Sampler
) -> Iterator[Shard]:
    made = 0
    no = 0
    shard_no = 0
    spec = profile["dialogue"][scheme]
    while made < target:
        items = 1
        speakers: set[str] = set()
        dialogues = []
        while made + items < target and items < shard_items:
            data, n, spk = dialogue(s, spec, no)
            new = spk - speakers
            speakers |= new
            items += n + len(new)
            dialogues.append(data)
            no += 1
        path = out / f"{scheme}-{shard_no:03d}.json"
        path.write_text(json.dumps(dialogues))
        made += items
        yield Shard(f"synth-{scheme}-{shard_no:03d}", "dialogue", scheme, path.name, items)
        shard_no += 1


def generate(
    out: Path,
    items: int,
    seed: int = 0,
    dialogue_share: float = 0.2,
    shard_items: int = 1_000_000,
    profile: dict[str, Any] | None = None,
) -> list[Shard]:
    """Write a synthetic corpus of about ``items`` graph items (nodes + relationships) to ``out``.

    The count is exact up to one map or dialogue per shard; ``manifest.json`` records what each
    shard will load as.
    """
    profile = profile or load_profile()
    rng = random.Random(seed)
    s = Sampler(rng)
    out.mkdir(parents=True, exist_ok=True)
    dialogue_items = round(items * dialogue_share) if profile["dialogue"] else 0
    shards = list(_aif_shards(out, items - dialogue_items, shard_items, profile, rng, s))
    schemes = sorted(profile["dialogue"])
    for k, scheme in enumerate(schemes if dialogue_items else []):
        # Molweni and STAC share the dialogue items evenly.
        share = dialogue_items // len(schemes) + (1 if k < dialogue_items % len(schemes) else 0)
        shards += list(_dialogue_shards(out, scheme, share, shard_items, profile, s))
    manifest = {"items": items, "seed": seed, "shards": [vars(sh) for sh in shards]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return shards


def read_manifest(out: Path) -> list[Shard]:
    """The shards of a generated corpus."""
    return [Shard(**sh) for sh in json.loads((out / "manifest.json").read_text())["shards"]]


def bundle_sources(out: Path) -> list[Callable[[], Any]]:
    """One callable per shard that parses it with the normal loader into a ``CorpusBundle``."""
    from ontology.formats.aif import load_aif
    from ontology.formats.dialogue_json import load_dialogue_json

    sources: list[Callable[[], Any]] = []
    for shard in read_manifest(out):
        path = out / shard.path
        if shard.loader == "aif":
            sources.append(lambda p=path, c=shard.corpus: load_aif(sorted(p.glob("*.json")), c))
        else:
            sources.append(lambda p=path, c=shard.corpus, sc=shard.scheme: load_dialogue_json([p], c, scheme=sc))
    return sources


def main(argv: list[str] | None = None) -> int:
    """Command line: generate, or ``--measure`` the profile."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dialogue-share", type=float, default=0.2)
    ap.add_argument("--shard-items", type=int, default=1_000_000)
    ap.add_argument("--measure", type=Path, metavar="CORPORA", help="rebuild the profile from a corpora directory")
    args = ap.parse_args(argv)
    if args.measure:
        PROFILE.parent.mkdir(parents=True, exist_ok=True)
        PROFILE.write_text(json.dumps(measure(args.measure), separators=(",", ":")) + "\n")
        print(f"profile written to {PROFILE}")
        return 0
    if args.out is None:
        ap.error("--out is required")
    shards = generate(args.out, args.items, args.seed, args.dialogue_share, args.shard_items)
    print(f"{sum(sh.items for sh in shards)} items in {len(shards)} shard(s) under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
