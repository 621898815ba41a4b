"""The HTTP API as a background process (``argweb serve --background`` / ``--stop``, the main job).

Like the embedded Neo4j (:class:`graphstore.runtime.EmbeddedNeo4j`): a detached process with a pid
file in the data directory, verified to answer ``/health`` before it counts as started; starting
again is a no-op while it answers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from api.settings import Settings
from graphstore.runtime import process_alive, process_cmdline
from ontology.errors import DatabaseUnavailableError

PID_FILE = "api.pid"
LOG_FILE = "api.log"


@dataclass(frozen=True)
class ApiInfo:
    """Where the background API listens."""

    pid: int
    host: str
    port: int

    @property
    def url(self) -> str:
        """The base URL (the graph page)."""
        return f"http://{self.host}:{self.port}/"


def _is_ours(pid: int, port: int) -> bool:
    """Whether ``pid`` is alive and is an ``argweb serve`` on ``port`` (pids are reused)."""
    if not process_alive(pid):
        return False
    argv = process_cmdline(pid)
    if argv is None:
        return not Path("/proc/self").exists()
    return "serve" in argv and "--port" in argv and str(port) in argv


class ApiServer:
    """Start, check and stop the background API of one data directory.

    Args:
        data_dir: Where the pid and log files live (the settings' data directory).
        host: Interface to listen on.
        port: TCP port.
        env: Environment of the server process (default: this process's).
    """

    def __init__(self, data_dir: Path, host: str = "127.0.0.1", port: int = 8000, env: dict[str, str] | None = None):
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port
        self.env = env

    @property
    def pid_file(self) -> Path:
        """``<pid> <host> <port>`` of the running server."""
        return self.data_dir / PID_FILE

    @property
    def log_file(self) -> Path:
        """Server output."""
        return self.data_dir / LOG_FILE

    def info(self) -> ApiInfo | None:
        """The running background API, or None (a stale pid file is removed)."""
        try:
            pid_s, host, port_s = self.pid_file.read_text().split()
            info = ApiInfo(int(pid_s), host, int(port_s))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self.pid_file.unlink(missing_ok=True)
            return None
        if not _is_ours(info.pid, info.port):
            self.pid_file.unlink(missing_ok=True)
            return None
        return info

    def healthy(self, info: ApiInfo, timeout: float = 5.0) -> bool:
        """Whether ``/health`` answers 200 with a JSON status (``ok`` or ``degraded``)."""
        try:
            with urllib.request.urlopen(f"http://{info.host}:{info.port}/health", timeout=timeout) as resp:
                return resp.status == 200 and "status" in json.loads(resp.read())
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def start(self, timeout: float = 60.0) -> ApiInfo:
        """Start ``argweb serve`` detached and wait until ``/health`` answers; no-op when it already does.

        Raises:
            DatabaseUnavailableError: The port is taken by another program, or the server exited or did
                not answer in time (the message ends with its log).
        """
        running = self.info()
        if running is not None and self.healthy(running):
            return running
        if running is not None:
            self.stop()
        with socket.socket() as s:
            if s.connect_ex((self.host, self.port)) == 0:
                raise DatabaseUnavailableError(
                    f"port {self.port} is already in use by another program; set ARGWEB_API_PORT to a free port"
                )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "api.cli", "serve", "--host", self.host, "--port", str(self.port)]
        with open(self.log_file, "wb") as log:
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=self.env,
            )
        info = ApiInfo(proc.pid, self.host, self.port)
        self.pid_file.write_text(f"{proc.pid} {self.host} {self.port}\n")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise DatabaseUnavailableError(f"the API exited with {proc.returncode}:\n{self._log_tail()}")
            if self.healthy(info, timeout=2.0):
                return info
            time.sleep(0.3)
        self.stop()
        raise DatabaseUnavailableError(
            f"the API did not answer on {info.url} within {timeout:.0f}s:\n{self._log_tail()}"
        )

    def stop(self, timeout: float = 20.0) -> bool:
        """Stop the background API (SIGTERM, then SIGKILL); False when none was running."""
        info = self.info()
        if info is None:
            return False
        os.kill(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process_alive(info.pid):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(info.pid, os.WNOHANG)
            time.sleep(0.2)
        if process_alive(info.pid):
            os.kill(info.pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return True

    def _log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"


def api_server(settings: Settings, host: str | None = None, port: int | None = None) -> ApiServer:
    """The background API of the settings' data directory, run with exactly these settings."""
    return ApiServer(settings.data_dir, host or settings.api_host, port or settings.api_port, env=settings.child_env())
