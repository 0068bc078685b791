"""robots.txt over FTP, read up to a byte cap (docs/spec.md §1.6, §4.3).

Scrapy's FTP handler reads a file whole into memory and sends no
``bytes_received`` signal, so the HTTP fetch's cut-off never fires: a 1 GB
robots.txt would be read in full. This reads the file itself, with Twisted's
FTP client (anonymous unless FTP_USER/FTP_PASSWORD say otherwise), and closes
the data connection once the cap is reached; what arrived is parsed.

Twisted's FTP client needs Twisted's reactor. In Scrapy's reactorless mode
(``TWISTED_REACTOR_ENABLED = False``) there is none, and Scrapy has no FTP
handler there either: the fetch raises ``FtpWithoutReactor``, so the origin's
robots.txt is unreachable (closed early in the outage, never allow-all:
docs/decisions.md, "Reactorless mode").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlsplit

from scrapy.http import Response
from twisted.internet.protocol import ClientCreator, Protocol

from scrapy_rep.crawler.async_bridge import reactorless, wait

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["FtpWithoutReactor", "download_ftp"]

#: FTP reply codes and the HTTP status they stand for, as Scrapy maps them.
_NOT_FOUND: Final = "550"
#: The flag a response read only up to the cap carries (as the HTTP path's).
STOPPED: Final = "download_stopped"


class FtpWithoutReactor(ConnectionError):
    """An ftp:// robots.txt asked for in reactorless mode: it cannot be fetched."""

    def __init__(self) -> None:
        super().__init__(
            "ftp:// cannot be fetched without a Twisted reactor "
            "(TWISTED_REACTOR_ENABLED = False): Scrapy has no FTP handler then"
        )


class _Capped(Protocol):
    """Keeps the first ``limit`` bytes, then hangs up the data connection."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.cut = False

    def dataReceived(self, data: bytes) -> None:
        room = self.limit - self.size
        if room > 0:
            kept = data[:room]
            self.chunks.append(kept)
            self.size += len(kept)
        if self.size >= self.limit and not self.cut:
            self.cut = True
            transport: Any = self.transport
            transport.loseConnection()


async def download_ftp(url: str, limit: int, settings: BaseSettings, timeout: float) -> Response:
    """The file at ``url`` as a Response: 200 with at most ``limit`` bytes
    (flagged ``download_stopped`` when cut), 404 when the server has no such
    file, 503 for another refusal. Connection errors and timeouts raise, and
    so does reactorless mode (``FtpWithoutReactor``)."""
    if reactorless():
        raise FtpWithoutReactor
    from twisted.internet import reactor
    from twisted.protocols.ftp import CommandFailed, FTPClient

    parts = urlsplit(url)
    creator = ClientCreator(  # type: ignore[no-untyped-call]
        reactor,
        FTPClient,
        settings.get("FTP_USER", "anonymous"),
        settings.get("FTP_PASSWORD", "guest"),
        passive=1 if settings.getbool("FTP_PASSIVE_MODE", True) else 0,
    )
    connecting = creator.connectTCP(  # type: ignore[no-untyped-call]
        parts.hostname or "", parts.port or 21, timeout=timeout
    )
    client: Any = await wait(connecting.addTimeout(timeout, reactor))
    body = _Capped(limit)
    try:
        retrieving = client.retrieveFile(unquote(parts.path), body)
        await wait(retrieving.addTimeout(timeout, reactor))
    except CommandFailed as failed:
        if body.cut:  # the server complains that we hung up: we have what we need
            pass
        else:
            status = 404 if _NOT_FOUND in str(failed) else 503
            return Response(url, status=status, body=str(failed).encode())
    except Exception:
        if not body.cut:
            raise
    finally:
        if client.transport is not None:
            client.transport.loseConnection()
    flags = [STOPPED] if body.cut else []
    return Response(url, status=200, body=b"".join(body.chunks), flags=flags)
