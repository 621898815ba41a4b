"""Every Cypher statement argweb sends, as pure query builders.

Labels and relationship types cannot be query parameters, so builders splice them in; they only
accept :class:`~ontology.terms.Label` / :class:`~ontology.terms.RelType` members, which come from the
ontology, never from user input. Everything else is a parameter. Writes are ``UNWIND $rows``
batches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphstore.browse import fulltext_index
from ontology.errors import ApiError
from ontology.terms import LABEL_ANCESTORS, Label, Prop, RelType


def _labels(labels: Sequence[Label]) -> str:
    return "".join(f":`{Label(label).value}`" for label in labels)


def _rel(rel_type: RelType) -> str:
    return f"`{RelType(rel_type).value}`"


def constraints() -> list[str]:
    """Schema statements: id uniqueness for every node class plus lookup indexes."""
    stmts = [
        f"CREATE CONSTRAINT {label.value.lower()}_id IF NOT EXISTS FOR (n:`{label.value}`) REQUIRE n.id IS UNIQUE"
        for label in (Label.Node, Label.Corpus)
    ]
    stmts += [
        f"CREATE CONSTRAINT write_lease_id IF NOT EXISTS FOR (g:`{Label.WriteLease.value}`) REQUIRE g.id IS UNIQUE",
        f"CREATE CONSTRAINT ingest_journal_key IF NOT EXISTS FOR (j:`{Label.IngestJournal.value}`) "
        "REQUIRE j.journal_key IS UNIQUE",
        f"CREATE INDEX ingest_journal_run IF NOT EXISTS FOR (j:`{Label.IngestJournal.value}`) ON (j.journal_run)",
        "CREATE INDEX node_corpus IF NOT EXISTS FOR (n:`Node`) ON (n.corpus)",
        "CREATE INDEX node_batch IF NOT EXISTS FOR (n:`Node`) ON (n.batch)",
        "CREATE INDEX discourse_local_id IF NOT EXISTS FOR (n:`Discourse`) ON (n.local_id)",
        "CREATE INDEX relation_id IF NOT EXISTS FOR (n:`Relation`) ON (n.id)",
        "CREATE INDEX relation_corpus_id IF NOT EXISTS FOR (n:`Relation`) ON (n.corpus, n.id)",
        "CREATE INDEX relation_origin_id IF NOT EXISTS FOR (n:`Relation`) ON (n.origin, n.id)",
        "CREATE INDEX discourse_relation_sense_id IF NOT EXISTS FOR (n:`DiscourseRelation`) ON (n.sense, n.id)",
        *relation_kind_indexes(),
        "CREATE INDEX relation_origin IF NOT EXISTS FOR (n:`Relation`) ON (n.origin)",
        "CREATE INDEX relation_batch IF NOT EXISTS FOR (n:`Relation`) ON (n.batch)",
        "CREATE INDEX prediction_run_model IF NOT EXISTS FOR (n:`PredictionRun`) ON (n.model)",
        "CREATE INDEX relation_scheme IF NOT EXISTS FOR (n:`Relation`) ON (n.scheme_label)",
        "CREATE INDEX discourse_relation_sense IF NOT EXISTS FOR (n:`DiscourseRelation`) ON (n.sense)",
        fulltext_index(),
    ]
    return stmts


def relation_kind_indexes() -> list[str]:
    """An id index per relation class (``support_id`` ...): a page of one kind of relation is read in
    id order from its own index, not from all relations'."""
    kinds = sorted(label.value for label, ancestors in LABEL_ANCESTORS.items() if Label.Relation in ancestors)
    return [
        f"CREATE INDEX {re.sub(r'(?<!^)(?=[A-Z])', '_', kind).lower()}_id IF NOT EXISTS FOR (n:`{kind}`) ON (n.id)"
        for kind in kinds
    ]


def merge_nodes(labels: Sequence[Label]) -> str:
    """MERGE a batch of nodes by id; ``$rows`` = ``[{id, props}]``, ``$batch`` = ingest run id.

    Nodes are matched on the common ``Node`` label (one unique index) and then given their
    class labels.
    """
    extra = [label for label in labels if label is not Label.Node]
    set_labels = f", n{_labels(extra)}" if extra else ""
    return (
        "UNWIND $rows AS row "
        "MERGE (n:`Node` {id: row.id}) "
        "ON CREATE SET n.batch = $batch "
        f"SET n += row.props{set_labels}"
    )


def merge_edges(rel_type: RelType) -> str:
    """MERGE a batch of relationships; ``$rows`` = ``[{source, target, id?, props}]``.

    A relationship is one per type and ends: an AIF edge whose id changed in the source file is the
    same edge with its new id (``props`` carry it), never a second edge between the same nodes.
    """
    return (
        "UNWIND $rows AS row "
        "MATCH (a:`Node` {id: row.source}) "
        "MATCH (b:`Node` {id: row.target}) "
        f"MERGE (a)-[r:{_rel(rel_type)}]->(b) "
        "ON CREATE SET r.batch = $batch "
        "SET r += row.props "
        "RETURN count(r) AS written"
    )


def create_node_single(labels: Sequence[Label]) -> str:
    """One-node MERGE, used by the per-record baseline of the ingest benchmark."""
    extra = [label for label in labels if label is not Label.Node]
    set_labels = f", n{_labels(extra)}" if extra else ""
    return f"MERGE (n:`Node` {{id: $id}}) ON CREATE SET n.batch = $batch SET n += $props{set_labels}"


def create_edge_single(rel_type: RelType) -> str:
    """One-relationship MERGE (one per type and ends, as :func:`merge_edges`), used by the per-record
    baseline of the ingest benchmark."""
    return (
        "MATCH (a:`Node` {id: $source}) MATCH (b:`Node` {id: $target}) "
        f"MERGE (a)-[r:{_rel(rel_type)}]->(b) ON CREATE SET r.batch = $batch SET r += $props"
    )


# Relationships an ingest computes from its input (speakers, membership, sentences, judgements), as
# opposed to the AIF edges the input states: a re-ingest replaces those of every node it writes.
DERIVED_TYPES: tuple[RelType, ...] = tuple(t for t in RelType if t is not RelType.AIF_EDGE)


