"""Graph rows to RDF: IRI minting, datatype mapping and materialised ontology mappings.

The Neo4j graph is already reified AIF, so the mapping is direct:

* every node becomes the resource ``<base><url-quoted id>``, typed with the classes of its labels,
  its corpus-scheme class (``scheme_class``) and its SDRT sense, and with everything those classes
  are subsumed by or equivalent to (so ``?x a aw:Attack`` finds Sci-Arg ``contradicts``, M-Arg
  ``Attack`` and QT30 ``CA`` without a reasoner);
* every stored property becomes a literal of its declared datatype property (lists and objects as
  a JSON string literal);
* every relationship becomes a triple with its declared object property;
* every reified relation (AIF S-node, non-relation) also gets ``aw:premise`` to the sources of its
  incoming AIF edges and ``aw:conclusion`` to the targets of its outgoing ones, plus the role
  properties of its corpus scheme (e.g. ``sciarg:arg1``) and their equivalents.

Nothing here talks to Neo4j: :mod:`graphstore.export` produces the rows, :func:`write_export`
streams them into a file.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pyoxigraph as ox

from ontology.errors import ApiError, OntologyError
from ontology.namespaces import PREFIXES
from ontology.records import MAX_FIELD_BYTES, oversized
from ontology.system import PRIVATE_FILE, process_alive
from ontology.terms import LABEL_IRI, NAMESPACE, PROP_IRI, REL_TYPE_IRI, SENSE_IRI, Prop
from ontology.views import EdgeView, NodeView, RelationView

ONTOLOGY_FILE = Path(__file__).with_name("argweb.ttl")
ONTOLOGY_IRI = "https://w3id.org/argweb/ontology"
DEFAULT_BASE = "https://w3id.org/argweb/data/"

# The W3C terms the mapper writes, from the one table of namespaces above.
RDF_TYPE = PREFIXES["rdf"] + "type"
XSD = PREFIXES["xsd"]
OWL_THING = PREFIXES["owl"] + "Thing"

FORMATS: dict[str, ox.RdfFormat] = {
    "nt": ox.RdfFormat.N_TRIPLES,
    "ttl": ox.RdfFormat.TURTLE,
    "nq": ox.RdfFormat.N_QUADS,
}


def export_format(out: Path, fmt: str | None) -> str:
    """The export format: ``fmt``, else the extension of ``out``, else N-Triples.

    Raises:
        ApiError: ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt is None:
        suffix = out.suffix.lower().lstrip(".")
        return suffix if suffix in FORMATS else "nt"
    if fmt not in FORMATS:
        raise ApiError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


# What the exporter turns into triples: a node, or a reified relation with its premises (sources)
# and conclusions (targets).
Exported = NodeView | RelationView


def _node(item: Exported) -> NodeView:
    return item.node if isinstance(item, RelationView) else item


@dataclass(frozen=True)
class Vocabulary:
    """What the exporter needs to know about the ontology, derived from ``argweb.ttl``.

    Attributes:
        classes: Every named class and its closure: itself, its named super-classes and every
            class equivalent to any of them (transitively).
        datatypes: Datatype property IRI -> ``rdfs:range`` datatype IRI.
        premise_roles: Corpus id -> object properties asserted from a relation to its sources.
        conclusion_roles: Corpus id -> object properties asserted from a relation to its targets.
    """

    classes: Mapping[str, frozenset[str]]
    datatypes: Mapping[str, str]
    premise_roles: Mapping[str, frozenset[str]] = field(default_factory=dict)
    conclusion_roles: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def closure(self, cls: str, where: str) -> frozenset[str]:
        """The closure of ``cls``; ``where`` names the node in the error."""
        try:
            return self.classes[cls]
        except KeyError as e:
            raise OntologyError(f"{where}: class {cls} is not declared in the ontology") from e


