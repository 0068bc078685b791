"""A site changed its mind: a fetch gave an origin a version of robots.txt
that tells the crawl something else than the one before (docs/versions.md, "In the crawl").

When this process's fetch makes a new current version (``cache/versions.py``),
the version before it (``record.earlier[0]``, perhaps written by an earlier
crawl into the same store) and the new one are compared for the crawl's
tokens (``engine/changes.py`` ``change_for``). A change the crawler would
notice is said once: one INFO line, the ``robotstxt_changed`` signal and the
stat ``robotstxt/changed``. A record another process fetched, or one read
from the store as it was, is not said again here: the fetching process said it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from scrapy_rep import signals
from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.versions import Version, current_version, same_answer
from scrapy_rep.crawler.reporting import logs
from scrapy_rep.engine.changes import Change, change_for
from scrapy_rep.engine.origin import robots_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rep.cache.outcome import FetchOutcome
    from scrapy_rep.cache.record import OriginRecord
    from scrapy_rep.crawler.reporting import Reporter
    from scrapy_rep.engine.origin import Origin
    from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = ["CHANGED_STAT", "VersionChanges", "version_said"]

logger = logging.getLogger("scrapy_rep.crawler.middleware")  # the middleware's one logger

#: The stat of each change said (docs/stats-signals.md).
CHANGED_STAT: Final = "robotstxt/changed"
#: Bound of the changes already said (cleared when full).
_MAX_SAID: Final = 100_000
#: Hex digits of a digest shown in the log line.
_SHOWN: Final = 12


def version_said(version: Version) -> str:
    """A version in a few characters: ``sha256:0123456789ab`` or ``HTTP 404``."""
    digest = version.digest
    return f"HTTP {version.status}" if digest is None else digest[: len("sha256:") + _SHOWN]


class VersionChanges:
    """Says each change of an origin's robots.txt this process fetched, once."""

    def __init__(
        self,
        crawler: Crawler,
        report: Reporter,
        parse: Callable[[bytes], RobotsTxt],
        tokens: Callable[[], Sequence[str]],
    ) -> None:
        self._crawler = crawler
        self._report = report
        self._parse = parse
        self._tokens = tokens
        #: (origin, when its current version was first seen): the changes said.
        self._said: set[tuple[str, float]] = set()

    def fetched(
        self, origin: Origin, record: OriginRecord | None, fetched: FetchOutcome | None
    ) -> Change | None:
        """After a fetch of ours settled ``record``: the change said, if any."""
        if fetched is None or fetched.kind is FetchKind.UNREACHABLE or record is None:
            return None
        if not record.earlier:
            return None
        after = current_version(record)
        # New with this fetch: first seen when last seen, at the record's fetch.
        if after is None or not after.first_seen == after.last_seen == record.fetched_at:
            return None
        before = record.earlier[0]
        key = (str(origin), after.first_seen)
        if key in self._said or same_answer(before, after):
            return None
        if len(self._said) >= _MAX_SAID:
            self._said.clear()
        self._said.add(key)
        change = change_for(self._parsed(before), self._parsed(after), tuple(self._tokens()))
        if not change:
            if logs(logging.DEBUG):
                logger.debug(
                    "robots.txt of %s changed (%s -> %s): nothing this crawl's tokens are told",
                    origin,
                    version_said(before),
                    version_said(after),
                    extra={"spider": self._crawler.spider},
                )
            return None
        self._say(origin, before, after, change)
        return change

    def _parsed(self, version: Version) -> RobotsTxt | None:
        return None if version.body is None else self._parse(version.body)

    def _say(self, origin: Origin, before: Version, after: Version, change: Change) -> None:
        spider = self._crawler.spider
        self._report.stats.inc_value(CHANGED_STAT)  # rare: at once
        if logs(logging.INFO):
            logger.info(
                "robots.txt of %(origin)s changed (%(before)s -> %(after)s): %(summary)s",
                {
                    "origin": origin,
                    "before": version_said(before),
                    "after": version_said(after),
                    "summary": change.summary(),
                },
                extra={"spider": spider},
            )
        self._crawler.signals.send_catch_log(
            signal=signals.robotstxt_changed,
            origin=origin,
            robotstxt_url=robots_url(origin),
            before=before,
            after=after,
            change=change,
            spider=spider,
        )
