"""What the Tester prints in its terminal (docs/tester.md, "Safety"): nothing for
a malformed request (refused 400, no traceback), and a note when the
open-files limit allows fewer connections than asked."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager

from scrapy_rep.tools.tester import server as tester_server
from scrapy_rep.tools.tester.guard import Limits

from .conftest import Running
from .test_tester_security import PATIENCE
from .test_tester_server import serve_here


class Kept(logging.Handler):
    """A handler that keeps what reaches it: a terminal's, as a user's logging has."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def as_in_a_terminal(name: str) -> Iterator[Kept]:
    """Logging as outside the test run: pytest's capture handlers taken off the
    logger ``name`` (it hooks every logger), a handler of our own on the root
    logger and as Python's last resort (what prints when no handler is found)."""
    logger = logging.getLogger(name)
    pytests = [h for h in logger.handlers if type(h).__module__.startswith("_pytest")]
    kept, last_resort, root = Kept(), logging.lastResort, logging.getLogger()
    for handler in pytests:
        logger.removeHandler(handler)
    root.addHandler(kept)
    logging.lastResort = kept
    try:
        yield kept
    finally:
        logging.lastResort = last_resort
        root.removeHandler(kept)
        for handler in pytests:
            logger.addHandler(handler)


def test_a_malformed_request_is_refused_and_prints_nothing(
    start_tester: Callable[..., Running],
) -> None:
    port = start_tester().server.server_address[1]
    malformed = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nno colon here\r\n\r\n".encode()
    wire = "scrapy_rep.tools.tester.wire"
    connection = socket.create_connection(("127.0.0.1", port), PATIENCE)
    with as_in_a_terminal(wire) as terminal, closing(connection) as sock:
        sock.sendall(malformed)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.split(b"\r\n", 1)[0].endswith(b" 400 Bad Request")
    assert [r.getMessage() for r in terminal.records if r.name.startswith("scrapy_rep")] == []


def test_serve_notes_when_the_open_files_limit_allows_fewer_connections() -> None:
    wanted = 10**9  # past any hard limit: the Tester raises its soft one as far as it may
    served = serve_here(
        tester_server.TesterConfig(
            limits=Limits(request_timeout=PATIENCE * 3, max_connections=wanted)
        ),
        "127.0.0.1",
    )
    assert served.failures == [] and served.page == 200 and served.code == 0
    note = re.fullmatch(
        rf"note: at most (\d+) connections at once, not {wanted}: the open-files "
        r"limit \(ulimit -n\) allows no more\n",
        served.warned,
    )
    assert note is not None and 0 < int(note.group(1)) < wanted
