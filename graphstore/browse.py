"""Read queries of the HTTP API (browse, search, neighbourhoods), as pure Cypher builders.

Like :mod:`graphstore.cypher`, labels and relationship types are spliced in only from
:class:`~ontology.terms.Label` / :class:`~ontology.terms.RelType` members; every value a client
sends is a parameter. Lists are paged by id (``$after`` is the last id of the previous page,
``$limit`` the page size), so a page costs the same however deep the cursor is.
"""

from __future__ import annotations

from collections.abc import Sequence

from ontology.errors import ClientError
from ontology.terms import Label, RelType

FULLTEXT_INDEX = "node_text"
"""Name of the full-text index over the text of locutions, propositions and discourses."""

_UNIT_LABELS = (Label.Locution, Label.Proposition)


def _rel(rel_type: RelType) -> str:
    return f"`{RelType(rel_type).value}`"


def _label(label: Label) -> str:
    return f"`{Label(label).value}`"


def _is_unit(var: str) -> str:
    return "(" + " OR ".join(f"{var}:{_label(label)}" for label in _UNIT_LABELS) + ")"


def fulltext_index() -> str:
    """Schema statement of the full-text index searched by ``/search``."""
    labels = "|".join(_label(label) for label in (*_UNIT_LABELS, Label.Discourse))
    return f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (n:{labels}) ON EACH [n.text, n.local_id]"


def corpus_summary() -> str:
    """Node count per label in ``$corpus``."""
    return (
        f"MATCH (n:{_label(Label.Node)}) WHERE n.corpus = $corpus "
        "UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label"
    )


def corpus_relations() -> str:
    """Relations of ``$corpus`` by labels, sense, scheme label and origin."""
    return (
        f"MATCH (r:{_label(Label.Relation)}) WHERE r.corpus = $corpus "
        "RETURN labels(r) AS labels, r.sense AS sense, coalesce(r.origin, 'gold') AS origin, count(*) AS n"
    )


def discourses(kind: Label | None, speaker: bool = False, text: bool = False, corpus: bool = True) -> str:
    """One page of discourses (dialogues, documents or both).

    Parameters: ``$after``, ``$limit``; with ``corpus`` ``$corpus``, with ``speaker`` ``$speaker``
    (speaker id, name or AIF person id), with ``text`` ``$q`` (case-insensitive part of the local id or of a
    unit's text). A filter not asked for is left out of the statement: a ``$x IS NULL OR ...``
    test keeps the planner from the index the filter could seek, and one in front of an
    ``EXISTS`` subquery would still cost the subquery on every discourse.
    """
    label = _label(kind or Label.Discourse)
    part_of, spoken_by = _rel(RelType.PART_OF), _rel(RelType.SPOKEN_BY)
    # The id range is sought in id order, so that a page stops after $limit discourses instead of
    # sorting them all; without the hint the planner scans the label when it holds few nodes.
    node_ = _label(Label.Node)
    match = f"MATCH (d:{node_}:{label}) USING INDEX d:{node_}(id) "
    where = "d.id > $after"
    if corpus:
        where += " AND d.corpus = $corpus"
    if speaker:
        where += (
            f" AND EXISTS {{ MATCH (u)-[:{part_of}]->(d) "
            f"MATCH (u)-[:{spoken_by}]->(s:{_label(Label.Speaker)}) "
            "WHERE s.id = $speaker OR s.name = $speaker OR $speaker IN s.person_ids }"
        )
    if text:
        unit_text = f"{_is_unit('u')} AND toLower(u.text) CONTAINS toLower($q)"
        where += (
            " AND (toLower(d.local_id) CONTAINS toLower($q) "
            f"OR EXISTS {{ MATCH (u)-[:{part_of}]->(d) WHERE {unit_text} }})"
        )
    return (
        f"{match}WHERE {where} "
        "WITH d ORDER BY d.id LIMIT $limit "
        "RETURN d.id AS id, labels(d) AS labels, properties(d) AS props, "
        f"COUNT {{ MATCH (u)-[:{part_of}]->(d) WHERE {_is_unit('u')} }} AS units "
        "ORDER BY id"
    )


def discourse_node() -> str:
    """The discourse ``$id`` (or, failing that, the one whose local id is ``$id``)."""
    return (
        f"MATCH (d:{_label(Label.Discourse)}) WHERE d.id = $id OR d.local_id = $id "
        "RETURN d.id AS id, labels(d) AS labels, properties(d) AS props ORDER BY d.id = $id DESC, id LIMIT 2"
    )


def discourse_units() -> str:
    """Locutions, propositions and sentences PART_OF the discourse ``$id`` with their speaker.

    A document's sentences carry its text (each with its character span), on which the spans of
    its argument components lie.
    """
    return (
        f"MATCH (n:{_label(Label.Node)})-[:{_rel(RelType.PART_OF)}]->(:{_label(Label.Discourse)} {{id: $id}}) "
        f"WHERE {_is_unit('n')} OR n:{_label(Label.Sentence)} "
        f"OPTIONAL MATCH (n)-[:{_rel(RelType.SPOKEN_BY)}]->(s:{_label(Label.Speaker)}) "
        "WITH n, collect(s)[0] AS s "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props, s.id AS speaker_id, s.name AS speaker"
    )