def corpus_derived_edges() -> str:
    """The gold derived relationships (:data:`DERIVED_TYPES`) of ``$corpus`` that predate run ``$batch``."""
    types = "|".join(_rel(t) for t in DERIVED_TYPES)
    return (
        f"MATCH (a:`Node`)-[r:{types}]->(b:`Node`) "
        "WHERE a.corpus = $corpus AND r.corpus = $corpus AND coalesce(r.batch, '') <> $batch "
        "AND coalesce(a.origin, '') <> 'predicted' AND coalesce(b.origin, '') <> 'predicted' "
        "RETURN a.id AS source, type(r) AS type, b.id AS target"
    )


def delete_edges() -> str:
    """Delete the relationships ``$rows`` = ``[{source, type, target}]`` (one per type and ends)."""
    return (
        "UNWIND $rows AS row "
        "MATCH (:`Node` {id: row.source})-[r]->(:`Node` {id: row.target}) WHERE type(r) = row.type "
        "DELETE r"
    )


def delete_orphan_speakers() -> str:
    """Delete the Speakers of ``$corpus`` that no locution is spoken by, but those of ``$keep`` (ids)."""
    return (
        f"MATCH (s{_labels([Label.Speaker])}) WHERE s.corpus = $corpus AND NOT s.id IN $keep "
        f"AND NOT EXISTS {{ MATCH ()-[:{_rel(RelType.SPOKEN_BY)}]->(s) }} "
        "DETACH DELETE s"
    )


def corpus_status() -> str:
    """Status and batch of a corpus marker node."""
    return "MATCH (c:`Corpus` {id: $corpus}) RETURN c.status AS status, c.ingest_run AS batch"


def mark_corpus(status: str) -> str:
    """Create or update the corpus marker with a status and the current batch.

    Marking it ``complete`` also drops the ingest claim (owner and lease) and records
    ``$digest``, the input digest of what was loaded (null: unknown, the property is removed).
    """
    if status not in ("loading", "complete"):
        raise ValueError(status)  # an invariant: the stores pass one of these literals, never input
    done = f", c.ingest_owner = null, c.ingest_lease = null, c.{Prop.INPUT_DIGEST} = $digest"
    release = done if status == "complete" else ""
    return (
        "MERGE (c:`Node` {id: $corpus}) "
        "ON CREATE SET c:`Corpus`, c.corpus = $corpus, c.name = $corpus, c.batch = $batch "
        f"SET c.status = '{status}', c.ingest_run = $batch, c.counts = $counts{release}"
    )


def claim_corpus() -> str:
    """Claim a corpus for one ingest run, atomically (the marker node is locked by the MERGE).

    The claim is granted unless another run holds it: status ``loading`` under another run id
    whose lease (``$now``-independent: server ``timestamp()``) has not expired, and which is not
    ``$stale`` (a run the caller knows to be dead). Granted, the marker says ``loading`` under
    ``$batch`` with ``$owner`` and a lease of ``$ttl`` ms; a marker created by the run taken over
    becomes this run's, so that it goes with this run's batch if this run fails too.

    Returns one row: ``held`` (not granted), and the marker's previous ``status``, ``run``,
    ``owner``, ``counts`` and all its properties (``before``, what an undo puts back).
    """
    return (
        "MERGE (c:`Node` {id: $corpus}) "
        "ON CREATE SET c:`Corpus`, c.corpus = $corpus, c.name = $corpus, c.batch = $batch "
        "WITH c, c.status AS status, c.ingest_run AS run, c.ingest_owner AS owner, c.counts AS counts, "
        "c.ingest_lease AS lease, properties(c) AS before "
        "WITH c, status, run, owner, counts, before, "
        "coalesce(status = 'loading' AND run <> $batch AND run <> $stale AND lease > timestamp(), false) AS held "
        "CALL (c, held, run, status) { WITH c, held, run, status WHERE NOT held "
        "SET c.status = 'loading', c.ingest_run = $batch, c.ingest_owner = $owner, "
        "c.ingest_lease = timestamp() + $ttl, "
        "c.batch = CASE WHEN status = 'loading' AND c.batch = run THEN $batch ELSE c.batch END } "
        "RETURN held, status, run, owner, counts, before"
    )


def renew_claim() -> str:
    """Extend the lease of ``$batch`` on ``$corpus`` by ``$ttl`` ms; no row when the run lost its claim."""
    return (
        "MATCH (c:`Corpus` {id: $corpus}) WHERE c.ingest_run = $batch "
        "SET c.ingest_lease = timestamp() + $ttl RETURN c.id AS id"
    )


# -- the write lease (one node: the turn every write run takes, held by a bulk load) ----------------

_LEASE = f"(g:`{Label.WriteLease.value}` {{id: 'graph'}})"


def write_turn() -> str:
    """Take a write run's turn through the write lease (``$what``: what it writes, for messages).

    The MERGE locks the lease node until the transaction ends, so a turn and a bulk load's claim
    (:func:`claim_bulk`) are serialised: whichever commits first, the other sees it. Returns the
    bulk load holding the lease, if any: ``owner``, ``run``, ``current`` (its lease not expired).
    """
    return (
        f"MERGE {_LEASE} "
        "SET g.write_turns = coalesce(g.write_turns, 0) + 1, g.last_write = $what "
        "RETURN g.ingest_owner AS owner, g.ingest_run AS run, coalesce(g.ingest_lease > timestamp(), false) AS current"
    )


def claim_bulk() -> str:
    """Claim the write lease for bulk load ``$run`` (owner ``$owner``, ``$ttl`` ms), unless a live one holds it.

    A holder that is ``$stale`` (the caller knows its process is gone) is replaced. Returns ``held``
    (not granted) with the holder's ``owner`` and ``run``, and ``nodes``: whether the graph has
    any node, read after the lease node is locked (a write that took its turn first is seen).
    """
    return (
        f"MERGE {_LEASE} "
        "WITH g, g.ingest_owner AS owner, g.ingest_run AS run, "
        "coalesce(g.ingest_owner IS NOT NULL AND g.ingest_run <> $run AND g.ingest_run <> $stale "
        "AND g.ingest_lease > timestamp(), false) AS held "
        "SET g.write_turns = coalesce(g.write_turns, 0) + 1, g.last_write = $what "
        "WITH g, owner, run, held "
        "CALL (g, held) { WITH g, held WHERE NOT held "
        "SET g.ingest_owner = $owner, g.ingest_run = $run, g.ingest_lease = timestamp() + $ttl } "
        "RETURN held, owner, run"
    )


