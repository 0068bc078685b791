"""The engine's edges that a mutation run (tests/mutation/run.py) found untested:
each row is one rule of docs/spec.md at the value where it turns."""

from __future__ import annotations

import pytest
from rule_codes import rule_code

from scrapy_rep import RobotsTxt, Rule
from scrapy_rep.engine.compiled_group import INDEXED_WILDCARDS, CompiledGroup
from scrapy_rep.engine.robotstxt import NO_GROUP, NO_RULE, ROBOTS_TXT, RULE
from scrapy_rep.engine.user_agent import user_agent_names

URL = "https://example.com"


def group(*lines: tuple[str, str]) -> CompiledGroup:
    """A compiled group of (kind, pattern) lines, numbered from 1."""
    codes = [rule_code(kind, line) for line, (kind, _) in enumerate(lines, 1)]
    return CompiledGroup("\n".join(pattern for _, pattern in lines), codes, False)


# --- §5.6 the `*` group is `*` alone ---------------------------------------------------


@pytest.mark.parametrize(
    ("value", "quirks", "agents"),
    [
        ("*", False, ("*",)),
        ("  *  ", False, ("*",)),
        ("*\u00a0", False, ("*",)),  # a no-break space around the value is space too
        ("* Foo", False, ()),  # not a token: the line names no agent
        ("*\tFoo", False, ()),
        ("* Foo", True, ("*",)),  # Google's library: still the global group
        ("*\tFoo", True, ("*",)),
        ("*Foo", True, ()),
    ],
)
def test_rfc9309_5_6_star_followed_by_a_name_is_not_the_star_group(
    value: str, quirks: bool, agents: tuple[str, ...]
) -> None:
    robots = RobotsTxt.parse(f"User-agent: {value}\nDisallow: /\n", google_quirks=quirks)
    assert robots.agents == agents
    assert robots.allowed(URL + "/page", "mybot") is (agents == ())


# --- §5.7 the crawler's tokens: read once per mode ---------------------------------------


@pytest.mark.parametrize("first_quirks", [False, True])
def test_google_5_7_verbatim_agent_and_rfc_token_do_not_share_a_reading(
    first_quirks: bool,
) -> None:
    """``FooBot/1.2`` names ``foobot`` by RFC 9309; Google's library compares
    the string verbatim, and it names no group there. Whichever mode reads the
    string first, the other reads it its own way."""
    body = "User-agent: foobot\nDisallow: /\n"
    agent = f"FooBot/1.2 {first_quirks}"  # a string no other test has asked with
    expected = {False: False, True: True}  # allowed, per mode
    for quirks in (first_quirks, not first_quirks):
        robots = RobotsTxt.parse(body, google_quirks=quirks)
        assert robots.allowed(URL + "/page", agent) is expected[quirks], quirks
        assert robots.explain(URL + "/page", agent).agent == (None if quirks else "foobot")


@pytest.mark.parametrize(
    ("user_agent", "names"),
    [
        ("X-Crawler/1.0", ("x-crawler",)),  # a name of one letter and a dash
        ("A_bot/2 (+https://a.example/bot)", ("a_bot",)),
        # RFC 9110 §5.6.5: a comment nests, and "\\)" does not end it; its loose
        # words come after the products, whatever the parentheses inside it
        ("Foo/1.0 (Bar (x) Baz) Qux/2", ("foo", "qux", "bar", "baz")),
        ("Foo/1.0 (\\) Bar/2) Qux/3", ("foo", "qux", "bar")),
        ("Foo/1.0 () Bar/2 (compatible; Baz/3)", ("foo", "bar", "baz")),
        ("Foo/1.0 (x)Bar/2", ("foo", "bar")),  # no space after a comment: read anyway
        ("Foo/1.0 (en-US; Bar", ("foo", "bar")),  # a comment cut off is still a comment
    ],
)
def test_spec_5_7_names_in_user_agent_comments_and_products(
    user_agent: str, names: tuple[str, ...]
) -> None:
    assert user_agent_names(user_agent) == names


# --- crawl-delay and request-rate: the first good value of the agent's own lines ----------


@pytest.mark.parametrize(
    ("lines", "delay"),
    [
        ("Crawl-delay: 0\nCrawl-delay: 7\n", 0.0),  # 0 is a value: the first one holds
        ("Crawl-delay: 0.5\nCrawl-delay: 7\n", 0.5),
        ("Crawl-delay: -1\nCrawl-delay: 7\n", 7.0),  # a bad value is skipped
        ("Crawl-delay: 3\n", 3.0),
    ],
)
def test_rfc9309_crawl_delay_first_good_value_of_the_star_group(lines: str, delay: float) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\n{lines}Disallow: /x\n")
    assert robots.crawl_delay("mybot") == delay  # the * group applies to mybot


