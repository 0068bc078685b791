"""``scrapy robots URL``: would this project's crawler fetch URL, and why?

Registered through the ``scrapy.commands`` entry point, so Scrapy imports this
module on every ``scrapy`` call: only Scrapy's command base class is imported
here, the rest inside ``run``.

The answer comes from the crawler itself, not from a separate parser: the
command starts a crawl with the project's settings (proxy, headers, storage,
the spider's ``custom_settings`` with ``--spider``), hands a request for URL to
scrapy_rep's middleware, and reports what the middleware decided, with the
rule, its line and the group that applied. URL itself is never downloaded;
robots.txt is fetched as a crawl fetches it (or taken from the store).

Exit codes: 0 allowed, 1 disallowed (by a rule, or because robots.txt is
unreachable, so the crawler would drop the request), 2 usage error or the
check could not run.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request
    from scrapy.settings import BaseSettings

    from scrapy_rep.document import Rule
    from scrapy_rep.middleware import RobotsTxtDisallowed
    from scrapy_rep.outcome import Access

__all__ = ["EXIT_ALLOWED", "EXIT_DISALLOWED", "EXIT_ERROR", "RobotsCommand"]

EXIT_ALLOWED: Final = 0
EXIT_DISALLOWED: Final = 1
EXIT_ERROR: Final = 2

_ADDON: Final = "scrapy_rep.Addon"


class RobotsCommand(ScrapyCommand):
    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[options] <url>"

    def short_desc(self) -> str:
        return "Explain whether robots.txt lets this project crawl a URL"

    def long_desc(self) -> str:
        return (
            "Fetch the robots.txt of URL's origin with this project's settings, through "
            "scrapy_rep's middleware, and explain the verdict for URL: allowed or "
            "disallowed, the deciding rule and its line, the group that applied and how "
            "robots.txt answered. Exit code 0 allowed, 1 disallowed, 2 error."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--agent",
            action="append",
            default=[],
            metavar="TOKEN",
            help="robots.txt token to check as, instead of ROBOTSTXT_USER_AGENT "
            "(repeat for a list in order of preference)",
        )
        parser.add_argument(
            "--spider", metavar="NAME", help="use this spider's custom_settings (its token)"
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError()
        url = args[0]
        parts = urlsplit(url)
        if not parts.scheme or (parts.scheme in {"http", "https", "ftp"} and not parts.netloc):
            raise UsageError(f"not an absolute URL: {url!r}", print_help=False)
        assert self.settings is not None and self.crawler_process is not None
        self.settings.set("ROBOTSTXT_OBEY", True, priority="cmdline")
        if opts.agent:
            self.settings.set("ROBOTSTXT_USER_AGENT", list(opts.agent), priority="cmdline")
        _enable_middleware(self.settings)
        custom_settings: dict[str, Any] = {}
        if opts.spider:
            try:
                spidercls = self.crawler_process.spider_loader.load(opts.spider)
            except KeyError:
                raise UsageError(f"no spider named {opts.spider!r}", print_help=False) from None
            custom_settings = dict(spidercls.custom_settings or {})
        probe = Probe(url, agent_source="--agent" if opts.agent else "")
        crawler = self.crawler_process.create_crawler(_probe_spider(custom_settings))
        probe.connect(crawler)
        self.crawler_process.crawl(crawler, probe=probe)
        self.crawler_process.start()
        print(probe.explain())
        self.exitcode = probe.exit_code()


def _enable_middleware(settings: BaseSettings) -> None:
    """Add scrapy_rep's add-on unless the project enables the middleware already."""
    from scrapy.utils.misc import load_object

    from scrapy_rep.addon import Addon
    from scrapy_rep.middleware import RobotsTxtMiddleware

    def loads(path: object, cls: type) -> bool:
        try:
            obj = load_object(path) if isinstance(path, str) else path
        except (ImportError, NameError, ValueError):
            return False
        return isinstance(obj, type) and issubclass(obj, cls)

    addons = settings.getdict("ADDONS")
    middlewares = settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    if any(loads(path, Addon) for path in addons) or any(
        loads(path, RobotsTxtMiddleware) and middlewares[path] is not None for path in middlewares
    ):
        return
    settings.set("ADDONS", {**addons, _ADDON: 0}, priority="cmdline")


