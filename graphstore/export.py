"""Streaming reads of the whole graph (or one corpus) for the RDF export.

Nodes and relationships are paged by id (``WHERE n.id > $after ORDER BY n.id LIMIT $limit``), one
short read transaction per page, so memory is bounded by the page size (two pages: the next one
is read ahead while the caller works) however large the graph is, and no transaction stays open
while the caller writes. Pages are separate transactions: an export taken while an ingest runs is
not a snapshot (the corpus marker's ``status`` tells whether a corpus was complete).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from neo4j import Driver, RoutingControl
from neo4j.exceptions import DriverError, Neo4jError

from graphstore import cypher
from graphstore.errors import database_error
from graphstore.reads import edge_view, exported_node
from ontology.errors import GraphStoreError
from ontology.views import EdgeView, NodeView, RelationView

DEFAULT_PAGE = 2000
Page = list[dict[str, Any]]


@dataclass(frozen=True)
class ExportSize:
    """How much an export will read."""

    nodes: int
    relationships: int


class GraphReader:
    """Pages through the graph in id order.

    Args:
        driver: An open ``neo4j`` driver.
        database: Database name.
        page_size: Nodes per read transaction.
        corpus: Restrict every read to this corpus (``None``: the whole graph).
    """

    def __init__(
        self, driver: Driver, database: str = "neo4j", page_size: int = DEFAULT_PAGE, corpus: str | None = None
    ) -> None:
        if page_size < 1:
            raise GraphStoreError(f"page size must be positive, got {page_size}")
        self.driver = driver
        self.database = database
        self.page_size = page_size
        self.corpus = corpus

    def _read(self, query: str, **params: Any) -> Page:
        if self.corpus is not None:
            params["corpus"] = self.corpus
        try:
            records, _, _ = self.driver.execute_query(
                query, params, database_=self.database, routing_=RoutingControl.READ
            )
        except (Neo4jError, DriverError, OSError) as e:
            raise database_error(e, "Neo4j export read failed") from e
        # Values are plain (strings, numbers, lists, maps); Record.data() would walk them again.
        return [dict(r.items()) for r in records]

    def size(self) -> ExportSize:
        """Number of nodes and relationships in scope."""
        rows = self._read(cypher.export_counts(self.corpus is not None))
        row = rows[0] if rows else {}
        return ExportSize(nodes=int(row.get("nodes") or 0), relationships=int(row.get("relationships") or 0))

    def _pages(self, query: str, cursor: Callable[[Page], str | None]) -> Iterator[Page]:
        """Pages of ``query`` in cursor order, the next one fetched while the caller uses the last.

        Neo4j runs in its own process, so reading page k+1 overlaps with the caller turning page k
        into RDF; at most two pages are in memory. ``cursor`` returns the id to continue after, or
        ``None`` when the page was the last.
        """
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="argweb-export") as pool:
            pending: Future[Page] | None = pool.submit(self._read, query, after="", limit=self.page_size)
            while pending is not None:
                rows = pending.result()
                after = cursor(rows)
                pending = None if after is None else pool.submit(self._read, query, after=after, limit=self.page_size)
                yield rows

    def nodes(self) -> Iterator[NodeView | RelationView]:
        """Every node in id order; reified relations as views with their premises and conclusions."""

        def cursor(rows: Page) -> str | None:
            return rows[-1]["id"] if len(rows) == self.page_size else None

        for rows in self._pages(cypher.export_node_page(self.corpus is not None), cursor):
            for row in rows:
                yield exported_node(row)

    def relationships(self) -> Iterator[EdgeView]:
        """Every relationship, grouped by source node in id order."""

        def cursor(rows: Page) -> str | None:
            sources = len({row["source"] for row in rows})
            return rows[-1]["source"] if sources == self.page_size else None

        for rows in self._pages(cypher.export_relationship_page(self.corpus is not None), cursor):
            for row in rows:
                if row["type"] is not None:
                    yield edge_view(row)