@pytest.mark.parametrize(
    ("lines", "usage"),
    [
        ("Content-Usage: 5\n", True),  # a usage line: never a pacing one, whatever its value
        ("Content-Signal: 7\n", True),
        ("Crawl-delay: 5\n", False),
        ("", False),
    ],
)
def test_rfc9309_usage_lines_are_not_pacing_lines(lines: str, usage: bool) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\n{lines}Disallow: /x\n")
    assert robots.has_usage is usage
    assert robots.crawl_delay("mybot") == (5.0 if "Crawl" in lines else None)
    assert robots.request_rate("mybot") is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1/1d", 86400.0), ("2/1h", 1800.0), ("1/2m", 120.0), ("4/1s", 0.25), ("3/9", 3.0)],
)
def test_rfc9309_request_rate_units(value: str, seconds: float) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nRequest-rate: {value}\n")
    assert robots.request_rate("mybot") == seconds


# --- §6.1 and §6.5: the same answers for the next URL of an origin -----------------------


@pytest.mark.parametrize(
    ("rule", "url", "allowed"),
    [
        ("/b", URL + "/%62", False),  # §6.5: an unreserved escape is decoded
        ("/b", URL + "/%62x", False),
        ("/private", URL + "/a/../private/x", False),  # §6.5.1: dot segments removed
        ("/private", URL + "/./private", False),
        ("/$", URL, False),  # §6.1: an empty path counts as "/"
        ("/?q", URL + "?q=1", False),
        ("/b", "http://example.com/b", False),  # another origin
        ("/b", URL + "/c", True),
        ("/%E3%83%84", URL + "/ツ", False),
    ],
)
def test_rfc9309_6_5_the_next_url_of_an_origin_is_normalised_too(
    rule: str, url: str, allowed: bool
) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {rule}\n")
    assert robots.allowed(url, "mybot") is allowed  # the first URL asked about
    assert robots.allowed(URL + "/plain", "mybot")  # an origin's plain path
    assert robots.allowed(url, "mybot") is allowed  # the next URL of the origin
    assert robots.explain(url, "mybot").allowed is allowed


# --- §6.9 robots.txt itself, and why a verdict is what it is ------------------------------


@pytest.mark.parametrize(
    ("body", "path", "quirks", "allowed", "reason"),
    [
        ("User-agent: *\nDisallow: /\n", "/robots.txt", False, True, ROBOTS_TXT),
        ("User-agent: *\nDisallow: /\n", "/robots.txt", True, False, RULE),  # Google's library
        ("User-agent: *\nDisallow: /r\n", "/robots.txt", False, True, ROBOTS_TXT),
        ("User-agent: *\nAllow: /robots\n", "/robots.txt", False, True, ROBOTS_TXT),
        ("User-agent: *\nDisallow: /\n", "/x", False, False, RULE),
        ("User-agent: *\nDisallow: /x\n", "/y", False, True, NO_RULE),
        ("User-agent: other\nDisallow: /\n", "/x", False, True, NO_GROUP),
        ("User-agent: other\nDisallow: /\n", "/robots.txt", False, True, NO_GROUP),
        ("User-agent: *\nDisallow: /x\n", "/y", True, True, NO_RULE),
    ],
)
def test_rfc9309_6_9_robots_txt_itself_and_the_reason_given(
    body: str, path: str, quirks: bool, allowed: bool, reason: str
) -> None:
    robots = RobotsTxt.parse(body, google_quirks=quirks)
    verdict = robots.explain(URL + path, "mybot")
    assert verdict.allowed is allowed
    assert robots.allowed(URL + path, "mybot") is allowed
    assert robots.reason(URL + path, verdict) == reason
    if reason == ROBOTS_TXT:
        assert verdict.rule is None and verdict.agent == "*"


# --- Google's index.html rule ---------------------------------------------------------


@pytest.mark.parametrize(
    ("allow", "path", "quirks", "allowed"),
    [
        ("/index.html", "/", True, True),  # the root's index page: the root too
        ("/index.htm", "/", True, True),
        ("/index.html", "/x", True, False),
        ("/index.html", "/", False, False),  # RFC 9309: a prefix rule only
        ("/d/index.html", "/d/", True, True),
        ("/d/index.html", "/d/x", True, False),
        ("/d/index.php", "/d/", True, False),
        ("/d/main.html", "/d/", True, False),
    ],
)
def test_google_index_html_allows_its_directory(
    allow: str, path: str, quirks: bool, allowed: bool
) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: /\nAllow: {allow}\n", google_quirks=quirks)
    assert robots.allowed(URL + path, "mybot") is allowed