def _probe_spider(custom_settings: dict[str, Any]) -> type[Spider]:
    """A spider that sends nothing: it asks the middleware about one request."""
    from scrapy import Spider

    class RobotsProbe(Spider):
        name = "robots"

        def __init__(self, probe: Probe, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.probe = probe

        async def start(self) -> AsyncIterator[Request]:
            await self.probe.run(self.crawler)
            return
            yield  # an async generator that yields nothing

    RobotsProbe.custom_settings = custom_settings
    return RobotsProbe


@dataclass
class Probe:
    """Asks the middleware about URL, and keeps what it needs to explain the answer."""

    url: str
    agent_source: str = ""
    ran: bool = False
    error: str = ""
    checked: bool = True  # False for schemes that have no robots.txt
    dropped: RobotsTxtDisallowed | None = None
    access: Access | None = None
    tokens: tuple[str, ...] = ()
    robotstxt_url: str = ""
    _parsed: list[Access] = field(default_factory=list)

    def connect(self, crawler: Crawler) -> None:
        from scrapy import signals

        robots_parsed = getattr(signals, "robots_parsed", None)
        if robots_parsed is not None:  # Scrapy 2.18+
            crawler.signals.connect(self._robots_parsed, signal=robots_parsed)

    def _robots_parsed(self, robotparser: object, **_: Any) -> None:
        access = getattr(robotparser, "access", None)
        if access is not None:
            self._parsed.append(access)

    async def run(self, crawler: Crawler) -> None:
        from scrapy import Request

        from scrapy_rep.middleware import RobotsTxtDisallowed, RobotsTxtMiddleware
        from scrapy_rep.origin import origin_of, robots_url
        from scrapy_rep.settings import Config

        self.ran = True
        middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
        if middleware is None:
            self.error = (
                "scrapy_rep's RobotsTxtMiddleware is not enabled in this project "
                "(DOWNLOADER_MIDDLEWARES sets it to None?)"
            )
            return
        config = Config.from_settings(crawler.settings)
        self.tokens = _tokens(config.user_agent_tokens, config.default_user_agent)
        if not self.agent_source:
            self.agent_source = "ROBOTSTXT_USER_AGENT" if config.user_agent_tokens else "USER_AGENT"
        origin = origin_of(self.url)
        if urlsplit(self.url).scheme not in config.checked_schemes or origin is None:
            self.checked = False
            return
        self.robotstxt_url = robots_url(origin)
        try:
            await middleware.process_request(Request(self.url, dont_filter=True))
        except RobotsTxtDisallowed as exc:
            self.dropped = exc
        self.access = self._parsed[-1] if self._parsed else _known_access(middleware, origin)

    # --- the answer

    def exit_code(self) -> int:
        if self.error or not self.ran:
            return EXIT_ERROR
        return EXIT_DISALLOWED if self.dropped is not None else EXIT_ALLOWED

    def explain(self) -> str:
        if not self.ran:
            return f"error: {self.url}: the check did not run (see the log above)"
        if self.error:
            return f"error: {self.url}: {self.error}"
        verdict = "disallowed" if self.dropped is not None else "allowed"
        lines = [f"{verdict}: {self.url}"]
        if not self.checked:
            lines.append(f"  scheme      {urlsplit(self.url).scheme}: not checked (no robots.txt)")
            return "\n".join(lines)
        lines.append(f"  robots.txt  {self.robotstxt_url} -> {self._outcome()}")
        lines.append(f"  tokens      {', '.join(self.tokens) or '(none)'} ({self.agent_source})")
        lines.extend(self._rule_lines())
        return "\n".join(lines)

    def _outcome(self) -> str:
        from scrapy_rep.middleware import RobotsTxtUnreachable

        if isinstance(self.dropped, RobotsTxtUnreachable):
            return f"{_short(self.dropped.reason)}: every request to this origin is dropped"
        if self.access is None:
            return "known to the crawler already (no details)"
        reason = _short(self.access.reason)
        if self.access.robots is None:
            return f"{reason}: every URL allowed"
        return reason

    def _rule_lines(self) -> list[str]:
        from scrapy_rep.middleware import ForbiddenByRobotsTxt

        robots = self.access.robots if self.access is not None else None
        if robots is None:
            if isinstance(self.dropped, ForbiddenByRobotsTxt):
                return [f"  rule        {_rule(self.dropped.rule)}"]
            return []
        verdict = robots.explain(self.url, self.tokens)
        group = verdict.agent or "(none: no group names these tokens and there is no *)"
        rule = _rule(verdict.rule) if verdict.rule else "(none matches: allowed)"
        lines = [f"  group       {group}", f"  rule        {rule}"]
        if verdict.allowed != (self.dropped is None):
            lines.append("  note        the middleware decided otherwise than the rules above")
        return lines


def _tokens(configured: tuple[str, ...], user_agent: str) -> tuple[str, ...]:
    """The tokens the middleware checks a request with before UserAgentMiddleware runs."""
    from scrapy_rep.agents import product_token

    if configured:
        return configured
    token = product_token(user_agent)
    return (token,) if token else ()


def _known_access(middleware: object, origin: object) -> Access | None:
    """The middleware's answer for an origin it did not fetch in this run (taken from its store)."""
    peek = getattr(getattr(middleware, "_resolver", None), "peek", None)
    if not callable(peek):
        return None
    try:
        access = peek(origin)
    except Exception:
        return None
    from scrapy_rep.outcome import Access

    return access if isinstance(access, Access) else None


def _rule(rule: Rule) -> str:
    return f"line {rule.line}: {rule.kind.capitalize()}: {rule.pattern}"


def _short(reason: str) -> str:
    return reason.removeprefix("robots.txt ").strip() or "?"
