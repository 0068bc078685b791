"""Whether a process is alone with a store's file, told by locks on a side file.

A fetch lock is for the other processes sharing the file. A crawl that has
the file to itself (the usual case) needs none, nor a read for a record it
knows the file does not hold; docs/benchmarks.md measured those as 3.7% of a broad
crawl's CPU. So every process that opens the file holds OFD byte-range
locks (``fcntl``) on ``<file>.presence``, which the kernel drops when the
process ends, however it ends:

- byte 1, shared, for as long as the file is open: "I am here";
- byte 0, exclusive while alone, shared once sharing.

A process that finds byte 0 held exclusively waits (``JOIN_WAIT`` at most)
for a shared lock on it: the one that is alone sees the newcomer's byte 1
(``others_here``), writes the locks it held only in memory as rows, and
then turns its lock on byte 0 to shared (``let_in``). From then on both use
lock rows. One who waited in vain goes on sharing without byte 0 (a
duplicate fetch at worst) and keeps byte 1, so no one else is alone.

Where OFD locks are missing (not Linux), every process shares, as before.
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: every process shares
    fcntl = None  # type: ignore[assignment]

__all__ = ["JOIN_WAIT", "Presence"]

#: How long a newcomer waits for the process that is alone to start sharing
#: (it looks every ``sqlite._ALONE_CHECK_EVERY``): a stalled one costs a
#: duplicate fetch, never a stalled start.
JOIN_WAIT = 10.0
_JOIN_POLL = 0.005
_SHARING, _HERE = 0, 1  # the bytes locked
_FLOCK = "hhqqi4x"  # struct flock: type, whence, start, len, pid (0 for OFD locks)


def _lock(kind: int, byte: int) -> bytes:
    return struct.pack(_FLOCK, kind, os.SEEK_SET, byte, 1, 0)


class Presence:
    """This store's locks on ``<file>.presence``; ``alone`` until ``let_in``."""

    def __init__(self, fd: int | None, alone: bool) -> None:
        self._fd = fd
        self.alone = alone

    @classmethod
    def enter(cls, db_path: Path, wait: float = JOIN_WAIT) -> Presence:
        """Announce this process; alone if no other is here. May wait (call it in a thread)."""
        if fcntl is None or not hasattr(fcntl, "F_OFD_SETLK"):
            return cls(None, alone=False)
        try:
            # The file's own name: two paths to one file (a symlink) meet here.
            side = f"{os.path.realpath(db_path)}.presence"
            fd = os.open(side, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:  # a read-only directory: share, as before
            return cls(None, alone=False)
        presence = cls(fd, alone=False)
        try:
            presence._set(fcntl.F_RDLCK, _HERE)
            if presence._try(fcntl.F_WRLCK, _SHARING):
                if not presence.others_here():
                    presence.alone = True
                    return presence
                presence._set(fcntl.F_RDLCK, _SHARING)
                return presence
            deadline = time.monotonic() + wait
            while not presence._try(fcntl.F_RDLCK, _SHARING) and time.monotonic() < deadline:
                time.sleep(_JOIN_POLL)
        except OSError:
            presence.close()
            return cls(None, alone=False)
        return presence

    def others_here(self) -> bool:
        """Another store (process) has the file open: one system call."""
        if self._fd is None:
            return True
        probe = fcntl.fcntl(self._fd, fcntl.F_OFD_GETLK, _lock(fcntl.F_WRLCK, _HERE))
        kind: int = struct.unpack(_FLOCK, probe)[0]
        return kind != fcntl.F_UNLCK

    def let_in(self) -> None:
        """Let the newcomers in: from now on this process locks as they do."""
        self.alone = False
        if self._fd is not None:
            with contextlib.suppress(OSError):  # it waits JOIN_WAIT at most
                self._set(fcntl.F_RDLCK, _SHARING)

    def close(self) -> None:
        """Leave: the kernel drops the locks with the descriptor."""
        self.alone = False
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _try(self, kind: int, byte: int) -> bool:
        try:
            self._set(kind, byte)
        except (BlockingIOError, PermissionError):  # EAGAIN / EACCES: held by another
            return False
        return True

    def _set(self, kind: int, byte: int) -> None:
        assert self._fd is not None
        fcntl.fcntl(self._fd, fcntl.F_OFD_SETLK, _lock(kind, byte))
