"""Settings: the only place argweb reads the environment (prefix ``ARGWEB_``).

Code gets its settings from :func:`get_settings` (read once and cached) or takes them as an
argument; library code (``ontology``, ``graphstore``, ``gnn``) takes explicit arguments instead.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphstore.export import DEFAULT_PAGE
from graphstore.store import DEFAULT_BATCH_SIZE
from ontology.rdf import DEFAULT_BASE


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "argweb"


class Settings(BaseSettings):
    """argweb configuration.

    Attributes:
        neo4j_uri: An existing Neo4j (``bolt://``, ``neo4j://``, ``neo4j+s://``); when unset, the
            embedded server of ``data_dir`` is used.
        neo4j_user: User name (for the embedded server too).
        neo4j_password: Password (also set on the embedded server at start).
        neo4j_database: Database name.
        neo4j_port: Bolt port of the embedded server.
        neo4j_heap: JVM heap of the embedded server.
        data_dir: Working directory for the embedded Neo4j, the RDF store and computed features.
        cache_dir: Caches that outlive a data directory (text embeddings, trained models).
        corpora: Directory laid out like ``shared/corpora``; when unset ``../shared/corpora`` or
            the shipped samples are used.
        rdf_base: Base IRI of exported resources.
        batch_size: Rows per ingest transaction.
        page_size: Rows per read transaction of paged reads (RDF export).
    """

    model_config = SettingsConfigDict(env_prefix="ARGWEB_", env_file=".env", extra="ignore")

    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("argweb-local-dev")
    neo4j_database: str = "neo4j"
    neo4j_port: int = 7687
    neo4j_heap: str = "2g"
    data_dir: Path = Path(".argweb")
    cache_dir: Path = Field(default_factory=_default_cache_dir)
    corpora: Path | None = None
    rdf_base: str = DEFAULT_BASE
    batch_size: int = DEFAULT_BATCH_SIZE
    page_size: int = DEFAULT_PAGE

    @property
    def neo4j_dir(self) -> Path:
        """Home of the embedded Neo4j."""
        return self.data_dir / "neo4j"

    @property
    def rdf_store_dir(self) -> Path:
        """Persistent Oxigraph store."""
        return self.data_dir / "oxigraph"

    @property
    def features_dir(self) -> Path:
        """Computed features (per corpus and kind)."""
        return self.data_dir / "features"

    def with_overrides(self, **updates: object) -> Settings:
        """A copy with the given fields replaced (``None`` values are ignored: the option was not given)."""
        given = {key: value for key, value in updates.items() if value is not None}
        return self.model_copy(update=given) if given else self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process, read from the environment (and ``.env``) once.

    Call ``get_settings.cache_clear()`` to read them again (the CLI does at each command).
    """
    return Settings()
