"""The Python API for notebooks: ``from api import Argweb``.

A thin facade over the services the CLI and the HTTP routes use: nothing here decides anything
they do not. docs/python.md shows it at work (and runs as a test).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from api.services.graph import Graph
from api.settings import Settings, get_settings
from gnn.task import PredictedRelation
from graphstore.store import IngestReport
from ontology.errors import ApiError
from ontology.views import DiscourseView

if TYPE_CHECKING:
    from api.services.predictions import ScopeOutcome

# Result bytes a SPARQL query may return to a notebook (the API's limit is per request, this is per call).
SPARQL_RESULT_BYTES = 256 * 1024 * 1024


class Argweb:
    """One connection to the argweb graph (embedded Neo4j started on demand, or the configured server).

    Args:
        settings: The settings to use (default: from the environment, as the CLI reads them).
        **overrides: Settings fields to change, e.g. ``data_dir=Path("/tmp/aw")``.
    """

    def __init__(self, settings: Settings | None = None, **overrides: Any) -> None:
        self.settings = (settings or get_settings()).with_overrides(**overrides)
        self.graph = Graph(self.settings)

    def close(self) -> None:
        """Close the driver (an embedded Neo4j keeps running; ``argweb db stop`` stops it)."""
        self.graph.close()

    def __enter__(self) -> Argweb:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def load(self, corpus: str, paths: Sequence[Path | str] | None = None) -> IngestReport:
        """Load corpus files into the graph (as ``argweb corpus ingest CORPUS PATH...``).

        Args:
            corpus: Corpus id (molweni, stac, qt30, m-arg, sciarg, contextdep).
            paths: Its files or directories (default: the sample shipped with argweb).

        Returns:
            What was written (nodes, edges, counts per label).
        """
        from api.services.corpora import ingest_files
        from ontology.formats.registry import CORPORA, SAMPLES

        if paths is None:
            if corpus not in CORPORA:
                raise ApiError(f"unknown corpus {corpus!r}; expected one of {sorted(CORPORA)}")
            paths = CORPORA[corpus].find(SAMPLES)
        return ingest_files(self.graph, corpus, [Path(p) for p in paths])

    def stats(self, predicted: bool = False) -> dict[str, Any]:
        """Counts per corpus, label and relation type (as ``argweb corpus stats --json``)."""
        from api.services import corpora

        return corpora.stats(self.graph, include_predicted=predicted).as_dict()

    def cypher(self, query: str, **parameters: Any) -> list[dict[str, Any]]:
        """Rows of a read-only Cypher query (as ``POST /cypher``; writes are refused).

        Returns:
            One dict per row, keyed by column.
        """
        from api.services.query import cypher_stream

        cfg = self.settings
        stream = cypher_stream(
            self.graph.driver(), cfg.neo4j_database, query, parameters, cfg.cypher_timeout, cfg.cypher_row_limit
        )
        columns: list[str] = []
        rows: list[dict[str, Any]] = []
        for kind, value in stream:
            if kind == "columns":
                columns = list(value)
            elif kind == "row":
                rows.append(dict(zip(columns, value, strict=True)))
        return rows

    def sparql(self, query: str) -> list[dict[str, str]]:
        """Rows of a SELECT query on the SPARQL store (as ``argweb rdf query``), values as strings.

        The store holds what ``argweb rdf export`` (or :meth:`export_rdf`) last loaded into it.
        """
        from api.services.query import run_sparql, sparql_store

        cfg = self.settings
        run = run_sparql(
            sparql_store(cfg),
            query,
            fmt="json",
            timeout=cfg.sparql_timeout,
            memory_mb=cfg.sparql_memory_mb,
            allow_service=cfg.allow_sparql_service,
            max_workers=cfg.sparql_max_workers,
        )
        result = json.loads(run.collect(SPARQL_RESULT_BYTES))
        if "boolean" in result:
            return [{"boolean": str(result["boolean"]).lower()}]
        return [{name: cell["value"] for name, cell in row.items()} for row in result["results"]["bindings"]]

    def export_rdf(self, out: Path | str, corpus: str | None = None) -> None:
        """Export the graph as RDF and load it into the SPARQL store (as ``argweb rdf export OUT``)."""
        from api.services import rdf

        rdf.export_rdf(self.graph, Path(out), corpus=corpus, load=True)

    def dialogue(self, ref: str) -> DiscourseView:
        """A dialogue or document, its units and relations, as an ontology read view (``GET /dialogues/{ref}``)."""
        from graphstore.browsing import BrowseService

        cfg = self.settings
        return BrowseService(self.graph.driver(), cfg.neo4j_database, cfg.cypher_timeout).discourse(ref)

    def predict(
        self,
        task: str,
        corpus: str | None = None,
        *,
        dialogue: str | None = None,
        model: Path | str | None = None,
        options: Mapping[str, str] | None = None,
        write: bool = False,
    ) -> ScopeOutcome:
        """Run a model of ``task`` over a corpus or one dialogue of the graph (as ``argweb predict TASK --corpus``).

        Args:
            task: A registered task that predicts over stored dialogues (``discourse``, ``relations``,
                ``paraphrase`` ...).
            corpus: A corpus in the graph.
            dialogue: One dialogue/document instead (graph id or local id).
            model: A model directory or a trained model's name (default: the task's shipped model).
            options: The task's decoding options (``{"objective": "general"}`` for relations ...).
            write: Store the predictions as predicted relations (gold is never changed); else a dry run.

        Returns:
            What was predicted (counts per label, run id, scores against gold where the scope has
            them) and written.

        Raises:
            UnknownTaskError: ``task`` does not predict over stored dialogues.
        """
        from api.services.predictions import predict_scope

        return predict_scope(
            self.graph, task, corpus=corpus, dialogue=dialogue, model=model, options=options, write=write
        )

    def relate(
        self, task: str, pairs: Sequence[tuple[str, str]], *, model: Path | str | None = None
    ) -> list[PredictedRelation]:
        """How the first text of each pair relates to the second, by a task on the task contract
        (as ``argweb predict TASK --in FILE``; ``pairs``: the out-of-context pair model).

        Args:
            task: A registered task on the contract (:func:`gnn.task.contract_tasks`).
            pairs: ``(source, target)`` texts.
            model: A model directory or a trained model's name (default: the task's shipped model).

        Raises:
            UnknownTaskError: ``task`` is not on the contract.
        """
        from api.services import tasks
        from gnn.task import TextPair

        return tasks.predict(self.settings, task, [TextPair(a, b) for a, b in pairs], model)

    def plot(self, corpus: str, plot: str) -> Any:
        """One dashboard plot of a corpus as a matplotlib figure (as ``argweb corpus report``)."""
        from api import dashboard
        from api.services import report
        from graphstore.browsing import BrowseService

        cfg = self.settings
        data = report.corpus_data(BrowseService(self.graph.driver(), cfg.neo4j_database, cfg.cypher_timeout), corpus)
        return dashboard.figure(plot, data)
