"""The embedded server's pid file, password and transaction logs (drill findings, issue 11).

Real processes: the CLI runs as a subprocess and the server as its own JVM.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphstore.runtime import PID_FILE, EmbeddedNeo4j, connect, free_port, is_launcher, process_alive
from tests.integration.cli_support import cli_env, run_argweb

PASSWORD = "argweb-drill-secret-Qx7"
OTHER = "argweb-drill-other-Zk4"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "data"
    EmbeddedNeo4j(tmp_path / "data" / "neo4j", password=PASSWORD).stop()


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process whose pid a stale pid file will name."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def test_stale_pid_file_naming_another_process_is_ignored_and_removed(
    data_dir: Path, bystander: subprocess.Popen[bytes]
) -> None:
    home = data_dir / "neo4j"
    home.mkdir(parents=True)
    pid_file = home / PID_FILE
    pid_file.write_text(f"{bystander.pid} {free_port()}\n")
    env = cli_env(data_dir, free_port(), PASSWORD)

    status = run_argweb(env, "db", "status")
    assert status.returncode == 1 and "not running" in status.stdout
    assert not pid_file.exists()  # stale file removed

    pid_file.write_text(f"{bystander.pid} {free_port()}\n")
    stop = run_argweb(env, "db", "stop")
    assert stop.returncode == 0 and "not running" in stop.stdout
    assert bystander.poll() is None and process_alive(bystander.pid)  # never signalled
    assert not is_launcher(bystander.pid, home)
    assert not pid_file.exists()


def test_password_stays_off_the_process_list_and_out_of_logs_and_a_different_one_is_refused(data_dir: Path) -> None:
    port = free_port()
    env = cli_env(data_dir, port, PASSWORD)
    started = run_argweb(env, "db", "start")
    assert started.returncode == 0, started.stderr
    server = EmbeddedNeo4j(data_dir / "neo4j", password=PASSWORD, port=port)
    info = server.info()
    assert info is not None and is_launcher(info.pid, data_dir / "neo4j")

    ps = subprocess.run(["ps", "-eo", "pid,args", "ww"], capture_output=True, text=True, check=True).stdout
    assert str(info.pid) in ps
    assert PASSWORD not in ps
    assert PASSWORD.encode() not in Path(f"/proc/{info.pid}/cmdline").read_bytes()
    # The environment carrying it is readable by the owner only.
    assert Path(f"/proc/{info.pid}/environ").stat().st_mode & 0o077 == 0

    driver = connect(info.uri, "neo4j", PASSWORD)
    try:
        rows, _, _ = driver.execute_query(
            "CALL dbms.listConfig() YIELD name, value "
            "WHERE name IN ['db.tx_log.rotation.retention_policy', 'db.tx_log.rotation.size'] RETURN name, value"
        )
        config = {r["name"]: r["value"] for r in rows}
        driver.execute_query("CREATE (:Probe {id: 'kept'})")
    finally:
        driver.close()
    assert config["db.tx_log.rotation.retention_policy"] == "256M size"
    assert config["db.tx_log.rotation.size"] in ("64.00MiB", str(64 * 1024 * 1024))

    assert run_argweb(env, "db", "stop").returncode == 0

    # A different password on the existing store: a clear refusal, no server left, no reset.
    wrong = run_argweb(cli_env(data_dir, port, OTHER), "db", "start")
    assert wrong.returncode == 1
    assert "rejected the configured password" in wrong.stderr + wrong.stdout
    assert "created with another one" in wrong.stderr + wrong.stdout
    assert OTHER not in wrong.stderr + wrong.stdout
    assert server.info() is None

    again = run_argweb(env, "db", "start")
    assert again.returncode == 0, again.stderr
    info = server.info()
    assert info is not None
    driver = connect(info.uri, "neo4j", PASSWORD)
    try:
        rows, _, _ = driver.execute_query("MATCH (p:Probe) RETURN p.id AS id")
    finally:
        driver.close()
    assert [r["id"] for r in rows] == ["kept"]
    assert run_argweb(env, "db", "stop").returncode == 0
    time.sleep(0.2)

    for log in (data_dir / "neo4j").rglob("*.log"):
        text = log.read_bytes()
        assert PASSWORD.encode() not in text, log
        assert OTHER.encode() not in text, log


def test_port_taken_message_names_the_setting_not_a_missing_option(data_dir: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_argweb(cli_env(data_dir, port, PASSWORD), "stats")
    out = result.stdout + result.stderr
    assert result.returncode == 1
    assert f"port {port} is already in use" in out
    assert "ARGWEB_NEO4J_PORT" in out
    assert "--port" not in out
