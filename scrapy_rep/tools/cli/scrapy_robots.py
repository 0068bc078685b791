"""``scrapy robots URL``: would this project's crawler fetch URL, and why?

Registered through the ``scrapy.commands`` entry point, so Scrapy imports this
module on every ``scrapy`` call: only Scrapy's command base class is imported
here, the rest inside ``run``.

The answer comes from the crawler itself, not from a separate parser: the
command starts a crawl with the project's settings (proxy, headers, storage,
the spider's ``custom_settings`` with ``--spider``), hands a request for URL to
scrapy_rep's middleware, and reports what the middleware decided, with the
rule, its line and the group that applied. URL itself is never downloaded.
A diagnostic changes nothing the crawl acts on: when the project's store
keeps the origin, the answer comes from that record, as a crawl holding it
would answer, and the store is left as it was (a due retry is not made);
robots.txt is fetched, and recorded, as a crawl fetches it only when nothing
is kept or with ``--refetch`` (docs/cli.md).

With ``--purpose LABEL`` (or the project's ``REP_PURPOSES``) it also reports
what robots.txt's ``Content-Usage`` / ``Content-Signal`` lines state for each
declared purpose, with the deciding line; a refused purpose is a drop (the
response header ``Content-Usage`` cannot be known: URL is not downloaded).

Exit codes: 0 allowed, 1 disallowed (by a rule, a refused purpose, or because
robots.txt is unreachable, so the crawler would drop the request), 2 usage
error or the check could not run.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urljoin, urlsplit

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from scrapy_rep.engine.grammar import line_text, rule_text
from scrapy_rep.engine.rules import UNDECIDED, UNDECIDED_TEXT
from scrapy_rep.engine.usage import LABELS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.settings import BaseSettings

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.crawler.config.settings import Config
    from scrapy_rep.crawler.errors import RobotsTxtDisallowed
    from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
    from scrapy_rep.engine.robotstxt import Rule

__all__ = ["EXIT_ALLOWED", "EXIT_DISALLOWED", "EXIT_ERROR", "RobotsCommand"]

EXIT_ALLOWED: Final = 0
EXIT_DISALLOWED: Final = 1
EXIT_ERROR: Final = 2

_ADDON: Final = "scrapy_rep.Addon"


class RobotsCommand(ScrapyCommand):
    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[options] <url> | --serve [--host H] [--port N] [--allow-host NAME]"

    def short_desc(self) -> str:
        return "Explain whether robots.txt lets this project crawl a URL"

    def long_desc(self) -> str:
        return (
            "Explain the verdict for URL as this project's crawl would give it: allowed or "
            "disallowed, the deciding rule and its line, the group that applied, and "
            "where robots.txt came from. The answer comes from the project's store when "
            "it keeps the origin, changing nothing; otherwise (or with --refetch) "
            "robots.txt is fetched through scrapy_rep's middleware and recorded, as a "
            "crawl does. Exit code 0 allowed, 1 disallowed, 2 error."
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
        parser.add_argument(
            "--purpose",
            action="append",
            default=[],
            metavar="LABEL",
            help="a use of the content to check, instead of REP_PURPOSES (repeatable): "
            + ", ".join(LABELS),
        )
        parser.add_argument(
            "--refetch",
            action="store_true",
            help="fetch robots.txt now, as a crawl would, and record the answer in the "
            "project's store (default: answer from the store when it keeps the origin, "
            "changing nothing)",
        )
        parser.add_argument(
            "--serve",
            action="store_true",
            help="serve the robots.txt Tester with this project's settings (tokens, "
            "User-Agent, store, fetch limits) instead of checking one URL",
        )
        parser.add_argument(
            "--host", default="127.0.0.1", help="--serve: address (default: 127.0.0.1)"
        )
        parser.add_argument(
            "--port", type=int, default=8765, help="--serve: port (default: 8765; 0: any)"
        )
        parser.add_argument(
            "--allow-host",
            action="append",
            default=[],
            metavar="NAME",
            help="--serve: a Host name to answer besides 127.0.0.1, localhost and --host",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if opts.serve:
            if args:
                raise UsageError("--serve takes no URL", print_help=False)
            self.exitcode = self._serve(opts)
            return
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
        if opts.purpose:
            self.settings.set("REP_PURPOSES", list(opts.purpose), priority="cmdline")
        _enable_middleware(self.settings)
        custom_settings: dict[str, Any] = {}
        if opts.spider:
            try:
                spidercls = self.crawler_process.spider_loader.load(opts.spider)
            except KeyError:
                raise UsageError(f"no spider named {opts.spider!r}", print_help=False) from None
            custom_settings = dict(spidercls.custom_settings or {})
        probe = Probe(url, agent_source="--agent" if opts.agent else "", refetch=opts.refetch)
        crawler = self.crawler_process.create_crawler(_probe_spider(custom_settings))
        probe.connect(crawler)
        self.crawler_process.crawl(crawler, probe=probe)
        self.crawler_process.start()
        print(probe.explain())
        self.exitcode = probe.exit_code()

    def _serve(self, opts: argparse.Namespace) -> int:
        """The tester, told what this project's crawl would use."""
        from scrapy_rep.tools.tester.project import tester_config
        from scrapy_rep.tools.tester.server import serve

        assert self.settings is not None and self.crawler_process is not None
        settings = self.settings.copy()
        if opts.spider:
            try:
                spidercls = self.crawler_process.spider_loader.load(opts.spider)
            except KeyError:
                raise UsageError(f"no spider named {opts.spider!r}", print_help=False) from None
            settings.setdict(dict(spidercls.custom_settings or {}), priority="spider")
        config = tester_config(settings, agents=opts.agent, purposes=opts.purpose)
        config = replace(config, allowed_hosts=tuple(opts.allow_host))
        return serve(config, opts.host, opts.port)