def graph_has_nodes() -> str:
    """Whether the graph holds any argweb node (a bulk load's emptiness check, after its lease is locked)."""
    return "RETURN EXISTS { MATCH (n:`Node`) } AS found"


def release_bulk() -> str:
    """Drop the write lease of bulk load ``$run`` (a failed load; a successful one replaced the store)."""
    return (
        f"MATCH {_LEASE} WHERE g.ingest_run = $run "
        "REMOVE g.ingest_owner, g.ingest_run, g.ingest_lease RETURN g.id AS id"
    )


def write_state() -> str:
    """How many write runs took their turn, and what the latest wrote (no row before the first)."""
    return f"MATCH {_LEASE} RETURN g.write_turns AS turns, g.last_write AS what"


# -- the ingest journal: what a run changed, to undo it exactly -------------------------------------

_JOURNAL = Label.IngestJournal.value
# The journal's own bookkeeping keys, as the ontology names them.
JOURNAL_KEYS = tuple(p.value for p in Prop if p.name.startswith("JOURNAL_"))


def _without(var: str, keys: Sequence[str]) -> str:
    """A map projection of ``var``'s properties minus ``keys`` (they map to null, which SET and exports skip)."""
    nulls = ", ".join(f"{key}: null" for key in keys)
    return f"{var} {{.*, {nulls}}}"


def _kept(var: str) -> str:
    """The properties a journal entry ``var`` keeps, without its own bookkeeping keys."""
    return _without(var, JOURNAL_KEYS)


def journal_run() -> str:
    """Record ingest run ``$batch`` of ``$corpus`` (the entry crash recovery finds dead runs by)."""
    return (
        f"MERGE (j:`{_JOURNAL}` {{journal_key: $batch + '|run'}}) "
        "SET j.journal_run = $batch, j.journal_corpus = $corpus, j.journal_kind = 'run'"
    )


def journal_marker() -> str:
    """Keep ``$props``, the corpus marker ``$corpus`` as it was before run ``$batch`` claimed it."""
    return (
        f"CREATE (j:`{_JOURNAL}`) SET j = $props, j.journal_key = $batch + '|marker', j.journal_run = $batch, "
        "j.journal_corpus = $corpus, j.journal_kind = 'marker', j.journal_of = $corpus"
    )


def move_marker_journal() -> str:
    """Give run ``$batch`` the marker entry of the run it took over (``$stale``): the state to undo to
    is the one before the first run of the chain, not the half-loaded one it found."""
    return (
        f"MATCH (j:`{_JOURNAL}` {{journal_key: $stale + '|marker'}}) "
        "SET j.journal_key = $batch + '|marker', j.journal_run = $batch"
    )


def journal_nodes() -> str:
    """Keep the state of the nodes of ``$rows`` that exist and predate run ``$batch`` (once per node).

    Runs in the transaction of the batch that changes them, before it; the corpus marker is kept
    apart (:func:`journal_marker`).
    """
    return (
        "UNWIND $rows AS row "
        "MATCH (n:`Node` {id: row.id}) WHERE n.batch <> $batch AND NOT n:`Corpus` "
        f"MERGE (j:`{_JOURNAL}` {{journal_key: $batch + '|n|' + row.id}}) "
        "ON CREATE SET j += properties(n), j.journal_run = $batch, j.journal_corpus = $corpus, "
        "j.journal_kind = 'node', j.journal_of = row.id, j.journal_labels = labels(n)"
    )


def journal_relationships(rel_type: RelType) -> str:
    """Keep the state of the ``rel_type`` relationships between the ends of ``$rows`` that predate run ``$batch``."""
    rel, name = _rel(rel_type), RelType(rel_type).value
    return (
        "UNWIND $rows AS row "
        f"MATCH (a:`Node` {{id: row.source}})-[r:{rel}]->(b:`Node` {{id: row.target}}) WHERE r.batch <> $batch "
        f"MERGE (j:`{_JOURNAL}` {{journal_key: $batch + '|r|{name}|' + row.source + '|' + row.target}}) "
        "ON CREATE SET j += properties(r), j.journal_run = $batch, j.journal_corpus = $corpus, "
        f"j.journal_kind = 'relationship', j.journal_type = '{name}', "
        "j.journal_source = row.source, j.journal_target = row.target"
    )


def restore_nodes() -> str:
    """Put back the nodes run ``$run`` changed: their properties and labels as its journal kept them.

    In batches of their own (auto-commit); restoring is idempotent, so an interrupted restore is
    simply run again.
    """
    return _in_transactions(
        f"MATCH (j:`{_JOURNAL}`) WHERE j.journal_run = $run AND j.journal_kind = 'node'",
        "j",
        "MATCH (n:`Node` {id: j.journal_of}) "
        "WITH j, n, [label IN labels(n) WHERE NOT label IN j.journal_labels] AS added "
        f"SET n = {_kept('j')} "
        "REMOVE n:$(added)",
    )


def restore_relationships() -> str:
    """Put back the properties of the relationships run ``$run`` changed (batched like :func:`restore_nodes`)."""
    return _in_transactions(
        f"MATCH (j:`{_JOURNAL}`) WHERE j.journal_run = $run AND j.journal_kind = 'relationship'",
        "j",
        "MATCH (:`Node` {id: j.journal_source})-[r]->(:`Node` {id: j.journal_target}) WHERE type(r) = j.journal_type "
        f"SET r = {_kept('j')}",
    )


def restore_marker() -> str:
    """Put the corpus marker back as it was before run ``$run`` (and the runs it took over) claimed it."""
    return (
        f"MATCH (j:`{_JOURNAL}` {{journal_key: $run + '|marker'}}) "
        "MATCH (c:`Node` {id: j.journal_of}) "
        f"SET c = {_kept('j')} "
        "RETURN count(c) AS restored"
    )


def dead_runs() -> str:
    """Ingest runs of ``$corpus`` other than ``$batch`` that left a journal (interrupted ones)."""
    return (
        f"MATCH (j:`{_JOURNAL}`) WHERE j.journal_kind = 'run' AND j.journal_corpus = $corpus "
        "AND j.journal_run <> $batch RETURN j.journal_run AS run ORDER BY run"
    )


def drop_journal() -> str:
    """Delete the journal entries of run ``$run``."""
    return _in_transactions(f"MATCH (j:`{_JOURNAL}`) WHERE j.journal_run = $run", "j", "DELETE j")


