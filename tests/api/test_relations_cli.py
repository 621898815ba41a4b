"""``argweb train|evaluate relations`` and ``argweb predict aif|sciarg`` on the fixtures (no Neo4j, no network)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app
from gnn.encoder import TextEncoder
from gnn.registry import shipped_model
from gnn.relations.argmap import maps_from_records
from gnn.relations.qt30_run import load_qt30
from ontology.formats.aif import load_aif
from ontology.formats.registry import SAMPLES

pytestmark = pytest.mark.model  # trains and runs the relation model

DATA = SAMPLES
AIF_DIR = DATA / "dialam-2024" / "my_train"
SCIARG_DIR = DATA / "sciarg" / "compiled_corpus"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("model")
    result = CliRunner().invoke(
        app, ["train", "relations", "--data", str(AIF_DIR), "--data", str(SCIARG_DIR), "--out", str(out), "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    return out


def test_train_writes_card(model: Path) -> None:
    card = json.loads((model / "model_card.json").read_text(encoding="utf-8"))
    assert card["task"] == "relations"
    assert card["hyperparameters"]["seed"] == 3
    assert {"qt30", "sciarg"} <= set(card["data"])
    assert card["training_seconds"] > 0


def test_predict_aif_keeps_nodes_and_adds_relations(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "pred"
    result = CliRunner().invoke(
        app,
        ["predict", "aif", "--in", str(AIF_DIR), "--out", str(out), "--model", str(model), "--objective", "focused"],
    )
    assert result.exit_code == 0, result.output
    for src in sorted(AIF_DIR.glob("*.json")):
        gold = json.loads(src.read_text(encoding="utf-8"))
        pred = json.loads((out / src.name).read_text(encoding="utf-8"))
        kept = [n for n in gold["nodes"] if n["type"] in ("L", "I", "TA")]
        assert pred["nodes"][: len(kept)] == kept
        new = pred["nodes"][len(kept) :]
        assert all(n["type"] in ("RA", "CA", "MA") for n in new)
        assert pred["locutions"] == gold["locutions"]
        inodes = {n["nodeID"] for n in kept if n["type"] == "I"}
        new_ids = {n["nodeID"] for n in new}
        for e in pred["edges"]:
            if e["fromID"] in new_ids:
                assert e["toID"] in inodes
            if e["toID"] in new_ids:
                assert e["fromID"] in inodes


def test_predict_aif_maps_without_propositions(model: Path, tmp_path: Path) -> None:
    """An empty map and a map of locutions only are written back unchanged beside a predicted one."""
    src = tmp_path / "in"
    src.mkdir()
    real = sorted(AIF_DIR.glob("*.json"))[0]
    gold = json.loads(real.read_text(encoding="utf-8"))
    only_l = {
        "nodes": [n for n in gold["nodes"] if n["type"] == "L"],
        "edges": [],
        "locutions": gold["locutions"],
    }
    maps = {
        "a_empty.json": {"nodes": [], "edges": [], "locutions": []},
        "b_locutions.json": only_l,
        "c_real.json": gold,
    }
    for name, data in maps.items():
        (src / name).write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["predict", "aif", "--in", str(src), "--out", str(out), "--model", str(model)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "a_empty.json").read_text(encoding="utf-8")) == maps["a_empty.json"]
    assert json.loads((out / "b_locutions.json").read_text(encoding="utf-8")) == only_l
    # The real map's prediction does not depend on the maps beside it.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "c_real.json").write_text(json.dumps(gold), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["predict", "aif", "--in", str(alone), "--out", str(tmp_path / "out2"), "--model", str(model)]
    )
    assert result.exit_code == 0, result.output
    pred = (out / "c_real.json").read_text(encoding="utf-8")
    assert pred == (tmp_path / "out2" / "c_real.json").read_text(encoding="utf-8")
    assert [n for n in json.loads(pred)["nodes"] if n["type"] in ("L", "I", "TA")] == [
        n for n in gold["nodes"] if n["type"] in ("L", "I", "TA")
    ]


def test_predict_sciarg_keeps_span_lines(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "pred"
    result = CliRunner().invoke(
        app, ["predict", "sciarg", "--in", str(SCIARG_DIR), "--out", str(out), "--model", str(model)]
    )
    assert result.exit_code == 0, result.output
    for ann in sorted(SCIARG_DIR.glob("*.ann")):
        before = [x for x in ann.read_text(encoding="utf-8").splitlines() if not x.startswith("R")]
        after = (out / ann.name).read_text(encoding="utf-8").splitlines()
        assert [x for x in after if not x.startswith("R")] == before
        assert (out / ann.with_suffix(".txt").name).read_bytes() == ann.with_suffix(".txt").read_bytes()


def test_predict_sciarg_with_components_runs_the_pipeline(model: Path, tmp_path: Path) -> None:
    from api.services.components import component_lines
    from ontology.formats.sciarg import load_sciarg

    papers = tmp_path / "papers"
    papers.mkdir()
    for txt in sorted(SCIARG_DIR.glob("*.txt")):  # texts only: the components are predicted
        (papers / txt.name).write_bytes(txt.read_bytes())
    out = tmp_path / "pred"
    result = CliRunner().invoke(
        app, ["predict", "sciarg", "--in", str(papers), "--out", str(out), "--model", str(model), "--components"]
    )
    assert result.exit_code == 0, result.output
    total = 0
    for txt in sorted(papers.glob("*.txt")):
        lines = (out / txt.with_suffix(".ann").name).read_text(encoding="utf-8").splitlines()
        spans = [x for x in lines if x.startswith("T")]
        assert spans and spans == component_lines(txt)  # the shipped tagger's T lines, unchanged
        ids = {x.split("\t")[0] for x in spans}
        for rel in (x for x in lines if x.startswith("R")):
            _, args = rel.split("\t")[1].split(" ", 1)
            assert {a.split(":")[1] for a in args.split()} <= ids
        total += len(spans)
    assert f"{total} component(s)" in result.output
    bundle = load_sciarg(sorted(out.glob("*.ann")))  # the loader reads the pipeline's output back
    assert bundle.nodes


def test_evaluate_json(model: Path) -> None:
    result = CliRunner().invoke(app, ["evaluate", "relations", "--model", str(model), "--data", str(AIF_DIR), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout[result.stdout.index("{") :])
    assert out["qt30"]["maps"] == 3
    assert 0 <= out["qt30"]["tuned_general"]["official_style"]["general"]["f1"] <= 1
    # The same maps written every other valid way score the same, and the counts sit beside the scores.
    variants = out["qt30"]["variants"]
    assert len(variants["maps"]) >= 8 and variants["max_change"] == 0.0
    per_label = out["qt30"]["tuned_general"]["relations"]["per_label"]
    assert set(per_label) == {"RA", "CA", "MA"} and sum(v["gold"] for v in per_label.values()) > 0
    table = CliRunner().invoke(app, ["evaluate", "relations", "--model", str(model), "--data", str(AIF_DIR)])
    assert table.exit_code == 0, table.output
    assert "written other valid ways" in table.output and "predicted against gold" in table.output


def test_cross_validation_scores_every_fold(tmp_path: Path) -> None:
    args = ["evaluate", "relations", "--cv", "3", "--profile", "quick", "--data", str(AIF_DIR), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    q = json.loads(result.stdout[result.stdout.index("{") :])["qt30"]
    # The task contract's cross-validation: the gold relations of the maps, grouped by episode.
    assert q["items"] == sum(len(m.gold) for m in _maps()) and q["groups"] == 3 and q["profile"] == "quick"
    general = q["figures"]["tuned_general.general_f1"]
    assert len(general["folds"]) == 3 and all(0 <= f <= 1 for f in general["folds"])
    assert general["std"] >= 0 and "accuracy" in q["figures"]
    # Each gold relation is scored once, by a fold model that never saw its map.
    assert sum(c["gold"] for c in q["labels"].values()) == q["items"]


def test_evaluate_without_model_or_cv_is_the_callers_mistake() -> None:
    result = CliRunner().invoke(app, ["evaluate", "relations", "--data", str(AIF_DIR)])
    assert result.exit_code == 2
    assert "--model" in result.output


def test_evaluate_m_arg_scores_the_qt30_network_on_the_gold_pairs(model: Path) -> None:
    args = ["evaluate", "relations", "--model", str(model), "--data", str(SAMPLES / "m-arg")]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout[result.stdout.index("{") :])["marg"]
    assert set(out) == {"qt30_transfer"}  # no M-Arg model ships (experiments/marg_cv.py)
    assert set(out["qt30_transfer"]) == {"general", "focused", "shares"}
    assert all(t["pairs"] == 15 for t in out["qt30_transfer"].values())
    table = CliRunner().invoke(app, args)
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert "no M-Arg" in text and f"{out['qt30_transfer']['focused']['macro_f1']:.4f}" in text


def test_bad_inputs_exit_2(model: Path, tmp_path: Path) -> None:
    bad = tmp_path / "in"
    bad.mkdir()
    (bad / "broken.json").write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["predict", "aif", "--in", str(bad), "--out", str(tmp_path / "o"), "--model", str(model)]
    )
    assert result.exit_code == 2
    assert "broken.json" in result.output
    assert not (tmp_path / "o").exists()
    missing = CliRunner().invoke(
        app, ["predict", "aif", "--in", str(AIF_DIR), "--out", str(tmp_path / "p"), "--model", str(tmp_path)]
    )
    assert missing.exit_code == 2
    assert "model_card.json" in missing.output


def test_a_tagger_directory_that_is_not_one_is_the_callers_mistake(model: Path, tmp_path: Path) -> None:
    # The relation model's directory is a model directory, but not a component tagger's.
    for tagger in (tmp_path / "none", model):
        result = CliRunner().invoke(
            app,
            [
                "predict",
                "sciarg",
                "--in",
                str(SCIARG_DIR),
                "--out",
                str(tmp_path / "o"),
                "--components",
                "--components-model",
                str(tagger),
            ],
        )
        assert result.exit_code == 2, result.output
        assert str(tagger) in " ".join(result.output.split())
        assert not (tmp_path / "o").exists()


def test_predict_aif_propositions_only_map_uses_its_own_decoding(tmp_path: Path) -> None:
    """A map of I-nodes and relations alone (no L-nodes, no TA) is decoded with the shipped model's
    propositions-only biases (tuned on propositions-only copies of the development maps), not with
    the dialogue biases."""
    real = json.loads(sorted(AIF_DIR.glob("*.json"))[0].read_text(encoding="utf-8"))
    keep = {n["nodeID"] for n in real["nodes"] if n["type"] in ("I", "RA", "CA", "MA")}
    bare = {
        "nodes": [n for n in real["nodes"] if n["nodeID"] in keep],
        "edges": [e for e in real["edges"] if e["fromID"] in keep and e["toID"] in keep],
        "locutions": [],
    }
    src = tmp_path / "in"
    src.mkdir()
    (src / "bare.json").write_text(json.dumps(bare), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["predict", "aif", "--in", str(src), "--out", str(out), "--model", str(shipped_model("relations"))]
    )
    assert result.exit_code == 0, result.output
    pred = json.loads((out / "bare.json").read_text(encoding="utf-8"))
    written = [n for n in pred["nodes"] if n["nodeID"] not in keep]
    assert written and all(n["type"] in ("RA", "CA", "MA") for n in written)

    qt = load_qt30(shipped_model("relations"), encoder=TextEncoder())
    assert qt.decoding("general", propositions_only=True) != qt.decoding("general")
    bundle = load_aif([src / "bare.json"])
    maps = maps_from_records(bundle.nodes, bundle.edges)
    assert len(maps) == 1 and not maps[0].locutions and maps[0].props
    own = qt.predict(maps, "general")[0]
    assert len(written) == len(own)
    as_dialogue = dataclasses.replace(qt, bare_decodings={}).predict(maps, "general")[0]
    # The same network's probabilities, another decoding: other relations.
    assert {(a, b, lab) for a, b, lab, _ in own} != {(a, b, lab) for a, b, lab, _ in as_dialogue}


def _maps() -> list:
    bundle = load_aif(sorted(AIF_DIR.glob("*.json")))
    return maps_from_records(bundle.nodes, bundle.edges)


class _GoldTagger:
    """Predicts each paper's gold components: the end-to-end pipeline must then score as the gold-component one."""

    def predict(self, doc: object, text: str) -> list[object]:
        return list(doc.components.values())  # type: ignore[attr-defined]