def _closure(start: str, up: Mapping[str, set[str]], same: Mapping[str, set[str]]) -> frozenset[str]:
    seen = {start}
    todo = [start]
    while todo:
        cur = todo.pop()
        for nxt in up.get(cur, set()) | same.get(cur, set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    seen.discard(OWL_THING)
    return frozenset(seen)


@lru_cache(maxsize=4)
def load_vocabulary(ontology_file: Path = ONTOLOGY_FILE) -> Vocabulary:
    """Read the class hierarchy, datatypes and scheme roles from the ontology (cached).

    The closure is structural (``rdfs:subClassOf`` and ``owl:equivalentClass`` between named
    classes); ``tests/test_ontology.py`` checks it equals what HermiT infers.

    Raises:
        OntologyError: The ontology file cannot be parsed.
    """
    from rdflib import OWL, RDF, RDFS, Graph, URIRef

    g = Graph()
    try:
        g.parse(ontology_file, format="turtle")
    except Exception as e:  # rdflib raises parser-specific exception types
        raise OntologyError(f"{ontology_file}: cannot parse the ontology: {e}") from e
    aw = NAMESPACE

    named = {str(c) for c in g.subjects(RDF.type, OWL.Class) if isinstance(c, URIRef)}
    up: dict[str, set[str]] = {}
    same: dict[str, set[str]] = {}
    for s, o in g.subject_objects(RDFS.subClassOf):
        if isinstance(s, URIRef) and isinstance(o, URIRef):
            up.setdefault(str(s), set()).add(str(o))
            named |= {str(s), str(o)}
    for s, o in g.subject_objects(OWL.equivalentClass):
        if isinstance(s, URIRef) and isinstance(o, URIRef):
            same.setdefault(str(s), set()).add(str(o))
            same.setdefault(str(o), set()).add(str(s))
            named |= {str(s), str(o)}
    classes = {c: _closure(c, up, same) for c in named}

    datatypes = {
        str(p): str(g.value(p, RDFS.range) or f"{XSD}string")
        for p in g.subjects(RDF.type, OWL.DatatypeProperty)
        if isinstance(p, URIRef)
    }

    prop_up: dict[str, set[str]] = {}
    prop_same: dict[str, set[str]] = {}
    for s, o in g.subject_objects(RDFS.subPropertyOf):
        prop_up.setdefault(str(s), set()).add(str(o))
    for s, o in g.subject_objects(OWL.equivalentProperty):
        prop_same.setdefault(str(s), set()).add(str(o))
        prop_same.setdefault(str(o), set()).add(str(s))
    premise_roles: dict[str, set[str]] = {}
    conclusion_roles: dict[str, set[str]] = {}
    for prop, scheme in g.subject_objects(URIRef(aw + "inScheme")):
        if (prop, RDF.type, OWL.ObjectProperty) not in g:
            continue
        corpus = g.value(scheme, URIRef(aw + "schemeCorpus"))
        if corpus is None:
            continue
        ups = _closure(str(prop), prop_up, prop_same)
        # Equivalent properties hold for the same pairs, so they are asserted too.
        asserted = set(ups) | {q for p in ups for q in prop_same.get(p, set())}
        if aw + "premise" in ups:
            premise_roles.setdefault(str(corpus), set()).update(asserted)
        if aw + "conclusion" in ups:
            conclusion_roles.setdefault(str(corpus), set()).update(asserted)
    return Vocabulary(
        classes=classes,
        datatypes=datatypes,
        premise_roles={k: frozenset(v) for k, v in premise_roles.items()},
        conclusion_roles={k: frozenset(v) for k, v in conclusion_roles.items()},
    )


def check_base(base: str) -> str:
    """Validate a base IRI for minted resources.

    Raises:
        OntologyError: Not an absolute http(s)/urn IRI ending in ``/`` or ``#``.
    """
    parts = urlsplit(base)
    if not parts.scheme or base[-1] not in "/#" or any(c in base for c in ' <>"{}|\\^`'):
        raise OntologyError(f"base IRI {base!r} must be absolute and end with '/' or '#'")
    try:
        ox.NamedNode(base)
    except ValueError as e:
        raise OntologyError(f"base IRI {base!r} is not a valid IRI: {e}") from e
    return base


def _number(value: float, datatype: str) -> str:
    if math.isfinite(value):
        return repr(value)
    if datatype == "decimal":
        # Caught by the caller, which raises the OntologyError naming the node and the property.
        raise ValueError("xsd:decimal has no NaN or infinity")
    return "NaN" if math.isnan(value) else ("INF" if value > 0 else "-INF")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RdfMapper:
    """Maps graph rows to RDF triples or quads.

    Args:
        base: Base IRI of minted resources (``<base><url-quoted node id>``).
        vocabulary: The ontology view; loaded from ``argweb.ttl`` when omitted.
    """

    def __init__(self, base: str = DEFAULT_BASE, vocabulary: Vocabulary | None = None) -> None:
        self.base = check_base(base)
        self.vocabulary = vocabulary or load_vocabulary()
        self._type = ox.NamedNode(RDF_TYPE)
        self._nodes: dict[str, ox.NamedNode] = {}
        self._premise = self._named(NAMESPACE + "premise")
        self._conclusion = self._named(NAMESPACE + "conclusion")
        self._label_iri = {label.value: iri for label, iri in LABEL_IRI.items()}
        self._prop_iri = {prop.value: iri for prop, iri in PROP_IRI.items()}
        self._rel_iri = {rel.value: iri for rel, iri in REL_TYPE_IRI.items()}
        self._sense_iri = {sense.value: iri for sense, iri in SENSE_IRI.items()}
        self._graphs: dict[str | None, ox.NamedNode | ox.DefaultGraph] = {None: ox.DefaultGraph()}
        self._role_cache: dict[str, tuple[list[ox.NamedNode], list[ox.NamedNode]]] = {}
        self._literal_specs: dict[str, tuple[ox.NamedNode, str, ox.NamedNode]] = {}

    # -- IRIs ------------------------------------------------------------------------------------

    def _named(self, iri: str) -> ox.NamedNode:
        # Vocabulary terms are few; caching them saves most of the object churn.
        node = self._nodes.get(iri)
        if node is None:
            node = self._nodes[iri] = ox.NamedNode(iri)
        return node

    def iri(self, node_id: str) -> str:
        """The IRI minted for a node id (stable: depends on the id and the base only)."""
        return self.base + quote(node_id, safe=":~")

    def node_id(self, iri: str) -> str:
        """Inverse of :meth:`iri`.

        Raises:
            OntologyError: The IRI is not under this mapper's base.
        """
        if not iri.startswith(self.base):
            raise OntologyError(f"{iri} is not under the export base {self.base}")
        return unquote(iri[len(self.base) :])

    def resource(self, node_id: str) -> ox.NamedNode:
        """The RDF term of a node id."""
        return ox.NamedNode(self.iri(node_id))

    def graph(self, corpus: str | None) -> ox.NamedNode | ox.DefaultGraph:
        """Named graph of a corpus in N-Quads output (``<base>graph/<corpus>``)."""
        g = self._graphs.get(corpus)
        if g is None:
            assert corpus is not None
            g = self._graphs[corpus] = ox.NamedNode(self.base + "graph/" + quote(corpus, safe=""))
        return g

    # -- terms -----------------------------------------------------------------------------------

    def types(self, item: Exported) -> list[str]:
        """Every class IRI the node is an instance of (materialised closure), sorted."""
        row = _node(item)
        where = f"node {row.id}"
        out: set[str] = set()
        for label in row.labels:
            iri = self._label_iri.get(label)
            if iri is None:
                raise OntologyError(f"{where}: label {label!r} is not declared in the ontology")
            out |= self.vocabulary.closure(iri, where)
        scheme_class = row.get(Prop.SCHEME_CLASS)
        if scheme_class is not None:
            out |= self.vocabulary.closure(str(scheme_class), where)
        sense = row.get(Prop.SENSE)
        if sense is not None:
            sense_iri = self._sense_iri.get(str(sense))
            if sense_iri is None:
                raise OntologyError(f"{where}: sense {sense!r} is not declared in the ontology")
            out |= self.vocabulary.closure(sense_iri, where)
        return sorted(out)

    def literal(self, key: str, value: Any, where: str) -> tuple[ox.NamedNode, ox.Literal]:
        """The datatype property and typed literal of one stored property.

        Raises:
            OntologyError: The key is not declared, or the value does not fit its range.
        """
        spec = self._literal_specs.get(key)
        if spec is None:
            prop = self._prop_iri.get(key)
            if prop is None:
                raise OntologyError(f"{where}: property {key!r} is not declared in the ontology")
            datatype = self.vocabulary.datatypes.get(prop, XSD + "string")
            dt = datatype[len(XSD) :] if datatype.startswith(XSD) else datatype
            spec = self._literal_specs[key] = (self._named(prop), dt, self._named(datatype))
        prop_node, dt, datatype_node = spec
        size = oversized(value)
        if size is not None:
            raise OntologyError(
                f"{where}: property {key!r} holds {size:,} bytes, over the {MAX_FIELD_BYTES:,}-byte limit of a text "
                "field; the RDF store could not load it (remove or shorten it in the graph, then export again)"
            )
        try:
            if dt == "string":
                if isinstance(value, str):
                    return prop_node, ox.Literal(value)
                return prop_node, ox.Literal(_json(value) if isinstance(value, list | dict) else str(value))
            if dt == "boolean" and isinstance(value, bool):
                return prop_node, ox.Literal("true" if value else "false", datatype=datatype_node)
            if dt in ("integer", "int", "long") and isinstance(value, int) and not isinstance(value, bool):
                return prop_node, ox.Literal(str(value), datatype=datatype_node)
            if dt in ("double", "float", "decimal") and isinstance(value, int | float) and not isinstance(value, bool):
                return prop_node, ox.Literal(_number(float(value), dt), datatype=datatype_node)
        except ValueError as e:
            raise OntologyError(f"{where}: property {key!r} value {value!r}: {e}") from e
        raise OntologyError(f"{where}: property {key!r} value {value!r} does not fit its declared range xsd:{dt}")

    # -- triples ---------------------------------------------------------------------------------

    def _roles(self, corpus: str) -> tuple[list[ox.NamedNode], list[ox.NamedNode]]:
        roles = self._role_cache.get(corpus)
        if roles is None:
            vocab = self.vocabulary
            premise = sorted(vocab.premise_roles.get(corpus, frozenset()) - {self._premise.value})
            conclusion = sorted(vocab.conclusion_roles.get(corpus, frozenset()) - {self._conclusion.value})
            roles = self._role_cache[corpus] = (
                [self._premise, *map(self._named, premise)],
                [self._conclusion, *map(self._named, conclusion)],
            )
        return roles

    def node_triples(self, item: Exported) -> Iterator[ox.Triple]:
        """Types, properties and (for relations) premise/conclusion links of one node."""
        row = _node(item)
        where = f"node {row.id}"
        s = self.resource(row.id)
        for cls in self.types(row):
            yield ox.Triple(s, self._type, self._named(cls))
        for key in sorted(row.props):
            value = row.props[key]
            if value is None:
                continue
            prop, lit = self.literal(key, value, where)
            yield ox.Triple(s, prop, lit)
        if isinstance(item, RelationView) and (item.sources or item.targets):
            premise_props, conclusion_props = self._roles(str(row.get(Prop.CORPUS, "")))
            for source in sorted(item.sources):
                end = self.resource(source)
                for role in premise_props:
                    yield ox.Triple(s, role, end)
            for target in sorted(item.targets):
                end = self.resource(target)
                for role in conclusion_props:
                    yield ox.Triple(s, role, end)

    def edge_triples(self, row: EdgeView) -> Iterator[ox.Triple]:
        """The object-property triple of one relationship.

        Raises:
            OntologyError: The relationship type is not declared in the ontology.
        """
        prop = self._rel_iri.get(row.type)
        if prop is None:
            raise OntologyError(f"relationship {row.source} -[{row.type}]-> {row.target}: type not declared")
        yield ox.Triple(self.resource(row.source), self._named(prop), self.resource(row.target))

    def node_quads(self, item: Exported) -> Iterator[ox.Quad]:
        """:meth:`node_triples` in the named graph of the node's corpus."""
        g = self.graph(_node(item).corpus)
        for t in self.node_triples(item):
            yield ox.Quad(t.subject, t.predicate, t.object, g)

    def edge_quads(self, row: EdgeView) -> Iterator[ox.Quad]:
        """:meth:`edge_triples` in the named graph of the relationship's corpus."""
        g = self.graph(row.corpus)
        for t in self.edge_triples(row):
            yield ox.Quad(t.subject, t.predicate, t.object, g)


def ontology_triples(ontology_file: Path = ONTOLOGY_FILE) -> Iterator[ox.Triple]:
    """The ontology's own triples (the export is self-describing).

    Raises:
        OntologyError: The file cannot be parsed.
    """
    # The parser gives blank nodes (OWL restrictions, lists) random labels; numbering them in
    # document order makes two exports of the same graph byte-identical.
    labels: dict[str, ox.BlankNode] = {}

    def stable(term: Any) -> Any:
        if isinstance(term, ox.BlankNode):
            node = labels.get(term.value)
            if node is None:
                node = labels[term.value] = ox.BlankNode(f"o{len(labels)}")
            return node
        return term

    try:
        for quad in ox.parse(path=ontology_file, format=ox.RdfFormat.TURTLE):
            yield ox.Triple(stable(quad.subject), quad.predicate, stable(quad.object))
    except SyntaxError as e:
        raise OntologyError(f"{ontology_file}: {e}") from e


def remove_stale_parts(out: Path) -> list[Path]:
    """Remove ``.OUT.<pid>.part`` files of exports whose process is gone (killed mid-write).

    A running export's file (its pid alive) is left alone.

    Returns:
        The files removed.
    """
    removed: list[Path] = []
    prefix = f".{out.name}."
    for part in out.parent.glob(f".{out.name}.*.part"):
        pid_text = part.name[len(prefix) : -len(".part")]
        if not pid_text.isdigit() or (int(pid_text) != os.getpid() and process_alive(int(pid_text))):
            continue
        part.unlink(missing_ok=True)
        removed.append(part)
    return removed


@dataclass
class ExportReport:
    """What one export wrote."""

    path: Path
    format: str
    triples: int = 0
    nodes: int = 0
    relationships: int = 0
    ontology_triples: int = 0
    seconds: float = 0.0

    @property
    def triples_per_second(self) -> float:
        """Throughput of the whole export (reading Neo4j included)."""
        return self.triples / self.seconds if self.seconds > 0 else 0.0


def write_export(
    out: Path,
    nodes: Iterable[Exported],
    edges: Iterable[EdgeView],
    fmt: str = "nt",
    mapper: RdfMapper | None = None,
    include_ontology: bool = True,
    progress: Callable[[int], None] | None = None,
) -> ExportReport:
    """Stream rows into an RDF file (nothing is held in memory beyond one row).

    The file is written next to ``out`` and renamed into place at the end, so a failed export
    leaves no partial file behind.

    Args:
        out: Target file.
        nodes: Nodes, relations with their ends (e.g. from :meth:`graphstore.export.GraphReader.nodes`).
        edges: Relationships.
        fmt: ``nt``, ``ttl`` or ``nq`` (``nq``: one named graph per corpus, the ontology in
            ``<https://w3id.org/argweb/ontology>``).
        mapper: IRI minting and vocabulary; default base when omitted.
        include_ontology: Prepend the ontology's triples.
        progress: Called with the number of graph rows (nodes or relationships) done.

    Raises:
        OntologyError: Unknown format, or a row uses a term the ontology does not declare.
    """
    if fmt not in FORMATS:
        raise OntologyError(f"unknown RDF format {fmt!r}; expected one of {sorted(FORMATS)}")
    mapper = mapper or RdfMapper()
    report = ExportReport(path=out, format=fmt)
    started = time.perf_counter()
    quads = fmt == "nq"
    ontology_graph = ox.NamedNode(ONTOLOGY_IRI)

    def stream() -> Iterator[ox.Triple | ox.Quad]:
        if include_ontology:
            for t in ontology_triples():
                report.ontology_triples += 1
                yield ox.Quad(t.subject, t.predicate, t.object, ontology_graph) if quads else t
        for row in nodes:
            report.nodes += 1
            yield from mapper.node_quads(row) if quads else mapper.node_triples(row)
            if progress:
                progress(1)
        for edge in edges:
            report.relationships += 1
            yield from mapper.edge_quads(edge) if quads else mapper.edge_triples(edge)
            if progress:
                progress(1)

    def counted() -> Iterator[ox.Triple | ox.Quad]:
        for item in stream():
            report.triples += 1
            yield item

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(out)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
    try:
        # Readable by its owner only (0600): an export holds the whole graph.
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE), "wb") as fh:
            # One stream is all triples or all quads, which the stub's union type cannot express.
            items: Iterator[Any] = counted()
            ox.serialize(items, fh, FORMATS[fmt], prefixes={**PREFIXES, "data": mapper.base})
        os.replace(tmp, out)
    except OSError as e:
        raise OntologyError(f"{out}: cannot write the export: {e}") from e
    finally:
        tmp.unlink(missing_ok=True)
    report.seconds = time.perf_counter() - started
    return report
