"""OWL reasoning over the argweb ontology with HermiT (through owlready2).

owlready2 reads RDF/XML, OWL/XML and N-Triples but not Turtle, so the ontology (and any extra
instance data) is converted with rdflib to N-Triples in a temporary directory first. HermiT runs
as a Java subprocess (Java 17 is required); owlready2 is imported inside the functions because it
is heavy and registers global state on import.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import RDF, Graph

from ontology.errors import OntologyError

ONTOLOGY_FILE = Path(__file__).with_name("argweb.ttl")


@dataclass(frozen=True)
class ReasonerReport:
    """What HermiT concluded.

    Attributes:
        consistent: False when the ontology (with the extra data) has no model.
        unsatisfiable: IRIs of named classes that can have no instance (equivalent to owl:Nothing).
        ancestors: For every named class, the IRIs of its inferred named super-classes, equivalent
            classes included and the class itself excluded (owl:Thing left out).
        classes: Number of named classes.
        individuals: Number of typed resources in the extra data.
        seconds: Reasoner wall time.
        error: HermiT's explanation when inconsistent.
    """

    consistent: bool
    unsatisfiable: tuple[str, ...] = ()
    ancestors: dict[str, frozenset[str]] = field(default_factory=dict)
    classes: int = 0
    individuals: int = 0
    seconds: float = 0.0
    error: str = ""

    @property
    def coherent(self) -> bool:
        """Consistent and without unsatisfiable classes."""
        return self.consistent and not self.unsatisfiable


def _to_ntriples(ontology_file: Path, data: Iterable[Path | Graph], out: Path) -> int:
    """Write ontology + data as one N-Triples file; returns the number of typed data resources."""
    graph = Graph()
    typed: set[object] = set()
    for source in [ontology_file, *data]:
        part = source if isinstance(source, Graph) else Graph()
        if not isinstance(source, Graph):
            try:
                part.parse(source)
            except Exception as e:  # rdflib raises parser-specific exception types
                raise OntologyError(f"{source}: cannot parse as RDF: {e}") from e
        if source is not ontology_file:
            typed.update(part.subjects(RDF.type, None))
        graph += part
    graph.serialize(out, format="nt", encoding="utf-8")
    return len(typed)


def run_hermit(
    ontology_file: Path = ONTOLOGY_FILE, data: Iterable[Path | Graph] = (), java_memory_mb: int = 2000
) -> ReasonerReport:
    """Classify the ontology (plus optional instance data) with HermiT.

    Args:
        ontology_file: The ontology in any RDF syntax rdflib reads (Turtle by default).
        data: Further RDF files or rdflib graphs (e.g. a small RDF export) checked together with the
            ontology, so that disjointness and domain/range axioms are tested on real instances.
        java_memory_mb: Heap of the HermiT JVM.

    Returns:
        The report; inconsistency is reported, not raised (see :func:`check_consistency`).

    Raises:
        OntologyError: A file cannot be parsed or the reasoner cannot run (no Java, crash).
    """
    import time

    import owlready2

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="argweb-hermit-") as tmp:
        nt = Path(tmp) / "argweb.nt"
        individuals = _to_ntriples(ontology_file, data, nt)
        world = owlready2.World()
        try:
            onto = world.get_ontology(nt.as_uri()).load()
        except Exception as e:  # owlready2 raises plain exceptions on malformed input
            raise OntologyError(f"{ontology_file}: owlready2 cannot load the ontology: {e}") from e
        owlready2.JAVA_MEMORY = java_memory_mb
        try:
            with onto:
                owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
        except owlready2.OwlReadyInconsistentOntologyError as e:
            return ReasonerReport(
                consistent=False,
                classes=len(list(world.classes())),
                individuals=individuals,
                seconds=time.perf_counter() - started,
                error=str(e) or "HermiT: the ontology is inconsistent",
            )
        except (OSError, owlready2.OwlReadyJavaError) as e:
            raise OntologyError(f"HermiT could not run on {ontology_file} (is Java 17 on PATH?): {e}") from e
        nothing = owlready2.Nothing
        unsatisfiable = tuple(sorted(c.iri for c in world.inconsistent_classes() if c is not nothing))
        # owlready2 rewrites is_a / equivalent_to with HermiT's classification; the transitive
        # closure over both is the inferred taxonomy (ancestors() alone skips equivalents' parents).
        direct: dict[str, set[str]] = {}
        for cls in world.classes():
            ups = direct.setdefault(cls.iri, set())
            for other in [*cls.is_a, *cls.equivalent_to]:
                if isinstance(other, owlready2.ThingClass):
                    ups.add(other.iri)
                    if other in cls.equivalent_to:
                        direct.setdefault(other.iri, set()).add(cls.iri)
        ancestors: dict[str, frozenset[str]] = {}
        for iri in direct:
            seen: set[str] = set()
            todo = [iri]
            while todo:
                for nxt in direct.get(todo.pop(), set()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            seen -= {iri, owlready2.Thing.iri}
            ancestors[iri] = frozenset(seen)
        return ReasonerReport(
            consistent=True,
            unsatisfiable=unsatisfiable,
            ancestors=ancestors,
            classes=len(ancestors),
            individuals=individuals,
            seconds=time.perf_counter() - started,
        )


def check_consistency(ontology_file: Path = ONTOLOGY_FILE, data: Iterable[Path | Graph] = ()) -> ReasonerReport:
    """Run HermiT and fail unless the ontology (with ``data``) is consistent and coherent.

    Raises:
        OntologyError: Inconsistent, or some class is unsatisfiable; the message names them.
    """
    report = run_hermit(ontology_file, data)
    if not report.consistent:
        raise OntologyError(f"{ontology_file}: HermiT found the ontology inconsistent: {report.error}")
    if report.unsatisfiable:
        raise OntologyError(f"{ontology_file}: unsatisfiable classes: {', '.join(report.unsatisfiable)}")
    return report
