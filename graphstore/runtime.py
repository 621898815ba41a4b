"""Run Neo4j Community embedded in a JVM with Bolt on localhost.

The JVM side is ``graphstore/java`` (a Maven project): :func:`build_launcher` compiles it and
copies the Neo4j jars; :class:`EmbeddedNeo4j` starts, checks and stops the server process.
Python only ever talks to it over Bolt through the official driver.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, DriverError, Neo4jError

from ontology.errors import DatabaseUnavailableError
from ontology.system import PRIVATE_FILE, PRIVATE_UMASK, private_dir, process_alive, write_private

JAVA_DIR = Path(__file__).with_name("java")
MAIN_CLASS = "org.argweb.neo4j.EmbeddedNeo4j"
PID_FILE = "argweb-neo4j.pid"
LOG_FILE = "argweb-neo4j.log"
LOCK_FILE = "argweb-neo4j.lock"
READY_MARKER = "argweb-neo4j ready"
# What `mvn package` names the launcher's own jar.
LAUNCHER_JAR = "argweb-neo4j-launcher-*.jar"
CLASS_ARCHIVE = "argweb-launcher.jsa"
# The launcher's JVM options besides the heap; recording the class archive uses the same ones.
LAUNCHER_JVM_OPTIONS = ("-XX:+UseG1GC",)
# Where an installed argweb builds its launcher: site-packages is not a build directory.
BUILD_CACHE = Path.home() / ".cache" / "argweb" / "launcher"


def _sources(java_dir: Path) -> list[Path]:
    return [java_dir / "pom.xml", *sorted((java_dir / "src").rglob("*"))]


def launcher_dir(java_dir: Path = JAVA_DIR, cache: Path = BUILD_CACHE) -> Path:
    """The directory Maven builds the launcher in (its ``target/`` holds classes and jars).

    In a checkout that is ``java_dir`` itself. In an installed package (``java_dir`` under
    ``site-packages`` or not writable) the sources are copied once into ``cache/<hash of the
    sources>`` and built there, so an upgrade with other sources gets a fresh build.
    """
    installed = any(part in ("site-packages", "dist-packages") for part in java_dir.resolve().parts)
    if not installed and os.access(java_dir, os.W_OK):
        return java_dir
    digest = hashlib.sha256()
    for src in _sources(java_dir):
        if src.is_file():
            digest.update(src.relative_to(java_dir).as_posix().encode() + b"\0" + src.read_bytes())
    work = cache / digest.hexdigest()[:16]
    if not (work / "pom.xml").is_file():
        tmp = work.with_name(work.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        shutil.copy2(java_dir / "pom.xml", tmp / "pom.xml")
        shutil.copytree(java_dir / "src", tmp / "src")
        try:
            tmp.rename(work)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another process got there first
    return work


# The launcher reads the password from its environment: a command line is visible to every local
# user (``ps``), the environment of a process only to its owner (``/proc/<pid>/environ`` is 0400).
PASSWORD_ENV = "ARGWEB_NEO4J_LAUNCH_PASSWORD"
TX_LOG_RETENTION = "256M size"
TX_LOG_ROTATION = 64 * 1024 * 1024
# The administrator every new Neo4j database has; the launcher sets its password.
BUILTIN_USER = "neo4j"
# Where the password of an embedded server is kept when none is configured (in its home, 0600).
PASSWORD_FILE = "argweb-password"
# The fixed password earlier versions gave every embedded store: a store that still has it is
# re-keyed to its stored password at the next start.
LEGACY_PASSWORD = "argweb-local-dev"


def stored_password(home: Path) -> str:
    """The password of the embedded server of ``home``: read from its password file, generated on first use.

    A random password per data directory (``secrets.token_urlsafe``), kept in ``home/argweb-password``
    with mode 0600 in a directory only the owner can enter: no other local user, and no process that
    knows a documented default, can log in.

    Raises:
        DatabaseUnavailableError: The file cannot be read or written.
    """
    path = private_dir(home) / PASSWORD_FILE
    try:
        write_private(path, secrets.token_urlsafe(24) + "\n")
        if path.stat().st_mode & 0o077:
            os.chmod(path, PRIVATE_FILE)
        password = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise DatabaseUnavailableError(f"{path}: cannot read or write the Neo4j password ({e.strerror})") from e
    if not password:
        raise DatabaseUnavailableError(f"{path}: the Neo4j password file is empty; remove it to get a new one")
    return password


def launcher_built(java_dir: Path = JAVA_DIR) -> bool:
    """True when the launcher jar and the Neo4j jars are in ``target/`` of its build directory."""
    target = launcher_dir(java_dir) / "target"
    return (
        (target / "classes" / "org" / "argweb" / "neo4j" / "EmbeddedNeo4j.class").exists()
        and any(target.glob(LAUNCHER_JAR))
        and any((target / "lib").glob("neo4j-kernel-*.jar"))
    )


def launcher_classpath(java_dir: Path = JAVA_DIR) -> str:
    """The JVM classpath of the launcher and of the importer: the launcher's jar and Neo4j's jars.

    Jars only, no class directory: class data sharing (:func:`class_archive`) maps classes from
    jars alone.
    """
    target = launcher_dir(java_dir) / "target"
    jars = sorted(target.glob(LAUNCHER_JAR))
    if not jars:
        raise DatabaseUnavailableError(
            f"the launcher jar is not in {target}; rebuild it (graphstore/java, `mvn package`)"
        )
    return os.pathsep.join([str(jars[-1]), str(target / "lib" / "*")])


def class_archive(java_dir: Path = JAVA_DIR) -> Path:
    """Where :func:`build_class_archive` keeps the launcher's class-data-sharing archive."""
    return launcher_dir(java_dir) / "target" / CLASS_ARCHIVE


