"""The Tester's calls at once (docs/tester.md, "The server"): sixteen live fetches at
most; a stop neither waits for those under way nor starts those still queued."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from crawler.servers import Behaviour, Reply, SiteServer

from .conftest import Running
from .test_tester_security import PATIENCE

#: The API's worker threads, as docs/tester.md ("The server") gives them.
WORKERS = 16


def until(done: Callable[[], bool]) -> bool:
    """Whether ``done()`` came true within PATIENCE (a bound, never a measure)."""
    deadline = time.monotonic() + PATIENCE
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def workers_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tester_")]


def test_a_stop_leaves_the_calls_under_way_and_never_starts_the_queued_ones(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester(timeout=PATIENCE * 3)
    release = threading.Event()

    def held(host: str) -> Behaviour:
        release.wait(PATIENCE * 3)
        return Reply(404)

    with SiteServer({"/robots.txt": held}) as site:
        url = site.url("/robots.txt")

        def call() -> None:
            with contextlib.suppress(Exception):  # cut by the stop
                tester.call(f"/api/live?url={url}")

        callers = [threading.Thread(target=call, daemon=True) for _ in range(WORKERS + 1)]
        for caller in callers:
            caller.start()
        assert until(lambda: site.count("/robots.txt") >= WORKERS)
        stopping = threading.Thread(target=tester.server.shutdown, daemon=True)
        stopping.start()
        stopping.join(PATIENCE)
        stopped_while_held = not stopping.is_alive()
        release.set()  # the fetches under way end; a queued one would start now
        assert until(lambda: not workers_alive())
        assert stopped_while_held  # the stop did not wait for the fetches
        assert site.count("/robots.txt") == WORKERS  # the 17th call was never made