def _relation_row(var: str) -> str:
    edge = _rel(RelType.AIF_EDGE)
    return (
        f"RETURN {var}.id AS id, labels({var}) AS labels, properties({var}) AS props, "
        f"[(s:{_label(Label.Node)})-[:{edge}]->({var}) | s.id] AS sources, "
        f"[({var})-[:{edge}]->(t:{_label(Label.Node)}) | t.id] AS targets"
    )


def discourse_relations() -> str:
    """Relations of the discourse ``$id``: those PART_OF it and those touching one of its units.

    Predicted relations need not be PART_OF a discourse; they are found through their ends.
    """
    part_of = _rel(RelType.PART_OF)
    rel = _label(Label.Relation)
    return (
        f"MATCH (d:{_label(Label.Discourse)} {{id: $id}}) "
        "CALL (d) { "
        f"MATCH (r:{rel})-[:{part_of}]->(d) RETURN r "
        "UNION "
        f"MATCH (u)-[:{part_of}]->(d) WHERE {_is_unit('u')} "
        f"MATCH (u)-[:{_rel(RelType.AIF_EDGE)}]-(r:{rel}) RETURN r "
        "} "
        "WITH DISTINCT r " + _relation_row("r")
    )


def node() -> str:
    """The node ``$id`` with its speaker and the discourses it is part of."""
    return (
        f"MATCH (n:{_label(Label.Node)} {{id: $id}}) "
        f"OPTIONAL MATCH (n)-[:{_rel(RelType.SPOKEN_BY)}]->(s:{_label(Label.Speaker)}) "
        f"OPTIONAL MATCH (n)-[:{_rel(RelType.PART_OF)}]->(d:{_label(Label.Discourse)}) "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props, "
        "collect(DISTINCT s.id)[0] AS speaker_id, collect(DISTINCT s.name)[0] AS speaker, "
        "collect(DISTINCT d.id) AS discourses"
    )


def neighbors(rel_types: Sequence[RelType], direction: str, depth: int) -> str:
    """Nodes and relationships on paths of 1..``depth`` hops from ``$id`` (at most ``$limit`` paths).

    Shorter paths come first, so that a cut keeps the nearest neighbours; ``truncated`` says
    whether paths were left out.

    Args:
        rel_types: Relationship types to follow (all when empty).
        direction: ``out``, ``in`` or ``both``.
        depth: Maximum number of hops, 1 to 3.

    Returns one row ``{nodes, edges, truncated}`` (``nodes`` empty when there is no path).
    """
    if not 1 <= depth <= 3:
        raise ClientError(f"depth must be 1..3, not {depth}")
    types = "|".join(_rel(t) for t in rel_types)
    pattern = f"[:{types}*1..{depth}]" if types else f"[*1..{depth}]"
    left, right = {"out": ("-", "->"), "in": ("<-", "-"), "both": ("-", "-")}[direction]
    node_ = _label(Label.Node)
    # One path beyond the page tells whether the page was cut; at depth 1 every path is one hop.
    order = "ORDER BY length(p) " if depth > 1 else ""
    return (
        f"MATCH p = (n:{node_} {{id: $id}}){left}{pattern}{right}(m:{node_}) "
        f"WITH p {order}LIMIT $limit + 1 "
        "WITH collect(p) AS found "
        "WITH found[..$limit] AS ps, size(found) > $limit AS truncated "
        "CALL (ps) { UNWIND ps AS p UNWIND nodes(p) AS x RETURN collect(DISTINCT x) AS ns } "
        "CALL (ps) { UNWIND ps AS p UNWIND relationships(p) AS r RETURN collect(DISTINCT r) AS rs } "
        "RETURN [x IN ns | {id: x.id, labels: labels(x), props: properties(x)}] AS nodes, "
        "[r IN rs | {source: startNode(r).id, type: type(r), target: endNode(r).id, id: r.id, corpus: r.corpus}] "
        "AS edges, truncated"
    )


