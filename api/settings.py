"""Settings: the only place argweb reads the environment (prefix ``ARGWEB_``).

Code gets its settings from :func:`get_settings` (read once and cached) or takes them as an
argument; library code (``ontology``, ``graphstore``, ``gnn``) takes explicit arguments instead.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphstore.export import DEFAULT_PAGE
from graphstore.store import DEFAULT_BATCH_SIZE
from ontology.errors import ApiError
from ontology.rdf import DEFAULT_BASE


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "argweb"


class Settings(BaseSettings):
    """argweb configuration.

    Attributes:
        neo4j_uri: An existing Neo4j (``bolt://``, ``neo4j://``, ``neo4j+s://``); when unset, the
            embedded server of ``data_dir`` is used.
        neo4j_user: User name (for the embedded server too).
        neo4j_password: Password (also set on the embedded server when its store is new). Without
            one, the embedded server gets a random password of its own, generated on first use and
            kept in ``<data_dir>/neo4j/argweb-password`` (mode 0600); an external server needs one.
        neo4j_database: Database name.
        neo4j_port: Bolt port of the embedded server.
        neo4j_heap: JVM heap of the embedded server.
        neo4j_connect_timeout: Seconds the API may spend failing to reach Neo4j for one read
            (two attempts, see :func:`graphstore.runtime.connect`) before it answers 503; a
            stopped or killed server is answered in about a second.
        data_dir: Working directory for the embedded Neo4j, the RDF store and computed features.
        cache_dir: Caches that outlive a data directory (text embeddings, trained models).
        corpora: Directory laid out like ``shared/corpora``; when unset ``./corpora`` (where
            ``argweb corpus fetch`` puts them), ``../shared/corpora`` or the shipped samples are used.
        rdf_base: Base IRI of exported resources.
        batch_size: Rows per ingest transaction.
        page_size: Rows per read transaction of paged reads (RDF export).
        api_key: Key every write request to the HTTP API must send in the ``X-API-Key`` header;
            when unset, writes through the API are refused.
        cors_origins: Origins allowed to call the API from a browser (``["*"]`` for any).
        cypher_timeout: Seconds a ``/cypher`` query (and every API read) may run.
        cypher_row_limit: Rows a ``/cypher`` query returns at most (the result is cut there).
        sparql_timeout: Seconds a SPARQL query (API or CLI) may run before it is stopped.
        sparql_memory_mb: Address-space limit of the process evaluating a SPARQL query.
        sparql_max_workers: SPARQL queries evaluated at once, whichever route starts them
            (``/sparql``, ``/data/...``, competency questions); one more is answered 503 with
            ``Retry-After`` (each may take ``sparql_memory_mb``). A query whose client leaves has its
            worker killed at once.
        sparql_result_limit: Largest SPARQL result the API answers, in bytes (results are read
            whole before the answer starts, so that a cut result is never a 200).
        request_size_limit: Largest request body the API accepts, in bytes.
        request_max_items: Array elements and object members (in all) a JSON body of ``POST /cypher``
            or ``POST /amf/{task}`` may hold; more is answered 413 before anything parses it for
            the route (commas and brackets bound it without a parse, so a string's commas count).
        request_max_string: Characters the longest string of such a body may have (413 beyond).
        request_max_depth: Arrays and objects such a body may nest (413 beyond).
        cypher_max_running: ``/cypher`` queries the API runs at once; one more is answered 503 with
            ``Retry-After`` at once, so that slow queries cannot take every worker thread.
        header_timeout: Seconds a client has to send a request's headers (from its connection, or
            from its previous response on a kept-alive one); the server closes the connection after.
        predict_max_utterances: Utterances a ``POST /predict`` transcript may have.
        predict_max_chars: Characters a ``POST /predict`` transcript may have in all, and the most
            one utterance may have is a tenth of it (the sentence splitter's cost grows faster
            than a turn's length).
        predict_max_running: Model requests (``POST /predict``) the API computes at once; one more
            is answered 503 with ``Retry-After``.
        mine_max_bytes: Largest transcript ``argweb mine`` reads, in bytes (checked before reading).
        mine_max_turns: Speaker turns (AIF: L-nodes) a mined transcript may have.
        mine_max_turn_chars: Characters one turn of a mined transcript may have.
        mine_max_utterances: Utterances a mined transcript may have after segmentation.
        oxigraph_store: The Oxigraph store SPARQL runs on (default ``<data_dir>/oxigraph``); wherever
            it is, the store and the directories created for it are the owner's alone (0700, files 0600).
        sparql_endpoint: The SPARQL 1.1 query endpoint of a server to use instead of the embedded
            Oxigraph store (Fuseki: ``http://host:3030/<dataset>/query``, the Oxigraph server:
            ``http://host:7878/query``); ``/sparql``, the Linked Data routes, ``/health`` and
            ``argweb rdf query`` then query it with the same read-only rules, time limit and result
            formats. Unset: the embedded store.
        sparql_store_endpoint: The SPARQL 1.1 Graph Store Protocol endpoint of that server
            (Fuseki: ``.../<dataset>/data``, Oxigraph: ``.../store``), where ``argweb rdf load`` and
            ``argweb rdf export`` put the export (its default graph).
        sparql_load_timeout: Seconds a push of an export to the Graph Store endpoint may take.
        allow_sparql_service: Let SPARQL ``SERVICE`` clauses reach other endpoints (off: a public
            endpoint must not make outbound requests for its clients).
        api_host: Interface the API listens on (``argweb serve``, the main job's background API).
        api_port: TCP port of the API.
    """

    model_config = SettingsConfigDict(env_prefix="ARGWEB_", env_file=".env", extra="ignore")

    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str = "neo4j"
    neo4j_port: int = 7687
    neo4j_heap: str = "2g"
    neo4j_connect_timeout: float = Field(default=5.0, gt=0)
    data_dir: Path = Path(".argweb")
    cache_dir: Path = Field(default_factory=_default_cache_dir)
    corpora: Path | None = None
    rdf_base: str = DEFAULT_BASE
    batch_size: int = DEFAULT_BATCH_SIZE
    page_size: int = DEFAULT_PAGE
    api_key: SecretStr | None = None
    cors_origins: list[str] = []
    cypher_timeout: float = 10.0
    cypher_row_limit: int = 10_000
    sparql_timeout: float = 30.0
    sparql_memory_mb: int = 4096
    sparql_max_workers: int = Field(default=4, ge=1)
    sparql_result_limit: int = Field(default=64 * 1024 * 1024, ge=1)
    request_size_limit: int = 10 * 1024 * 1024
    request_max_items: int = Field(default=200_000, ge=1)
    request_max_string: int = Field(default=1_000_000, ge=1)
    request_max_depth: int = Field(default=64, ge=1)
    cypher_max_running: int = Field(default=8, ge=1)
    header_timeout: float = Field(default=10.0, gt=0)
    predict_max_utterances: int = Field(default=300, ge=1)
    predict_max_chars: int = Field(default=60_000, ge=10)
    predict_max_running: int = Field(default=2, ge=1)
    mine_max_bytes: int = Field(default=1_000_000, ge=1)
    mine_max_turns: int = Field(default=2_000, ge=1)
    mine_max_turn_chars: int = Field(default=20_000, ge=1)
    mine_max_utterances: int = Field(default=2_000, ge=1)
    oxigraph_store: Path | None = None
    sparql_endpoint: str | None = None
    sparql_store_endpoint: str | None = None
    sparql_load_timeout: float = Field(default=3600.0, gt=0)
    allow_sparql_service: bool = False
    api_host: str = "127.0.0.1"
    api_port: int = 8000

    @field_validator("sparql_endpoint", "sparql_store_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            return None  # an empty variable unsets it, as for ARGWEB_NEO4J_URI
        if value is not None and urlsplit(value).scheme not in ("http", "https"):
            # A validator's ValueError is how pydantic reports a bad field; get_settings turns the
            # ValidationError into the ApiError the user sees.
            raise ValueError(f"a SPARQL endpoint is an http:// or https:// URL, not {value!r}")
        return value

    @property
    def neo4j_dir(self) -> Path:
        """Home of the embedded Neo4j."""
        return self.data_dir / "neo4j"

    @property
    def rdf_store_dir(self) -> Path:
        """Persistent Oxigraph store."""
        return self.oxigraph_store or self.data_dir / "oxigraph"

    @property
    def features_dir(self) -> Path:
        """Computed features (per corpus and kind)."""
        return self.data_dir / "features"

    @property
    def embeddings_dir(self) -> Path:
        """The text-embedding cache shared by every model (keyed by encoder and text hash)."""
        return self.cache_dir / "embeddings"

    @property
    def models_dir(self) -> Path:
        """Where ``argweb train`` writes a model when no ``--out`` is given (one folder per task)."""
        return self.cache_dir / "models"

    def child_env(self) -> dict[str, str]:
        """This process's environment with every setting spelled out as ``ARGWEB_*``.

        A child process (the background API) then reads exactly these settings, whatever came from
        options, ``.env`` or the environment; relative paths are made absolute.
        """
        env = dict(os.environ)
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, Path):
                value = value.resolve()
            elif isinstance(value, list | dict | bool):
                value = json.dumps(value)
            env[f"ARGWEB_{name.upper()}"] = str(value)
        return env

    def with_overrides(self, **updates: object) -> Settings:
        """A copy with the given fields replaced (``None`` values are ignored: the option was not given)."""
        given = {key: value for key, value in updates.items() if value is not None}
        return self.model_copy(update=given) if given else self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process, read from the environment (and ``.env``) once.

    Call ``get_settings.cache_clear()`` to read them again (the CLI does at each command).

    Raises:
        ApiError: A variable is malformed (the message names it): the user's mistake, not a traceback.
    """
    try:
        return Settings()
    except ValidationError as e:
        named = "; ".join(
            f"ARGWEB_{'_'.join(str(part) for part in error['loc']).upper()}: {error['msg']}" for error in e.errors()
        )
        raise ApiError(f"invalid settings: {named}") from e