def _enable_middleware(settings: BaseSettings) -> None:
    """Add scrapy_rep's add-on unless the project enables the middleware already."""
    from scrapy.utils.misc import load_object

    from scrapy_rep.crawler.addon import Addon
    from scrapy_rep.crawler.middleware import RobotsTxtMiddleware

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
    access: Access | None = None  # from scrapy_rep's robotstxt_resolved signal
    fetch: str = ""  # how the robots.txt download went, from Scrapy's response_received
    tokens: tuple[str, ...] = ()
    usage: dict[str, Any] | None = None  # meta["rep_usage"], when purposes are declared
    robotstxt_url: str = ""
    refetch: bool = False  # --refetch: fetch and record even when the store keeps an answer
    stored: str = ""  # how the store's record was used, when it answered
    keeps: bool = False  # the project's crawls keep records between runs (not "memory")
    obey_pace: bool = False  # REP_CRAWL_DELAY = "obey"
    _hops: dict[str, int] = field(default_factory=dict)  # next URL of the chain -> hops so far

    def connect(self, crawler: Crawler) -> None:
        from scrapy import signals as scrapy_signals

        from scrapy_rep import signals

        crawler.signals.connect(self._resolved, signal=signals.robotstxt_resolved)
        crawler.signals.connect(self._sent, signal=scrapy_signals.request_reached_downloader)
        crawler.signals.connect(self._response, signal=scrapy_signals.response_received)

    def _resolved(self, robotstxt_url: str, access: Access, **_: Any) -> None:
        if robotstxt_url == self.robotstxt_url:
            self.access = access

    def _sent(self, request: Request, **_: Any) -> None:
        from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY

        is_fetch = request.meta.get(ROBOTSTXT_FETCH_META_KEY)
        if is_fetch and request.url == self.robotstxt_url and not self.fetch:
            self.fetch = "no response"  # until a response says otherwise

    def _response(self, response: Response, request: Request, **_: Any) -> None:
        """Follow the robots.txt download through its redirects: status, hops, cut."""
        from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY

        if not request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return
        if request.url == self.robotstxt_url:
            self._hops = {}
            hops = 0
        elif request.url in self._hops:
            hops = self._hops.pop(request.url)
        else:
            return
        location = response.headers.get(b"Location")
        if 300 <= response.status < 400 and location:
            self._hops[urljoin(request.url, location.decode("latin-1"))] = hops + 1
            return
        self.fetch = f"HTTP {response.status}"
        if hops:
            self.fetch += f" after {hops} redirect{'s' if hops > 1 else ''} (to {request.url})"
        if "download_stopped" in response.flags:
            self.fetch += f", download stopped after {len(response.body)} bytes"

    async def run(self, crawler: Crawler) -> None:
        from scrapy import Request

        from scrapy_rep.crawler.config.settings import Config, CrawlDelayConfig
        from scrapy_rep.crawler.errors import RobotsTxtDisallowed
        from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
        from scrapy_rep.engine.origin import origin_of, robots_url
        from scrapy_rep.tools.store.project import store_of

        self.ran = True
        middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
        if middleware is None:
            self.error = (
                "scrapy_rep's RobotsTxtMiddleware is not enabled in this project "
                "(DOWNLOADER_MIDDLEWARES sets it to None?)"
            )
            return
        config = Config.of(crawler)
        request = Request(self.url, dont_filter=True)
        self.tokens = middleware.tokens_for(request)
        if not self.agent_source:
            self.agent_source = middleware.tokens_source
        if urlsplit(self.url).scheme not in config.checked_schemes:
            self.checked = False
            return
        origin = origin_of(self.url)  # None: the middleware drops it (no origin)
        self.keeps = store_of(config) is not None
        self.obey_pace = CrawlDelayConfig.from_settings(crawler.settings).obey
        self.robotstxt_url = robots_url(origin) if origin is not None else ""
        try:
            if self.refetch or origin is None or not self._from_store(middleware, request, config):
                await middleware.process_request(request)
        except RobotsTxtDisallowed as exc:
            self.dropped = exc
        except Exception as exc:  # anything but a drop is an error, never "allowed"
            self.error = f"the check failed: {type(exc).__name__}: {exc}"
        self.usage = request.meta.get("rep_usage")

    def _from_store(
        self, middleware: RobotsTxtMiddleware, request: Request, config: Config
    ) -> bool:
        """Answer from the record the project's store keeps, as a crawl holding
        it would, changing nothing (docs/cli.md, "scrapy robots"); False when
        nothing usable is kept, so robots.txt is fetched (and recorded) as a
        crawl fetches it."""
        from scrapy_rep.cache.lifecycle import shared_parsed_bodies
        from scrapy_rep.cache.policy import Action, decide, decide_settled, loaded_record
        from scrapy_rep.crawler.request_checks import first_drop
        from scrapy_rep.engine.origin import origin_of
        from scrapy_rep.tools.store.answer import read_stored, stored_note

        origin = origin_of(self.url)
        assert origin is not None
        now = config.clock()
        policy = config.policy
        record = read_stored(config, str(origin))
        trusted = None if record is None else loaded_record(record, now, policy)
        if trusted is None:
            return False
        decision = decide(trusted, now, policy)
        if decision.action is not Action.USE:
            decision_now = decide_settled(trusted, now, policy)
        else:
            decision_now = decision
        self.access = decision_now.access(shared_parsed_bodies(config.google_quirks))
        due = decision.action is Action.FETCH or decision.refresh_due
        self.stored = stored_note(trusted, now, due)
        drop = first_drop(middleware.checks, request, origin, self.access)
        if drop is not None:
            raise drop.error
        return True

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
        fetch = self.stored or self.fetch or "not fetched: from the crawl's memory"
        if self.fetch and not self.stored and self.keeps:
            fetch += " (fetched now, and recorded in the project's store)"
        lines.append(f"  robots.txt  {self.robotstxt_url}: {fetch}")
        lines.append(f"  access      {self._access()}")
        lines.append(f"  tokens      {', '.join(self.tokens) or '(none)'} ({self.agent_source})")
        lines.extend(self._rule_lines())
        lines.extend(self._pace_lines())
        lines.extend(self._usage_lines())
        return "\n".join(lines)

    def _pace_lines(self) -> list[str]:
        """The pace the group asks (docs/crawl-delay.md), and whether the crawl keeps it."""
        from scrapy_rep.cache.standing import pace_of

        robots = self.access.robots if self.access is not None else None
        pace = pace_of(robots, self.tokens) if robots is not None else None
        if pace is None:
            return []
        if self.obey_pace:
            kept = 'applied (REP_CRAWL_DELAY = "obey")'
        else:
            kept = 'not applied: REP_CRAWL_DELAY = "obey" applies it'
        return [f"  pace        {pace:g} s between requests (Crawl-delay/Request-rate): {kept}"]

    def _usage_lines(self) -> list[str]:
        """Per declared purpose: its state and the robots.txt lines that decided it."""
        if self.usage is None:
            return []
        lines = []
        for label in self.usage["purposes"]:
            decision = self.usage["labels"][label]
            by = "; ".join(
                f"line {item['line']}{' (global)' if item.get('global') else ''}: "
                f"{line_text(item['source'], item['text'])}"
                for item in decision["by"]
            )
            lines.append(f"  usage       {label}: {decision['state']}{f' by {by}' if by else ''}")
        return lines

    def _access(self) -> str:
        """What applies to the origin's requests, and the policy's reason."""
        from scrapy_rep.cache.outcome import AccessState
        from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

        if self.access is None:
            if self.dropped is not None and not isinstance(self.dropped, ForbiddenByRobotsTxt):
                return f"every request dropped: {self.dropped.reason}"
            return "(not reported)"
        if self.access.state is AccessState.RULES:
            return "rules: the group below decides"
        if self.access.state is AccessState.ALLOW_ALL:
            return f"every URL allowed: {self.access.reason}"
        return f"every request dropped: {self.access.reason}"

    def _rule_lines(self) -> list[str]:
        from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

        robots = self.access.robots if self.access is not None else None
        if robots is None:
            if isinstance(self.dropped, ForbiddenByRobotsTxt):
                return [f"  rule        {_rule(self.dropped.rule)}"]
            return []
        verdict = robots.explain(self.url, self.tokens)
        group = verdict.agent or "(none: no group names these tokens and there is no *)"
        rule = _rule(verdict.rule) if verdict.rule else "(none matches: allowed)"
        lines = [f"  group       {group}", f"  rule        {rule}"]
        if verdict.allowed != (self.dropped is None) and not _usage_drop(self.dropped):
            lines.append("  note        the middleware decided otherwise than the rules above")
        return lines


def _usage_drop(dropped: RobotsTxtDisallowed | None) -> bool:
    from scrapy_rep.crawler.errors import RobotsTxtUsageDenied

    return isinstance(dropped, RobotsTxtUsageDenied)


def _rule(rule: Rule) -> str:
    if rule == UNDECIDED:
        return UNDECIDED_TEXT
    return f"line {rule.line}: {rule_text(rule)}"
