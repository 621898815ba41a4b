"""Test session: one real embedded Neo4j on a free port with a temporary data directory.

The server is found and started through :mod:`api.services.graph`, the same resolution the CLI
and the API use. If it cannot start, every test that needs it errors (no skipping).

The tiers' markers are applied here by directory, so a new test file gets them by where it lives:
``tests/integration/`` is ``integration``, ``tests/packaging/`` is ``slow``, ``tests/gnn/`` is
``model`` unless its module is marked ``unit`` (synthetic data, no model loaded).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver
from rdflib import Graph

from api.services.corpora import corpora_root
from api.services.graph import embedded_server, open_driver, private_settings
from api.settings import Settings, get_settings
from graphstore.runtime import EmbeddedNeo4j
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA, SAMPLES
from ontology.rdf import ONTOLOGY_FILE
from ontology.records import CorpusBundle

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BAD = DATA / "bad"
PASSWORD = "argweb-test-password"
TESTS = Path(__file__).resolve().parent
# The marker every test under a directory of tests/ carries.
DIRECTORY_MARKERS = {"integration": "integration", "packaging": "slow", "gnn": "model"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Apply :data:`DIRECTORY_MARKERS` (a ``unit`` test under ``tests/gnn/`` is not ``model``)."""
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if TESTS not in path.parents:
            continue
        marker = DIRECTORY_MARKERS.get(path.relative_to(TESTS).parts[0])
        if marker == "model" and item.get_closest_marker("unit") is not None:
            continue
        if marker is not None:
            item.add_marker(marker)


def sample_bundle(corpus: str) -> CorpusBundle:
    """The shipped sample of ``corpus``, parsed and validated."""
    spec = CORPORA[corpus]
    bundle = spec.load(spec.find(SAMPLES))
    bundle.validate()
    return bundle


def of_type(bundle: CorpusBundle, kind: type) -> list[Any]:
    """The records of ``bundle`` that are instances of ``kind``."""
    return [n for n in bundle.nodes if isinstance(n, kind)]


def graph_snapshot(store: GraphStore, corpus: str) -> list[dict[str, Any]]:
    """Every node of ``corpus`` with its labels, properties (minus per-run stamps) and outgoing relationships."""
    rows = store.run(
        "MATCH (n:Node {corpus: $corpus}) OPTIONAL MATCH (n)-[r]->(m) "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props, "
        "collect([type(r), m.id, r.id]) AS out ORDER BY id",
        corpus=corpus,
    )
    for row in rows:
        row["labels"] = sorted(row["labels"])
        row["out"] = sorted(row["out"], key=repr)
        row["props"].pop("batch", None)
        row["props"].pop("ingest_run", None)
    return rows


def shared_corpora() -> Path | None:
    """The real corpora (``$ARGWEB_CORPORA`` or ``../shared/corpora``) as the main job finds them, or None."""
    root = corpora_root(get_settings())
    return None if root == SAMPLES else root


def embedded_settings(data_dir: Path, port: int | None = None, password: str = PASSWORD) -> Settings:
    """Settings of an embedded server in ``data_dir`` (on a free port unless given) with a test password."""
    return private_settings(data_dir, password, port=port, heap="1g")


@pytest.fixture(scope="session")
def onto() -> Graph:
    """The OWL ontology parsed with rdflib."""
    g = Graph()
    g.parse(ONTOLOGY_FILE, format="turtle")
    return g


@pytest.fixture(scope="session")
def neo4j_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings naming the session's embedded server."""
    return embedded_settings(tmp_path_factory.mktemp("argweb"))


@pytest.fixture(scope="session")
def neo4j_server(neo4j_settings: Settings) -> Iterator[EmbeddedNeo4j]:
    server = embedded_server(neo4j_settings)
    # Generous: on a loaded machine the JVM can take minutes; a server that never comes up still fails.
    server.start(timeout=600)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cli_env(neo4j_settings: Settings) -> dict[str, str]:
    """Environment of a command-line run against the session's Neo4j (wide columns: no wrapped messages)."""
    return {
        "ARGWEB_NEO4J_URI": "",
        "ARGWEB_NEO4J_PORT": str(neo4j_settings.neo4j_port),
        "ARGWEB_NEO4J_PASSWORD": PASSWORD,
        "ARGWEB_DATA_DIR": str(neo4j_settings.data_dir),
        "COLUMNS": "2000",
    }


@pytest.fixture(scope="session")
def driver(neo4j_server: EmbeddedNeo4j, neo4j_settings: Settings) -> Iterator[Driver]:
    drv = open_driver(neo4j_settings, start=False)
    try:
        yield drv
    finally:
        drv.close()


@pytest.fixture
def store(driver: Driver) -> GraphStore:
    """A store over an empty graph."""
    gs = GraphStore(driver, batch_size=500)
    gs.clear()
    return gs


def load_samples(driver: Driver, corpora: tuple[str, ...]) -> None:
    """Empty the graph and ingest the shipped samples of ``corpora``."""
    store = GraphStore(driver, batch_size=2000)
    store.clear()
    for name in corpora:
        spec = CORPORA[name]
        store.ingest(spec.load(spec.find(SAMPLES)))


def export_to_oxigraph(driver: Driver, tmp: Path) -> Path:
    """The graph exported to N-Triples and loaded into an Oxigraph store under ``tmp``: the store's folder."""
    from graphstore.export import GraphReader
    from ontology.rdf import RdfMapper, write_export
    from ontology.sparql import load_store

    reader = GraphReader(driver, "neo4j")
    export = tmp / "export.nt"
    write_export(export, reader.nodes(), reader.relationships(), fmt="nt", mapper=RdfMapper())
    load_store(tmp / "oxigraph", export, "nt")
    return tmp / "oxigraph"


def served_settings(server: EmbeddedNeo4j, data_dir: Path, api_key: str, **overrides: Any) -> Settings:
    """API settings over the session's server and the Oxigraph store :func:`export_to_oxigraph` made in ``data_dir``."""
    from pydantic import SecretStr

    info = server.info()
    assert info is not None
    return Settings(
        neo4j_uri=info.uri,
        neo4j_password=SecretStr(PASSWORD),
        data_dir=data_dir,
        oxigraph_store=data_dir / "oxigraph",
        api_key=SecretStr(api_key),
        **overrides,
    )


@contextmanager
def serve_app(app: Any, start_timeout: float = 30.0, config: Any = None) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port, in a thread of the test process; its base URL.

    ``config`` (port -> ``uvicorn.Config``) serves it another way, e.g. as ``argweb serve`` configures uvicorn.
    """
    import threading
    import time

    import uvicorn

    from graphstore.runtime import free_port

    port = free_port()
    chosen = config(port) if config else uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(chosen)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
