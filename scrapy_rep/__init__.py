"""scrapy_rep: robots.txt for Scrapy, as RFC 9309 and Google say.

The public API, nothing else. The layers below are ``engine`` (bytes ->
``RobotsTxt``; no Scrapy), ``cache`` (fetch outcomes, the policy, storage),
``crawler`` (everything that imports Scrapy) and ``tools`` (the commands).
The engine's names are imported at once; the rest on first use, so that
``from scrapy_rep import RobotsTxt`` stays light.

The dotted paths to write in Scrapy settings are these names:
``scrapy_rep.Addon``, ``scrapy_rep.RobotsTxtMiddleware``,
``scrapy_rep.RobotsTxtSpiderMiddleware``, ``scrapy_rep.PageDirectivesMiddleware``,
``scrapy_rep.CrawlDelay``, ``scrapy_rep.FollowSitemaps``,
``scrapy_rep.RepRobotParser`` and, for ``REP_STORAGE``, a class
implementing ``scrapy_rep.Storage``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from scrapy_rep import signals
from scrapy_rep.engine.robotstxt import RobotsTxt, Rule, Verdict

#: The one place the version is written (pyproject.toml reads it from here).
__version__ = "0.1.0"

# name -> module, for names that pull in Scrapy or a storage client.
_LAZY: dict[str, str] = {
    "Addon": "scrapy_rep.crawler.addon",
    "RobotsTxtMiddleware": "scrapy_rep.crawler.middleware",
    "RobotsTxtSpiderMiddleware": "scrapy_rep.crawler.spider_middleware",
    "RobotsTxtDisallowed": "scrapy_rep.crawler.errors",
    "ForbiddenByRobotsTxt": "scrapy_rep.crawler.errors",
    "RobotsTxtUnreachable": "scrapy_rep.crawler.errors",
    "RobotsTxtNoOrigin": "scrapy_rep.crawler.errors",
    "RobotsTxtStorageUnavailable": "scrapy_rep.crawler.errors",
    "RobotsTxtUsageDenied": "scrapy_rep.crawler.errors",
    "PageDirectivesMiddleware": "scrapy_rep.crawler.page.page_rules",
    "RepRobotParser": "scrapy_rep.crawler.robot_parser",
    "CrawlDelay": "scrapy_rep.crawler.pace.crawl_delay",
    "FollowSitemaps": "scrapy_rep.crawler.page.sitemaps",
    "Config": "scrapy_rep.crawler.config.settings",
    "SettingError": "scrapy_rep.crawler.config.settings",
    "Origin": "scrapy_rep.engine.origin",
    "Access": "scrapy_rep.cache.outcome",
    "AccessState": "scrapy_rep.cache.outcome",
    "Storage": "scrapy_rep.cache.storage",
    "StorageUnavailable": "scrapy_rep.cache.storage",
    "MemoryStorage": "scrapy_rep.cache.storage",
    "OriginRecord": "scrapy_rep.cache.policy",
}

__all__ = ["Rule", "RobotsTxt", "Verdict", "__version__", "signals", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_rep' has no attribute {name!r}")
    return getattr(import_module(module), name)
