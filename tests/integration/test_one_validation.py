"""One validation for every door (issue 47, item 11), through the real command line, the real API
and the real Neo4j.

The drill found two validations of an AIF map: ``argweb corpus ingest aif`` stored a node whose
``text`` was a list (as the Python spelling ``"['a', 'b']"``), a number text, a ``timestamp`` of
``Infinity`` and a node without ``text``, with exit 0, while ``POST /aif`` refused the list with
422. An empty Molweni file (``[]``) and a header-only ContextDeP file "loaded" and rewrote their
corpus marker, dropping its input digest. Each case is reproduced here as the issue writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli.main import app
from api.services.corpora import read_corpus
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from ontology.errors import LoaderError
from ontology.formats.registry import CORPORA, SAMPLES
from tests.conftest import served_settings

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
API_KEY = "key-0123456789abcdef"
REFUSED_MAPS = [
    ("aif_text_list.json", "field 'text' has type list"),
    ("aif_text_number.json", "field 'text' has type int"),
    ("aif_timestamp_infinity.json", "field 'timestamp' is inf"),
    ("aif_no_text.json", "missing field 'text'"),
]


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def graph_state(store: GraphStore) -> tuple[int, int, list[dict[str, Any]]]:
    """Node and relationship counts and every corpus marker with all its properties."""
    nodes = store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    rels = store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    markers = [r["p"] for r in store.read("MATCH (c:Corpus) RETURN properties(c) AS p ORDER BY c.id")]
    return nodes, rels, markers


@pytest.fixture
def client(neo4j_server: EmbeddedNeo4j, tmp_path: Path) -> Any:
    with TestClient(create_app(served_settings(neo4j_server, tmp_path, API_KEY))) as test_client:
        yield test_client


@pytest.mark.parametrize(("name", "problem"), REFUSED_MAPS)
def test_a_map_refused_by_one_door_is_refused_by_both_naming_file_and_node(
    name: str, problem: str, cli_env: dict[str, str], store: GraphStore, client: TestClient
) -> None:
    assert cli(["ingest", "stac", str(SAMPLES / "stac")], cli_env)[0] == 0
    before = graph_state(store)
    path = BAD / name
    code, out = cli(["corpus", "ingest", "aif", str(path)], cli_env)
    assert code == 2, out
    assert f"{path}: node 510961: {problem}" in out
    assert graph_state(store) == before, "a refused map changed the graph"
    # The same bytes as the body of POST /aif (Python's JSON reads the bare Infinity as a float).
    response = client.post(
        "/aif",
        params={"corpus": "drill-maps", "name": "m"},
        content=path.read_bytes(),
        headers={"content-type": "application/json", "X-API-Key": API_KEY},
    )
    assert response.status_code == 422, response.text
    assert f"AIF map m: node 510961: {problem}" in response.json()["detail"]
    assert graph_state(store) == before, "a refused map changed the graph"


def test_a_self_loop_is_kept_and_reported_alike_at_both_doors(
    cli_env: dict[str, str], store: GraphStore, client: TestClient
) -> None:
    """An L-node linked to itself is in seven gold DialAM-2024 maps: both doors store it as it is."""
    path = BAD / "aif_self_loop.json"
    code, out = cli(["corpus", "ingest", "aif", str(path)], cli_env)
    assert code == 0, out
    assert f"{path}: edge 3: links L node 510959 to itself; stored as it is" in out
    response = client.post(
        "/aif",
        params={"corpus": "drill-maps", "name": "aif_self_loop"},
        content=path.read_bytes(),
        headers={"content-type": "application/json", "X-API-Key": API_KEY},
    )
    assert response.status_code == 201, response.text
    by_cli, by_http = store.graph_counts("qt30"), store.graph_counts("drill-maps")
    assert by_cli == by_http and by_cli["AIF_EDGE"] == 3, (by_cli, by_http)
    loops = store.read(
        "MATCH (l:Locution)-[r:AIF_EDGE]->(l) RETURN l.corpus AS corpus, l.local_id AS node ORDER BY corpus"
    )
    assert [(r["corpus"], r["node"]) for r in loops] == [("drill-maps", "510959"), ("qt30", "510959")]


@pytest.mark.parametrize(
    ("corpus", "name", "problem"),
    [
        ("molweni", "dialogue_empty_list.json", "an empty array, no dialogue"),
        ("contextdep", "cdep_HEADER_TOKEN-annotations.tsv", "line 1: a header and no rows"),
    ],
)
def test_a_file_that_loads_nothing_is_refused_and_the_marker_keeps_its_digest(
    corpus: str, name: str, problem: str, cli_env: dict[str, str], store: GraphStore
) -> None:
    # Loaded as the main job loads it: the marker records the input digest of the samples.
    spec = CORPORA[corpus]
    digest = spec.input_digest(SAMPLES)
    store.ingest(read_corpus(spec, spec.find(SAMPLES), digest))
    assert store.input_digests()[corpus] == digest
    before = graph_state(store)
    path = BAD / name
    code, out = cli(["corpus", "ingest", corpus, str(path)], cli_env)
    assert code == 2, out
    assert f"{path}" in out and problem in out, out
    assert graph_state(store) == before, "a file that loads nothing rewrote the corpus"
    assert store.input_digests()[corpus] == digest
    # The bulk load and the main job read the files through the same reader.
    with pytest.raises(LoaderError, match=problem):
        read_corpus(spec, [path], digest)