def close_journal() -> str:
    """End run ``$run``'s journal as its corpus is marked complete: its run and marker entries go in the
    same transaction, so recovery never undoes a complete run; its other entries are left for
    :func:`drop_journal` (entries without a run entry are never restored)."""
    return f"MATCH (j:`{_JOURNAL}`) WHERE j.journal_key IN [$run + '|run', $run + '|marker'] DELETE j"


def orphan_journal() -> str:
    """Journal entries of ``$corpus`` whose run entry is gone (a complete run killed before it dropped them)."""
    return _in_transactions(
        f"MATCH (j:`{_JOURNAL}`) WHERE j.journal_corpus = $corpus AND j.journal_kind <> 'run' "
        f"AND NOT EXISTS {{ MATCH (r:`{_JOURNAL}` {{journal_key: j.journal_run + '|run'}}) }}",
        "j",
        "DELETE j",
    )


def corpus_label_counts() -> str:
    """Nodes of ``$corpus`` per label set (callers reduce a set to its most specific label)."""
    return "MATCH (n:`Node`) WHERE n.corpus = $corpus RETURN labels(n) AS labels, count(*) AS n"


def corpus_rel_counts() -> str:
    """Relationships of ``$corpus`` per type (both ends are nodes of the corpus)."""
    return (
        "MATCH (n:`Node`)-[r]->() WHERE n.corpus = $corpus AND r.corpus = $corpus RETURN type(r) AS type, count(*) AS n"
    )


def corpus_exists() -> str:
    """Whether ``$corpus`` has a marker or any node."""
    return (
        "OPTIONAL MATCH (c:`Corpus` {id: $corpus}) "
        "RETURN c IS NOT NULL OR EXISTS { MATCH (n:`Node`) WHERE n.corpus = $corpus } AS found"
    )


def incomplete_corpora() -> str:
    """Corpus markers (of ``$corpus``, or all when null) whose status is not ``complete``."""
    return (
        "MATCH (c:`Corpus`) WHERE ($corpus IS NULL OR c.id = $corpus) AND c.status <> 'complete' "
        "RETURN c.id AS id, c.status AS status, c.ingest_owner AS owner, c.ingest_run AS run ORDER BY id"
    )


def _in_transactions(match: str, var: str, action: str) -> str:
    # Deletes run in batches of their own (auto-commit), so no transaction holds a whole corpus.
    return f"{match} CALL ({var}) {{ {action} }} IN TRANSACTIONS OF 10000 ROWS"


def delete_batch_relationships() -> str:
    """Delete relationships created by one ingest run (between nodes that stay)."""
    return _in_transactions("MATCH ()-[r]->() WHERE r.batch = $batch", "r", "DELETE r")


def delete_batch_nodes() -> str:
    """Delete nodes (and their relationships) created by one ingest run."""
    return _in_transactions("MATCH (n:`Node`) WHERE n.batch = $batch", "n", "DETACH DELETE n")


def delete_all() -> str:
    """Delete every node and relationship (used to reset a test or scratch database)."""
    return _in_transactions("MATCH (n)", "n", "DETACH DELETE n")


def delete_corpus() -> str:
    """Delete every node of a corpus (and the relationships touching them)."""
    return _in_transactions("MATCH (n:`Node`) WHERE n.corpus = $corpus", "n", "DETACH DELETE n")


def corpus_prediction_batches() -> str:
    """Write batches (prediction runs) of the predicted relations with an end in ``$corpus``."""
    return (
        f"MATCH (:`{Label.Node.value}` {{corpus: $corpus}})-[:{_rel(RelType.AIF_EDGE)}]-(r:`{Label.Relation.value}`) "
        "WHERE r.origin = 'predicted' RETURN DISTINCT r.batch AS batch"
    )


def delete_corpus_predictions() -> str:
    """Delete the predicted relations with an end in ``$corpus`` (also those filed under another corpus)."""
    return (
        f"MATCH (:`{Label.Node.value}` {{corpus: $corpus}})-[:{_rel(RelType.AIF_EDGE)}]-(r:`{Label.Relation.value}`) "
        "WHERE r.origin = 'predicted' WITH DISTINCT r CALL (r) { DETACH DELETE r } IN TRANSACTIONS OF 10000 ROWS"
    )


def _gold_where(gold_only: bool, *variables: str) -> str:
    """``WHERE`` clause keeping gold content only: model output (predicted relations and their run
    markers) is not corpus content, so the gold counts stay the same whatever predictions exist."""
    if not gold_only:
        return ""
    gold = f"(NOT {{v}}:`{Label.PredictionRun.value}` AND coalesce({{v}}.`{Prop.ORIGIN.value}`, 'gold') <> 'predicted')"
    return "WHERE " + " AND ".join(gold.format(v=v) for v in variables) + " "


def label_counts(gold_only: bool = False) -> str:
    """Node count per label per corpus (``gold_only``: predictions and their runs left out)."""
    return (
        f"MATCH (n:`Node`) {_gold_where(gold_only, 'n')}UNWIND labels(n) AS label "
        "RETURN n.corpus AS corpus, label, count(*) AS n ORDER BY corpus, label"
    )


def rel_type_counts(gold_only: bool = False) -> str:
    """Relationship count per type per corpus (``gold_only``: none touching a prediction)."""
    return (
        f"MATCH (a)-[r]->(b) {_gold_where(gold_only, 'a', 'b')}"
        "RETURN r.corpus AS corpus, type(r) AS type, count(*) AS n ORDER BY corpus, type"
    )


def relation_kind_counts(gold_only: bool = False) -> str:
    """Reified relations per corpus by most specific class, scheme label and sense."""
    return (
        f"MATCH (r:`Relation`) {_gold_where(gold_only, 'r')}"
        "RETURN r.corpus AS corpus, labels(r) AS kinds, "
        "coalesce(r.sense, r.scheme_label) AS scheme, count(*) AS n ORDER BY corpus, scheme"
    )


def corpora() -> str:
    """Corpus markers."""
    return (
        "MATCH (c:`Corpus`) RETURN c.id AS id, c.name AS name, c.status AS status, "
        "c.source AS source, c.counts AS counts ORDER BY id"
    )


