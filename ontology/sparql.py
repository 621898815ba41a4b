"""SPARQL over the exported RDF on a persistent Oxigraph store.

The store mirrors the last export that was loaded: :func:`load_store` bulk-loads a file into a
fresh directory and swaps it in only when the load succeeded, so a bad file leaves the previous
store untouched. Queries (SELECT, ASK, CONSTRUCT, DESCRIBE) run against the union of all graphs
with the argweb prefixes predeclared; updates are refused.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from ontology.errors import ClientError, InvalidQueryError, NotFoundError, OntologyError
from ontology.namespaces import PREFIXES
from ontology.system import PRIVATE_DIR, PRIVATE_FILE

XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER_TYPES = {
    XSD + t
    for t in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "negativeInteger",
        "nonPositiveInteger",
        "unsignedInt",
        "unsignedLong",
        "unsignedShort",
        "unsignedByte",
    )
}
_FLOAT_TYPES = {XSD + "double", XSD + "float", XSD + "decimal"}

RESULT_FORMATS: dict[str, ox.QueryResultsFormat] = {
    "json": ox.QueryResultsFormat.JSON,
    "csv": ox.QueryResultsFormat.CSV,
    "tsv": ox.QueryResultsFormat.TSV,
    "xml": ox.QueryResultsFormat.XML,
}
GRAPH_FORMATS: dict[str, ox.RdfFormat] = {
    "nt": ox.RdfFormat.N_TRIPLES,
    "ttl": ox.RdfFormat.TURTLE,
    "nq": ox.RdfFormat.N_QUADS,
    "jsonld": ox.RdfFormat.JSON_LD,
}
LOAD_FORMATS: dict[str, ox.RdfFormat] = {
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ttl": ox.RdfFormat.TURTLE,
    ".nq": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
}

# Comments, then any number of BASE/PREFIX declarations, then the first keyword of the operation.
_PROLOGUE = re.compile(
    r"""\A(?:\s+|\#[^\n]*\n?|BASE\s*<[^>]*>|PREFIX\s+[^\s:]*:\s*<[^>]*>)*""",
    re.IGNORECASE,
)
_UPDATE_KEYWORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH")


def query_form(query: str) -> str:
    """The operation keyword of a SPARQL string (``SELECT``, ``ASK``, ``INSERT``, ...), upper case."""
    rest = query[_PROLOGUE.match(query).end() :]  # type: ignore[union-attr]  # the pattern always matches
    word = re.match(r"[A-Za-z]+", rest)
    return word.group(0).upper() if word else ""


def is_update(query: str) -> bool:
    """Whether the string is a SPARQL Update request rather than a query."""
    return query_form(query) in _UPDATE_KEYWORDS


def python_value(term: Any) -> Any:
    """A query-result term as a plain Python value.

    IRIs become their string, blank nodes ``_:id``, literals ``int``/``float``/``bool`` by
    datatype and ``str`` otherwise; unbound variables are ``None``.
    """
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        try:
            if datatype in _INTEGER_TYPES:
                return int(term.value)
            if datatype in _FLOAT_TYPES:
                return float(term.value)
            if datatype == XSD + "boolean":
                return term.value in ("true", "1")
        except ValueError:
            return term.value
        return term.value
    return str(term)


@dataclass(frozen=True)
class LoadReport:
    """What a load put into the store."""

    path: Path
    quads: int
    seconds: float


def rdf_format_of(path: Path, fmt: str | None) -> ox.RdfFormat:
    """The RDF syntax of a file: ``fmt`` (an extension, with or without the dot), else the file's extension.

    Raises:
        ClientError: An unknown format, or an extension that does not tell.
    """
    if fmt is not None:
        key = fmt if fmt.startswith(".") else f".{fmt}"
        if key not in LOAD_FORMATS:
            raise ClientError(f"unknown RDF format {fmt!r}; expected one of {sorted(k[1:] for k in LOAD_FORMATS)}")
        return LOAD_FORMATS[key]
    suffix = path.suffix.lower()
    if suffix not in LOAD_FORMATS:
        raise ClientError(f"{path}: cannot tell the RDF format from the extension; give it explicitly")
    return LOAD_FORMATS[suffix]


