"""M-Arg CSV written another valid way reads the same.

Every M-Arg file but the aeneas timestamp files names its columns in a header, so neither the
order of its rows nor that of its columns means anything, and quoting and line ends are the
writer's choice. (A timestamp file has no header and its row ``k`` is sentence ``k``: its order
is its content.) The reader must give the same records, and the QT30 network that reads M-Arg
debates (``predict relations --corpus m-arg``) the same relations.
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from api.services import tasks
from api.settings import Settings
from gnn.relations.marg_task import debates_from_records, predict_debates
from ontology.formats.marg import load_marg
from ontology.formats.perturb import rewrite_table
from ontology.formats.registry import SAMPLES
from ontology.records import JudgementRecord, RelationRecord
from tests.invariance.perturb import canonical, differences

pytestmark = pytest.mark.invariance

SAMPLE = SAMPLES / "m-arg"
TABLES = sorted(SAMPLE.glob("*.csv"))
TIMESTAMPS = sorted((SAMPLE / "timestamps").glob("*.csv"))

Rewrite = Callable[[str, int], str]
VARIANTS: dict[str, Rewrite] = {
    "rows shuffled": lambda t, seed: rewrite_table(t, row_seed=seed),
    "columns shuffled": lambda t, seed: rewrite_table(t, column_seed=seed),
    "all quoted, crlf": lambda t, seed: rewrite_table(t, quoting="all", newline="\r\n"),
    "all": lambda t, seed: rewrite_table(t, row_seed=seed, column_seed=seed + 1, quoting="all", newline="\r\n"),
}


def _write(
    out: Path, rewrite: Callable[[str], str], tables: dict[str, str] | None = None, names: list[str] | None = None
) -> list[Path]:
    """The sample under ``out``: its headed files rewritten, the timestamp files copied.

    Args:
        out: Where to write.
        rewrite: How each headed file is written again.
        tables: Texts of the headed files by name (default: the sample's).
        names: Only these headed files (default: all).
    """
    texts = tables or {p.name: p.read_bytes().decode("utf-8") for p in TABLES}
    chosen = names or sorted(texts)
    (out / "timestamps").mkdir(parents=True, exist_ok=True)
    for name in chosen:
        (out / name).write_bytes(rewrite(texts[name]).encode("utf-8"))
    for path in TIMESTAMPS:
        shutil.copyfile(path, out / "timestamps" / path.name)
    return [out / name for name in chosen] + [out / "timestamps" / p.name for p in TIMESTAMPS]


def test_the_rewrites_change_the_files(tmp_path: Path) -> None:
    # A rewrite that wrote the same bytes would make the comparison below prove nothing.
    for name, rewrite in VARIANTS.items():
        _write(tmp_path / name, lambda t, r=rewrite: r(t, 0))
        for path in TABLES:
            assert (tmp_path / name / path.name).read_bytes() != path.read_bytes(), (name, path.name)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reader_gives_the_same_records(variant: str, seed: int, tmp_path: Path) -> None:
    plain_bundle = load_marg(TABLES + TIMESTAMPS)
    other_bundle = load_marg(_write(tmp_path, lambda t: VARIANTS[variant](t, seed)))
    plain, other = canonical(plain_bundle), canonical(other_bundle)
    assert other == plain, differences(plain, other)
    # Even in the same order (the corpus record, which names the files' directory, aside).
    assert other_bundle.nodes[1:] == plain_bundle.nodes[1:] and other_bundle.edges == plain_bundle.edges


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("marg-network")
    return tasks.load(Settings(cache_dir=root / "cache", data_dir=root / "data"), "relations").model.qt30


@pytest.mark.model
def test_the_qt30_network_gives_the_same_relations(network: Any, tmp_path: Path) -> None:
    plain = [d for d in debates_from_records(load_marg(TABLES + TIMESTAMPS).nodes) if d.sentences]
    written = _write(tmp_path, lambda t: VARIANTS["all"](t, 7))
    other = [d for d in debates_from_records(load_marg(written).nodes) if d.sentences]
    expected = predict_debates(network, plain)
    assert sum(map(len, expected)) > 0, "nothing predicted: the comparison would prove nothing"
    assert predict_debates(network, other) == expected


SENTENCES = ["dataset_context_definition.csv", "full_feature_extraction_dataset.csv"]
# Without the aggregated and gold files every label and confidence comes from the judgements.
FROM_JUDGEMENTS = [*SENTENCES, "full_dataset.csv"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_labels_from_judgements_do_not_depend_on_row_order(seed: int, tmp_path: Path) -> None:
    plain = canonical(load_marg(_write(tmp_path / "plain", lambda t: t, names=FROM_JUDGEMENTS)))
    shuffled = _write(tmp_path / "other", lambda t: rewrite_table(t, row_seed=seed), names=FROM_JUDGEMENTS)
    other = canonical(load_marg(shuffled))
    assert other == plain, differences(plain, other)


def _table(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return list(reader.fieldnames or []), list(reader)


def _text(header: list[str], rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


CAUTION = ["neither", "support", "attack"]


def _disagreeing_rows() -> dict[str, str]:
    """The sample's headed files with rows whose order a reader might let decide.

    Two equally confident aggregated rows of a pair with different labels and topics (the pair's
    other rows give the first topic), a worker who judged a unit twice with different labels, and
    two gold rows of a question with different reasons.
    """
    texts = {p.name: p.read_bytes().decode("utf-8") for p in TABLES}
    header, rows = _table(texts["aggregated_dataset.csv"])
    free = next(r for r in rows if not r["relation_gold"].strip())
    other = "attack" if free["relation"] != "attack" else "support"
    rows.append(free | {"relation": other, "topic": "A topic no other row gives"})
    texts["aggregated_dataset.csv"] = _text(header, rows)
    header, rows = _table(texts["full_dataset.csv"])
    rows.append(rows[1] | {"relation": "neither" if rows[1]["relation"] != "neither" else "attack"})
    texts["full_dataset.csv"] = _text(header, rows)
    header, rows = _table(texts["full_dataset_processing.csv"])
    rows.append(rows[0] | {"relation_gold_reason": "Another annotator's reason."})
    texts["full_dataset_processing.csv"] = _text(header, rows)
    return texts


def test_disagreeing_rows_are_resolved_whatever_their_order(tmp_path: Path) -> None:
    tables = _disagreeing_rows()
    plain_bundle = load_marg(_write(tmp_path / "plain", lambda t: t, tables))
    # The rows were read: the repeated judgement is there.
    assert len([n for n in plain_bundle.nodes if isinstance(n, JudgementRecord)]) == 49 + 1
    plain = canonical(plain_bundle)
    for seed in range(6):
        shuffled = _write(tmp_path / str(seed), lambda t, k=seed: rewrite_table(t, row_seed=k), tables)
        other = canonical(load_marg(shuffled))
        assert other == plain, f"seed {seed}\n" + differences(plain, other)
    # The pair's other rows outnumber the odd one: their topic is the pair's.
    free = next(r for r in _table(tables["aggregated_dataset.csv"])[1] if not r["relation_gold"].strip())
    relations = {n.local_id: n for n in plain_bundle.nodes if isinstance(n, RelationRecord)}
    assert relations[free["pair_id"]].topic == free["topic"]
    # Of the two equally confident labels, the more cautious one.
    cautious = min(free["relation"], "attack" if free["relation"] != "attack" else "support", key=CAUTION.index)
    assert relations[free["pair_id"]].scheme_label == cautious.capitalize()