def class_archive_options(java_dir: Path = JAVA_DIR) -> list[str]:
    """JVM options that map the archived classes, when there is an archive.

    A JVM given an archive it cannot use (another JDK, rebuilt jars) checks it at start and goes on
    without it, so a stale archive costs speed, never correctness.
    """
    path = class_archive(java_dir)
    return [f"-XX:SharedArchiveFile={path}"] if path.is_file() else []


def build_class_archive(java_dir: Path = JAVA_DIR, timeout: float = 300.0) -> bool:
    """Record the classes a server start loads into a class-data-sharing archive (JDK 13+).

    Neo4j loads about 16,000 classes from some 210 jars at every start; mapping most of them
    from an archive instead of reading, verifying and linking them cuts a start (a bulk load's
    import runs in the same JVM) by about a third. The archive is recorded by starting the
    launcher once on a throwaway store (a new store also runs the password statements, so the
    Cypher classes are in it) and stopping it; the JVM writes the archive as it exits. It is kept
    only if a JVM started with ``-Xshare:on`` (which refuses an unusable archive) accepts it.

    Returns:
        Whether an archive was written (False without Java, or when the JVM wrote none).
    """
    java = shutil.which("java")
    if java is None or not launcher_built(java_dir):
        return False
    final = class_archive(java_dir)
    tmp = final.with_name(f"{final.name}.tmp{os.getpid()}")
    classpath = launcher_classpath(java_dir)
    with tempfile.TemporaryDirectory(prefix="argweb-cds-") as home:
        log_path = Path(home) / "launcher.log"
        cmd = [
            java,
            *LAUNCHER_JVM_OPTIONS,
            f"-XX:ArchiveClassesAtExit={tmp}",
            # The dump lists every class it leaves out (dynamically generated ones): noise.
            "-Xlog:cds=off,cds+dynamic=off",
            "-cp",
            classpath,
            MAIN_CLASS,
            "--home",
            str(Path(home) / "neo4j"),
            "--port",
            str(free_port()),
        ]
        env = {**os.environ, PASSWORD_ENV: secrets.token_hex(16)}
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        try:
            deadline = time.monotonic() + timeout
            while proc.poll() is None and time.monotonic() < deadline:
                if READY_MARKER.encode() in log_path.read_bytes():
                    break
                time.sleep(0.2)
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    usable = (
        tmp.is_file()
        and subprocess.run(
            [java, "-Xshare:on", f"-XX:SharedArchiveFile={tmp}", "-cp", classpath, "-version"],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )
    if usable:
        os.replace(tmp, final)
    else:
        tmp.unlink(missing_ok=True)
    return usable


def launcher_stale(java_dir: Path = JAVA_DIR) -> bool:
    """True when the launcher sources or ``pom.xml`` changed after the last build."""
    java_dir = launcher_dir(java_dir)
    built = java_dir / "target" / "classes" / "org" / "argweb" / "neo4j" / "EmbeddedNeo4j.class"
    try:
        built_at = built.stat().st_mtime
    except OSError:
        return True
    sources = [java_dir / "pom.xml", *(java_dir / "src").rglob("*.java")]
    return any(src.stat().st_mtime > built_at for src in sources if src.exists())


def build_launcher(java_dir: Path = JAVA_DIR, quiet: bool = True, log: Callable[[str], None] | None = None) -> None:
    """Compile the launcher with Maven (jars come from Maven Central, cached in ``~/.m2``).

    The build runs in :func:`launcher_dir` (the sources themselves in a checkout, a cache
    directory for an installed package). The class archive of the previous build is replaced
    (:func:`build_class_archive`); a build without one still works, only starts more slowly.
    ``log`` receives Maven's output (set-up writes it to its log file).

    Raises:
        DatabaseUnavailableError: Maven is missing or the build failed.
    """
    java_dir = launcher_dir(java_dir)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise DatabaseUnavailableError("Maven (mvn) is not on PATH; it is needed to build the embedded Neo4j launcher")
    class_archive(java_dir).unlink(missing_ok=True)
    cmd = [mvn, "-B", "package", "-DskipTests"] + (["-q"] if quiet else [])
    proc = subprocess.run(cmd, cwd=java_dir, capture_output=True, text=True, check=False)
    if log is not None:
        log(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not launcher_built(java_dir):
        raise DatabaseUnavailableError(
            f"Maven build of {java_dir} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    build_class_archive(java_dir)


def free_port() -> int:
    """A TCP port on localhost that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def process_cmdline(pid: int) -> list[str] | None:
    """The argument vector of ``pid`` (None where ``/proc`` cannot tell)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def is_launcher(pid: int, data_dir: Path) -> bool:
    """Whether ``pid`` is alive and is the embedded-Neo4j launcher of ``data_dir``.

    A pid file outlives a killed JVM, and the kernel reuses pids: before a pid from the file is
    reported or signalled, its command line must name the launcher class and this data directory.
    Where ``/proc`` is missing (not Linux) only liveness is checked.
    """
    if not process_alive(pid):
        return False
    argv = process_cmdline(pid)
    if argv is None:
        return not Path("/proc/self").exists()
    home = str(Path(data_dir).resolve())
    return MAIN_CLASS in argv and any(a == "--home" and b == home for a, b in itertools.pairwise(argv))


@dataclass
class _StartLock:
    """A data directory's start lock as this process holds it: threads queue on ``lock``, the file
    lock is taken by the outermost holder (``depth`` 1) and kept in ``fd``."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    depth: int = 0
    fd: int = -1


_LOCKS: dict[str, _StartLock] = {}
_LOCKS_GUARD = threading.Lock()


class _HasPid(Protocol):
    @property
    def pid(self) -> int: ...


InfoT = TypeVar("InfoT", bound=_HasPid)


class DetachedProcess(Generic[InfoT]):
    """A detached server process of one data directory, found again through its pid file.

    The embedded Neo4j and the background API both run this way: started in a new session with
    its output in a log file, a pid file (``<pid> <fields>``) naming the running process, and
    verified to answer before it counts as started. Subclasses say what the pid file holds and how
    to tell that a live pid is really theirs (the kernel reuses pids).

    Attributes:
        data_dir: Where the pid and log files live.
    """

    PID_NAME: ClassVar[str]
    LOG_NAME: ClassVar[str]
    # How messages name the process ("embedded Neo4j", "the API").
    NAME: ClassVar[str]
    STOP_TIMEOUT: ClassVar[float] = 60.0

    data_dir: Path

    @property
    def pid_file(self) -> Path:
        """File naming the running process: its pid, then where it listens."""
        return self.data_dir / self.PID_NAME

    @property
    def log_file(self) -> Path:
        """The process's stdout and stderr."""
        return self.data_dir / self.LOG_NAME

    def _parse(self, fields: Sequence[str]) -> InfoT:
        """The info a pid file's fields describe (ValueError when they do not fit)."""
        raise NotImplementedError

    def _fields(self, info: InfoT) -> Sequence[object]:
        """What the pid file records of ``info``, in :meth:`_parse` order."""
        raise NotImplementedError

    def _owns(self, info: InfoT) -> bool:
        """Whether ``info.pid`` is alive and is this kind of process of this data directory."""
        raise NotImplementedError

    def _started(self, pid: int) -> InfoT:
        """The info of the process just started as ``pid``."""
        raise NotImplementedError

    def _ready(self, info: InfoT) -> bool:
        """Whether the started process answers (raises DatabaseUnavailableError when it never will)."""
        raise NotImplementedError

    LOCK_NAME: ClassVar[str] = ""

    def _lock_path(self) -> Path:
        return Path(self.data_dir).resolve() / (self.LOCK_NAME or f"{self.PID_NAME}.lock")

    def restarting(self) -> bool:
        """Whether a process holds this data directory's start lock now (:meth:`exclusive`): the
        server is being stopped or started on purpose, as a bulk load does from the stop to the
        start on the imported store. No I/O beyond one non-blocking ``flock`` try."""
        try:
            fd = os.open(self._lock_path(), os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing the descriptor also lets go of a lock this try took
        return False

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold this data directory's start lock (an ``flock``, re-entrant within the process).

        Starting and stopping happen under it: two processes starting the same server at once
        would otherwise both launch one (and the second would stop the first while it is still
        coming up, or importing), and a bulk load holds it from stopping the server to starting it
        on the imported store.
        """
        key = str(self._lock_path())
        with _LOCKS_GUARD:
            held = _LOCKS.setdefault(key, _StartLock())
        with held.lock:
            if held.depth == 0:
                Path(self.data_dir).mkdir(parents=True, exist_ok=True)
                fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    os.close(fd)
                    raise
                held.fd = fd
            held.depth += 1
            try:
                yield
            finally:
                held.depth -= 1
                if held.depth == 0:
                    fcntl.flock(held.fd, fcntl.LOCK_UN)
                    os.close(held.fd)
                    held.fd = -1

    def info(self) -> InfoT | None:
        """The running process of this data directory, or None.

        A pid file whose process is gone, or is now some other program (pids are reused), is stale:
        it is removed and None returned, so that nothing unrelated is reported or signalled.
        """
        try:
            info = self._parse(self.pid_file.read_text().split())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self.pid_file.unlink(missing_ok=True)
            return None
        if not self._owns(info):
            self.pid_file.unlink(missing_ok=True)
            return None
        return info

    def _check_port_free(self, host: str, port: int, hint: str) -> None:
        with socket.socket() as s:
            if s.connect_ex((host, port)) == 0:
                raise DatabaseUnavailableError(f"port {port} is already in use by another program; {hint}")

    def _launch(
        self,
        cmd: list[str],
        env: dict[str, str] | None,
        where: str,
        timeout: float,
        poll: float,
        cwd: Path | None = None,
    ) -> InfoT:
        """Start ``cmd`` detached (in ``cwd``, default the caller's), record it in the pid file and wait
        until it is :meth:`_ready`.

        :meth:`_ready` raising :class:`DatabaseUnavailableError` means the process came up but cannot be
        used: it is stopped rather than left behind, and the error goes on.

        Raises:
            DatabaseUnavailableError: The process exited, or was not ready within ``timeout`` seconds
                (the message ends with its log).
        """
        private_dir(self.data_dir)
        # The log may hold paths and queries: the owner's alone, like everything the process writes.
        fd = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        os.fchmod(fd, PRIVATE_FILE)
        with open(fd, "wb") as log:
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                cwd=cwd,
                umask=PRIVATE_UMASK,
            )
        info = self._started(proc.pid)
        self.pid_file.write_text(" ".join(str(f) for f in self._fields(info)) + "\n")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise DatabaseUnavailableError(f"{self.NAME} exited with {proc.returncode}:\n{self._log_tail()}")
            try:
                if self._ready(info):
                    return info
            except DatabaseUnavailableError:
                self.stop()
                raise
            time.sleep(poll)
        self.stop()
        raise DatabaseUnavailableError(
            f"{self.NAME} did not answer on {where} within {timeout:.0f}s:\n{self._log_tail()}"
        )

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the process (SIGTERM, then SIGKILL after ``timeout`` seconds); False if none was running."""
        info = self.info()
        if info is None:
            return False
        os.kill(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + (self.STOP_TIMEOUT if timeout is None else timeout)
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


@dataclass
class ServerInfo:
    """Where a running embedded server listens."""

    pid: int
    port: int
    data_dir: Path

    @property
    def uri(self) -> str:
        """Bolt URI."""
        return f"bolt://127.0.0.1:{self.port}"


@dataclass(eq=False)
class EmbeddedNeo4j(DetachedProcess[ServerInfo]):
    """Start, check and stop the embedded Neo4j of one data directory.

    Args:
        data_dir: Neo4j home (databases, transaction logs, pid and log files).
        password: Password of the built-in user (set when the store is new; checked at every start).
        port: Bolt port on 127.0.0.1.
        heap: JVM ``-Xmx`` value.
        pagecache: Page cache size in bytes.
        java_dir: The Maven launcher project.
        tx_log_retention: Neo4j transaction-log retention policy (``db.tx_log.rotation.retention_policy``).
        tx_log_rotation: Size in bytes at which a transaction log file is rotated.
        user: User the driver logs in as (the server's built-in administrator is ``neo4j``).
        rekey_from: A password the store may still have (:data:`LEGACY_PASSWORD`): when ``password``
            is refused and this one is accepted, the store is re-keyed to ``password`` at start.
    """

    PID_NAME = PID_FILE
    LOG_NAME = LOG_FILE
    LOCK_NAME = LOCK_FILE
    NAME = "embedded Neo4j"

    data_dir: Path
    password: str = field(repr=False)
    port: int = 7687
    heap: str = "2g"
    pagecache: int = 512 * 1024 * 1024
    java_dir: Path = JAVA_DIR
    tx_log_retention: str = TX_LOG_RETENTION
    tx_log_rotation: int = TX_LOG_ROTATION
    user: str = BUILTIN_USER
    rekey_from: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)
        # Absolute: the JVM runs in the data directory, so a relative launcher path would not resolve.
        self.java_dir = Path(os.path.abspath(self.java_dir))

    def _parse(self, fields: Sequence[str]) -> ServerInfo:
        pid_s, port_s = fields
        return ServerInfo(pid=int(pid_s), port=int(port_s), data_dir=self.data_dir)

    def _fields(self, info: ServerInfo) -> Sequence[object]:
        return (info.pid, info.port)

    def _owns(self, info: ServerInfo) -> bool:
        return is_launcher(info.pid, self.data_dir)

    def _started(self, pid: int) -> ServerInfo:
        return ServerInfo(pid=pid, port=self.port, data_dir=self.data_dir)

    def _ready(self, info: ServerInfo) -> bool:
        # Bolt listens before the launcher has set the password: wait for its ready line. A wrong
        # password for an existing store raises, and the server nobody can use is stopped.
        return self._ready_logged() and self._bolt_ok(info.uri)

    def _bolt_ok(self, uri: str) -> bool:
        try:
            with GraphDatabase.driver(uri, auth=(self.user, self.password)) as driver:
                driver.verify_connectivity()
            return True
        except AuthError as e:
            if self._rekey(uri):
                return True
            raise DatabaseUnavailableError(
                f"Neo4j at {uri} (data {self.data_dir}) rejected the configured password: the store was created "
                "with another one and keeps it. Set ARGWEB_NEO4J_PASSWORD to the password of this store, or use "
                f"another data directory (removing {self.data_dir} deletes the graph)"
            ) from e
        except (DriverError, Neo4jError, OSError):
            return False

    def _rekey(self, uri: str) -> bool:
        """Change the password of a store that still has :attr:`rekey_from` to :attr:`password`.

        Returns:
            Whether the store was re-keyed (False: it does not have that password either).
        """
        if not self.rekey_from or self.rekey_from == self.password:
            return False
        try:
            with GraphDatabase.driver(uri, auth=(self.user, self.rekey_from)) as driver:
                driver.execute_query(
                    "ALTER CURRENT USER SET PASSWORD FROM $old TO $new",
                    {"old": self.rekey_from, "new": self.password},
                    database_="system",
                )
        except (DriverError, Neo4jError, OSError):
            return False
        return True

    def start(self, timeout: float = 180.0, import_args: Path | None = None) -> ServerInfo:
        """Start the server in the background and wait until Bolt answers; no-op if running.

        Args:
            timeout: Seconds to wait for Bolt to answer (an import included).
            import_args: A file of ``neo4j-admin`` arguments, one per line, that the launcher runs
                before the server starts (the bulk first load's import, :mod:`graphstore.bulk`).
                Only for a stopped server: refused if one is running.

        Raises:
            DatabaseUnavailableError: Java or the launcher is missing, the port is taken, or the server did
                not come up in time (the message includes the end of its log).
        """
        with self.exclusive():
            return self._start(timeout, import_args)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the server (under the start lock, so that no start overlaps it); False if none ran."""
        with self.exclusive():
            return super().stop(timeout)

    def _start(self, timeout: float, import_args: Path | None) -> ServerInfo:
        running = self.info()
        if running is not None and import_args is not None:
            raise DatabaseUnavailableError(f"{self.NAME} of {self.data_dir} is running; stop it before an import")
        if running is not None and self._bolt_ok(running.uri):
            return running
        if running is not None:
            self.stop()
        java = shutil.which("java")
        if java is None:
            raise DatabaseUnavailableError("java is not on PATH; Java 17 is needed for the embedded Neo4j")
        # A checkout with an older build in target/ must not run a launcher its sources no longer match.
        if not launcher_built(self.java_dir) or launcher_stale(self.java_dir):
            build_launcher(self.java_dir)
        self._check_port_free(
            "127.0.0.1", self.port, "set ARGWEB_NEO4J_PORT to a free port (or stop the program using it)"
        )
        cmd = [
            java,
            f"-Xmx{self.heap}",
            *LAUNCHER_JVM_OPTIONS,
            *class_archive_options(self.java_dir),
            "-cp",
            launcher_classpath(self.java_dir),
            MAIN_CLASS,
            "--home",
            str(self.data_dir.resolve()),
            "--port",
            str(self.port),
            "--pagecache",
            str(self.pagecache),
            "--tx-log-retention",
            self.tx_log_retention,
            "--tx-log-rotation",
            str(self.tx_log_rotation),
        ]
        if import_args is not None:
            cmd += ["--import-args", str(Path(import_args).resolve())]
        # The child inherits this environment plus the password (Popen takes a whole mapping).
        env = {**os.environ, PASSWORD_ENV: self.password}
        # The JVM works in the data directory: a file Neo4j or its importer writes under a relative
        # name (the importer's default report, for one) lands there, not where the CLI was run.
        return self._launch(cmd, env, f"bolt://127.0.0.1:{self.port}", timeout, poll=0.1, cwd=self.data_dir)

    def driver(self) -> Driver:
        """A driver for the running server."""
        info = self.info()
        if info is None:
            raise DatabaseUnavailableError(f"no embedded Neo4j is running for {self.data_dir}; run `argweb db start`")
        return connect(info.uri, self.user, self.password)

    def _ready_logged(self) -> bool:
        marker = READY_MARKER.encode()
        try:
            with open(self.log_file, "rb") as fh:
                return marker in fh.read()
        except OSError:
            return False


# Seconds a command's driver retries a failed transaction (a deadlock, a server gone) before it fails.
COMMAND_RETRY_S = 5.0


def connect(uri: str, user: str, password: str, *, timeout: float | None = None) -> Driver:
    """Open and verify a driver for any Neo4j (``bolt://``, ``neo4j://``, ``neo4j+s://``).

    Args:
        uri: Bolt URI.
        user: User name.
        password: Password.
        timeout: Seconds a managed transaction may spend failing to reach the server: half of
            it for each of two attempts to get a connection (open one, or wait for the pool), and
            one retry about a second after the first failure (a pooled connection can be stale
            after a server restart). None: the driver's defaults (30 s per connection, 60 s for the
            pool) with :data:`COMMAND_RETRY_S` of retries suit a batch job that would rather wait
            than fail; a server answering clients (the API) passes a few seconds so that a
            database outage is reported at once.

    Raises:
        DatabaseUnavailableError: The server cannot be reached or refuses the credentials.
    """
    # argweb's own statements are checked by its tests; server notifications (e.g. "property key
    # not in the graph yet" on an empty database) would only flood the CLI output.
    if timeout is None:
        # Retries of a failed transaction end after COMMAND_RETRY_S, not the driver's 30 s: a command
        # whose server went away says so within seconds (transient conflicts are retried again on
        # top, by graphstore.statements.retrying).
        driver = GraphDatabase.driver(
            uri, auth=(user, password), notifications_min_severity="OFF", max_transaction_retry_time=COMMAND_RETRY_S
        )
    else:
        # The driver sleeps ~1 s (then 2, 4...) between attempts and stops once the retry time
        # has passed since the first failure: 0.5 s gives exactly one retry.
        driver = GraphDatabase.driver(
            uri,
            auth=(user, password),
            notifications_min_severity="OFF",
            connection_timeout=timeout / 2,
            connection_acquisition_timeout=timeout / 2,
            max_transaction_retry_time=min(0.5, timeout / 2),
        )
    try:
        driver.verify_connectivity()
    except (DriverError, Neo4jError, OSError) as e:
        driver.close()
        hint = " (is ARGWEB_NEO4J_PASSWORD set to this server's password?)" if isinstance(e, AuthError) else ""
        raise DatabaseUnavailableError(f"cannot connect to Neo4j at {uri}: {e}{hint}") from e
    return driver