class SparqlStore:
    """A read-only SPARQL endpoint over an Oxigraph store (persistent or in memory).

    Args:
        path: Store directory; ``None`` for an in-memory store (tests, benchmarks).
        read_only: Open an existing on-disk store without taking the writer lock.

    Raises:
        NotFoundError: A read-only store that does not exist.
        OntologyError: The directory is not an Oxigraph store or cannot be opened.
    """

    def __init__(self, path: Path | None = None, read_only: bool = False) -> None:
        self.path = path
        try:
            if path is None:
                self._store = ox.Store()
            elif read_only:
                old = path.with_name(path.name + ".old")
                if not path.is_dir() and old.is_dir():
                    # A load was killed between its two renames: the previous store still answers.
                    path = old
                if not path.is_dir():
                    raise NotFoundError(f"{path}: no RDF store; run `argweb export rdf` or `argweb rdf load` first")
                self._store = ox.Store.read_only(str(path))
            else:
                self._store = ox.Store(str(path))
        except OSError as e:
            raise OntologyError(f"{path}: cannot open the Oxigraph store: {e}") from e

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        """Release the store (Oxigraph closes it when the object is collected)."""
        self._store = None  # type: ignore[assignment]
        gc.collect()

    def __enter__(self) -> SparqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_file(self, path: Path, fmt: str | None = None) -> int:
        """Load a file into this store in one transaction (small files; see :func:`load_store`).

        Returns:
            Number of quads in the store afterwards.

        Raises:
            ClientError: The file is malformed (nothing is added).
            OntologyError: The file is unreadable.
        """
        try:
            self._store.load(path=str(path), format=rdf_format_of(path, fmt))
        except SyntaxError as e:
            raise ClientError(f"{path}: {e}") from e
        except OSError as e:
            raise OntologyError(f"{path}: cannot read: {e}") from e
        return len(self._store)

    def query(self, query: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """Run a SPARQL query over the union of all graphs.

        Raises:
            InvalidQueryError: The string is an update (refused) or is not valid SPARQL.
            OntologyError: Evaluation failed.
        """
        if is_update(query):
            raise InvalidQueryError(
                f"SPARQL {query_form(query)} refused: the store is read-only; re-export and load instead"
            )
        try:
            return self._store.query(query, use_default_graph_as_union=True, prefixes=PREFIXES)
        except SyntaxError as e:
            raise InvalidQueryError(f"invalid SPARQL query: {e}") from e
        except OSError as e:
            raise OntologyError(f"SPARQL evaluation failed: {e}") from e

    def select(self, query: str) -> tuple[list[str], list[dict[str, Any]]]:
        """Run a SELECT and return its variables and rows of plain Python values.

        Raises:
            InvalidQueryError: Not a SELECT, or invalid.
        """
        result = self.query(query)
        if not isinstance(result, ox.QuerySolutions):
            raise InvalidQueryError(f"expected a SELECT query, got {query_form(query) or 'nothing'}")
        names = [v.value for v in result.variables]
        rows = [{name: python_value(solution[name]) for name in names} for solution in result]
        return names, rows

    def ask(self, query: str) -> bool:
        """Run an ASK query.

        Raises:
            InvalidQueryError: Not an ASK, or invalid.
        """
        result = self.query(query)
        if not isinstance(result, ox.QueryBoolean):
            raise InvalidQueryError(f"expected an ASK query, got {query_form(query) or 'nothing'}")
        return bool(result)


def result_form(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> str:
    """``boolean`` (ASK), ``graph`` (CONSTRUCT/DESCRIBE) or ``solutions`` (SELECT)."""
    if isinstance(result, ox.QueryBoolean):
        return "boolean"
    return "graph" if isinstance(result, ox.QueryTriples) else "solutions"


def compact(value: object) -> str:
    """An IRI written with a known prefix (``aw:Support``); other values as text, unbound as ''."""
    if value is None:
        return ""
    text = str(value)
    for prefix, iri in PREFIXES.items():
        if text.startswith(iri) and len(text) > len(iri):
            return f"{prefix}:{text[len(iri) :]}"
    return text


def serialize_result(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples, fmt: str) -> bytes:
    """Serialise a query result.

    SELECT and ASK results use the W3C SPARQL result formats (``json``, ``csv``, ``tsv``,
    ``xml``); CONSTRUCT and DESCRIBE results are graphs (``nt``, ``ttl``, ``nq``, ``jsonld``).

    Raises:
        ClientError: The format does not fit the result kind.
    """
    if isinstance(result, ox.QueryTriples):
        if fmt not in GRAPH_FORMATS:
            raise ClientError(f"CONSTRUCT/DESCRIBE return a graph: use one of {sorted(GRAPH_FORMATS)}, not {fmt!r}")
        items: Any = result
        if fmt == "nq":
            items = (ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph()) for t in result)
        return ox.serialize(items, format=GRAPH_FORMATS[fmt], prefixes=PREFIXES) or b""
    if fmt not in RESULT_FORMATS:
        raise ClientError(f"SELECT/ASK results use one of {sorted(RESULT_FORMATS)}, not {fmt!r}")
    return result.serialize(format=RESULT_FORMATS[fmt]) or b""


def holds_triples(data: bytes, fmt: str) -> bool:
    """Whether a serialized graph (a :data:`GRAPH_FORMATS` name) holds a triple.

    SPARQL servers write an empty DESCRIBE differently (nothing, ``[]``, prefix declarations only),
    so emptiness is read from the parsed graph; a body that does not parse (cut at a size limit)
    counts as holding some.
    """
    try:
        return next(iter(ox.parse(data, format=GRAPH_FORMATS[fmt])), None) is not None
    except (SyntaxError, KeyError, ValueError):
        return bool(data.strip())


def check_file(file: Path, fmt: str | None = None) -> int:
    """Parse an RDF file through to its end without loading it; the number of triples or quads.

    Raises:
        NotFoundError: No such file.
        ClientError: Unknown format, a syntax error (its line named) or a literal too large for the
            stores (Oxigraph's 16 MiB parse buffer); the message says the store is left unchanged.
        OntologyError: The file is unreadable.
    """
    if not file.is_file():
        raise NotFoundError(f"{file}: no such file")
    rdf_format = rdf_format_of(file, fmt)
    count = 0
    with refused_files(file, "read"):
        for _ in ox.parse(path=str(file), format=rdf_format):
            count += 1
    return count


@contextmanager
def refused_files(file: Path, doing: str) -> Iterator[None]:
    """Parser and I/O errors of reading ``file`` as argweb errors naming it (the store left unchanged).

    Raises:
        ClientError: A syntax error, or a literal over Oxigraph's 16 MiB parse buffer (which it
            reports as MemoryError).
        OntologyError: The file is unreadable.
    """
    try:
        yield
    except SyntaxError as e:
        raise ClientError(f"{file}: {e} (store left unchanged)") from e
    except MemoryError as e:
        raise ClientError(
            f"{file}: a literal is too large for the RDF store ({e}); nothing loaded, store left unchanged"
        ) from e
    except OSError as e:
        raise OntologyError(f"{file}: {doing} failed: {e} (store left unchanged)") from e


def declare_prefixes(query: str) -> str:
    """``query`` with a ``PREFIX`` declaration of every argweb prefix it uses but does not declare.

    The embedded store predeclares :data:`ontology.namespaces.PREFIXES`; a SPARQL server knows none of
    them, so a query sent there declares them itself (declarations only: the query is unchanged).
    """
    declared = {m.group(1) for m in re.finditer(r"PREFIX\s+([^\s:]*):", query, re.IGNORECASE)}
    lines = [f"PREFIX {name}: <{iri}>\n" for name, iri in PREFIXES.items() if name not in declared]
    return "".join(lines) + query


def _json_term(term: dict[str, Any] | None) -> Any:
    """A term of the W3C SPARQL JSON results as :func:`python_value` gives the embedded store's terms."""
    if term is None:
        return None
    kind, value = term.get("type"), term.get("value", "")
    if kind == "uri":
        return python_value(ox.NamedNode(value))
    if kind == "bnode":
        return f"_:{value}"
    datatype = term.get("datatype")
    if term.get("xml:lang") is not None or datatype is None:
        return value
    return python_value(ox.Literal(value, datatype=ox.NamedNode(datatype)))


def solutions_from_json(body: bytes) -> tuple[list[str], list[dict[str, Any]]]:
    """The variables and rows (plain Python values) of a SELECT result in the W3C SPARQL JSON format.

    Rows hold the same values :meth:`SparqlStore.select` gives for the same solutions, whichever
    server wrote them.

    Raises:
        OntologyError: Not a SPARQL JSON SELECT result.
    """
    try:
        data = json.loads(body)
        names = [str(v) for v in data["head"]["vars"]]
        bindings = data["results"]["bindings"]
    except (ValueError, KeyError, TypeError) as e:
        raise OntologyError(f"not a SPARQL JSON SELECT result: {e}") from e
    return names, [{name: _json_term(row.get(name)) for name in names} for row in bindings]


def _bulk_load(directory: Path, file: Path, rdf_format: ox.RdfFormat) -> int:
    # The store must be closed (collected) before its directory is renamed or removed, so it
    # lives only inside this function.
    store = ox.Store(str(directory))
    try:
        store.bulk_load(path=str(file), format=rdf_format)
        store.flush()
        return len(store)
    finally:
        del store
        gc.collect()


def load_store(store_dir: Path, file: Path, fmt: str | None = None, append: bool = False) -> LoadReport:
    """Load an RDF file into the persistent store at ``store_dir``.

    By default the store is replaced: the file is bulk-loaded into a sibling directory, which is
    swapped in only after the load succeeded (a malformed file leaves the old store as it was).
    With ``append`` the file is added to the existing store in one transaction. Either way the store
    is private wherever it is configured: the directories created for it are 0700, its files 0600.

    Raises:
        NotFoundError: No such file.
        ClientError: Malformed file or unknown format (the store is unchanged).
        OntologyError: The store is in use or cannot be written.
    """
    started = time.perf_counter()
    if not file.is_file():
        raise NotFoundError(f"{file}: no such file")
    rdf_format = rdf_format_of(file, fmt)
    _private_parents(store_dir)
    if append:
        with contextlib.suppress(FileExistsError):
            store_dir.mkdir(mode=PRIVATE_DIR)
        try:
            with SparqlStore(store_dir) as store:
                quads = store.add_file(file, fmt)
        finally:
            # Files the append wrote are made the owner's too (the database creates them 0644).
            make_private(store_dir)
        return LoadReport(file, quads, time.perf_counter() - started)
    fresh = store_dir.with_name(store_dir.name + ".loading")
    old = store_dir.with_name(store_dir.name + ".old")
    recover_store(store_dir)
    shutil.rmtree(fresh, ignore_errors=True)
    quads = -1
    try:
        # Private before the first file is written: nothing of the load is readable by others
        # while it runs, and the files are then made the owner's alone before the swap.
        fresh.mkdir(mode=PRIVATE_DIR)
        with refused_files(file, "load"):
            quads = _bulk_load(fresh, file, rdf_format)
        make_private(fresh)
    finally:
        # Whatever happened (KeyboardInterrupt included), a failed load leaves no directory behind.
        if quads < 0:
            shutil.rmtree(fresh, ignore_errors=True)
    if store_dir.exists():
        store_dir.rename(old)
    fresh.rename(store_dir)
    shutil.rmtree(old, ignore_errors=True)
    return LoadReport(file, quads, time.perf_counter() - started)


def _private_parents(store_dir: Path) -> None:
    """Create the missing directories above ``store_dir`` with mode :data:`PRIVATE_DIR`.

    The store may be configured anywhere (``ARGWEB_OXIGRAPH_STORE``), outside the private data
    directory: what argweb creates for it is the owner's alone. A directory that already exists
    (a home directory, a shared volume) is left as it is: the store directory itself is private.
    """
    missing = []
    for parent in store_dir.parents:
        if parent.exists():
            break
        missing.append(parent)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=PRIVATE_DIR)


def make_private(store_dir: Path) -> None:
    """Make a store directory and everything in it the owner's alone (0700 directories, 0600 files).

    The database writes its files with the process's umask (0644 usually); a store holds the whole
    graph, so no other local user may read it wherever it lives.
    """
    for path in [store_dir, *store_dir.rglob("*")]:
        if path.is_symlink():
            continue
        with contextlib.suppress(FileNotFoundError):
            path.chmod(PRIVATE_DIR if path.is_dir() else PRIVATE_FILE)


def recover_store(store_dir: Path) -> bool:
    """Finish a store swap that a killed load interrupted; True if there was one.

    The swap is two renames (``store`` -> ``store.old``, ``store.loading`` -> ``store``); killed
    between them, the previous store only exists as ``store.old``: it is put back.
    """
    old = store_dir.with_name(store_dir.name + ".old")
    if old.is_dir() and not store_dir.exists():
        old.rename(store_dir)
        return True
    shutil.rmtree(old, ignore_errors=True)
    return False