def corpus_digests() -> str:
    """Input digest of every completely loaded corpus (``id``, ``digest``; null when unknown)."""
    return (
        f"MATCH (c:`Corpus`) WHERE c.status = 'complete' RETURN c.id AS id, c.{Prop.INPUT_DIGEST} AS digest ORDER BY id"
    )


def forget_input_digest() -> str:
    """Remove the input digest of corpus ``$corpus`` (before its content is deleted)."""
    return f"MATCH (c:`Corpus` {{id: $corpus}}) REMOVE c.{Prop.INPUT_DIGEST}"


def set_input_digests() -> str:
    """Record the input digest of completely loaded corpora (``$rows``: ``corpus``, ``digest``)."""
    return (
        f"UNWIND $rows AS row MATCH (c:`Corpus` {{id: row.corpus}}) WHERE c.status = 'complete' "
        f"SET c.{Prop.INPUT_DIGEST} = row.digest"
    )


def set_empty_list(key: str) -> str:
    """Set property ``key`` to an empty list on the nodes ``$ids`` (after a bulk import, which cannot).

    ``key`` is a record field name (an ontology property key), never user input; it is checked to be
    a plain identifier all the same.
    """
    if not key.isidentifier():
        # An invariant (record field names only), kept because the key is spliced into the query.
        raise ValueError(f"not a property key: {key!r}")
    return f"UNWIND $ids AS id MATCH (n:`Node` {{id: id}}) SET n.`{key}` = []"


def any_node() -> str:
    """One argweb node, if the graph has any (whether the main job may choose a bulk first load; the
    store's bookkeeping, a write lease left by refused writes, does not count)."""
    return "MATCH (n:`Node`) RETURN elementId(n) AS id LIMIT 1"


def neighbours(depth: int) -> str:
    """Distinct ids of the nodes within ``depth`` (1 or 2) relationships of node ``$id``, any direction."""
    if depth not in (1, 2):
        raise ApiError(f"neighbour depth must be 1 or 2, not {depth}")
    return f"MATCH (n:`Node` {{id: $id}})-[*1..{depth}]-(m:`Node`) WHERE m <> n RETURN DISTINCT m.id AS id"


def relations_of_node(kinds: Sequence[Label]) -> str:
    """Reified relations of the given classes with ``origin = $origin`` that node ``$id`` takes part
    in, with the node at the other end (what supports or attacks this proposition?)."""
    edge = _rel(RelType.AIF_EDGE)
    kind = " OR ".join(f"r:`{Label(k).value}`" for k in kinds)
    return (
        f"MATCH (n:`Node` {{id: $id}})-[:{edge}]-(r:`{Label.Relation.value}`)-[:{edge}]-(o:`Node`) "
        f"WHERE o <> n AND r.origin = $origin AND ({kind}) "
        "RETURN r.id AS relation, labels(r) AS kinds, r.scheme_label AS scheme, o.id AS other"
    )


def sample_node_ids() -> str:
    """``$n`` node ids drawn uniformly at random (one scan of the node index)."""
    return "MATCH (n:`Node`) WITH n.id AS id, rand() AS r ORDER BY r LIMIT $n RETURN id"


BOOKKEEPING: tuple[Label, ...] = (Label.WriteLease, Label.IngestJournal)
"""Labels of the store's own bookkeeping (the write lease, ingest journals): not graph content."""


def dump_nodes(ordered: bool = True) -> str:
    """Every node of the graph with its labels and properties (whole-graph comparisons), by id when
    ``ordered``; the store's bookkeeping (:data:`BOOKKEEPING`) is left out: the write lease counts
    every write run, even one that was undone."""
    order = " ORDER BY id" if ordered else ""
    where = " AND ".join(f"NOT n:`{label.value}`" for label in BOOKKEEPING)
    return f"MATCH (n) WHERE {where} RETURN n.id AS id, labels(n) AS labels, properties(n) AS props{order}"


def dump_relationships(ordered: bool = True) -> str:
    """Every relationship with its type, end ids and properties, in a total order when ``ordered``."""
    order = " ORDER BY source, type, target, r.id" if ordered else ""
    return "MATCH (a)-[r]->(b) RETURN a.id AS source, type(r) AS type, b.id AS target, properties(r) AS props" + order


def ping() -> str:
    """Cheapest possible round trip."""
    return "RETURN 1 AS ok"


# -- schema of the graph itself: what an editor completes ----------------------------------------


def schema_labels() -> str:
    """Every node label in the graph: rows ``name``."""
    return "CALL db.labels() YIELD label RETURN label AS name ORDER BY name"


def schema_relationship_types() -> str:
    """Every relationship type in the graph: rows ``name``."""
    return "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS name ORDER BY name"


def schema_property_keys() -> str:
    """Every property key in the graph but the ingest journal's (``$hidden``): rows ``name``."""
    return (
        "CALL db.propertyKeys() YIELD propertyKey WHERE NOT propertyKey IN $hidden "
        "RETURN propertyKey AS name ORDER BY name"
    )


# -- RDF export: id-ordered pagination, so that memory stays flat in graph size ---------------------


def _corpus_filter(var: str, corpus: bool) -> str:
    return f" AND {var}.corpus = $corpus" if corpus else ""


UNEXPORTED: tuple[Prop, ...] = (Prop.EMBEDDING, Prop.EMBEDDING_MODEL, Prop.EMBEDDING_KEY)
"""Properties of the semantic layer: derived from the text, kept out of every export."""


def unexported_props(var: str) -> str:
    """The properties of node ``var`` minus :data:`UNEXPORTED` (those keys map to null, which exports skip).

    Leaving them out in the query also spares the transfer of a 384-float vector per node.
    """
    return _without(var, [p.value for p in UNEXPORTED])


def export_node_page(corpus: bool = False) -> str:
    """One page of nodes in id order after ``$after`` (``$limit`` rows).

    Each row has ``id``, ``labels``, ``props`` and, for reified relations, ``premises`` (sources
    of incoming AIF edges) and ``conclusions`` (targets of outgoing AIF edges); Cypher cannot sort
    a list without a plugin, so callers sort them. With ``corpus`` the page is restricted to
    ``$corpus``. The range predicate on ``id`` is answered from the unique index (forced with a
    hint: a corpus filter must not make the planner sort the whole corpus per page), so every page
    costs the same however far the cursor is.
    """
    edge = _rel(RelType.AIF_EDGE)
    relation = Label.Relation.value
    return (
        "MATCH (n:`Node`) USING INDEX n:`Node`(id) "
        f"WHERE n.id > $after{_corpus_filter('n', corpus)} "
        "WITH n ORDER BY n.id LIMIT $limit "
        f"RETURN n.id AS id, labels(n) AS labels, {unexported_props('n')} AS props, "
        f"CASE WHEN n:`{relation}` THEN [(s:`Node`)-[:{edge}]->(n) | s.id] ELSE [] END AS premises, "
        f"CASE WHEN n:`{relation}` THEN [(n)-[:{edge}]->(t:`Node`) | t.id] ELSE [] END AS conclusions "
        "ORDER BY id"
    )


