"""Table-driven tests for every engine example of docs/spec.md §4-§7, named by rule."""

from __future__ import annotations

import pytest

from scrapy_rep import RobotsTxt, Rule
from scrapy_rep.engine.lines import MAX_BODY_BYTES

URL = "https://example.com"


def allowed(body: bytes | str, path: str, agent: str | list[str] = "mybot", **kw: bool) -> bool:
    return RobotsTxt.parse(body, **kw).allowed(URL + path, agent)


# --- §4 file format -------------------------------------------------------------


def test_rfc9309_4_1_bom_ignored() -> None:
    assert not allowed(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", "/x")


def test_rfc9309_4_1_invalid_utf8_never_fails() -> None:
    body = b"User-agent: *\nDisallow: /\xff\xfe\nDisallow: /b\x80ad\nDisallow: /ok\n"
    robots = RobotsTxt.parse(body)
    assert not robots.allowed(URL + "/ok", "mybot")
    assert not robots.allowed(URL + "/%FF%FE", "mybot")  # the raw bytes, percent-encoded
    assert not robots.allowed(URL + "/b%80ad", "mybot")
    assert robots.allowed(URL + "/other", "mybot")


@pytest.mark.parametrize("newline", [b"\n", b"\r", b"\r\n"], ids=["LF", "CR", "CRLF"])
def test_rfc9309_4_2_line_endings(newline: bytes) -> None:
    body = newline.join([b"User-agent: mybot", b"Disallow: /a", b"Allow: /a/b", b""])
    robots = RobotsTxt.parse(body)
    assert not robots.allowed(URL + "/a/x", "mybot")
    assert robots.allowed(URL + "/a/b", "mybot")
    assert robots.explain(URL + "/a/b", "mybot").rule == Rule("allow", "/a/b", 3)


def test_rfc9309_4_3_only_first_512000_bytes() -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"#" * (MAX_BODY_BYTES - len(head) - 1) + b"\n"
    body = head + filler + b"Disallow: /late\n"
    assert len(head + filler) == MAX_BODY_BYTES
    robots = RobotsTxt.parse(body)
    assert not robots.allowed(URL + "/early", "mybot")
    assert robots.allowed(URL + "/late", "mybot")


def test_rfc9309_4_3_a_rule_cut_at_the_limit_is_read_as_cut() -> None:
    head = b"User-agent: *\n"
    body = head + b"Disallow: /" + b"a" * MAX_BODY_BYTES
    robots = RobotsTxt.parse(body)
    cut = MAX_BODY_BYTES - len(head) - len(b"Disallow: /")
    assert not robots.allowed(URL + "/" + "a" * cut, "mybot")


@pytest.mark.parametrize(
    "line",
    [
        "Disallow: /x",
        "  Disallow  :   /x   ",
        "\tdisallow:/x",
        "DISALLOW: /x # a comment",
        "dIsAlLoW: /x#comment",
    ],
)
def test_rfc9309_4_4_line_syntax(line: str) -> None:
    body = f"User-agent: *\n{line}\n"
    assert not allowed(body, "/x")
    assert allowed(body, "/y")


def test_rfc9309_4_4_comment_only_and_invalid_lines_ignored() -> None:
    body = "User-agent: *\n# Disallow: /a\nthis is not a rule\n:::\nDisallow: /b\n"
    assert allowed(body, "/a")
    assert not allowed(body, "/b")


def test_rfc9309_4_4_html_served_as_robots_txt() -> None:
    html = (
        b"<!DOCTYPE html><html><head><title>Not found</title></head>\n"
        b"<body><p>Sorry: the page is gone.</p>\n<a href='/'>home</a></body></html>\n"
    )
    robots = RobotsTxt.parse(html)
    assert robots.agents == ()
    assert robots.allowed(URL + "/anything", "mybot")


def test_rfc9309_4_5_other_fields_ignored() -> None:
    body = "User-agent: *\nCrawl-delay: 10\nHost: example.com\nNoindex: /x\nDisallow: /y\n"
    assert allowed(body, "/x")
    assert not allowed(body, "/y")


@pytest.mark.parametrize("line", ["Disalow: /x", "Dissallow: /x", "Disallowed: /x", "Disallow /x"])
def test_rfc9309_4_5_misspelt_fields_not_accepted(line: str) -> None:
    body = f"User-agent: *\n{line}\n"
    assert allowed(body, "/x")


@pytest.mark.parametrize("line", ["Disalow: /x", "Dissallow: /x", "Disallowing: /x", "Disallow /x"])
def test_google_4_5_misspelt_fields_with_quirks(line: str) -> None:
    body = f"User-agent: *\n{line}\n"
    assert not allowed(body, "/x", google_quirks=True)


def test_google_4_5_useragent_typo_with_quirks() -> None:
    body = "Useragent: mybot\nDisallow: /x\n"
    assert allowed(body, "/x")
    assert not allowed(body, "/x", google_quirks=True)


# --- §5 groups -------------------------------------------------------------------


def test_rfc9309_5_1_consecutive_user_agents_share_rules() -> None:
    body = "User-agent: a\nUser-agent: b\nDisallow: /x\nUser-agent: c\nDisallow: /y\n"
    assert not allowed(body, "/x", "a")
    assert not allowed(body, "/x", "b")
    assert allowed(body, "/y", "b")
    assert not allowed(body, "/y", "c")


def test_rfc9309_5_1_last_group_without_rules_allows() -> None:
    body = "User-agent: *\nDisallow: /\nUser-agent: mybot\n"
    assert allowed(body, "/anything")
    assert not allowed(body, "/anything", "other")


def test_rfc9309_5_2_sitemap_and_unknown_lines_do_not_end_a_group() -> None:
    body = (
        "User-agent: a\nSitemap: https://e.com/s.xml\nCrawl-delay: 4\nUser-agent: b\nDisallow: /\n"
    )
    assert not allowed(body, "/x", "a")
    assert not allowed(body, "/x", "b")


def test_rfc9309_5_3_rules_before_any_user_agent_ignored() -> None:
    body = "Disallow: /x\nUser-agent: *\nDisallow: /y\n"
    assert allowed(body, "/x")
    assert not allowed(body, "/y")


def test_rfc9309_5_4_same_agent_groups_merge_star_never_merged() -> None:
    body = (
        "User-agent: mybot\nDisallow: /a\n"
        "User-agent: *\nDisallow: /star\n"
        "User-agent: MyBot\nDisallow: /b\n"
    )
    assert not allowed(body, "/a")
    assert not allowed(body, "/b")
    assert allowed(body, "/star")
    assert not allowed(body, "/star", "other")


def test_rfc9309_5_5_group_order_irrelevant() -> None:
    first = "User-agent: mybot\nAllow: /\nUser-agent: *\nDisallow: /\n"
    second = "User-agent: *\nDisallow: /\nUser-agent: mybot\nAllow: /\n"
    assert allowed(first, "/x") and allowed(second, "/x")
    assert not allowed(first, "/x", "other") and not allowed(second, "/x", "other")


def test_rfc9309_5_5_no_matching_and_no_star_group_allows() -> None:
    assert allowed("User-agent: other\nDisallow: /\n", "/x")


@pytest.mark.parametrize("value", ["googlebot/1.2", "googlebot*", "Googlebot Bot", "GOOGLEBOT"])
def test_rfc9309_5_6_leading_product_token_case_insensitive(value: str) -> None:
    body = f"User-agent: {value}\nDisallow: /\n"
    assert not allowed(body, "/x", "Googlebot")
    assert not allowed(body, "/x", "googlebot")


def test_rfc9309_5_7_token_from_full_user_agent_string() -> None:
    body = "User-agent: mybot\nDisallow: /\n"
    assert not allowed(body, "/x", "MyBot/1.0 (+https://example.com/bot)")


def test_rfc9309_5_7_tokens_in_preference_order() -> None:
    body = "User-agent: mybot\nDisallow: /a\nUser-agent: mybot-images\nDisallow: /b\n"
    robots = RobotsTxt.parse(body)
    assert robots.allowed(URL + "/a", ["mybot-images", "mybot"])
    assert not robots.allowed(URL + "/b", ["mybot-images", "mybot"])
    assert robots.explain(URL + "/b", ["mybot-images", "mybot"]).agent == "mybot-images"
    assert not robots.allowed(URL + "/a", ["mybot-news", "mybot"])  # no own group: next


def test_rfc9309_5_7_no_prefix_matching_of_tokens() -> None:
    body = "User-agent: mybot\nDisallow: /\n"
    assert allowed(body, "/x", "mybot-news")


def test_google_5_8_token_may_ignore_star_group() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /\n")
    assert not robots.allowed(URL + "/x", "adsbot-google")
    assert robots.allowed(URL + "/x", "adsbot-google", use_global=False)


# --- §6 matching ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com", "allow"),  # empty path is "/"
        ("https://example.com/x?q=1#frag", "disallow"),
        ("https://example.com/#x?q=1", "allow"),
    ],
)
def test_rfc9309_6_1_path_and_query_no_fragment(url: str, expected: str) -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /x?q\nAllow: /$\nDisallow: /\n")
    verdict = robots.explain(url, "mybot")
    assert verdict.rule is not None and verdict.rule.kind == expected


