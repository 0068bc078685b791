"""What one request costs each robots.txt middleware, its origin's answer known.

A crawl's per-request overhead in isolation: no network, no engine loop, the
same warm origins for both. Scrapy's built-in middleware is timed on its
``process_request`` (Protego deciding); scrapy_rep on its three steps, as a
request meets them: the spider middleware's check before the scheduler
(``early``: the verdict, or the drop), the downloader middleware's check at
download (``process_request``) and ``process_response``. Each request is a
new ``Request``, so ``urlparse_cached`` runs once per request in both (the
first of scrapy_rep's steps pays it); one request in 20 is disallowed.

    .venv/bin/python benchmarks/per_request.py [--requests 20000] [--runs 5]

Microseconds per request, best of ``--runs``: each step's time divided by
all the requests (so ``early drops``, the 1 in 20 dropped before the
scheduler with their log line, stat and signal, is their share); read the
totals side by side.
What a whole crawl costs (Scrapy's own work included) is ``crawl.py`` and
``broad_crawl.py --preset cpu``. Uses Scrapy's private ``_create_spider`` and
``_create_engine`` to get a crawler whose engine exists without running it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy.utils.reactor import install_reactor  # noqa: E402

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

# The broad crawl's robots.txt and tokens (that script imports only the standard library).
from broad_crawl import ROBOTS, ROBOTSTXT_USER_AGENT, USER_AGENT  # noqa: E402
from scrapy import Request, Spider  # noqa: E402
from scrapy.exceptions import IgnoreRequest  # noqa: E402
from scrapy.http import HtmlResponse  # noqa: E402
from scrapy.utils.defer import deferred_from_coro  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402
from twisted.internet import reactor  # noqa: E402

HOSTS = [f"127.1.0.{n}" for n in range(1, 101)]
SETTINGS = {
    "ROBOTSTXT_OBEY": True,
    "USER_AGENT": USER_AGENT,
    "ROBOTSTXT_USER_AGENT": ROBOTSTXT_USER_AGENT,
    "LOG_LEVEL": "WARNING",
}


class BenchSpider(Spider):
    name = "bench"


def requests(count: int) -> list[Request]:
    """New requests over the warm origins; every 20th under /private/."""
    return [
        Request(f"http://{HOSTS[n % len(HOSTS)]}:8080/{'private' if n % 20 == 19 else 'p'}/{n}")
        for n in range(count)
    ]


async def timed(step: Callable[[Request], Awaitable[Any]], batch: list[Request]) -> float:
    """Seconds of CPU for ``step`` over ``batch``; drops (IgnoreRequest) count as done."""
    start = time.process_time()
    for request in batch:
        with contextlib.suppress(IgnoreRequest):
            await step(request)
    return time.process_time() - start


async def builtin(count: int) -> dict[str, float]:
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
    from scrapy.robotstxt import ProtegoRobotParser

    crawler = get_crawler(BenchSpider, SETTINGS)
    crawler.spider = crawler._create_spider()
    middleware = RobotsTxtMiddleware(crawler)
    for host in HOSTS:
        middleware._parsers[f"{host}:8080"] = ProtegoRobotParser(ROBOTS, crawler.spider)
    return {"process_request": await timed(middleware.process_request, requests(count))}


async def scrapy_rep(count: int) -> dict[str, float]:
    from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
    from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
    from scrapy_rep.crawler.spider_middleware import RobotsTxtSpiderMiddleware
    from scrapy_rep.engine.origin import origin_of

    crawler = get_crawler(
        BenchSpider, {**SETTINGS, "ADDONS": {"scrapy_rep.Addon": 0}, "REP_STORAGE": "memory"}
    )
    crawler.spider = crawler._create_spider()
    crawler.engine = crawler._create_engine()
    middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)  # the engine's
    assert middleware is not None
    await middleware._life.open_storage()
    for host in HOSTS:  # every origin answered, as a crawl's busy origins are
        origin = origin_of(f"http://{host}:8080/")
        assert origin is not None
        answer = FetchOutcome(
            FetchKind.SUCCESS, f"http://{host}:8080/robots.txt", time.time() - 1, 200, ROBOTS
        )
        await middleware._resolver.seed(origin, answer)
        await middleware.process_request(Request(f"http://{host}:8080/warm"))
    spider_middleware = RobotsTxtSpiderMiddleware(crawler)
    batch = requests(count)

    async def early(request: Request) -> None:
        spider_middleware._early(request)

    kept = [request for request in batch if "/private/" not in request.url]
    dropped = [request for request in batch if "/private/" in request.url]
    figures = {"early": await timed(early, kept), "early drops": await timed(early, dropped)}
    figures["process_request"] = await timed(middleware.process_request, kept)
    responses = {id(r): HtmlResponse(r.url, body=b"<html></html>", request=r) for r in kept}

    async def respond(request: Request) -> None:
        await middleware.process_response(request, responses[id(request)])

    figures["process_response"] = await timed(respond, kept)
    return figures


async def main(count: int, runs: int) -> None:
    best: dict[str, dict[str, float]] = {}
    for _ in range(runs):
        for name, bench in (("built-in", builtin), ("scrapy_rep", scrapy_rep)):
            figures = await bench(count)
            kept = best.setdefault(name, {})
            for step, seconds in figures.items():
                kept[step] = min(kept.get(step, seconds), seconds)
    print(
        f"{count} requests over {len(HOSTS)} warm origins, 1 in 20 disallowed; "
        f"µs of CPU per request (each step's time over all of them), best of {runs}:"
    )
    for name, figures in best.items():
        steps = ", ".join(f"{step} {sec / count * 1e6:.2f}" for step, sec in figures.items())
        total = sum(figures.values()) / count * 1e6
        print(f"    {name:<11} {total:6.2f}  ({steps})")
    ratio = sum(best["scrapy_rep"].values()) / sum(best["built-in"].values())
    print(
        f"scrapy_rep / built-in: {ratio:.2f}x; scrapy_rep's early step also drops the "
        "disallowed requests before the scheduler, which the built-in pays for in the crawl"
    )


def run() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    done = deferred_from_coro(main(args.requests, args.runs))
    done.addErrback(lambda failure: failure.printTraceback())
    done.addBoth(lambda _: reactor.stop())


if __name__ == "__main__":
    reactor.callWhenRunning(run)
    reactor.run()