def export_relationship_page(corpus: bool = False) -> str:
    """Outgoing relationships of one page of source nodes in id order after ``$after``.

    ``$limit`` bounds the number of source nodes, not of rows; a source without outgoing
    relationships yields one row with ``type`` null so the caller can still advance its cursor.
    Rows are ``source``, ``type``, ``target``, ``corpus`` (the relationship's).
    """
    return (
        "MATCH (a:`Node`) USING INDEX a:`Node`(id) "
        f"WHERE a.id > $after{_corpus_filter('a', corpus)} "
        "WITH a ORDER BY a.id LIMIT $limit "
        "OPTIONAL MATCH (a)-[r]->(b:`Node`) "
        "RETURN a.id AS source, type(r) AS type, b.id AS target, coalesce(r.corpus, a.corpus) AS corpus "
        "ORDER BY source, type, target"
    )


def export_counts(corpus: bool = False) -> str:
    """Number of nodes and of relationships an export will read (for progress and reports)."""
    where = " WHERE n.corpus = $corpus" if corpus else ""
    return f"MATCH (n:`Node`){where} RETURN count(n) AS nodes, sum(COUNT {{ (n)-->(:`Node`) }}) AS relationships"


# -- reads for AIF export and audio features (graphstore.aif_export, graphstore.units) ------------

_AIF_UNIT_LABELS = (Label.Locution, Label.Proposition, Label.Relation)


def _unit_filter(var: str) -> str:
    return " OR ".join(f"{var}:`{label.value}`" for label in _AIF_UNIT_LABELS)


def discourse_refs() -> str:
    """Discourses whose ``id`` or ``local_id`` equals ``$ref`` (optionally within ``$corpus``)."""
    return (
        f"MATCH (d:`{Label.Discourse.value}`) WHERE (d.id = $ref OR d.local_id = $ref) "
        "AND ($corpus IS NULL OR d.corpus = $corpus) "
        "RETURN d.id AS id, d.corpus AS corpus, d.local_id AS local_id ORDER BY id"
    )


def corpus_discourses() -> str:
    """Every discourse of ``$corpus``, ordered by id."""
    return (
        f"MATCH (d:`{Label.Discourse.value}` {{corpus: $corpus}}) "
        "RETURN d.id AS id, d.corpus AS corpus, d.local_id AS local_id ORDER BY id"
    )


def discourse_units() -> str:
    """Locutions, propositions and relations PART_OF the discourses ``$ids``, with their speaker."""
    return (
        "UNWIND $ids AS did "
        f"MATCH (n:`{Label.Node.value}`)-[:{_rel(RelType.PART_OF)}]->(:`{Label.Discourse.value}` {{id: did}}) "
        f"WHERE {_unit_filter('n')} "
        f"OPTIONAL MATCH (n)-[:{_rel(RelType.SPOKEN_BY)}]->(s:`{Label.Speaker.value}`) "
        "WITH did, n, collect(s)[0] AS s "
        "RETURN did AS discourse, n.id AS id, labels(n) AS labels, properties(n) AS props, "
        "s.id AS speaker_id, s.name AS speaker_name"
    )


def discourse_sentences() -> str:
    """Sentences PART_OF the documents ``$ids``, in the row shape of :func:`discourse_units`
    (what a relation model reads the words between two components from)."""
    return (
        "UNWIND $ids AS did "
        f"MATCH (n:`{Label.Sentence.value}`)-[:{_rel(RelType.PART_OF)}]->(:`{Label.Discourse.value}` {{id: did}}) "
        "RETURN did AS discourse, n.id AS id, labels(n) AS labels, properties(n) AS props, "
        "null AS speaker_id, null AS speaker_name"
    )


def units_by_id() -> str:
    """Nodes ``$ids`` (locutions, propositions, relations) with their speaker, same shape as
    :func:`discourse_units` (``discourse`` is null)."""
    return (
        f"UNWIND $ids AS nid MATCH (n:`{Label.Node.value}` {{id: nid}}) WHERE {_unit_filter('n')} "
        f"OPTIONAL MATCH (n)-[:{_rel(RelType.SPOKEN_BY)}]->(s:`{Label.Speaker.value}`) "
        "WITH n, collect(s)[0] AS s "
        "RETURN null AS discourse, n.id AS id, labels(n) AS labels, properties(n) AS props, "
        "s.id AS speaker_id, s.name AS speaker_name"
    )


def aif_edges_touching() -> str:
    """AIF edges with at least one end among the nodes ``$ids``."""
    return (
        f"UNWIND $ids AS nid MATCH (a:`{Label.Node.value}` {{id: nid}})"
        f"-[e:{_rel(RelType.AIF_EDGE)}]-(:`{Label.Node.value}`) "
        "RETURN DISTINCT elementId(e) AS key, e.id AS id, startNode(e).id AS source, endNode(e).id AS target"
    )


def unit_sentences() -> str:
    """The sentences each of the units ``$ids`` lies in (``IN_SENTENCE``), in text order: ``id``, ``sentences``."""
    return (
        f"UNWIND $ids AS uid MATCH (u:`{Label.Node.value}` {{id: uid}})"
        f"-[:{_rel(RelType.IN_SENTENCE)}]->(s:`{Label.Sentence.value}`) "
        "WITH uid, s ORDER BY s.position, s.id "
        "RETURN uid AS id, collect(s.id) AS sentences"
    )


