"""docs/spec.md §1 in real crawls: each origin gets its own robots.txt; ftp is checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from reactor_choice import NONE, chosen_reactor
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import crawl, spider_of, stats
from .servers import Reply, SiteServer, ftp_server


@deferred_f_from_coro_f
async def test_spec_1_1_two_origins_on_one_host_with_different_ports() -> None:
    with (
        SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /x\n")}) as first,
        SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /y\n")}) as second,
    ):
        urls = [first.url("/x"), first.url("/y"), second.url("/x"), second.url("/y")]
        crawler = await crawl(urls)
    spider = spider_of(crawler)
    assert sorted(spider.got) == sorted([first.url("/y"), second.url("/x")])
    assert set(spider.dropped) == {first.url("/x"), second.url("/y")}
    assert first.count("/robots.txt") == 1 and second.count("/robots.txt") == 1
    assert stats(crawler)["robotstxt/origins"] == 2


@deferred_f_from_coro_f
async def test_spec_1_5_localhost_and_127_0_0_1_are_different_origins() -> None:
    def robots(host: str) -> Reply:
        rule = b"/by-name" if host == "localhost" else b"/by-ip"
        return Reply(200, b"User-agent: *\nDisallow: " + rule + b"\n")

    with SiteServer({"/robots.txt": robots}) as site:
        urls = [
            site.url(path, host)
            for host in ("localhost", "127.0.0.1")
            for path in ("/by-name", "/by-ip")
        ]
        crawler = await crawl(urls)
    spider = spider_of(crawler)
    assert sorted(spider.got) == sorted(
        [site.url("/by-ip", "localhost"), site.url("/by-name", "127.0.0.1")]
    )
    assert set(spider.dropped) == {
        site.url("/by-name", "localhost"),
        site.url("/by-ip", "127.0.0.1"),
    }
    robots_hosts = sorted(hit.host.split(":")[0] for hit in site.hits if hit.path == "/robots.txt")
    assert robots_hosts == ["127.0.0.1", "localhost"]


@deferred_f_from_coro_f
async def test_spec_1_3_explicit_default_port_is_the_same_origin() -> None:
    """Port 80 cannot be bound in tests; the equivalence is checked in test_origin.
    Here: the same origin written twice (case, trailing path) is fetched once."""
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /x\n")}) as site:
        upper = f"http://127.0.0.1:{site.port}/x".replace("http", "HTTP", 1)
        crawler = await crawl([site.url("/x"), upper, site.url("/y")])
    assert site.count("/robots.txt") == 1
    assert spider_of(crawler).got == [site.url("/y")]


# pyftpdlib still imports asyncore/asynchat, deprecated since Python 3.10.
no_asyncore_warning = pytest.mark.filterwarnings("ignore:The asyn:DeprecationWarning")


#: ftp:// has no handler in Scrapy's reactorless mode: what the crawl does
#: there is stated by test_reactorless.py's ftp test.
needs_a_reactor = pytest.mark.skipif(
    chosen_reactor() == NONE, reason="Scrapy fetches ftp:// only with a Twisted reactor"
)


@needs_a_reactor
@no_asyncore_warning
@deferred_f_from_coro_f
async def test_spec_1_6_ftp_robots_txt_with_anonymous_login(tmp_path: Path) -> None:
    (tmp_path / "robots.txt").write_bytes(b"User-agent: *\nDisallow: /secret\n")
    (tmp_path / "public.txt").write_bytes(b"public")
    (tmp_path / "secret.txt").write_bytes(b"secret")
    with ftp_server(tmp_path) as (port, retrieved):
        base = f"ftp://127.0.0.1:{port}"
        crawler = await crawl([f"{base}/public.txt", f"{base}/secret.txt"])
    spider = spider_of(crawler)
    assert spider.got == [f"{base}/public.txt"]
    assert isinstance(spider.dropped[f"{base}/secret.txt"], ForbiddenByRobotsTxt)
    assert sorted(retrieved) == ["public.txt", "robots.txt"]


@needs_a_reactor
@no_asyncore_warning
@deferred_f_from_coro_f
async def test_spec_1_6_ftp_without_robots_txt_is_full_allow(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_bytes(b"secret")
    with ftp_server(tmp_path) as (port, retrieved):
        crawler = await crawl([f"ftp://127.0.0.1:{port}/secret.txt"])
    assert spider_of(crawler).got == [f"ftp://127.0.0.1:{port}/secret.txt"]
    assert retrieved == ["secret.txt"]
    assert stats(crawler)["robotstxt/response_status_count/404"] == 1


@deferred_f_from_coro_f
async def test_spec_1_6_schemes_without_server_pass_unchecked() -> None:
    crawler = await crawl(["data:text/plain,hello"])
    assert spider_of(crawler).got == ["data:text/plain,hello"]
    assert "robotstxt/request_count" not in stats(crawler)


@needs_a_reactor
@no_asyncore_warning
@deferred_f_from_coro_f
async def test_spec_4_3_ftp_robots_txt_read_up_to_the_cap(tmp_path: Path) -> None:
    """Issue 13 §5: a 50 MB robots.txt over FTP is not read whole."""
    head = b"User-agent: *\nDisallow: /secret\n"
    filler = b"# " + b"x" * 1021 + b"\n"  # 1 KiB lines
    with (tmp_path / "robots.txt").open("wb") as file:
        file.write(head)
        for _ in range(50 * 1024):
            file.write(filler)
        file.write(b"Disallow: /public\n")  # past 500 KiB: never read
    (tmp_path / "public.txt").write_bytes(b"public")
    (tmp_path / "secret.txt").write_bytes(b"secret")
    with ftp_server(tmp_path) as (port, retrieved):
        base = f"ftp://127.0.0.1:{port}"
        crawler = await crawl([f"{base}/public.txt", f"{base}/secret.txt"])
    spider = spider_of(crawler)
    assert spider.got == [f"{base}/public.txt"]
    assert isinstance(spider.dropped[f"{base}/secret.txt"], ForbiddenByRobotsTxt)
    assert "robots.txt (incomplete)" in retrieved  # the transfer was cut, not finished
    assert "robots.txt" not in retrieved
