"""``RobotsTxt.allowed`` reads the usual URL's path without a regex once it
knows the URL's origin (the last one asked about): every answer must still be
the one ``match_path`` gives, whatever the URLs asked before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep import RobotsTxt

BODY = (
    b"User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /*.php$\n"
    b"Disallow: /%7Ex\nDisallow: /c%20d\nDisallow: /robots.txt\n"
)
URLS = [
    "https://example.com/a",
    "https://example.com/a/b",
    "https://example.com.evil/a",  # the known host, then more of a host
    "https://example.com/b",
    "https://example.com?x=/a",
    "https://example.com;x/a",
    "https://example.com#/a",
    "http://example.com/a",
    "https://example.com",
    "https://example.com/~x",
    "https://example.com/%7ex",
    "https://example.com/c d",
    "https://example.com/./a",
    "https://example.com/x/../a",
    "https://example.com/\u00e9/a",
    "https://example.com/a\udc80",
    "https://example.com/a\x00",
    "https://example.com/a#frag",
    "https://EXAMPLE.com/a",
    "https:///a",
    "/a",
    "//example.com/a",
    "https://example.com/index.php",
    "https://example.com/index.php?x",
    "https://example.com/a$",
    "https://example.com/a*",
    "https://example.com/robots.txt",
    "",
]


def test_each_url_after_each_other() -> None:
    robots = RobotsTxt.parse(BODY)
    for before in URLS:
        for url in URLS:
            robots.allowed(before, "bot")  # the origin it leaves behind
            assert robots.allowed(url, "bot") == robots.explain(url, "bot").allowed, (before, url)


class URL(str):
    """A URL of a ``str`` subclass: its string methods may return copies."""


def test_url_of_a_str_subclass() -> None:
    robots = RobotsTxt.parse(BODY)
    for url in URLS:
        asked = URL(url)
        assert robots.allowed(asked, "bot") == robots.explain(url, "bot").allowed, url


urls = st.builds(
    lambda scheme, host, path: scheme + host + path,
    st.sampled_from(["https://", "http://", "", "ftp://"]),
    st.text(alphabet="ex.?;#/", max_size=6),
    st.text(alphabet="/a.b%7E$*#?\u00e9 \x7f", max_size=12),
)


@given(st.lists(urls, min_size=1, max_size=8))
@settings(max_examples=300)
def test_any_urls_in_turn(asked: list[str]) -> None:
    robots = RobotsTxt.parse(BODY)
    for url in asked:
        assert robots.allowed(url, "bot") == robots.explain(url, "bot").allowed, url
