"""``argweb db start/status/stop`` as real processes on a free port and a temporary data directory.

The CLI runs as a subprocess (``python -m api.cli``) so that the test also proves the server
outlives the command that started it.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.services.graph import embedded_server, open_driver
from graphstore.runtime import EmbeddedNeo4j, class_archive, free_port, process_alive
from graphstore.store import GraphStore
from ontology.formats.registry import CORPORA
from ontology.formats.registry import SAMPLES as PACKAGED_SAMPLES
from tests.conftest import embedded_settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = PACKAGED_SAMPLES
PASSWORD = "argweb-runtime-test"


def argweb(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGWEB_")}
    env.update({"ARGWEB_NEO4J_PASSWORD": PASSWORD, "ARGWEB_NEO4J_HEAP": "512m"})
    return subprocess.run(
        [sys.executable, "-m", "api.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def pid_of(output: str) -> int:
    match = re.search(r"\(pid (\d+),", output)
    assert match, output
    return int(match.group(1))


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "argweb-data"
    # Whatever happened in the test, leave no server behind.
    embedded_server(embedded_settings(tmp_path / "argweb-data", password=PASSWORD)).stop()


def test_start_status_stop_restart(data_dir: Path) -> None:
    port = free_port()
    d = str(data_dir)

    status = argweb("db", "status", "--data-dir", d)
    assert status.returncode == 1 and "not running" in status.stdout

    first = argweb("db", "start", "--port", str(port), "--data-dir", d)
    assert first.returncode == 0, first.stderr
    pid = pid_of(first.stdout)
    assert f"bolt://127.0.0.1:{port}" in first.stdout
    assert process_alive(pid)  # the server outlived the CLI process

    again = argweb("db", "start", "--port", str(port), "--data-dir", d)
    assert again.returncode == 0, again.stderr
    assert pid_of(again.stdout) == pid

    status = argweb("db", "status", "--data-dir", d)
    assert status.returncode == 0 and pid_of(status.stdout) == pid

    cfg = embedded_settings(data_dir, port, password=PASSWORD)
    driver = open_driver(cfg, start=False)
    try:
        store = GraphStore(driver)
        spec = CORPORA["molweni"]
        store.ingest(spec.load(spec.find(SAMPLES)))
        before = store.stats()
    finally:
        driver.close()
    assert before["corpora"]["molweni"]["summary"]["dialogues"] == 8

    stop = argweb("db", "stop", "--data-dir", d)
    assert stop.returncode == 0 and "neo4j stopped" in stop.stdout
    assert not process_alive(pid)
    status = argweb("db", "status", "--data-dir", d)
    assert status.returncode == 1 and "not running" in status.stdout
    stop = argweb("db", "stop", "--data-dir", d)
    assert stop.returncode == 0 and "not running" in stop.stdout

    restart = argweb("db", "start", "--port", str(port), "--data-dir", d)
    assert restart.returncode == 0, restart.stderr
    assert pid_of(restart.stdout) != pid
    driver = open_driver(cfg, start=False)
    try:
        after = GraphStore(driver).stats()
    finally:
        driver.close()
    assert after == before  # the data survived the restart

    stop = argweb("db", "stop", "--data-dir", d)
    assert stop.returncode == 0 and "neo4j stopped" in stop.stdout


def test_start_on_a_taken_port_fails_cleanly(data_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = argweb("db", "start", "--port", str(port), "--data-dir", str(data_dir))
    assert result.returncode == 1
    assert f"port {port} is already in use" in result.stderr
    assert not (data_dir / "neo4j" / "argweb-neo4j.pid").exists()


def test_the_server_maps_the_class_archive_setup_recorded(neo4j_server: EmbeddedNeo4j) -> None:
    # Setup records the archive once (build_class_archive); every start then maps the archived
    # classes instead of loading them from the jars. A JVM that cannot use an archive runs without
    # it, silently: only the process's memory map tells.
    archive = class_archive(neo4j_server.java_dir)
    assert archive.is_file(), "scripts/setup.sh records the archive"
    info = neo4j_server.info()
    assert info is not None
    assert str(archive) in Path(f"/proc/{info.pid}/maps").read_text()


def test_the_server_works_in_its_data_directory(neo4j_server: EmbeddedNeo4j) -> None:
    # Files the JVM writes under a relative name stay with the store, not in the caller's directory.
    info = neo4j_server.info()
    assert info is not None
    assert Path(f"/proc/{info.pid}/cwd").resolve() == neo4j_server.data_dir.resolve()
