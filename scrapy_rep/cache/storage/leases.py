"""Fetch locks as short leases (docs/spec.md §3.5).

A process that holds an origin's fetch lock renews it every third of its TTL
for as long as it holds it, so however long a robots.txt takes, its lock
stays; a process that dies (``kill -9``) stops renewing and its lock lapses
within one TTL. Sooner than that, a lock whose token names a process of this
machine that is no longer running is taken over at once.

A token is ``host|pid namespace|pid|random.serial``: the random part
(drawn once per process) and the serial make it unique, the rest says who
holds it. Tokens of another form (older versions)
are only ever outlived, never judged.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable

__all__ = ["LOCK_TTL", "Leases", "Sleep", "holder_gone", "new_token"]

logger = logging.getLogger("scrapy_rep.cache.storage")

#: How long a fetch lock lives unless renewed: what a dead holder costs the others.
LOCK_TTL = 15.0

Renew = Callable[[str, str, float], Awaitable[bool]]
#: Waits that many seconds: ``asyncio.sleep``, or the crawl's own (under any
#: reactor) or a test's virtual clock.
Sleep = Callable[[float], Awaitable[object]]


def _pid_space() -> str:
    """This process's PID namespace: containers sharing a host name differ here."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


#: (pid, who this process is, its tokens' prefix): looked up once per
#: process, since a host name lookup can cost more than the rest of a lock
#: (160 µs seen here), and again in a fork, whose pid differs. Random bytes
#: are drawn then too, not per lock: a broad crawl takes a lock per origin.
_who: tuple[int, tuple[str, str, str], str] | None = None
_serials = itertools.count()


def _me() -> tuple[str, str, str]:
    return _identity()[1]


def _identity() -> tuple[int, tuple[str, str, str], str]:
    global _who
    pid = os.getpid()
    if _who is None or _who[0] != pid:
        me = (socket.gethostname().replace("|", "_"), _pid_space(), str(pid))
        _who = pid, me, "|".join((*me, uuid.uuid4().hex))
    return _who


def new_token() -> str:
    """A lock token naming this process (a fork names itself), unique to this lock."""
    return f"{_identity()[2]}.{next(_serials)}"


def holder_gone(token: str) -> bool:
    """True only when ``token``'s process ran on this machine and has ended.

    Anything unsure (another machine, another PID namespace, an older
    version's token, a platform without signal 0) is False: the lease decides.
    """
    parts = token.split("|")
    if len(parts) != 4:
        return False
    host, space, pid, me = *parts[:3], _me()
    if (host, space) != me[:2] or pid == me[2] or not (pid.isascii() and pid.isdigit()):
        return False
    return not _running(int(pid))


def _running(pid: int) -> bool:
    if os.name != "posix":
        return True  # os.kill would terminate it on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Killed but not yet reaped by its parent: gone for our purposes."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except OSError:
        return False


class Leases:
    """The fetch locks one store instance holds, each renewed until dropped.

    ``renew(key, token, ttl)`` extends the lock only if ``token`` still holds
    it; once it says no (another process took over after a stall), renewing
    that lock stops. One asyncio task renews them all, every third of the
    shortest TTL held, while any is held: a broad crawl holds a lock per new
    origin, and a task each (started, then cancelled) cost more than the lock.
    """

    def __init__(self, renew: Renew, *, sleep: Sleep = asyncio.sleep) -> None:
        self._renew = renew
        self._sleep = sleep
        self._held: dict[str, tuple[str, float]] = {}  # key -> (token, ttl)
        self._keeper: asyncio.Task[None] | None = None
        self._told = False

    def token(self, key: str) -> str | None:
        held = self._held.get(key)
        return held[0] if held is not None else None

    def hold(self, key: str, token: str, ttl: float) -> None:
        """Renew ``key``'s lock (``token``) within ``ttl / 3`` from now, and on."""
        self._held[key] = (token, ttl)
        if self._keeper is None:
            self._keeper = asyncio.get_running_loop().create_task(self._keep())

    def drop(self, key: str) -> str | None:
        """Stop renewing ``key``; its token, to release it with."""
        held = self._held.pop(key, None)
        if not self._held and self._keeper is not None:
            self._keeper.cancel()
            self._keeper = None
        return held[0] if held is not None else None

    def drop_all(self) -> dict[str, str]:
        held = {key: token for key, (token, _) in self._held.items()}
        for key in held:
            self.drop(key)
        return held

    def took_over(self, key: str, token: str) -> None:
        """Say (once per store, then at debug level) that a dead holder's lock was taken."""
        level = logging.DEBUG if self._told else logging.INFO
        self._told = True
        logger.log(
            level,
            "The robots.txt fetch lock of %s was held by process %s on this machine, "
            "which has ended: taken over",
            key,
            token.split("|")[2],
        )

    async def _keep(self) -> None:
        """Renew every lock held, every third of the shortest TTL, until none is.

        A lock taken since the last round is renewed early: never late."""
        while self._held:
            await self._sleep(min(ttl for _, ttl in self._held.values()) / 3)
            held = list(self._held.items())
            kept = await asyncio.gather(
                *(self._renew(key, token, ttl) for key, (token, ttl) in held),
                return_exceptions=True,
            )
            for (key, (token, _)), answer in zip(held, kept):
                if isinstance(answer, Exception):  # may lapse: a duplicate fetch at worst
                    logger.debug("Renewing the robots.txt fetch lock of %s failed: %r", key, answer)
                elif isinstance(answer, BaseException):
                    raise answer
                elif not answer:
                    logger.debug("The robots.txt fetch lock of %s was taken over", key)
                    if self.token(key) == token:
                        del self._held[key]  # the loop ends if it was the last
        self._keeper = None
