"""Real SPARQL 1.1 servers on loopback for the remote-SPARQL tests and ``bench/sparql.py`` (not a benchmark).

* Apache Jena Fuseki: ``org.apache.jena:jena-fuseki-main`` 5.6.0 from Maven Central, fetched by
  ``mvn package`` of ``tests/fuseki/pom.xml`` into ``tests/fuseki/target/lib`` (ignored by git) and
  run in memory (``--mem --update``) at ``/argweb``: query ``/argweb/query``, Graph Store
  ``/argweb/data``.
* The Oxigraph server: the ``oxigraph`` command of the PyPI package ``oxigraph`` (a dev dependency),
  ``oxigraph serve`` in memory: query ``/query``, Graph Store ``/store``.

Both listen on ``127.0.0.1`` on a free port and are stopped (by the process this module started)
when the ``with`` block ends; each is given a query timeout of its own, as a deployment should.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from graphstore.runtime import free_port
from ontology.errors import ArgwebError
from ontology.sparql_remote import RemoteStore, ask

ROOT = Path(__file__).resolve().parent.parent
FUSEKI_POM = ROOT / "tests" / "fuseki" / "pom.xml"
FUSEKI_LIB = FUSEKI_POM.parent / "target" / "lib"
FUSEKI_MAIN = "org.apache.jena.fuseki.main.cmds.FusekiMainCmd"
DATASET = "argweb"


@dataclass(frozen=True)
class SparqlServer:
    """A running server: its name, endpoints, process and log file."""

    name: str
    store: RemoteStore
    process: subprocess.Popen[bytes]
    log: Path


def fuseki_lib() -> Path:
    """The folder of Fuseki's jars, fetched from Maven Central on first use.

    Raises:
        RuntimeError: Maven failed (its output quoted).
    """
    if not any(FUSEKI_LIB.glob("jena-fuseki-main-*.jar")):
        done = subprocess.run(
            ["mvn", "-q", "-B", "-f", str(FUSEKI_POM), "package"],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"fetching Fuseki with Maven failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return FUSEKI_LIB


def oxigraph_command() -> str:
    """The ``oxigraph`` server command installed beside this Python.

    Raises:
        RuntimeError: The PyPI package ``oxigraph`` is not installed.
    """
    beside = Path(sys.executable).parent / "oxigraph"
    found = str(beside) if beside.is_file() else shutil.which("oxigraph")
    if not found:
        raise RuntimeError("the oxigraph server is not installed: pip install oxigraph")
    return found


def _wait(server: SparqlServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        code = server.process.poll()
        if code is not None:
            raise RuntimeError(f"{server.name} exited with {code}:\n{server.log.read_text(errors='replace')[-3000:]}")
        try:
            ask(server.store, timeout=2.0)
            return
        except ArgwebError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server.name} did not answer in {timeout:g} s") from None
            time.sleep(0.3)


@contextmanager
def _serve(
    name: str, command: list[str], store: RemoteStore, work: Path, start_timeout: float
) -> Iterator[SparqlServer]:
    log = work / f"{name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=work)
    server = SparqlServer(name, store, process, log)
    try:
        _wait(server, start_timeout)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def fuseki(
    work: Path, query_timeout: float = 60.0, heap: str = "1g", start_timeout: float = 300.0
) -> Iterator[SparqlServer]:
    """Apache Jena Fuseki, in memory, on a free loopback port."""
    port = free_port()
    command = [
        "java",
        f"-Xmx{heap}",
        "-cp",
        f"{fuseki_lib()}/*",
        FUSEKI_MAIN,
        "--mem",
        "--update",
        "--localhost",
        f"--port={port}",
        f"--timeout={int(query_timeout * 1000)}",
        f"/{DATASET}",
    ]
    base = f"http://127.0.0.1:{port}/{DATASET}"
    with _serve("fuseki", command, RemoteStore(f"{base}/query", f"{base}/data"), work, start_timeout) as server:
        yield server


@contextmanager
def oxigraph_server(work: Path, query_timeout: float = 60.0, start_timeout: float = 120.0) -> Iterator[SparqlServer]:
    """The Oxigraph server, in memory, on a free loopback port."""
    port = free_port()
    command = [oxigraph_command(), "serve", "--bind", f"127.0.0.1:{port}", "--timeout-s", str(int(query_timeout))]
    base = f"http://127.0.0.1:{port}"
    store = RemoteStore(f"{base}/query", f"{base}/store")
    with _serve("oxigraph-server", command, store, work, start_timeout) as server:
        yield server
