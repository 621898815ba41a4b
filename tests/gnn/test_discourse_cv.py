"""The discourse recipe under grouped cross-validation (gnn.discourse.cv): each fold's networks are fitted by the
Trainer on the other folds, their epochs chosen on a tuning part inside them."""

from __future__ import annotations

import pytest

from gnn.discourse.cv import cross_validate_discourse, dialogue_groups, fold_plans
from gnn.discourse.data import Dialogue, dialogues_from_bundle
from gnn.discourse.train import PROFILES, ParserConfig
from gnn.encoder import TextEncoder
from ontology.formats.dialogue_json import load_dialogue_json
from ontology.formats.registry import SAMPLES


@pytest.fixture(scope="module")
def files() -> dict[str, list[Dialogue]]:
    out = {}
    for scheme, rel in (("molweni", "molweni/DP/dev.json"), ("stac", "stac/train.json")):
        bundle = load_dialogue_json([SAMPLES / rel], scheme)
        out[rel.split("/")[-1]] = dialogues_from_bundle(bundle, domain=scheme, source=rel.split("/")[-1])
    return out


def test_every_dialogue_is_scored_once_by_networks_that_never_saw_its_group(
    files: dict[str, list[Dialogue]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    plans = fold_plans(files, 2, seed=1)
    for name, dialogues in files.items():
        groups = dialogue_groups(dialogues)
        assert sorted(i for fold in plans[name] for i in fold.test) == list(range(len(dialogues)))
        for fold in plans[name]:
            assert not {groups[i] for i in fold.test} & {groups[i] for i in fold.train + fold.tune}
    encoder = TextEncoder(cache_dir=tmp_path_factory.mktemp("emb"))
    config = ParserConfig(seed=3, **{**PROFILES["tiny"], "members": 2})
    out = cross_validate_discourse(files, encoder, config, folds=2, seed=1)
    for row in out["folds"]:
        # Each member's kept epoch, from the trainer's history (the epoch its tuning score chose).
        assert len(row["chosen"]["epochs"]) == 2 and all(1 <= e <= config.epochs for e in row["chosen"]["epochs"])
        assert set(row["chosen"]["thresholds"]) == {"molweni", "stac"}
    for name in files:
        figures = out["files"][name]["figures"]
        for measure in ("link_f1", "link_rel_f1"):
            per_fold = figures[measure]["folds"]
            assert len(per_fold) == 2 and figures[measure]["mean"] == pytest.approx(sum(per_fold) / 2, abs=1e-3)