def test_rfc9309_6_2_empty_rule_ignored() -> None:
    assert allowed("User-agent: *\nDisallow:\n", "/x")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/fish", False),
        ("/fish.html", False),
        ("/fishheads/x", False),
        ("/fish.php?id=1", False),
        ("/Fish.asp", True),
        ("/catfish", True),
        ("/?id=fish", True),
        ("/desert/fish", True),
    ],
)
def test_rfc9309_6_3_prefix_and_case_sensitive(path: str, expected: bool) -> None:
    assert allowed("User-agent: *\nDisallow: /fish\n", path) is expected


@pytest.mark.parametrize(("rule", "same"), [("/fish*", "/fish"), ("/*", "/")])
def test_rfc9309_6_4_trailing_star_changes_nothing(rule: str, same: str) -> None:
    for path in ["/", "/fish", "/fishy", "/x/fish"]:
        assert allowed(f"User-agent: *\nDisallow: {rule}\n", path) is allowed(
            f"User-agent: *\nDisallow: {same}\n", path
        )


@pytest.mark.parametrize(
    ("rule", "path"),
    [("/foo/bar/ツ", "/foo/bar/%E3%83%84"), ("/foo/bar/%E3%83%84", "/foo/bar/ツ")],
)
def test_rfc9309_6_5_non_ascii_percent_encoded(rule: str, path: str) -> None:
    assert not allowed(f"User-agent: *\nDisallow: {rule}\n", path)


