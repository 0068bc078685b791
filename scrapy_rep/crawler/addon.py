"""Scrapy add-on: ``ADDONS = {"scrapy_rep.Addon": 0}`` switches a project over.

What it changes, and nothing else:

- ``DOWNLOADER_MIDDLEWARES``: ``scrapy_rep.RobotsTxtMiddleware`` at 100 (where
  the built-in sits, before UserAgentMiddleware at 500) and Scrapy's built-in
  ``RobotsTxtMiddleware`` set to None.
- ``EXTENSIONS``: ``scrapy_rep.CrawlDelay`` and ``scrapy_rep.FollowSitemaps``
  at 0; both stay off unless ``REP_CRAWL_DELAY = "obey"`` /
  ``REP_FOLLOW_SITEMAPS = True`` turn them on.
- ``SPIDER_MIDDLEWARES``: ``scrapy_rep.RobotsTxtSpiderMiddleware`` at 100:
  requests already known to be forbidden are dropped before the scheduler,
  and an unknown origin's robots.txt is fetched as soon as its first request
  is yielded (the downloader middleware still checks every request).
- ``SPIDER_MIDDLEWARES``, only when ``REP_PAGE_DIRECTIVES`` is true:
  ``scrapy_rep.PageDirectivesMiddleware`` at 950 (X-Robots-Tag and robots meta
  tags; ``nofollow`` pages' requests removed before Scrapy's depth, URL-length
  and robots.txt spider middlewares see them).

``ROBOTSTXT_OBEY`` is left as the project set it: the add-on chooses which
middleware obeys robots.txt, not whether to obey it.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Final

from scrapy.settings import BaseSettings

from scrapy_rep.crawler.config.values import SettingError, read_setting, to_bool
from scrapy_rep.crawler.internals import BUILTIN_ROBOTSTXT

__all__ = [
    "DIRECTIVES_MIDDLEWARE",
    "EXTENSIONS",
    "MIDDLEWARE",
    "PRIORITY",
    "SPIDER_MIDDLEWARE",
    "Addon",
]

MIDDLEWARE: Final = "scrapy_rep.RobotsTxtMiddleware"
PRIORITY: Final = 100
EXTENSIONS: Final = ("scrapy_rep.CrawlDelay", "scrapy_rep.FollowSitemaps")
#: Before the scheduler, after Scrapy's own spider middlewares (depth, URL
#: length...) have had their say: it sees the requests that get scheduled.
SPIDER_MIDDLEWARE: Final = "scrapy_rep.RobotsTxtSpiderMiddleware"
SPIDER_PRIORITY: Final = 100
#: Outermost of Scrapy's spider middlewares (depth is 900): requests a nofollow
#: page yields are removed before anything counts or schedules them.
DIRECTIVES_MIDDLEWARE: Final = "scrapy_rep.PageDirectivesMiddleware"
DIRECTIVES_PRIORITY: Final = 950


class Addon:
    """Switches a project to scrapy_rep; this module's docstring lists each change."""

    def __repr__(self) -> str:
        """Scrapy's start-up log lists enabled add-ons by their repr."""
        return f"scrapy_rep.Addon ({version('scrapy-rep')})"

    def update_settings(self, settings: BaseSettings) -> None:
        # Scrapy's replace_in_component_priority_dict() raises KeyError for the
        # built-in, which lives only in DOWNLOADER_MIDDLEWARES_BASE, so both
        # entries are set explicitly, at add-on priority: a project that sets
        # an entry itself keeps its own value.
        _set_components(
            settings, "DOWNLOADER_MIDDLEWARES", {BUILTIN_ROBOTSTXT: None, MIDDLEWARE: PRIORITY}
        )
        _set_components(settings, "EXTENSIONS", dict.fromkeys(EXTENSIONS, 0))
        _set_components(settings, "SPIDER_MIDDLEWARES", {SPIDER_MIDDLEWARE: SPIDER_PRIORITY})
        # A bad value is left for Config to reject, naming the setting, at start-up.
        if _page_directives_on(settings):
            _set_components(
                settings, "SPIDER_MIDDLEWARES", {DIRECTIVES_MIDDLEWARE: DIRECTIVES_PRIORITY}
            )


def _page_directives_on(settings: BaseSettings) -> bool:
    try:
        return read_setting(settings, "REP_PAGE_DIRECTIVES", False, to_bool)
    except SettingError:
        return False


def _set_components(settings: BaseSettings, name: str, entries: dict[str, int | None]) -> None:
    components = settings[name]
    if isinstance(components, BaseSettings):
        for path, priority in entries.items():
            components.set(path, priority, priority="addon")
    else:
        merged = dict(components or {})
        for path, priority in entries.items():
            merged.setdefault(path, priority)
        settings.set(name, merged, priority="addon")
