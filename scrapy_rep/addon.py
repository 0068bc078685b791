"""Scrapy add-on: ``ADDONS = {"scrapy_rep.Addon": 0}`` switches a project over.

What it changes, and nothing else:

- ``DOWNLOADER_MIDDLEWARES``: ``scrapy_rep.RobotsTxtMiddleware`` at 100 (where
  the built-in sits, before UserAgentMiddleware at 500) and Scrapy's built-in
  ``RobotsTxtMiddleware`` set to None.

``ROBOTSTXT_OBEY`` is left as the project set it: the add-on chooses which
middleware obeys robots.txt, not whether to obey it.
"""

from __future__ import annotations

from typing import Final

from scrapy.settings import BaseSettings

from scrapy_rep._compat import BUILTIN_ROBOTSTXT

__all__ = ["MIDDLEWARE", "PRIORITY", "Addon"]

MIDDLEWARE: Final = "scrapy_rep.RobotsTxtMiddleware"
PRIORITY: Final = 100


class Addon:
    def update_settings(self, settings: BaseSettings) -> None:
        # Scrapy's replace_in_component_priority_dict() raises KeyError for the
        # built-in, which lives only in DOWNLOADER_MIDDLEWARES_BASE, so both
        # entries are set explicitly, at add-on priority: a project that sets
        # either entry itself keeps its own value.
        middlewares = settings["DOWNLOADER_MIDDLEWARES"]
        if isinstance(middlewares, BaseSettings):
            middlewares.set(BUILTIN_ROBOTSTXT, None, priority="addon")
            middlewares.set(MIDDLEWARE, PRIORITY, priority="addon")
        else:
            middlewares = dict(middlewares or {})
            middlewares.setdefault(BUILTIN_ROBOTSTXT, None)
            middlewares.setdefault(MIDDLEWARE, PRIORITY)
            settings.set("DOWNLOADER_MIDDLEWARES", middlewares, priority="addon")