def test_rfc9309_6_5_unreserved_escapes_decoded_hex_case_insensitive() -> None:
    assert not allowed("User-agent: *\nDisallow: /%62%61%7A\n", "/baz")
    assert not allowed("User-agent: *\nDisallow: /baz\n", "/%62%61%7a")
    assert not allowed("User-agent: *\nDisallow: /%7e\n", "/%7E")
    assert not allowed("User-agent: *\nDisallow: /a%2fb\n", "/a%2Fb")


#: RFC 9309 §2.2.2's table: each rule path matches each URL path of its row,
#: the URL as written and as Scrapy's Request would carry it.
RFC9309_TABLE = [
    ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
    ("/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"),
    ("/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https://foo.bar"),
    ("/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https://foo.bar"),
    ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
    ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
    ("/foo/bar/%62%61%7A", "/foo/bar/%62%61%7A"),
    ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
]


@pytest.mark.parametrize(("rule", "path"), RFC9309_TABLE)
def test_rfc9309_6_5_table_rows_match(rule: str, path: str) -> None:
    body = f"User-agent: *\nDisallow: {rule}\n"
    assert not allowed(body, path)
    assert not RobotsTxt.parse(body).allowed(path, "mybot")  # a path alone, too
    assert allowed(body, "/foo/bar/other")  # and the rule is no catch-all


