"""Where a data folder's local sockets live, and the checks a Unix socket needs to be
private: inside the data folder (owner-only) when the path fits a socket address, else
in an owner-only folder of the user's runtime or temporary folder, under a name
derived from the data folder. Standard library only: the `engram` entry point reads
it before anything heavy is imported."""

from __future__ import annotations

import hashlib
import os
import socket
import struct
import tempfile
from pathlib import Path

# sun_path holds 108 bytes on Linux (104 on macOS).
MAX_SOCKET_PATH = 100


def socket_path(data_dir: Path, file_name: str) -> Path:
    """The socket `file_name` of `data_dir`: in the folder, or where a long folder
    path still fits (the folder is made owner-only when missing)."""
    folder = data_dir.expanduser().resolve()
    inside = folder / file_name
    if len(os.fsencode(inside)) <= MAX_SOCKET_PATH:
        return inside
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and Path(runtime).is_dir() else Path(tempfile.gettempdir())
    private = base / f"engram-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    status = private.stat()
    if status.st_uid != os.getuid() or status.st_mode & 0o077:
        raise PermissionError(f"{private} is not a folder only you can open")
    return private / f"{digest}-{file_name}"


def peer_uid(connection: socket.socket) -> int | None:
    """The user id of the process at the other end (Linux), None where unknown."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return int(uid)
