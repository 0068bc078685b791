"""What REP_CRAWL_DELAY = "obey" counts (docs/crawl-delay.md): an origin whose
crawl-delay applies to the spider's own robots.txt token, read from its
``robotstxt_user_agent`` attribute, and no other; nothing goes wrong on the way."""

from __future__ import annotations

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from crawler.servers import SiteServer

from .conftest import PagesSpider, crawl, hits, stats
from .test_crawl_delay import OBEY, pages, robots


class OtherBotSpider(PagesSpider):
    robotstxt_user_agent = "otherbot"


@pytest.mark.parametrize(
    ("text", "applied"),
    [
        ("User-agent: *\nDisallow: /private\n\nUser-agent: otherbot\nCrawl-delay: 0.3\n", 1),
        ("User-agent: *\nCrawl-delay: 0.3\n\nUser-agent: otherbot\nDisallow: /private\n", None),
    ],
    ids=["its_group_paces", "only_star_paces"],
)
@deferred_f_from_coro_f
async def test_the_delay_counted_is_that_of_the_spiders_own_token(
    text: str, applied: int | None
) -> None:
    with SiteServer({"/robots.txt": robots(text)}) as site:
        crawler = await crawl(pages(site, 2), OBEY, spidercls=OtherBotSpider)
    assert len(hits(site)) == 3
    assert stats(crawler).get("robotstxt/crawl_delay/applied") == applied
    assert "log_count/ERROR" not in stats(crawler)