def test_end_to_end_cross_validation_with_gold_components_scores_as_the_gold_component_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gnn.components.net

    monkeypatch.setenv("ARGWEB_CACHE_DIR", str(tmp_path / "cache"))
    trained = []

    def gold_tagger(train: dict[str, object], tune: dict[str, object], *args: object, **kwargs: object) -> object:
        trained.append((sorted(train), sorted(tune)))
        return _GoldTagger(), dataclasses.make_dataclass("Fit", ["best_epoch"])(1)

    monkeypatch.setattr(gnn.components.net, "train_tagger", gold_tagger)
    # Three papers (the third a copy of the first under another name): each fold trains on one, tunes on one.
    papers = tmp_path / "papers"
    papers.mkdir()
    for source, name in (("A01", "A01"), ("A10", "A10"), ("A01", "A11")):
        for suffix in (".ann", ".txt"):
            (papers / f"{name}{suffix}").write_bytes((SCIARG_DIR / f"{source}{suffix}").read_bytes())
    args = ["evaluate", "relations", "--cv", "3", "--profile", "quick", "--end-to-end", "--data", str(papers)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout[result.stdout.index("{") :])["sciarg"]
    figures = s["figures"]
    # The relations, written as brat lines and read back by the loader, land on the same components.
    assert figures["end_to_end.R_micro.f1"]["folds"] == pytest.approx(figures["R_micro.f1"]["folds"])
    assert figures["end_to_end.C.f1"]["folds"] == [1.0, 1.0, 1.0]
    # Each fold's tagger trained on its training paper and chose its epoch on its tuning paper, never
    # on the paper it is scored on.
    parts = [row["papers"] for row in s["folds"]]
    assert trained == [(p["train"], p["tune"]) for p in parts]
    assert all(len(p["train"]) == len(p["tune"]) == 1 and p["test"][0] not in p["train"] + p["tune"] for p in parts)
    assert s["labels"]["end to end"] == s["labels"][""]
    assert sum(c["right"] for c in s["labels"][""].values()) > 0


