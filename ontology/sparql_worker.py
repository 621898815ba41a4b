"""Child process that evaluates one SPARQL query and streams the serialised result to stdout.

Oxigraph has no query timeout and evaluates inside one call that Python cannot interrupt, so
:mod:`ontology.sparql_run` runs every query in this process and kills it at the deadline; an
address-space limit keeps a runaway query from taking the machine's memory. Protocol: the query
text on stdin; argv ``STORE_DIR FORMAT MEMORY_MB``; stdout starts with one JSON header line
(``{"ok": true, "kind": ...}`` or ``{"ok": false, "error": ..., "refused": bool}``), then the
result bytes.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path


def _header(out: object, payload: dict[str, object]) -> None:
    out.write(json.dumps(payload).encode() + b"\n")  # type: ignore[attr-defined]
    out.flush()  # type: ignore[attr-defined]


def main(argv: list[str]) -> int:
    """Run the query of stdin on the store of ``argv[0]`` in format ``argv[1]``."""
    store_dir, fmt, memory_mb = Path(argv[0]), argv[1], int(argv[2])
    out = sys.stdout.buffer
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import pyoxigraph as ox

    from ontology.errors import ArgwebError
    from ontology.namespaces import PREFIXES
    from ontology.sparql import GRAPH_FORMATS, RESULT_FORMATS, SparqlStore, result_form

    query = sys.stdin.read()
    try:
        store = SparqlStore(store_dir, read_only=True)
        result = store.query(query)
    except ArgwebError as e:
        _header(out, {"ok": False, "error": str(e), "refused": "refused" in str(e)})
        return 0
    except MemoryError:
        _header(out, {"ok": False, "error": "SPARQL query exceeded the memory limit", "refused": False})
        return 0
    _header(out, {"ok": True, "kind": result_form(result)})
    if isinstance(result, ox.QueryTriples):
        ox.serialize(result, output=out, format=GRAPH_FORMATS[fmt], prefixes=PREFIXES)
    else:
        result.serialize(output=out, format=RESULT_FORMATS[fmt])
    out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
    except MemoryError:
        sys.exit(3)