def timed_locutions() -> str:
    """Locutions of ``$corpus`` with start and end times, in id order, as unit rows.

    Rows are ``id``, ``labels``, ``props``, ``speaker_id`` and ``speaker_name`` (as
    :func:`discourse_units`), ``discourse`` (id of the dialogue/document) and ``discourse_part``
    (the recording part recorded on it, for locutions that do not carry their own).
    """
    start, end, part = Prop.START_TIME.value, Prop.END_TIME.value, Prop.PART.value
    return (
        f"MATCH (l:`{Label.Locution.value}` {{corpus: $corpus}}) "
        f"WHERE l.{start} IS NOT NULL AND l.{end} IS NOT NULL "
        f"OPTIONAL MATCH (l)-[:{_rel(RelType.PART_OF)}]->(d:`{Label.Discourse.value}`) "
        f"OPTIONAL MATCH (l)-[:{_rel(RelType.SPOKEN_BY)}]->(s:`{Label.Speaker.value}`) "
        "WITH l, collect(d)[0] AS d, collect(s)[0] AS s "
        "RETURN l.id AS id, labels(l) AS labels, properties(l) AS props, s.id AS speaker_id, "
        f"s.name AS speaker_name, d.id AS discourse, d.{part} AS discourse_part "
        "ORDER BY l.id"
    )


def judgement_rows() -> str:
    """Every judgement of ``$corpus`` with the judged relation (the unit) and the annotator.

    The judgement's properties come back as one map: corpora record different attributes (trust,
    confidence, token indices...), and naming a key no node has makes Neo4j warn.
    """
    return (
        f"MATCH (j:`{Label.Judgement.value}` {{corpus: $corpus}})"
        f"-[:{_rel(RelType.JUDGES)}]->(r:`{Label.Relation.value}`) "
        f"MATCH (j)-[:{_rel(RelType.JUDGED_BY)}]->(a:`{Label.Annotator.value}`) "
        "RETURN j.id AS id, r.id AS relation, a.id AS annotator, properties(j) AS props "
        "ORDER BY relation, annotator, id"
    )


# -- vocabulary actually in use (checked against the ontology by tests/test_ontology.py) -----------


def labels_in_use() -> str:
    """Every node label carried by at least one node."""
    return "MATCH (n) UNWIND labels(n) AS label RETURN DISTINCT label ORDER BY label"


def rel_types_in_use() -> str:
    """Every relationship type of at least one relationship."""
    return "MATCH ()-[r]->() RETURN DISTINCT type(r) AS type ORDER BY type"


def node_keys_in_use() -> str:
    """Every property key set on at least one node."""
    return "MATCH (n) UNWIND keys(n) AS key RETURN DISTINCT key ORDER BY key"


def rel_keys_in_use() -> str:
    """Every property key set on at least one relationship."""
    return "MATCH ()-[r]->() UNWIND keys(r) AS key RETURN DISTINCT key ORDER BY key"


def scheme_classes_in_use() -> str:
    """Distinct (corpus, scheme_class, sense) of nodes typed by a corpus-scheme class or sense."""
    return (
        "MATCH (n:`Node`) WHERE n.scheme_class IS NOT NULL OR n.sense IS NOT NULL "
        "RETURN DISTINCT n.corpus AS corpus, n.scheme_class AS scheme_class, n.sense AS sense "
        "ORDER BY corpus, scheme_class, sense"
    )


# -- predicted relations (graphstore.predictions) ----------------------------------------------------


def prediction_run() -> str:
    """The run node ``$id`` (``pred:<run id>``): its properties, or no row."""
    return f"MATCH (p:`{Label.PredictionRun.value}` {{id: $id}}) RETURN properties(p) AS props"


def mark_prediction_run(status: str) -> str:
    """Create or update the run node ``$id`` with ``$props`` and a write status.

    The node is stamped with the run's write batch ``$batch`` on creation, so deleting the batch
    deletes the run with its relations.
    """
    if status not in ("loading", "complete"):
        raise ValueError(status)  # an invariant: the stores pass one of these literals, never input
    return (
        f"MERGE (p:`{Label.Node.value}` {{id: $id}}) "
        f"ON CREATE SET p:`{Label.PredictionRun.value}`, p.batch = $batch "
        f"SET p += $props, p.status = '{status}'"
    )


def resolve_nodes() -> str:
    """For each id of ``$ids``: whether a node has it, its labels, corpus and discourse (via PART_OF)."""
    return (
        f"UNWIND $ids AS nid OPTIONAL MATCH (n:`{Label.Node.value}` {{id: nid}}) "
        f"OPTIONAL MATCH (n)-[:{_rel(RelType.PART_OF)}]->(d:`{Label.Discourse.value}`) "
        "WITH nid, n, min(d.id) AS discourse "
        "RETURN nid AS id, n IS NOT NULL AS found, coalesce(labels(n), []) AS labels, n.corpus AS corpus, discourse"
    )


def merge_predicted_relations(labels: Sequence[Label]) -> str:
    """MERGE a batch of predicted relation nodes with their two AIF edges, in one statement.

    ``$rows`` = ``[{id, source, target, props, discourse}]``, ``$batch`` = the run's write batch.
    Node and edges are written together, so a relation never exists without its ends; a row
    whose end is gone matches nothing, and ``written`` tells the caller.
    """
    extra = [label for label in labels if label is not Label.Node]
    edge = _rel(RelType.AIF_EDGE)
    return (
        "UNWIND $rows AS row "
        f"MATCH (s:`{Label.Node.value}` {{id: row.source}}) "
        f"MATCH (t:`{Label.Node.value}` {{id: row.target}}) "
        f"MERGE (r:`{Label.Node.value}` {{id: row.id}}) "
        "ON CREATE SET r.batch = $batch "
        f"SET r += row.props, r{_labels(extra)} "
        f"MERGE (s)-[a:{edge} {{id: row.id + '<0'}}]->(r) "
        "ON CREATE SET a.batch = $batch SET a.corpus = row.props.corpus "
        f"MERGE (r)-[b:{edge} {{id: row.id + '>0'}}]->(t) "
        "ON CREATE SET b.batch = $batch SET b.corpus = row.props.corpus "
        "WITH r, row "
        # Looked up through the unique Node id index (Discourse has none of its own).
        f"OPTIONAL MATCH (d:`{Label.Node.value}` {{id: row.discourse}}) WHERE d:`{Label.Discourse.value}` "
        f"FOREACH (_ IN CASE WHEN d IS NULL THEN [] ELSE [1] END | "
        f"MERGE (r)-[p:{_rel(RelType.PART_OF)}]->(d) ON CREATE SET p.batch = $batch SET p.corpus = row.props.corpus) "
        "RETURN count(r) AS written"
    )


