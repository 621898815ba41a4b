"""What a query editor completes: the graph's own labels, relationship types and property keys
(asked of Neo4j, so a corpus loaded later shows up), and the ontology's prefixes, classes and
properties for SPARQL (from the generated terms, never a second list)."""

from __future__ import annotations

from dataclasses import dataclass

from neo4j import Driver

from graphstore import cypher
from graphstore.readonly import ReadRunner
from ontology.namespaces import PREFIXES
from ontology.terms import LABEL_IRI, NAMESPACE, PROP_IRI, REL_TYPE_IRI


@dataclass(frozen=True)
class GraphSchema:
    """The vocabulary of the graph and of its RDF export.

    Attributes:
        labels: Node labels in the graph.
        relationship_types: Relationship types in the graph.
        property_keys: Property keys in the graph (the ingest journal's left out).
        prefixes: SPARQL prefix -> namespace IRI (predeclared by ``/sparql``).
        classes: The ontology's classes as prefixed names (``aw:Proposition``).
        properties: The ontology's object and data properties as prefixed names.
    """

    labels: tuple[str, ...]
    relationship_types: tuple[str, ...]
    property_keys: tuple[str, ...]
    prefixes: dict[str, str]
    classes: tuple[str, ...]
    properties: tuple[str, ...]


def _prefixed(iri: str) -> str:
    return f"aw:{iri.removeprefix(NAMESPACE)}" if iri.startswith(NAMESPACE) else f"<{iri}>"


def graph_schema(driver: Driver, database: str = "neo4j", timeout: float = 10.0) -> GraphSchema:
    """The graph's labels, relationship types and property keys, and the ontology's SPARQL terms.

    Raises:
        DatabaseUnavailableError: Neo4j cannot be reached.
    """
    reader = ReadRunner(driver, database, timeout)

    def names(query: str, **params: object) -> tuple[str, ...]:
        return tuple(str(r["name"]) for r in reader.rows(query, "schema read", **params))

    return GraphSchema(
        labels=names(cypher.schema_labels()),
        relationship_types=names(cypher.schema_relationship_types()),
        property_keys=names(cypher.schema_property_keys(), hidden=list(cypher.JOURNAL_KEYS)),
        prefixes=dict(PREFIXES),
        classes=tuple(sorted({_prefixed(iri) for iri in LABEL_IRI.values()})),
        properties=tuple(sorted({_prefixed(iri) for iri in [*PROP_IRI.values(), *REL_TYPE_IRI.values()]})),
    )
