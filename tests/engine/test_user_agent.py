"""The crawler's names in a User-Agent string (docs/spec.md §5.7), on the forms
real crawlers send (tests/data/user-agents/ORIGIN.md) and on browsers' strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.agents import agent_tokens
from scrapy_rep.engine.user_agent import user_agent_names

DATA = Path(__file__).resolve().parent.parent / "data" / "user-agents"
PAGE = "https://example.com/page"


def _crawlers() -> list[tuple[str, str]]:
    lines = (DATA / "crawlers.tsv").read_text(encoding="utf-8").splitlines()
    return [(name, user_agent) for name, user_agent in (line.split("\t") for line in lines)]


def _browsers() -> list[str]:
    lines = (DATA / "browsers.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def _own_group_applies(name: str, user_agent: str) -> bool:
    body = f"User-agent: {name}\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    return not RobotsTxt.parse(body).allowed(PAGE, user_agent)


@pytest.mark.parametrize(
    ("user_agent", "names"),
    [
        # Scrapy's startproject template, and a bare product before a comment.
        ("shop (+http://www.yourdomain.com)", ("shop",)),
        ("AcmeBot (contact: ops@acme.example)", ("acmebot",)),
        ("acme-crawler (+https://acme.example/bot.html)", ("acme-crawler",)),
        ("OWLer-W (owler@ows.eu)", ("owler-w",)),
        ("AdsBot-Google (+http://www.google.com/adsbot.html)", ("adsbot-google",)),
        (
            "ia_archiver (+http://www.alexa.com/site/help/webmasters; crawler@alexa.com)",
            ("ia_archiver",),
        ),
        # Several products: each in order, the first with a group decides.
        ("Acme Research Crawler (+https://acme.example)", ("acme", "research", "crawler")),
        ("CyotekWebCopy/1.9 CyotekHTTP/6.4", ("cyotekwebcopy", "cyotekhttp")),
        ("Scrapy/2.19.0 (+https://scrapy.org)", ("scrapy",)),
        # A crawler's product after a browser's.
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/131.0.0.0 Safari/537.36 CookieHubVerify",
            ("cookiehubverify",),
        ),
        # The compatible form, a Name/version item, a name among platform words.
        (
            "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)",
            ("yahoo", "slurp"),
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64; WanscannerBot/1.2; +https://abuse.pend.re) "
            "Gecko/20100101 Firefox/10.0",
            ("wanscannerbot",),
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64; Rigor) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/86.0 Safari/537.36",
            ("rigor",),
        ),
        # Comments nest and escape (RFC 9110 §5.6.5); ";" also ends a product.
        (r"Foo/1 (see \) also (nested) more) Bar/2", ("foo", "bar", "see", "also", "more")),
        ("robot;Owler;sthiyagarajan@owler-inc.com", ("robot", "owler")),
        # Addresses, versions and words without a leading letter are not names.
        ("+http://example.com/bot 1.0 -x- @mail", ()),
        ("", ()),
    ],
)
def test_scrapy_5_7_user_agent_forms_give_the_crawlers_names(
    user_agent: str, names: tuple[str, ...]
) -> None:
    assert user_agent_names(user_agent) == names


def test_scrapy_5_7_the_crawlers_own_group_for_real_crawler_strings() -> None:
    """Every pair of the sample but two whose name is not the crawler's token."""
    pairs = _crawlers()
    missed = [(name, ua) for name, ua in pairs if not _own_group_applies(name, ua)]
    assert len(pairs) == 234
    # "Ask Jeeves/Teoma": Teoma is the version of a product named Jeeves; "Atom"
    # is the version of "RSS/Atom", the list's pattern for RSSMicro's feed robot.
    assert sorted(name for name, _ in missed) == ["Atom", "Teoma"]


@pytest.mark.parametrize("user_agent", _browsers())
def test_scrapy_5_7_a_browser_never_gets_a_browser_named_group(user_agent: str) -> None:
    groups = ("Mozilla", "Chrome", "Safari", "AppleWebKit", "Gecko", "Firefox", "Edge", "Opera")
    body = "".join(f"User-agent: {group}\nDisallow: /\n\n" for group in groups)
    assert RobotsTxt.parse(body + "User-agent: *\nAllow: /\n").allowed(PAGE, user_agent)


#: A device's own application name in its browser's string reads as a name:
#: harmless (no site names a group after it), and said in the start-up log.
DEVICE_APPS = {"wifiwebauthapplet", "webappmanager"}


@pytest.mark.parametrize("user_agent", _browsers())
def test_scrapy_5_7_a_browser_string_names_no_crawler(user_agent: str) -> None:
    assert set(user_agent_names(user_agent)) <= DEVICE_APPS


def test_scrapy_5_7_a_token_alone_is_read_as_a_user_agent_line_is() -> None:
    assert agent_tokens("bot2") == ("bot",)
    assert agent_tokens("my bot") == ("my",)
    assert agent_tokens("Mozilla") == ("mozilla",)  # a token is taken at its word
    assert agent_tokens("2bot") == ()
