"""What each call of the Tester's API answers (docs/tester.md), apart from HTTP.

Plain functions of the run's ``TesterConfig`` and the request's data; each
refuses with ``Refused`` (a status and a message the page shows). ``app``
runs them in worker threads: a live fetch, a read of the store or a test of
10,000 rows never holds up the connections the event loop serves.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Final

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.storage import StorageError
from scrapy_rep.cache.storage.errors import UnreadableRecord
from scrapy_rep.crawler.config.defaults import MIN_BODY_BYTES, MIN_REDIRECTS
from scrapy_rep.engine.origin import origin_of, robots_url
from scrapy_rep.engine.usage import LABELS
from scrapy_rep.tools.fetch.live import (
    DEFAULT_USER_AGENT,
    FetchRefused,
    Network,
    fetch_live,
    is_web_url,
)
from scrapy_rep.tools.lint.finding import MEANING
from scrapy_rep.tools.store.view import StoreName, describe, forget_origin, read_origin
from scrapy_rep.tools.tester.answers import diff_lines, line_report, verdicts
from scrapy_rep.tools.tester.guard import Limits, Refused
from scrapy_rep.tools.tester.report_api import Query, forget_filtered, report_answer
from scrapy_rep.tools.tester.versions_api import versions_answer

__all__ = [
    "LINK_LIMIT",
    "MAX_ROWS",
    "TesterConfig",
    "config_answer",
    "forget",
    "forget_many",
    "live",
    "report",
    "stored",
    "tested",
    "versions_of",
]

#: The longest path and query a link to the page can have: the server
#: refuses (400) a longer request target (aiohttp's ``max_line_size``). The
#: page says so rather than offer a link that opens nothing.
LINK_LIMIT: Final = 65_536
#: The most rows (URLs x crawlers) one ``/api/test`` computes: a link of
#: 64 KB can name millions, and the page runs a link's test without a click.
MAX_ROWS: Final = 10_000


@dataclass(frozen=True)
class TesterConfig:
    """What the tester knows of the crawl: its tokens, store and fetch rules."""

    agents: tuple[str, ...] = ("scrapy",)  # each "a,b" is one crawler's tokens
    purposes: tuple[str, ...] = ()
    google_quirks: bool = False
    store: StoreName | None = None
    user_agent: str = DEFAULT_USER_AGENT
    timeout: float = 10.0
    max_body_bytes: int = MIN_BODY_BYTES  # REP_MAX_BODY_BYTES's default
    max_redirects: int = MIN_REDIRECTS  # REP_FOLLOW_REDIRECTS's default
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    #: Host names answered beside 127.0.0.1, localhost and the bound address.
    allowed_hosts: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    #: How live fetches resolve names and connect (``fetch.guard``; tests give their own).
    network: Network = field(default_factory=Network)


def json_object(body: bytes) -> dict[str, Any]:
    """A request's body as the JSON object every POST call takes."""
    try:
        data = json.loads(body or b"{}")
    except ValueError as exc:
        raise Refused(400, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Refused(400, "send a JSON object")
    return data


def config_answer(config: TesterConfig) -> dict[str, Any]:
    return {
        "agents": list(config.agents),
        "purposes": list(config.purposes),
        "labels": list(LABELS),
        "store": config.store.shown() if config.store is not None else None,
        "user_agent": config.user_agent,
        "severities": MEANING,
        "link_limit": LINK_LIMIT,
    }


def tested(config: TesterConfig, data: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/test``: the verdicts, lint's lines and the diff."""
    text = _text(data.get("robots"), "robots")
    urls = _texts(data.get("urls"), "urls")
    agents = _texts(data.get("agents"), "agents") or list(config.agents)
    if len(urls) * len(agents) > MAX_ROWS:
        raise Refused(
            413,
            f"{len(urls):,} URLs x {len(agents):,} crawlers = {len(urls) * len(agents):,} "
            f"results: at most {MAX_ROWS:,} are tested at once; test fewer URLs or crawlers",
        )
    purposes = [p for p in _texts(data.get("purposes"), "purposes") if p in LABELS]
    access = _text(data.get("access"), "access")
    reason = _text(data.get("access_reason"), "access_reason")
    answer = line_report(text)
    answer["rows"] = verdicts(text, urls, agents, purposes, config.google_quirks, access, reason)
    compare = data.get("compare")
    answer["diff"] = (
        diff_lines(_text(compare, "compare"), text) if isinstance(compare, str) else None
    )
    return answer


def live(config: TesterConfig, query: Query) -> dict[str, Any]:
    """The robots.txt of ``url``'s origin, never ``url`` itself: a link
    naming an internal page must not make the Tester send that GET; nor
    may a redirect (``fetch.guard``: /robots.txt paths only, and no
    internal address unless the origin asked for is one)."""
    url = _one(query, "url")
    if not is_web_url(url):
        raise Refused(400, f"only http(s) URLs are fetched, not {url!r}")
    origin = origin_of(url)
    if origin is None:
        raise Refused(400, f"not an absolute http(s) URL with a host: {url!r}")
    try:
        got = fetch_live(
            robots_url(origin),
            config.timeout,
            user_agent=config.user_agent,
            max_bytes=config.max_body_bytes,
            max_redirects=config.max_redirects,
            network=config.network,
        )
    except FetchRefused as refused:
        raise Refused(403, str(refused)) from None
    return {
        "url": got.url,
        "kind": got.kind.value,
        "status": got.status,
        "message": got.message,
        "final_url": got.final_url,
        "hops": got.hops,
        "headers": [[key, value] for key, value in got.headers],
        "body": got.body[: config.max_body_bytes].decode("utf-8", "replace"),
        "cut": len(got.body) > config.max_body_bytes,
    }


def stored(config: TesterConfig, query: Query) -> dict[str, Any]:
    """``GET /api/stored?url=``: what the store keeps for the URL's origin."""
    url = _one(query, "url")
    store = _store(config)
    try:
        key, record = read_origin(store, url)
    except ValueError as exc:
        raise Refused(400, str(exc)) from None
    except UnreadableRecord as exc:  # the store answers; this record is not one
        raise Refused(422, str(exc)) from None
    except StorageError as exc:
        raise Refused(503, str(exc)) from None
    answer = describe(
        record,
        policy=config.policy,
        tokens=_tokens(config) or ("*",),
        google_quirks=config.google_quirks,
    )
    answer.update(origin=key, store=store.shown(), now=time.time())
    return answer


def versions_of(config: TesterConfig, query: Query) -> dict[str, Any]:
    """``GET /api/versions?url=&agent=``: the versions kept for the URL's
    origin, and what changed for each crawler (``agent``, repeated; default
    the Tester's crawlers) between the current one and the one before."""
    url = _one(query, "url")
    store = _store(config)
    try:
        key, record = read_origin(store, url)
    except ValueError as exc:
        raise Refused(400, str(exc)) from None
    except UnreadableRecord as exc:
        raise Refused(422, str(exc)) from None
    except StorageError as exc:
        raise Refused(503, str(exc)) from None
    agents = [agent for agent in query.get("agent", ()) if agent.strip()] or list(config.agents)
    return versions_answer(store, key, record, agents, config.google_quirks)


def forget(config: TesterConfig, data: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/forget``: Refetch of one origin."""
    store = _store(config)
    try:
        key, found = forget_origin(store, _text(data.get("url"), "url"))
    except ValueError as exc:
        raise Refused(400, str(exc)) from None
    except StorageError as exc:
        raise Refused(503, str(exc)) from None
    return {"origin": key, "forgotten": found, "at": time.time(), "store": store.shown()}


def report(config: TesterConfig, query: Query) -> dict[str, Any]:
    """``GET /api/report``: the report page's table (``report_api``)."""
    return report_answer(
        _store(config), query, config.policy, _tokens(config), config.google_quirks
    )


def forget_many(config: TesterConfig, data: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/forget-many``: Refetch of every origin of a filter."""
    return forget_filtered(
        _store(config), data, config.policy, _tokens(config), config.google_quirks
    )


def _store(config: TesterConfig) -> StoreName:
    if config.store is None:
        raise Refused(409, "no store: start the tester with --store (or from a project)")
    return config.store


def _tokens(config: TesterConfig) -> list[str]:
    """The first crawler's tokens: the report's "forbids everything" is said of them."""
    first = config.agents[0] if config.agents else ""
    return [token.strip() for token in first.split(",") if token.strip()]


def _one(query: Query, name: str) -> str:
    values = [value for value in query.get(name, ()) if value]
    if not values:
        raise Refused(400, f"missing {name}=")
    return values[0]


def _text(value: object, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(400, f"{name} must be a string")
    return value


def _texts(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Refused(400, f"{name} must be a list of strings")
    return [item.strip() for item in value if item.strip()]
