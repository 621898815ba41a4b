"""A scope of the graph a model predicts over, and its records read back from the graph.

``graphstore.scopes`` reads a :class:`Scope` into :class:`ScopeRecords`; a task
(:meth:`gnn.task.Task.predict_scope`) predicts over them. Both sides speak these types, so neither
imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ontology.records import EdgeRecord, NodeRecord


@dataclass(frozen=True)
class Scope:
    """Discourses of the graph a prediction runs over: a whole corpus, or one dialogue/document.

    Attributes:
        corpus: The corpus of the discourses.
        dialogue: The one dialogue/document asked for (``None``: the whole corpus).
        ids: Graph ids of the discourses, in id order.
        local_ids: Their local ids (the corpus's own), in the same order (empty: not read).
    """

    corpus: str
    dialogue: str | None
    ids: tuple[str, ...]
    local_ids: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class ScopeRecords:
    """A scope read back from the graph as the records its corpus reader gives (read by ``graphstore``).

    Attributes:
        scope: What was read.
        nodes: Node records of the discourses (gold relations included: they only score).
        edges: Their AIF edges.
    """

    scope: Scope
    nodes: tuple[NodeRecord, ...]
    edges: tuple[EdgeRecord, ...]
