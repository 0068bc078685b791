"""scrapy_rep: robots.txt for Scrapy, as RFC 9309 and Google say.

The engine (``RobotsTxt``) imports nothing from Scrapy; the Scrapy-side names
are imported on first use so that ``from scrapy_rep import RobotsTxt`` stays
light.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from scrapy_rep.document import RobotsTxt, Rule, Verdict

__all__ = ["RobotsTxt", "Rule", "Verdict"]

# name -> module, for names that pull in Scrapy.
_LAZY: dict[str, str] = {
    "RobotsTxtMiddleware": "scrapy_rep.middleware",
    "RobotsTxtDisallowed": "scrapy_rep.middleware",
    "ForbiddenByRobotsTxt": "scrapy_rep.middleware",
    "RobotsTxtUnreachable": "scrapy_rep.middleware",
    "Addon": "scrapy_rep.addon",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_rep' has no attribute {name!r}")
    return getattr(import_module(module), name)
