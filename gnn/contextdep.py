"""ContextDeP records (as the loader gives them) as the pairs the paraphrase models train and score on."""

from __future__ import annotations

from collections.abc import Sequence

from gnn.paraphrase_eval import ParaphrasePair
from ontology.records import LocutionRecord, NodeRecord, RelationRecord


def pairs_from_records(nodes: Sequence[NodeRecord]) -> list[ParaphrasePair]:
    """One pair per annotated ContextDeP relation, in record order: the guest's and the host's
    tokens with their highlight shares, the paraphrase votes and the number of annotators."""
    locutions = {n.id: n for n in nodes if isinstance(n, LocutionRecord)}
    out = []
    for node in nodes:
        if isinstance(node, RelationRecord) and node.local_id:
            stem = node.id.rsplit(":", 1)[0]
            guest, host = locutions[f"{stem}:guest"], locutions[f"{stem}:host"]
            out.append(
                ParaphrasePair(
                    node.local_id,
                    list(guest.tokens or []),
                    list(host.tokens or []),
                    guest.highlights,
                    host.highlights,
                    node.votes,
                    node.annotator_count,
                )
            )
    return out
