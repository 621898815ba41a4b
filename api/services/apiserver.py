"""The HTTP API as a background process (``argweb serve --background`` / ``--stop``, the main job).

Like the embedded Neo4j (:class:`graphstore.runtime.EmbeddedNeo4j`): a detached process with a pid
file in the data directory, verified to answer ``/health`` before it counts as started; starting
again is a no-op while it answers.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from api.settings import Settings
from graphstore.runtime import DetachedProcess, process_alive, process_cmdline

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


class ApiServer(DetachedProcess[ApiInfo]):
    """Start, check and stop the background API of one data directory.

    Args:
        data_dir: Where the pid and log files live (the settings' data directory).
        host: Interface to listen on.
        port: TCP port.
        env: Environment of the server process (default: this process's).
    """

    PID_NAME = PID_FILE
    LOG_NAME = LOG_FILE
    NAME = "the API"
    STOP_TIMEOUT = 20.0

    def __init__(self, data_dir: Path, host: str = "127.0.0.1", port: int = 8000, env: dict[str, str] | None = None):
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port
        self.env = env

    def _parse(self, fields: Sequence[str]) -> ApiInfo:
        pid_s, host, port_s = fields
        return ApiInfo(int(pid_s), host, int(port_s))

    def _fields(self, info: ApiInfo) -> Sequence[object]:
        return (info.pid, info.host, info.port)

    def _owns(self, info: ApiInfo) -> bool:
        """Whether ``info.pid`` is alive and is an ``argweb serve`` on its port (pids are reused)."""
        if not process_alive(info.pid):
            return False
        argv = process_cmdline(info.pid)
        if argv is None:
            return not Path("/proc/self").exists()
        return "serve" in argv and "--port" in argv and str(info.port) in argv

    def _started(self, pid: int) -> ApiInfo:
        return ApiInfo(pid, self.host, self.port)

    def _ready(self, info: ApiInfo) -> bool:
        return self.healthy(info, timeout=2.0)

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
        self._check_port_free(self.host, self.port, "set ARGWEB_API_PORT to a free port")
        cmd = [sys.executable, "-m", "api.cli", "serve", "--host", self.host, "--port", str(self.port)]
        return self._launch(cmd, self.env, f"http://{self.host}:{self.port}/", timeout, poll=0.3)


def api_server(settings: Settings, host: str | None = None, port: int | None = None) -> ApiServer:
    """The background API of the settings' data directory, run with exactly these settings."""
    return ApiServer(settings.data_dir, host or settings.api_host, port or settings.api_port, env=settings.child_env())
