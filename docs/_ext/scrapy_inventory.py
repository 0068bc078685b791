"""An intersphinx inventory of the Scrapy names these pages link to.

Scrapy's own ``objects.inv`` would be fetched from docs.scrapy.org at every
build; the docs build runs offline (CI), so the few names used here are
written down with where Scrapy's documentation puts them, and the build
links to them as intersphinx links (``[USER_AGENT](inv:scrapy:std:setting#USER_AGENT)``
in a page). A name missing here is a build error under ``-W``.
"""

from __future__ import annotations

import tempfile
import zlib
from pathlib import Path

SCRAPY_DOCS = "https://docs.scrapy.org/en/latest/"

_SETTINGS = (
    "ADDONS", "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN", "DOWNLOAD_DELAY",
    "DOWNLOAD_TIMEOUT", "DOWNLOADER_MIDDLEWARES", "EXTENSIONS", "LOG_LEVEL",
    "ROBOTSTXT_OBEY", "ROBOTSTXT_PARSER", "ROBOTSTXT_USER_AGENT", "SPIDER_MIDDLEWARES",
    "TWISTED_REACTOR", "USER_AGENT",
)  # fmt: skip
_SIGNALS = ("spider_closed", "spider_idle", "spider_opened", "request_reached_downloader")
_PAGES = (
    "topics/addons", "topics/downloader-middleware", "topics/jobs", "topics/settings",
    "topics/signals", "topics/spider-middleware", "topics/spiders",
)  # fmt: skip


def lines() -> list[str]:
    """Inventory lines: ``name domain:role priority uri dispname`` (``$``: the name)."""
    return [
        *(f"{name} std:setting -1 topics/settings.html#std-setting-$ -" for name in _SETTINGS),
        *(f"{name} std:signal -1 topics/signals.html#std-signal-$ -" for name in _SIGNALS),
        *(f"{page} std:doc -1 {page}.html -" for page in _PAGES),
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware py:class 1 "
        "topics/downloader-middleware.html#$ -",
    ]


def write_inventory() -> str:
    """Write the inventory to a temporary file; its path, for ``intersphinx_mapping``."""
    path = Path(tempfile.mkdtemp(prefix="scrapy-inventory-")) / "objects.inv"
    header = (
        b"# Sphinx inventory version 2\n# Project: Scrapy\n# Version: latest\n"
        b"# The remainder of this file is compressed using zlib.\n"
    )
    path.write_bytes(header + zlib.compress(("\n".join(lines()) + "\n").encode()))
    return str(path)