# --- §6.6 ties: every rule of the deciding length --------------------------------------


@pytest.mark.parametrize(
    ("lines", "path", "deciding"),
    [
        # an anchored rule and a starred one of the same length and kind both decide
        ((("disallow", "/ab*"), ("disallow", "/ab$")), "/ab", [1, 2]),
        ((("disallow", "/ab$"), ("disallow", "/ab*")), "/ab", [1, 2]),
        ((("disallow", "/a*b"), ("disallow", "/ab$")), "/ab", [1, 2]),
        ((("allow", "/ab$"), ("allow", "/a*b")), "/ab", [1, 2]),
        ((("disallow", "/abc"), ("disallow", "/ab*")), "/abc", [1, 2]),
        # an allow beats a disallow of the same length: it alone decides
        ((("disallow", "/ab*"), ("allow", "/ab$")), "/ab", [2]),
        ((("allow", "/ab*"), ("disallow", "/ab$")), "/ab", [1]),
        ((("disallow", "/ab$"), ("disallow", "/a*")), "/ab", [1]),  # longer
        ((("disallow", "/ab$"),), "/abc", []),
    ],
)
def test_rfc9309_6_6_deciding_lists_every_rule_of_the_tie(
    lines: tuple[tuple[str, str], ...], path: str, deciding: list[int]
) -> None:
    compiled = group(*lines)
    assert [rule.line for rule in compiled.deciding(path)] == deciding
    decided = compiled.decide(path)
    assert decided.line in deciding if decided is not None else deciding == []


@pytest.mark.parametrize(
    ("lines", "path", "allowed"),
    [
        ("Allow: /a\nDisallow: /a*\n", "/ab", False),  # the star counts: /a* is the longer
        ("Disallow: /a\nAllow: /a*\n", "/ab", True),
        ("Allow: /a*\nDisallow: /a**\n", "/ab", False),
        ("Disallow: /a\nAllow: /a\nDisallow: /a*\n", "/ab", False),
    ],
)
def test_rfc9309_6_6_a_starred_rule_outranks_the_same_rule_without_stars(
    lines: str, path: str, allowed: bool
) -> None:
    robots = RobotsTxt.parse(f"User-agent: *\n{lines}")
    assert robots.allowed(URL + path, "mybot") is allowed
    assert robots.explain(URL + path, "mybot").allowed is allowed


@pytest.mark.parametrize(
    ("path", "allowed"), [("/a", False), ("/a$b", True), ("/a$", True), ("/b$", True)]
)
def test_google_a_dollar_in_a_verbatim_url_is_a_character(path: str, allowed: bool) -> None:
    """Google's library matches the URL as written, where ``$`` may stand: the
    rule ``/a$`` still ends the path at ``/a``, it is not the text ``/a$``."""
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /a$\n", google_quirks=True)
    assert robots.allowed(URL + path, "mybot") is allowed


def test_rfc9309_6_6_a_group_of_many_wildcards_decides_as_a_small_one() -> None:
    """Past INDEXED_WILDCARDS wildcard rules a group is indexed: same answers."""
    lines = [("disallow", f"/*.e{number}$") for number in range(INDEXED_WILDCARDS + 1)]
    lines.append(("allow", "/*/open/*.e7$"))
    many = group(*lines)
    few = group(lines[7], lines[500], lines[-1])
    for path, allowed in [
        ("/a.e7", False),
        ("/a.e500", False),
        ("/x/open/a.e7", True),
        ("/a.e7x", True),
        ("/a.e513", True),
    ]:
        assert many.allows(path) is allowed, path
        assert few.allows(path) is allowed, path
        rule = many.decide(path)
        assert (rule is None or rule.kind == "allow") is allowed


# --- what a parsed file says of itself ---------------------------------------------------


def test_scrapy_repr_counts_agents_rules_and_sitemaps() -> None:
    robots = RobotsTxt.parse(
        "User-agent: a\nUser-agent: b\nDisallow: /x\nAllow: /y\n"
        "User-agent: *\nDisallow: /z\nSitemap: https://example.com/s.xml\n"
    )
    assert robots.rule_count == 3
    assert repr(robots) == "<RobotsTxt agents=3 rules=3 sitemaps=1>"
    assert robots.explain(URL + "/y", "b").rule == Rule("allow", "/y", 4)
