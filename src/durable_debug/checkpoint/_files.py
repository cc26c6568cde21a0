"""What the operating system allows on a SQLite store's file, said plainly.

A SQLite error for a file the process may not read or write ("unable to open database file",
"attempt to write a readonly database") reads like a damaged file; :func:`access_problem` says
instead which permission is missing, on which path, for which user:

    problem = access_problem("runs.db", write=True)
    # "permission denied: user 'bob' (uid 1001) cannot write /srv/runs.db (mode 644, owner alice)"
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

__all__ = ["access_problem", "foreign_file", "user_name"]


def user_name(uid: int) -> str:
    """The login name of ``uid``, or the number when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _describe(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return str(path)
    return f"{path} (mode {stat.S_IMODE(st.st_mode):03o}, owner {user_name(st.st_uid)})"


def access_problem(path: str | os.PathLike[str], *, write: bool) -> str | None:
    """A one-line "permission denied" naming the path and the user when this process may not
    read the file (or, with ``write``, write it or create its ``-wal`` / ``-shm`` files beside
    it); None when the permissions allow it (or the file does not exist)."""
    file = Path(path).resolve()
    uid = os.geteuid()
    who = f"user {user_name(uid)!r} (uid {uid})"
    if not file.exists():
        return None
    if not os.access(file, os.R_OK):
        return f"permission denied: {who} cannot read {_describe(file)}"
    if write:
        if not os.access(file, os.W_OK):
            return f"permission denied: {who} cannot write {_describe(file)}"
        for suffix in ("-wal", "-shm"):
            side = Path(str(file) + suffix)
            if side.exists() and not os.access(side, os.R_OK | os.W_OK):
                return f"permission denied: {who} cannot write {_describe(side)}"
        folder = file.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            return (
                f"permission denied: {who} cannot create files in {_describe(folder)} "
                "(SQLite writes its -wal and -shm files beside the store)"
            )
    return None


def foreign_file(path: str | os.PathLike[str]) -> bool:
    """Whether this process is not the owner of the file, or may not write it: a reader must
    then create no file beside it (a ``-wal`` / ``-shm`` it created would be its own, and the
    owner could no longer write the store)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid != os.geteuid() or not os.access(path, os.W_OK)
