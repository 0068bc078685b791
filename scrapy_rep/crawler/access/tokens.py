"""Which user-agent tokens a request is matched with (docs/spec.md §5.7, §8.4).

``ROBOTSTXT_USER_AGENT`` (or the spider's ``robotstxt_user_agent``), else the
crawler's names in the request's User-Agent header, else those in
``USER_AGENT``: never a browser's name (``engine.user_agent``).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Final

from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.crawler.config.values import SettingError, parse_tokens, token_notes
from scrapy_rep.engine.agents import agent_tokens

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.http import Request

__all__ = ["RequestTokens", "read_spider_tokens"]

logger = logging.getLogger(__name__)

#: Bound of the per-User-Agent memo (cleared when full).
_MAX_REMEMBERED: Final = 100_000


class RequestTokens:
    """The tokens for each request, worked out once per User-Agent string."""

    def __init__(self, config: Config) -> None:
        self.configured = config.user_agent_tokens
        self.source = "ROBOTSTXT_USER_AGENT" if self.configured else "USER_AGENT"
        self._default_user_agent = config.default_user_agent
        self._by_header: dict[bytes, tuple[str, ...]] = {}

    def __call__(self, request: Request) -> tuple[str, ...]:
        if self.configured:
            return self.configured
        header = request.headers.get(b"User-Agent") or b""
        tokens = self._by_header.get(header)
        if tokens is None:
            tokens = agent_tokens(header.decode("latin-1")) or agent_tokens(
                self._default_user_agent
            )  # () when neither names a crawler: only the * group can apply
            if len(self._by_header) >= _MAX_REMEMBERED:
                self._by_header.clear()
            self._by_header[header] = tokens
        return tokens

    @property
    def default(self) -> tuple[str, ...]:
        """The tokens of a request that sends no User-Agent of its own."""
        return self.configured or agent_tokens(self._default_user_agent)

    def read_spider(self, spider: Spider, warn: bool = True) -> None:
        """A ``robotstxt_user_agent`` spider attribute beats the setting, and a
        ``user_agent`` one (which Scrapy sends instead of USER_AGENT) beats USER_AGENT.

        Raises ``SettingError`` naming the attribute for an unusable value;
        ``warn``: log what RFC 9309 reads otherwise than written.
        """
        sent = getattr(spider, "user_agent", None)
        if isinstance(sent, str) and sent and not self.configured:
            self._default_user_agent = sent
            self.source = f"{type(spider).__name__}.user_agent"
            self._by_header.clear()
        value = getattr(spider, "robotstxt_user_agent", None)
        if value is None:
            return
        name = f"{type(spider).__name__}.robotstxt_user_agent"
        self.configured = parse_tokens(name, value)
        self.source = name
        for note in token_notes(name, value) if warn else ():
            logger.warning(note, extra={"spider": spider})

    def describe(self) -> str:
        """The start-up line: which tokens, and where they came from."""
        tokens = self.default
        if not tokens:
            return f"robots.txt token: none in {self.source}, so only '*' groups apply"
        if len(tokens) == 1:
            return f"robots.txt token {tokens[0]!r} from {self.source}"
        shown = ", ".join(repr(token) for token in tokens)
        return f"robots.txt tokens {shown} from {self.source} (the first with a group decides)"


def read_spider_tokens(tokens: RequestTokens, spider: Spider) -> None:
    """For a component beside the middleware (crawl-delay, page rules): the
    spider's attributes read as the middleware reads them, quietly; the
    middleware warns, or stops the crawl on a bad value."""
    with contextlib.suppress(SettingError):
        tokens.read_spider(spider, warn=False)
