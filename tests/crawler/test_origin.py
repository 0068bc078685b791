"""docs/spec.md §1: the origin a robots.txt governs, and where that robots.txt lives."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from scrapy_rep.engine.origin import Origin, normalise_host, origin_of, origin_of_parts, robots_url


def test_rfc9309_origin_is_scheme_host_port() -> None:
    origin = origin_of("http://example.com/a/b?c=d#e")
    assert origin == Origin("http", "example.com", None)
    assert robots_url(origin) == "http://example.com/robots.txt"


@pytest.mark.parametrize(
    "other",
    [
        "https://example.com/",
        "http://example.com:8181/",
        "http://other.example.com/",
        "http://www.example.com/",
    ],
)
def test_spec_1_1_robots_governs_its_own_origin_only(other: str) -> None:
    assert origin_of(other) != origin_of("http://example.com/page")


def test_spec_1_2_robots_url_is_at_the_root() -> None:
    origin = origin_of("http://example.com:8181/deep/dir/robots.txt?x=1")
    assert origin is not None
    assert robots_url(origin) == "http://example.com:8181/robots.txt"


@pytest.mark.parametrize(
    ("with_port", "without"),
    [
        ("http://example.com:80/", "http://example.com/"),
        ("https://example.com:443/a", "https://example.com/b"),
        ("ftp://example.com:21/x", "ftp://example.com/y"),
    ],
)
def test_spec_1_3_default_ports_are_no_port(with_port: str, without: str) -> None:
    assert origin_of(with_port) == origin_of(without)
    origin = origin_of(with_port)
    assert origin is not None and origin.port is None
    assert ":" not in robots_url(origin).split("//", 1)[1]


def test_spec_1_3_other_ports_are_other_origins() -> None:
    assert origin_of("https://example.com:80/") == Origin("https", "example.com", 80)
    assert origin_of("http://example.com:443/") == Origin("http", "example.com", 443)


def test_spec_1_4_host_is_case_insensitive() -> None:
    assert origin_of("HTTP://EXAMPLE.Com/Path") == origin_of("http://example.com/Path")


def test_spec_1_4_idn_equals_its_punycode() -> None:
    unicode_form = origin_of("http://www.müller.eu/")
    assert unicode_form == origin_of("http://www.xn--mller-kva.eu/")
    assert unicode_form == origin_of("http://WWW.MÜLLER.EU/")
    assert unicode_form is not None
    assert robots_url(unicode_form) == "http://www.xn--mller-kva.eu/robots.txt"


def test_spec_1_5_ip_address_is_its_own_origin() -> None:
    assert origin_of("http://127.0.0.1:8080/") == Origin("http", "127.0.0.1", 8080)
    assert origin_of("http://127.0.0.1:8080/") != origin_of("http://localhost:8080/")


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("127.000.0.1", "127.000.0.1"),  # leading zeros: not an address, kept as a name
        ("10.0.0.1", "10.0.0.1"),
        ("0:0::1", "::1"),
        ("FE80::1%eth0", "fe80::1%eth0"),
        ("host1", "host1"),  # ends in a digit, tried as an address, is a name
        ("1.2.3.4.example", "1.2.3.4.example"),
        ("o12.broad.test", "o12.broad.test"),
    ],
)
def test_spec_1_5_only_address_literals_are_rewritten(host: str, canonical: str) -> None:
    """Names skip the address parse (issue 28): whatever ends in a digit or has a
    colon is still tried as an address, and nothing else can be one."""
    assert normalise_host(host) == canonical


def test_origin_of_parts_agrees_with_origin_of() -> None:
    for url in ("http://Example.COM:80/a", "https://[::1]:8443/", "ftp://127.0.0.1/x"):
        assert origin_of_parts(urlparse(url)) == origin_of(url)
    with pytest.raises(ValueError):
        origin_of_parts(urlparse("http://example.com:99999/"))


def test_spec_1_5_ipv6_stays_bracketed_in_urls() -> None:
    origin = origin_of("http://[0:0::1]:80/x")
    assert origin == Origin("http", "::1", None)
    assert robots_url(origin) == "http://[::1]/robots.txt"
    assert origin_of("https://[::1]:8443/") == Origin("https", "::1", 8443)
    assert str(origin_of("https://[::1]:8443/")) == "https://[::1]:8443"


@pytest.mark.parametrize(
    "url", ["data:text/plain,hello", "file:///etc/passwd", "about:blank", "/relative/path"]
)
def test_spec_1_6_schemes_without_server_have_no_origin(url: str) -> None:
    assert origin_of(url) is None


def test_spec_1_6_ftp_is_an_origin() -> None:
    origin = origin_of("ftp://files.example.com/pub/x.tar")
    assert origin is not None
    assert robots_url(origin) == "ftp://files.example.com/robots.txt"


@pytest.mark.parametrize("url", ["http://example.com:99999/", "http:///no-host"])
def test_malformed_urls_have_no_origin(url: str) -> None:
    assert origin_of(url) is None


def test_credentials_are_not_part_of_the_origin() -> None:
    assert origin_of("http://user:pw@example.com/") == origin_of("http://example.com/")
