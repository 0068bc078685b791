"""robotstxt_resolved as requests come over an outage (docs/stats-signals.md:
sent when an origin's access is first known and whenever it changes), both
wirings: the fetch's rules, the refresh that meets a 503 (closed), and 12
hours on, the last good copy that a later request finds applies, told before
the retry that request starts answers.

Each wave of ``ArrivingSpider`` comes once the one before has its outcomes,
after the test moved the clock (REP_CLOCK); never a sleep racing a rule.
"""

from __future__ import annotations

import pytest
from crawler.conftest import WIRINGS, ArrivingSpider, crawl, spider_of
from crawler.servers import Reply, SiteServer
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import AccessState

from .conftest import HOUR, FakeClock
from .test_cache_crawls import DISALLOW_PRIVATE, Switch


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_status_5xx_last_good_copy_taking_over_is_announced(
    wiring: str, clock: FakeClock
) -> None:
    robots = Switch(Reply(200, DISALLOW_PRIVATE))

    def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 1:
            robots.reply = Reply(503)
            clock.advance(25 * HOUR)  # the copy expired an hour ago: refresh -> 503
        elif wave == 2:
            clock.advance(12 * HOUR + 60)  # the last good copy applies

    settings = {**WIRINGS[wiring], "REP_CLOCK": clock}
    with SiteServer({"/robots.txt": robots}) as site:
        waves = [[site.url("/p/2")], [site.url("/p/3"), site.url("/p/4")]]
        crawler = await crawl(
            [site.url("/p/1")], settings, ArrivingSpider, waves=waves, before=then
        )
    spider = spider_of(crawler)
    assert sorted(p for p in site.paths() if p != "/robots.txt") == ["/p/1", "/p/3", "/p/4"]
    assert [access.state for access in spider.resolved] == [
        AccessState.RULES,
        AccessState.CLOSED,
        AccessState.RULES,  # the last good copy takes over, told from the cache
        AccessState.RULES,  # the retry it started: 503 again, the copy still applies
    ]
