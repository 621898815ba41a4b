"""Process and file primitives that every layer needs.

``ontology`` is the one package that ``graphstore``, ``gnn`` and ``api`` all import, so the few
operating-system helpers they share live here rather than being copied into each of them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); check its state.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp creates 0600; give the file the mode a plain open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Mode of argweb's own directories (data directory, Neo4j home): the owner only. The store, the
#: system database (users and password hashes), logs and exports inside are then out of every other
#: local user's reach whatever their own modes.
PRIVATE_DIR = 0o700
#: Mode of argweb's own files that hold data or secrets (password file, exports).
PRIVATE_FILE = 0o600
#: The umask of the processes argweb starts (Neo4j, the background API): files they create are 0600.
PRIVATE_UMASK = 0o077


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) if needed and make it the owner's alone (:data:`PRIVATE_DIR`).

    An existing directory of the same owner is restricted too (one created before this rule, or by
    another tool); one owned by someone else is left as it is (changing it is not ours to do).
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    info = path.stat()
    if info.st_uid == os.getuid() and info.st_mode & 0o777 != PRIVATE_DIR:
        os.chmod(path, PRIVATE_DIR)
    return path


def write_private(path: Path, text: str) -> bool:
    """Create ``path`` holding ``text`` with mode :data:`PRIVATE_FILE`, unless it exists.

    Created exclusively, so two processes writing at once keep the first one's content.

    Returns:
        Whether this call created the file.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise
    return True