def test_scrapy_6_5_reserved_escape_in_a_crawl_url() -> None:
    """Scrapy's Request keeps the escapes as written: the rule's raw form still applies."""
    from scrapy import Request

    url = Request("https://example.com/foo/bar?baz=https%3A%2F%2Ffoo.bar").url
    assert "%3A%2F%2F" in url
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /foo/bar?baz=https://foo.bar\n")
    assert not robots.allowed(url, "mybot")


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        # RFC 9309 §2.2.3: an escaped * or $ in a rule is the character itself.
        ("/path/file-with-a-%2A.html", "/path/file-with-a-*.html", True),
        ("/path/file-with-a-%2A.html", "/path/file-with-a-%2A.html", True),
        ("/path/file-with-a-%2A.html", "/path/file-with-a-xyz.html", False),
        ("/path/foo-%24", "/path/foo-$", True),
        ("/path/foo-%24", "/path/foo-", False),
        # ... while a raw * and a final $ keep their meaning,
        ("/path/file-with-a-*.html", "/path/file-with-a-xyz.html", True),
        ("/path/foo-$", "/path/foo-", True),
        ("/path/foo-$", "/path/foo-$", False),
        ("/path/foo-$", "/path/foo-x", False),
        # and an inner $ is a literal.
        ("/a$b", "/a$b", True),
        ("/a$b", "/a%24b", True),
        ("/a$b", "/ab", False),
    ],
)
def test_rfc9309_6_5_escaped_special_characters(rule: str, path: str, matches: bool) -> None:
    assert allowed(f"User-agent: *\nDisallow: {rule}\n", path) is not matches


def test_scrapy_6_5_raw_uri_unsafe_characters_match_scrapy_encoding() -> None:
    body = "User-agent: *\nDisallow: /*a|b\n"
    assert not allowed(body, "/x/a%7Cb")  # as Scrapy's Request.url sends it
    assert not allowed(body, "/x/a|b")


@pytest.mark.parametrize(
    ("body", "path", "expected"),
    [
        ("allow: /p\ndisallow: /", "/page", True),
        ("allow: /folder\ndisallow: /folder", "/folder/page", True),
        ("allow: /page\ndisallow: /*.htm", "/page.htm", False),
        ("allow: /page\ndisallow: /*.ph", "/page.php5", True),
        ("allow: /$\ndisallow: /", "/", True),
        ("allow: /$\ndisallow: /", "/page.htm", False),
    ],
)
def test_rfc9309_6_6_and_6_7_precedence(body: str, path: str, expected: bool) -> None:
    assert allowed("User-agent: *\n" + body + "\n", path) is expected


def test_rfc9309_6_6_trailing_stars_count_in_length() -> None:
    body = "User-agent: *\nDisallow: /fishx\nAllow: /fish**\n"  # 7 octets beat 6
    assert allowed(body, "/fishx")


@pytest.mark.parametrize(
    ("body", "path", "rule"),
    [
        ("Allow: *\nDisallow: **\n", "/", Rule("disallow", "**", 2)),
        ("Disallow: **\nAllow: *\n", "/x", Rule("disallow", "**", 1)),
        ("Allow: /a**\nDisallow: /a*\nDisallow: /ab\n", "/abc", Rule("allow", "/a**", 1)),
        ("Allow: /%7ea*\nDisallow: /\n", "/~ab", Rule("allow", "/%7ea*", 1)),
    ],
)
def test_rfc9309_6_6_same_prefix_written_with_more_stars_is_longer(
    body: str, path: str, rule: Rule
) -> None:
    """Found by the reference-matcher property: "*" and "**" match alike."""
    robots = RobotsTxt.parse("User-agent: *\n" + body)
    verdict = robots.explain(URL + path, "mybot")
    assert verdict.rule == rule._replace(line=rule.line + 1)
    assert robots.allowed(URL + path, "mybot") is (rule.kind == "allow")


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        ("/*.php", "/index.php", True),
        ("/*.php", "/folder/any.php.file.html", True),
        ("/*.php", "/filename.php/", True),
        ("/*.php", "/", False),
        ("/*.php", "/windows.PHP", False),
        ("/*.php$", "/folder/filename.php", True),
        ("/*.php$", "/filename.php?parameters", False),
        ("/*.php$", "/filename.php/", False),
        ("/*.php$", "/filename.php5", False),
        ("/fish*.php", "/fishheads/catfish.php?parameters", True),
        ("/fish*.php", "/Fish.PHP", False),
    ],
)
def test_rfc9309_6_7_wildcards(rule: str, path: str, matches: bool) -> None:
    assert allowed(f"User-agent: *\nDisallow: {rule}\n", path) is not matches


