"""Issue 13 §5, docs/spec.md §4.3 over FTP: the 512,000-byte cap holds for every download handler.

The HTTP fetch stops at the cap on Scrapy's ``bytes_received`` signal, which
Scrapy's FTP handler never sends (and it honours no DOWNLOAD_MAXSIZE): a
50 MB robots.txt served over FTP was read whole into memory. The rules of its
first 512,000 bytes must apply, the rest must never leave the server (beyond
what the socket buffers hold when the client hangs up).
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from crawler.conftest import crawl, spider_of, stats
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import MIB, _peak, _reset_peak
from .fault_server import FtpServer

LIMIT = 512_000
#: The file served: 50 MB, far more than the cap, and more than any socket
#: buffers between the server and the client can hold.
SIZE = 50 * 1000 * 1000
#: Well under SIZE: the cap plus what kernel buffers may take before the
#: hang-up is seen (a few MB on loopback).
SENT_BOUND = 16 * MIB
MEMORY_BOUND = 48 * MIB  # the whole file read: over 100 MiB

HEAD = b"User-agent: *\nDisallow: /secret\n"
FILLER = b"# " + b"x" * 1021 + b"\n"  # 1 KiB lines
EDGE = b"Disallow: /edge\n"  # its newline is byte 511,999: inside the cap
BEYOND = b"Disallow: /beyond\n"  # starts at byte 512,000: outside it

# pyftpdlib still imports asyncore/asynchat, deprecated since Python 3.10.
pytestmark = pytest.mark.filterwarnings("ignore:The asyn:DeprecationWarning")


def write_huge_robots(path: Path) -> None:
    """``SIZE`` bytes: rules at the head, one ending at the cap, one just past
    it, filler, and a rule at the very end that only a full read would see."""
    with path.open("wb") as file:
        file.write(HEAD)
        before_edge = LIMIT - len(EDGE) - len(HEAD)
        file.write(FILLER * (before_edge // len(FILLER)))
        file.write(b"#" * (before_edge % len(FILLER) - 1) + b"\n")
        file.write(EDGE)
        assert file.tell() == LIMIT
        file.write(BEYOND)
        tail = b"Disallow: /public\n"
        left = SIZE - file.tell() - len(tail)
        block = FILLER * 1024
        while left > 0:
            part = block[: min(len(block), left)]
            file.write(part)
            left -= len(part)
        file.write(tail)
        assert file.tell() == SIZE


@deferred_f_from_coro_f
async def test_spec_4_3_ftp_50_mb_robots_txt_only_the_first_512000_bytes(tmp_path: Path) -> None:
    write_huge_robots(tmp_path / "robots.txt")
    pages = ("public", "secret", "edge", "beyond")
    for name in pages:
        (tmp_path / f"{name}.txt").write_bytes(name.encode())
    with FtpServer(str(tmp_path)) as ftp:
        urls = [ftp.url(f"/{name}.txt") for name in pages]
        gc.collect()
        rss = _reset_peak()
        crawler = await crawl(urls, {"REP_STORAGE": "memory"})
        growth = _peak() - rss
    spider = spider_of(crawler)
    assert sorted(spider.got) == [ftp.url("/beyond.txt"), ftp.url("/public.txt")]
    assert set(spider.dropped) == {ftp.url("/edge.txt"), ftp.url("/secret.txt")}
    assert all(isinstance(e, ForbiddenByRobotsTxt) for e in spider.dropped.values())
    assert not spider.failed
    # robots.txt asked for once, and cut: not sent whole
    assert [f for f in ftp.retrieved if f.startswith("robots.txt")] == ["robots.txt (incomplete)"]
    assert stats(crawler)["robotstxt/request_count"] == 1
    assert stats(crawler)["robotstxt/response_status_count/200"] == 1
    assert ftp.bytes_sent < SENT_BOUND, f"{ftp.bytes_sent / MIB:.1f} MiB sent over FTP"
    assert growth < MEMORY_BOUND, f"peak RSS grew by {growth / MIB:.0f} MiB"


@deferred_f_from_coro_f
async def test_spec_4_3_ftp_robots_txt_within_the_cap_read_whole(tmp_path: Path) -> None:
    """Under the cap nothing is cut: a rule on the last line applies."""
    body = HEAD + FILLER * 400 + b"Disallow: /last\n"
    (tmp_path / "robots.txt").write_bytes(body)
    for name in ("last", "page"):
        (tmp_path / f"{name}.txt").write_bytes(name.encode())
    with FtpServer(str(tmp_path)) as ftp:
        crawler = await crawl([ftp.url("/last.txt"), ftp.url("/page.txt")])
    spider = spider_of(crawler)
    assert spider.got == [ftp.url("/page.txt")]
    assert isinstance(spider.dropped[ftp.url("/last.txt")], ForbiddenByRobotsTxt)
    assert sorted(ftp.retrieved) == ["page.txt", "robots.txt"]
    assert ftp.bytes_sent == len(body) + len(b"page")
