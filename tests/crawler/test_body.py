"""docs/spec.md §4 through the middleware: size cap, HTML bodies, BOM and line endings."""

from __future__ import annotations

import logging
import tracemalloc

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt
from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
from scrapy_rep.engine.origin import origin_of

from .conftest import crawl, spider_of
from .servers import GzipBomb, Huge, Reply, SiteServer

SIZE = 50_000_000


@deferred_f_from_coro_f
async def test_rfc9309_500kib_limit_on_a_50mb_robots_txt(caplog: pytest.LogCaptureFixture) -> None:
    """docs/spec.md §4.3: rules in the first 512,000 bytes apply, later ones do not, and
    the download stops there (the server never sends the whole file)."""
    huge = Huge(
        SIZE,
        inserts=(
            (0, b"User-agent: *\nDisallow: /early\n"),
            (400_000, b"\nDisallow: /within\n"),
            (530_000, b"\nDisallow: /beyond\n"),
            (SIZE - 100, b"\nDisallow: /last\n"),
        ),
    )
    paths = ["/early", "/within", "/beyond", "/last", "/free"]
    with SiteServer({"/robots.txt": huge}) as site:
        with caplog.at_level(logging.INFO, "scrapy_rep"):
            crawler = await crawl([site.url(p) for p in paths])
        sent = site.huge_bytes_sent
    spider = spider_of(crawler)
    assert set(spider.dropped) == {site.url("/early"), site.url("/within")}
    assert all(isinstance(e, ForbiddenByRobotsTxt) for e in spider.dropped.values())
    assert sorted(spider.got) == sorted(site.url(p) for p in ["/beyond", "/last", "/free"])
    assert sent < SIZE // 2, f"the server sent {sent} bytes"  # kernel buffers hold a few MB
    assert "cut at 512000 bytes" in caplog.text


@deferred_f_from_coro_f
async def test_rfc9309_500kib_limit_holds_for_a_gzip_bomb(caplog: pytest.LogCaptureFixture) -> None:
    """docs/spec.md §4.3 after decompression: about 64 MB of gzip that inflates to 64 GiB
    is inflated to its first 512,000 bytes only, and memory stays bounded
    (Scrapy's HttpCompressionMiddleware would inflate all it received). The
    bomb is far larger than loopback socket buffers can absorb, so bytes sent
    show whether the download really stopped."""
    bomb = GzipBomb(b"User-agent: *\nDisallow: /early\n", 1 << 36, b"\nDisallow: /late\n")
    with SiteServer({"/robots.txt": bomb}) as site:
        tracemalloc.start()
        try:
            with caplog.at_level(logging.INFO, "scrapy_rep"):
                crawler = await crawl([site.url("/early"), site.url("/late")])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        sent = site.huge_bytes_sent
    spider = spider_of(crawler)
    assert list(spider.dropped) == [site.url("/early")]
    assert spider.got == [site.url("/late")]
    assert peak < 64 * 2**20, f"peak {peak} bytes traced while crawling"
    assert "inflated to its first 512000 bytes" in caplog.text
    assert sent < 16_000_000  # stopped: a quarter of the bomb, kernel buffers included
    # The record says the file was cut (the report's "cut at the size cap").
    middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
    origin = origin_of(site.url("/"))
    assert origin is not None
    record = middleware._resolver.record(origin)
    assert record is not None and record.truncated and record.final_url is None


@deferred_f_from_coro_f
async def test_rfc9309_html_page_served_as_robots_txt() -> None:
    """docs/spec.md §4.4: an HTML page yields only the valid lines it happens to contain."""
    html = (
        b"<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n<body>\n"
        b"<h1>Oops</h1><p>Disallow: /in-a-paragraph</p>\n"
        b"User-agent: *\nDisallow: /bare-line\n"
        b"</body></html>\n"
    )
    with SiteServer({"/robots.txt": Reply(200, html, {"Content-Type": "text/html"})}) as site:
        crawler = await crawl([site.url("/in-a-paragraph"), site.url("/bare-line")])
    spider = spider_of(crawler)
    assert spider.got == [site.url("/in-a-paragraph")]
    assert list(spider.dropped) == [site.url("/bare-line")]


@deferred_f_from_coro_f
async def test_rfc9309_bom_cr_and_crlf() -> None:
    """docs/spec.md §4.1, §4.2: an initial BOM is ignored; CR, LF and CRLF all end lines."""
    body = b"\xef\xbb\xbfUser-agent: *\rDisallow: /cr\r\nDisallow: /crlf\nDisallow: /lf\n"
    paths = ["/cr", "/crlf", "/lf", "/ok"]
    with SiteServer({"/robots.txt": Reply(200, body)}) as site:
        crawler = await crawl([site.url(p) for p in paths])
    spider = spider_of(crawler)
    assert spider.got == [site.url("/ok")]
    assert set(spider.dropped) == {site.url(p) for p in ["/cr", "/crlf", "/lf"]}
    assert site.paths() == ["/robots.txt", "/ok"]


@deferred_f_from_coro_f
async def test_rfc9309_invalid_utf8_does_not_break_parsing() -> None:
    body = b"User-agent: *\nDisallow: /caf\xe9\xff\nDisallow: /next\n"
    with SiteServer({"/robots.txt": Reply(200, body)}) as site:
        crawler = await crawl([site.url("/next"), site.url("/ok")])
    spider = spider_of(crawler)
    assert spider.got == [site.url("/ok")]
    assert list(spider.dropped) == [site.url("/next")]


@deferred_f_from_coro_f
async def test_spec_2_1_meta_refresh_in_2xx_body_is_not_followed() -> None:
    body = b'<meta http-equiv="refresh" content="0; url=/real-robots.txt">\n'
    routes = {
        "/robots.txt": Reply(200, body),
        "/real-robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n"),
    }
    with SiteServer(routes) as site:
        crawler = await crawl([site.url("/page")])
    assert spider_of(crawler).got == [site.url("/page")]
    assert "/real-robots.txt" not in site.paths()