def test_rfc9309_6_8_no_backtracking_blowup() -> None:
    rule = "/" + "*a" * 30 + "*b"
    robots = RobotsTxt.parse(f"User-agent: *\nDisallow: {rule}\nDisallow: {rule}$\n")
    path = "/" + "a" * 4096
    assert robots.allowed(URL + path, "mybot")
    assert not robots.allowed(URL + path + "b", "mybot")


def test_rfc9309_6_9_robots_txt_always_allowed() -> None:
    body = "User-agent: *\nDisallow: /\n"
    assert allowed(body, "/robots.txt")
    assert not allowed(body, "/robots.txt?x=1")
    assert not allowed(body, "/robots.txt", google_quirks=True)  # Google's library


def test_rfc9309_explain_names_rule_line_and_group() -> None:
    robots = RobotsTxt.parse("# header\nUser-agent: MyBot\nDisallow: /private # no\n")
    verdict = robots.explain(URL + "/private/x", "mybot")
    assert verdict.allowed is False
    assert verdict.rule == Rule("disallow", "/private", 3)
    assert verdict.agent == "mybot"
    assert robots.explain(URL + "/open", "other") == (True, None, None)


# --- §7 sitemaps ------------------------------------------------------------------


def test_rfc9309_7_1_sitemaps_collected_in_order_deduplicated() -> None:
    body = (
        "Sitemap: https://example.com/a.xml\n"
        "User-agent: *\nDisallow: /\n"
        "sitemap: https://other.example/b.xml # comment\n"
        "Sitemap: /relative.xml\n"
        "Sitemap: not a url\n"
        "SITEMAP: https://example.com/a.xml\n"
        "Sitemap: https://example.com/ü.xml\n"
    )
    assert RobotsTxt.parse(body).sitemaps == (
        "https://example.com/a.xml",
        "https://other.example/b.xml",
        "https://example.com/ü.xml",
    )


def test_rfc9309_7_1_relative_sitemap_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="scrapy_rep.engine.site_wide")
    RobotsTxt.parse("Sitemap: /relative.xml\n")
    assert "not an absolute URL" in caplog.text


def test_rfc9309_crawl_delay_is_reported_not_obeyed() -> None:
    robots = RobotsTxt.parse("User-agent: mybot\nCrawl-delay: 2.5\nDisallow: /x\n")
    assert robots.crawl_delay("mybot") == 2.5
    assert robots.crawl_delay("other") is None
    assert robots.allowed(URL + "/y", "mybot")


@pytest.mark.parametrize(
    ("line", "seconds"),
    [
        ("Request-rate: 1/5", 5.0),
        ("Request-rate: 1/10s", 10.0),
        ("request-rate: 2/1m", 30.0),
        ("Request-rate: 30/1h 0800-1700", 120.0),
        ("Request-rate: 0/5", None),
        ("Request-rate: fast", None),
    ],
)
def test_rfc9309_request_rate_is_reported_not_obeyed(line: str, seconds: float | None) -> None:
    robots = RobotsTxt.parse(f"User-agent: mybot\n{line}\nDisallow: /x\n")
    assert robots.request_rate("mybot") == seconds
    assert robots.allowed(URL + "/y", "mybot")


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e400", "soon"])
def test_rfc9309_crawl_delay_bad_values_ignored(value: str) -> None:
    assert RobotsTxt.parse(f"User-agent: *\nCrawl-delay: {value}\n").crawl_delay("x") is None


@pytest.mark.parametrize(
    ("path", "allowed_"),
    [
        ("/a/../private/x", False),
        ("/./private/y", False),
        ("/a/b/../../private/z", False),
        ("/a/%2E%2E/private/w", False),  # an escaped dot is a dot
        ("/private/../public", True),
        ("/a/./b", True),
        ("/.well-known/x", True),  # a segment that starts with a dot is kept
        ("/public?next=/../private", True),  # the query is not a path
    ],
)
def test_spec_6_5_1_dot_segments_removed_before_matching(path: str, allowed_: bool) -> None:
    assert allowed("User-agent: *\nDisallow: /private\n", path) is allowed_


def test_google_dot_segments_kept_in_google_mode() -> None:
    """Google's library compares the path as sent."""
    assert allowed("User-agent: *\nDisallow: /private\n", "/a/../private/x", google_quirks=True)