def prediction_runs() -> str:
    """Run nodes (optionally of ``$model`` / ``$version``) with how many relations each still has."""
    return (
        f"MATCH (p:`{Label.PredictionRun.value}`) "
        "WHERE ($model IS NULL OR p.model = $model) AND ($version IS NULL OR p.model_version = $version) "
        f"RETURN properties(p) AS props, COUNT {{ MATCH (r:`{Label.Relation.value}`) WHERE r.batch = p.batch }} "
        "AS relations ORDER BY p.created_at, p.id"
    )


def count_predicted_relations() -> str:
    """Number of predicted relations of ``$model`` (and ``$version``, ``$run`` unless null)."""
    return (
        f"MATCH (r:`{Label.Relation.value}`) WHERE r.origin = 'predicted' AND r.model = $model "
        "AND ($version IS NULL OR r.model_version = $version) AND ($run IS NULL OR r.run_id = $run) "
        "RETURN count(r) AS n"
    )


def delete_predicted_relations() -> str:
    """Delete the predicted relations of ``$model`` (and ``$version``, ``$run`` unless null), with their edges."""
    return (
        f"MATCH (r:`{Label.Relation.value}`) WHERE r.origin = 'predicted' AND r.model = $model "
        "AND ($version IS NULL OR r.model_version = $version) AND ($run IS NULL OR r.run_id = $run) "
        "CALL (r) { DETACH DELETE r } IN TRANSACTIONS OF 10000 ROWS"
    )


def delete_prediction_runs() -> str:
    """Delete the run nodes of ``$model`` (and ``$version``, ``$run`` unless null)."""
    return (
        f"MATCH (p:`{Label.PredictionRun.value}`) WHERE p.model = $model "
        "AND ($version IS NULL OR p.model_version = $version) AND ($run IS NULL OR p.run_id = $run) DETACH DELETE p"
    )


def delete_emptied_prediction_runs() -> str:
    """Delete the run nodes of the batches ``$batches`` that have no relation left."""
    return (
        f"UNWIND $batches AS b MATCH (p:`{Label.PredictionRun.value}`) WHERE p.batch = b "
        f"AND NOT EXISTS {{ MATCH (r:`{Label.Relation.value}`) WHERE r.batch = b }} DETACH DELETE p"
    )


def relation_origin_counts() -> str:
    """Reified relations per corpus, most specific class, discourse sense, and origin (gold/predicted).

    Argument relations are counted by class alone: gold ones carry their corpus's scheme names
    (``Default Inference``), predicted ones the AIF node type (``RA``), and a side-by-side table
    needs keys both share. Predicted ones are counted per prediction run (``run``; null for gold).
    """
    return (
        "MATCH (r:`Relation`) "
        "RETURN r.corpus AS corpus, labels(r) AS kinds, r.sense AS sense, "
        "coalesce(r.origin, 'gold') AS origin, r.run_id AS run, count(*) AS n ORDER BY corpus, sense"
    )


# -- predicted against gold (graphstore.comparisons) ----------------------------------------------


def comparison_map_relations() -> str:
    """Gold and predicted relations of the discourse ``$id`` (PART_OF it or touching one of its units).

    Returns ``{id, labels, sense, origin, run, sources, targets}``; predicted relations need not
    be PART_OF a discourse, so they are found through their ends too.
    """
    node_, rel = f"`{Label.Node.value}`", f"`{Label.Relation.value}`"
    part_of, edge = _rel(RelType.PART_OF), _rel(RelType.AIF_EDGE)
    unit = f"(u:`{Label.Locution.value}` OR u:`{Label.Proposition.value}`)"
    return (
        f"MATCH (d:`{Label.Discourse.value}` {{id: $id}}) "
        "CALL (d) { "
        f"MATCH (r:{rel})-[:{part_of}]->(d) RETURN r "
        "UNION "
        f"MATCH (u)-[:{part_of}]->(d) WHERE {unit} MATCH (u)-[:{edge}]-(r:{rel}) RETURN r "
        "} "
        "WITH DISTINCT r "
        "RETURN r.id AS id, labels(r) AS labels, r.sense AS sense, coalesce(r.origin, 'gold') AS origin, "
        f"r.run_id AS run, [(s:{node_})-[:{edge}]->(r) | s.id] AS sources, "
        f"[(r)-[:{edge}]->(t:{node_}) | t.id] AS targets"
    )


def comparison_runs() -> str:
    """The run nodes of the run ids ``$runs``: ``{props}`` each."""
    return (
        f"UNWIND $runs AS run MATCH (p:`{Label.PredictionRun.value}` {{id: 'pred:' + run}}) "
        "RETURN properties(p) AS props"
    )


def comparison_corpus_runs() -> str:
    """The prediction runs with relations filed under ``$corpus``, with how many each has there."""
    return (
        f"MATCH (r:`{Label.Relation.value}`) WHERE r.corpus = $corpus AND r.origin = 'predicted' "
        "RETURN r.run_id AS run, count(*) AS n ORDER BY run"
    )


def comparison_corpus_relations() -> str:
    """Relations of ``$corpus`` of a class in ``$classes``, gold or of the run ``$run``.

    Returns ``{id, labels, sense, origin, sources, targets, discourses}``: ``discourses`` are those
    the relation is PART_OF and those of its ends (a map's comparison takes both, see
    :func:`comparison_map_relations`).
    """
    node_, rel = f"`{Label.Node.value}`", f"`{Label.Relation.value}`"
    part_of, edge = _rel(RelType.PART_OF), _rel(RelType.AIF_EDGE)
    disc = f"`{Label.Discourse.value}`"
    return (
        f"MATCH (r:{rel}) WHERE r.corpus = $corpus "
        "AND (coalesce(r.origin, 'gold') = 'gold' OR r.run_id = $run) "
        "AND any(l IN labels(r) WHERE l IN $classes) "
        "RETURN r.id AS id, labels(r) AS labels, r.sense AS sense, coalesce(r.origin, 'gold') AS origin, "
        f"[(s:{node_})-[:{edge}]->(r) | s.id] AS sources, [(r)-[:{edge}]->(t:{node_}) | t.id] AS targets, "
        f"[(r)-[:{part_of}]->(d:{disc}) | d.id] + [(r)-[:{edge}]-(:{node_})-[:{part_of}]->(d:{disc}) | d.id] "
        "AS discourses"
    )