def test_end_to_end_needs_folds() -> None:
    args = ["evaluate", "relations", "--end-to-end", "--data", str(SCIARG_DIR), "--model", str(SCIARG_DIR)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "--end-to-end goes with --cv" in result.output


def test_an_encoder_goes_with_the_full_profile(tmp_path: Path) -> None:
    # The quick profile reads LSA vectors: an encoder given to it would be silently unused.
    args = ["evaluate", "relations", "--cv", "2", "--profile", "quick", "--encoder", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--data", str(SCIARG_DIR)])
    assert result.exit_code == 2
    assert "--encoder goes with --profile full" in " ".join(result.output.split())


def test_predict_relations_in_a_file_asks_each_pair_out_of_context(tmp_path: Path) -> None:
    from api.services import tasks
    from api.settings import Settings
    from gnn.relations.qt30_run import classify_pairs

    asked = tmp_path / "pairs.jsonl"
    pairs = [("Taxes must rise.", "No, they must not."), ("Prices rose.", "Prices went up.")]
    asked.write_text("".join(json.dumps({"source": s, "target": t}) + "\n" for s, t in pairs), encoding="utf-8")
    result = CliRunner().invoke(app, ["predict", "relations", "--in", str(asked), "--out", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    # Each pair as a two-proposition map, decided by the QT30 network's general decoding.
    qt = tasks.load(Settings(), "relations").model.qt30
    direct = classify_pairs(qt, pairs)
    names = {"none": "none", "RA": "support", "CA": "attack", "MA": "rephrase"}
    assert [(r["source"], r["target"], r["label"]) for r in rows] == [
        (s, t, names[label]) for (s, t), (label, _, _) in zip(pairs, direct, strict=True)
    ]
    assert [r["score"] for r in rows] == [round(score, 4) for _, score, _ in direct]
    mixed = CliRunner().invoke(app, ["predict", "relations", "--in", str(asked), "--corpus", "qt30"])
    assert mixed.exit_code == 2 and "--in asks about text pairs" in " ".join(mixed.output.split())
