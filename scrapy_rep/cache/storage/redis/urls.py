"""The forms ``REP_REDIS_URL`` takes: one server, Sentinel, or Cluster (docs/storage.md).

One setting holds the whole address, secrets included, as ``REDIS_URL`` does
for scrapy-redis: a deployment passes one URL (one environment variable), and
``scrapy-rep cache show --store URL`` and the Tester take the same URL. The
multi-host forms follow the ``redis+sentinel://`` convention other Python
tools use (Redis-Sentinel-Url, Prefect): the password before ``@`` is the
data nodes', the sentinels' own is a ``sentinel_password`` query option.

Pure: parsing only, no ``redis`` import, so the settings can check a URL at
start-up without the client installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import parse_qsl, unquote

__all__ = [
    "ACCEPTED_FORMS",
    "REDIS_SCHEMES",
    "RedisAddress",
    "parse_redis_url",
    "safe_url",
]

#: One server (redis-py's own forms), a primary found through Sentinel, a Cluster.
SERVER_SCHEMES: Final = ("redis", "rediss", "unix")
SENTINEL_SCHEME: Final = "redis+sentinel"
CLUSTER_SCHEME: Final = "redis+cluster"
REDIS_SCHEMES: Final = (*SERVER_SCHEMES, SENTINEL_SCHEME, CLUSTER_SCHEME)

SENTINEL_PORT: Final = 26379
CLUSTER_PORT: Final = 6379
#: The options a Sentinel URL takes: how to log in to the sentinels themselves.
SENTINEL_OPTIONS: Final = ("sentinel_username", "sentinel_password")

ACCEPTED_FORMS: Final = (
    "a Redis URL: 'redis://[[user]:password@]host[:port][/db]', 'rediss://...' (TLS), "
    "'unix:///path/to/socket[?db=N]'; Sentinel: "
    "'redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service_name[/db]"
    "[?sentinel_password=...&sentinel_username=...]' (the sentinels, port 26379 by "
    "default); Cluster: 'redis+cluster://[[user]:password@]host[:port][,host[:port]...]' "
    "(seed nodes, port 6379 by default)"
)

_PASSWORD_OPTION: Final = re.compile(r"((?:^|[?&])(?:sentinel_)?password=)[^&#]*")


@dataclass(frozen=True)
class RedisAddress:
    """Where the store is: ``kind`` says how to connect, the rest what with."""

    kind: Literal["server", "sentinel", "cluster"]
    url: str
    #: Sentinel: the sentinels; Cluster: the seed nodes (any reachable one will do).
    nodes: tuple[tuple[str, int], ...] = ()
    service: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_username: str | None = None
    sentinel_password: str | None = None


def parse_redis_url(url: str) -> RedisAddress:
    """``url`` as an address; ``ValueError`` saying what is wrong and what is accepted.

    A one-server URL is checked for its scheme only: redis-py reads the rest.
    """
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in REDIS_SCHEMES:
        raise ValueError(f"{ACCEPTED_FORMS} (the scheme must be one of {', '.join(REDIS_SCHEMES)})")
    if scheme in SERVER_SCHEMES:
        return RedisAddress("server", url)
    where, _, query = rest.partition("?")
    netloc, _, path = where.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    username, password = _credentials(userinfo) if at else (None, None)
    options = _options(query, SENTINEL_OPTIONS if scheme == SENTINEL_SCHEME else ())
    if scheme == SENTINEL_SCHEME:
        service, _, db = path.strip("/").partition("/")
        if not service:
            raise ValueError(f"{ACCEPTED_FORMS} (a Sentinel URL names its service: /mymaster)")
        return RedisAddress(
            "sentinel",
            url,
            nodes=_nodes(hosts, SENTINEL_PORT),
            service=unquote(service),
            db=_db(db),
            username=username,
            password=password,
            sentinel_username=options.get("sentinel_username"),
            sentinel_password=options.get("sentinel_password"),
        )
    if path.strip("/") not in ("", "0"):
        raise ValueError(f"{ACCEPTED_FORMS} (Redis Cluster has one database, 0: no /db)")
    return RedisAddress(
        "cluster", url, nodes=_nodes(hosts, CLUSTER_PORT), username=username, password=password
    )


def safe_url(url: str) -> str:
    """The URL for messages: its password and any ``password`` option shown as ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    netloc, slash, tail = rest.partition("/")
    if "?" in netloc:  # no path: the query follows the hosts
        netloc, mark, query = netloc.partition("?")
        slash, tail = "", mark + query
    userinfo, at, hosts = netloc.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    tail = _PASSWORD_OPTION.sub(r"\1***", tail)
    return f"{scheme}://{userinfo}{at}{hosts}{slash}{tail}"


def _credentials(userinfo: str) -> tuple[str | None, str | None]:
    user, colon, password = userinfo.partition(":")
    return (unquote(user) or None), (unquote(password) if colon else None)


def _options(query: str, accepted: tuple[str, ...]) -> dict[str, str]:
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        allowed = f"only {', '.join(accepted)}" if accepted else "none"
        raise ValueError(f"{ACCEPTED_FORMS} (unknown option {unknown[0]!r}: {allowed})")
    return options


def _nodes(hosts: str, default_port: int) -> tuple[tuple[str, int], ...]:
    if not hosts:
        raise ValueError(f"{ACCEPTED_FORMS} (no host)")
    return tuple(_node(host, default_port) for host in hosts.split(","))


def _node(text: str, default_port: int) -> tuple[str, int]:
    """``host``, ``host:port``, ``[v6]`` or ``[v6]:port``."""
    if text.startswith("["):
        host, bracket, after = text[1:].partition("]")
        colon = after[:1]
        if not bracket or colon not in ("", ":"):
            raise ValueError(f"{ACCEPTED_FORMS} (bad address {text!r})")
        port = after[1:]
    else:
        host, colon, port = text.partition(":")
    good_port = port.isascii() and port.isdigit() and 0 < int(port) < 65536
    if not host or (colon and not good_port):
        raise ValueError(f"{ACCEPTED_FORMS} (bad address {text!r})")
    return host.lower(), int(port) if colon else default_port


def _db(text: str) -> int:
    if not text:
        return 0
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{ACCEPTED_FORMS} (the database is a number: /mymaster/0)")
    return int(text)