def relations(
    kind: Label,
    *,
    corpus: bool = False,
    origin: str | None = None,
    model: bool = False,
    min_score: bool = False,
    sense: bool = False,
) -> str:
    """One page of relations of class ``kind`` in id order, with only the filters asked for.

    Parameters: ``$after``, ``$limit``, and ``$corpus``, ``$origin``, ``$model``, ``$min_score``,
    ``$sense`` for the filters given. Each filter is written into the WHERE only when given, since
    ``$x IS NULL OR ...`` keeps the planner from the indexes. The page is read from one index in
    id order and stops after ``$limit`` rows, whatever the filters:

    * a corpus: ``relation_corpus_id`` (corpus, id);
    * else a predicted origin, a model or a minimum score (only predictions have a model and a
      score, so the latter two imply the origin): ``relation_origin_id`` (origin, id);
    * else a sense (only discourse relations have one): ``discourse_relation_sense_id`` (sense, id);
    * else a relation class: that class's ids (``support_id`` ...);
    * else the relations' own ids: ``relation_id``.

    The pair indexes give the order only when the rows are asked for in the index's order, hence
    ``ORDER BY r.corpus, r.id`` under a fixed corpus. Filters not sought are tested on each row
    read. On the full graph (100,640 relations among 239,313 nodes) every first page reads 2,500
    to 4,700 db hits (PROFILE); sought by the single-property indexes and sorted, a corpus page
    read 65,000 and a predicted one 25,000. A graph loaded before these indexes existed (until
    its next ingest) is still answered: Neo4j plans around a hint it cannot follow.

    Args:
        kind: Relation class to match.
        corpus: Filter on ``$corpus``.
        origin: ``gold`` or ``predicted`` to filter on ``$origin`` (its value shapes the test:
            gold relations may carry no origin, predicted ones always do), None for both.
        model: Filter on ``$model``.
        min_score: Filter on ``r.score >= $min_score``.
        sense: Filter on ``$sense``.

    Raises:
        ClientError: ``origin`` neither gold, predicted nor None.
    """
    if origin not in (None, "gold", "predicted"):
        raise ClientError(f"origin must be gold or predicted, not {origin!r}")
    relation = _label(Label.Relation)
    labels = f"{_label(Label.Node)}:{relation}"
    # The kind is tested on each row: a label in the pattern lets the planner scan it and join.
    where = ["r.id > $after", f"r:{_label(kind)}"]
    # (Asked for gold, a model or a score selects nothing; it is answered from the id index.)
    predicted = origin == "predicted" or (origin is None and (model or min_score))
    if corpus:
        where.append("r.corpus = $corpus")
        seek, order = f"{relation}(corpus, id)", "r.corpus, r.id"
    elif predicted:
        seek, order = f"{relation}(origin, id)", "r.origin, r.id"
    elif sense:
        labels += f":{_label(Label.DiscourseRelation)}"
        seek, order = f"{_label(Label.DiscourseRelation)}(sense, id)", "r.sense, r.id"
    elif kind is not Label.Relation:
        labels += f":{_label(kind)}"
        seek, order = f"{_label(kind)}(id)", "r.id"
    else:
        seek, order = f"{relation}(id)", "r.id"
    if origin == "predicted":
        where.append("r.origin = $origin")
    elif origin == "gold":
        where.append("coalesce(r.origin, 'gold') = $origin")
    elif predicted:
        where.append("r.origin = 'predicted'")
    if model:
        where.append("r.model = $model")
    if min_score:
        where.append("r.score >= $min_score")
    if sense:
        where.append("r.sense = $sense")
    return (
        f"MATCH (r:{labels}) USING INDEX r:{seek} WHERE {' AND '.join(where)} "
        f"WITH r ORDER BY {order} LIMIT $limit " + _relation_row("r") + " ORDER BY id"
    )


def search(corpus: bool = False) -> str:
    """Full-text search: ``$q`` (Lucene syntax), ``$skip``, ``$limit``, with ``corpus`` ``$corpus``.

    Nodes of a corpus whose marker is not ``complete`` (an ingest running, or killed and not yet
    undone) are left out: half-loaded content is never served as if it were whole.
    """
    where = "WHERE node.corpus = $corpus AND " if corpus else "WHERE "
    where += f"NOT EXISTS {{ MATCH (c:{_label(Label.Corpus)} {{id: node.corpus}}) WHERE c.status <> 'complete' }} "
    return (
        f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $q) YIELD node, score "
        f"{where}"
        "WITH node, score ORDER BY score DESC, node.id SKIP $skip LIMIT $limit "
        f"OPTIONAL MATCH (node)-[:{_rel(RelType.PART_OF)}]->(d:{_label(Label.Discourse)}) "
        "RETURN node.id AS id, labels(node) AS labels, properties(node) AS props, score, "
        "collect(DISTINCT d.id) AS discourses ORDER BY score DESC, id"
    )


def speaker_units() -> str:
    """Units per speaker in ``$corpus`` (speaker node name, else the unit's speaker property)."""
    return (
        f"MATCH (u:{_label(Label.Locution)}) WHERE u.corpus = $corpus "
        f"OPTIONAL MATCH (u)-[:{_rel(RelType.SPOKEN_BY)}]->(s:{_label(Label.Speaker)}) "
        "WITH coalesce(s.name, u.speaker, '(unknown)') AS speaker, count(DISTINCT u) AS n "
        "RETURN speaker, n ORDER BY n DESC, speaker LIMIT $limit"
    )


def topic_relations() -> str:
    """Relations per topic and class in ``$corpus`` (relations without a topic are left out)."""
    return (
        f"MATCH (r:{_label(Label.Relation)}) WHERE r.corpus = $corpus AND r.topic IS NOT NULL "
        "RETURN r.topic AS topic, labels(r) AS labels, count(*) AS n"
    )
