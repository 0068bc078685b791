"""Room for the Tester's connections in the open-files limit (docs/tester.md, "Safety").

Each open connection is a file descriptor. Many systems give a process 1,024
(``ulimit -n``, the soft limit) while allowing far more (the hard limit):
the Tester raises its soft limit to fit ``Limits.max_connections``, so that
the connection past the bound is answered 503 rather than refused by the
kernel (``accept`` failing with EMFILE stalls the whole server).
"""

from __future__ import annotations

from typing import Final

try:
    import resource
except ImportError:  # not on Windows: its sockets are not counted against such a limit
    resource = None  # type: ignore[assignment]

__all__ = ["RESERVE", "room_for"]

#: Descriptors kept for everything else: the listening socket, stdio, a
#: SQLite store, live fetches, the interpreter's own files.
RESERVE: Final = 128


def room_for(connections: int) -> int:
    """How many connections fit, the soft limit raised (up to the hard one) to fit them."""
    if resource is None:
        return connections
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):  # a platform that refuses: keep what there is
            pass
    if soft == resource.RLIM_INFINITY:
        return connections
    return max(1, min(connections, soft - RESERVE))
