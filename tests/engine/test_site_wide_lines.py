"""Lines written for the whole site: a global Content-Signal, RSL's License.

Both stand where a site writes them for every crawler: a ``Content-Signal``
line before the first group (docs/usage-preferences.md, "Global lines") and
``License`` lines anywhere (RSL 1.0, docs/spec.md §7.3). Neither changes who
may fetch what. The files are shaped as publishers write them: the Content
Signals Policy's comment block, then the lines, then the groups.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.grammar import Field, field_of_key, read_body
from scrapy_rep.engine.site_wide import SITE_WIDE
from scrapy_rep.engine.usage import ALLOWED, DENIED, LABELS, UNSTATED, Preferences

NEWS = """\
# As a condition of accessing this website, you agree to abide by the
# following content signals: (a) If a content-signal = yes, you may collect
# content for the corresponding use. (b) If a content-signal = no, you may
# not collect content for the corresponding use.
Content-Signal: search=yes, ai-train=no, ai-input=no
Content-Signal: /premium/ search=no
License: https://www.example-news.com/license.xml

User-agent: *
Disallow: /search
Disallow: /account/
Allow: /

User-agent: Googlebot-News
Allow: /

User-agent: PartnerBot
Content-Signal: search=yes, ai-train=yes
Allow: /

User-agent: ArchiveBot
Content-Usage: train-ai=y
Disallow: /drafts/

Sitemap: https://www.example-news.com/sitemap.xml
"""
SITE = "https://www.example-news.com"


def states(prefs: Preferences) -> dict[str, str]:
    return {label: prefs[label].state for label in LABELS if prefs[label].state != UNSTATED}


def lines(prefs: Preferences) -> dict[str, list[tuple[int | None, bool]]]:
    """Per stated label, its deciding lines and whether each is global."""
    return {
        label: [(rule.line, rule.is_global) for rule in prefs[label].rules]
        for label in LABELS
        if prefs[label].rules
    }


# --- a global Content-Signal -----------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "path", "expected", "deciding"),
    [
        # The "*" group writes no signal: the global line is its statement.
        ("randombot", "/news/today",
         {"search": ALLOWED, "train-ai": DENIED, "ai-input": DENIED},
         {"search": [(5, True)], "train-ai": [(5, True)], "ai-input": [(5, True)]}),
        # Longest path wins among the global lines, as within a group.
        ("randombot", "/premium/story", {"search": DENIED}, {"search": [(6, True)]}),
        # A named group with no usage line of its own: the global line too.
        ("googlebot-news", "/news/today",
         {"search": ALLOWED, "train-ai": DENIED, "ai-input": DENIED},
         {"search": [(5, True)], "train-ai": [(5, True)], "ai-input": [(5, True)]}),
        # A group's own Content-Signal replaces the global ones, whole: its
        # silence on ai-input is silence (the Content Signals Policy's rule (c)).
        ("partnerbot", "/news/today", {"search": ALLOWED, "train-ai": ALLOWED},
         {"search": [(18, False)], "train-ai": [(18, False)]}),
        ("partnerbot", "/premium/story", {"search": ALLOWED, "train-ai": ALLOWED},
         {"search": [(18, False)], "train-ai": [(18, False)]}),
        # A group's Content-Usage is another source: the global Content-Signal
        # still speaks, and the two combine most restrictively (vocab-08 §5.1).
        ("archivebot", "/news/today",
         {"search": ALLOWED, "train-ai": DENIED, "ai-input": DENIED},
         {"search": [(5, True)], "train-ai": [(5, True)], "ai-input": [(5, True)]}),
        # A URL the group disallows has no preferences (attach-05 §3.1).
        ("randombot", "/search?q=x", {}, {}),
    ],
)  # fmt: skip
def test_scrapy_global_content_signal_for_groups_without_their_own(
    agent: str, path: str, expected: dict[str, str], deciding: dict[str, list[object]]
) -> None:
    for quirks in (False, True):
        prefs = RobotsTxt.parse(NEWS, google_quirks=quirks).usage(SITE + path, agent)
        assert states(prefs) == expected, quirks
        assert lines(prefs) == deciding, quirks


def test_scrapy_global_content_signal_with_archivebots_own_content_usage() -> None:
    """The Content-Usage allowance is kept beside the global refusal: both decided."""
    prefs = RobotsTxt.parse(NEWS).usage(SITE + "/news/today", "archivebot")
    assert {(rule.source, rule.line, rule.is_global) for rule in prefs["train-ai"].rules} == {
        ("content-signal", 5, True)
    }
    usage = RobotsTxt.parse(NEWS).usage_matcher("archivebot")
    assert {(rule.source, rule.line, rule.is_global) for rule in usage.rules} == {
        ("content-usage", 22, False),
        ("content-signal", 5, True),
        ("content-signal", 6, True),
    }


@pytest.mark.parametrize(
    ("body", "agent", "expected"),
    [
        # No group at all: the site still said it, and every crawler hears it.
        ("Content-Signal: ai-train=no\nSitemap: https://e.com/s.xml\n", "anybot",
         {"train-ai": DENIED}),
        # No group applies to this crawler (RFC 9309: everything allowed).
        ("Content-Signal: ai-train=no\n\nUser-agent: otherbot\nDisallow: /\n", "mybot",
         {"train-ai": DENIED}),
        # A signal line after the first user-agent line is that group's.
        ("User-agent: a\nAllow: /\nContent-Signal: ai-train=no\n\nUser-agent: b\nAllow: /\n",
         "b", {}),
        # Content-Usage is a rule of a group (attach-05 §3): never global.
        ("Content-Usage: train-ai=n\n\nUser-agent: *\nAllow: /\n", "anybot", {}),
        ("Content-Usage: train-ai=n\nContent-Signal: search=yes\n\nUser-agent: *\nAllow: /\n",
         "anybot", {"search": ALLOWED}),
        # A rule before the first group still has no effect on access (§5.3).
        ("Content-Signal: ai-input=no\nDisallow: /\n\nUser-agent: *\nAllow: /x\n", "anybot",
         {"ai-input": DENIED}),
        # Several global lines are statements of one source: most restrictive.
        ("Content-Signal: search=yes\nContent-Signal: search=no, ai-train=yes\n", "anybot",
         {"search": DENIED, "train-ai": ALLOWED}),
        # A global line that states nothing leaves the label unstated.
        ("Content-Signal: ai-train=maybe\n\nUser-agent: *\nAllow: /\n", "anybot", {}),
    ],
)  # fmt: skip
def test_scrapy_global_content_signal_table(
    body: str, agent: str, expected: dict[str, str]
) -> None:
    for quirks in (False, True):
        robots = RobotsTxt.parse(body, google_quirks=quirks)
        assert states(robots.usage("https://e.com/page", agent)) == expected, quirks
        assert robots.has_usage == ("Content-Signal" in body)


def test_scrapy_global_content_signal_never_changes_access() -> None:
    with_line = RobotsTxt.parse(NEWS)
    without = RobotsTxt.parse(NEWS.replace("Content-Signal: search=yes, ai-train=no", "#"))
    for agent in ("randombot", "partnerbot", "archivebot", "googlebot-news"):
        for path in ("/", "/search", "/drafts/x", "/premium/a", "/account/"):
            url = SITE + path
            assert with_line.explain(url, agent) == without.explain(url, agent)


def test_scrapy_global_content_signal_for_a_crawler_skipping_star() -> None:
    """``use_global=False`` skips the ``*`` group, not the lines the site
    wrote for everyone: the global line is no group."""
    robots = RobotsTxt.parse(NEWS)
    prefs = robots.usage(SITE + "/news/today", "adsbot", use_global=False)
    assert states(prefs) == {"search": ALLOWED, "train-ai": DENIED, "ai-input": DENIED}


def test_scrapy_global_content_signal_in_the_meta() -> None:
    meta = RobotsTxt.parse(NEWS).usage(SITE + "/news/today", "randombot").to_meta()
    labels = meta["labels"]
    assert isinstance(labels, dict)
    assert labels["train-ai"]["by"] == [
        {
            "source": "content-signal",
            "line": 5,
            "text": "search=yes, ai-train=no, ai-input=no",
            "global": True,
        }
    ]


# --- RSL 1.0: License lines ---------------------------------------------------------


def test_rsl_example_file() -> None:
    """RSL 1.0's robots.txt guide: one License line above the groups."""
    body = "License: https://your-website.com/license.xml\n\nUser-agent: Googlebot\nAllow: /\n"
    robots = RobotsTxt.parse(body)
    assert robots.licenses == ("https://your-website.com/license.xml",)
    assert robots.allowed("https://your-website.com/x", "googlebot")
    assert robots.agents == ("googlebot",)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (NEWS, ("https://www.example-news.com/license.xml",)),
        # Anywhere in the file, in file order, each once; any case; comments.
        ("User-agent: *\nDisallow: /x\nLicense: https://e.com/a.xml # terms\n"
         "LICENSE: https://e.com/a.xml\nlicense:https://other.example/b.xml\n",
         ("https://e.com/a.xml", "https://other.example/b.xml")),
        # Not absolute: skipped, as a relative sitemap is (docs/spec.md §7.1).
        ("License: /license.xml\nLicense: license.xml\nLicense:\n", ()),
        # Kept as written: RSL's URL "does not have to be URL-encoded".
        ("License: https://e.com/licence-ü.xml\n", ("https://e.com/licence-ü.xml",)),
        # A "Licence:" line is not RSL's key.
        ("Licence: https://e.com/a.xml\n", ()),
        ("User-agent: *\nDisallow: /\n", ()),
    ],
)  # fmt: skip
def test_rsl_license_lines_collected_like_sitemaps(body: str, expected: tuple[str, ...]) -> None:
    for quirks in (False, True):
        assert RobotsTxt.parse(body, google_quirks=quirks).licenses == expected


def test_rsl_license_line_does_not_split_a_group() -> None:
    """docs/spec.md §5.2: only user-agent, allow and disallow lines shape groups."""
    body = "User-agent: a\nLicense: https://e.com/l.xml\nUser-agent: b\nDisallow: /\n"
    robots = RobotsTxt.parse(body)
    assert not robots.allowed("https://e.com/x", "a")
    assert not robots.allowed("https://e.com/x", "b")
    assert robots.licenses == ("https://e.com/l.xml",)


def test_rsl_license_relative_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="scrapy_rep.engine.site_wide")
    RobotsTxt.parse("License: /license.xml\n")
    assert "Skipping license '/license.xml': not an absolute URL" in caplog.text


def test_rsl_license_in_the_grammar() -> None:
    assert field_of_key("license").field is Field.LICENSE
    read = read_body(NEWS)
    assert list(read.licenses) == [(7, "https://www.example-news.com/license.xml")]
    assert read_body("User-agent: *\nDisallow: /\n").licenses == ()


def test_scrapy_every_kind_of_line_outside_groups_has_its_row_in_the_spec() -> None:
    """docs/spec.md §7 lists each kind of ``SITE_WIDE``: its key, signal and lint code."""
    spec = (Path(__file__).resolve().parents[2] / "docs" / "spec.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line for line in spec.splitlines() if line[:3] == "| `"}
    for key, kind in SITE_WIDE.items():
        assert key in rows, key
        assert f"`{kind.values}_found`" in rows[key] and f"`{kind.lint}`" in rows[key], key


def test_scrapy_site_wide_values_by_kind() -> None:
    """``RobotsTxt.site_wide``: each kind with usable values, its values; the
    properties read it."""
    robots = RobotsTxt.parse(NEWS + "Sitemap: /relative.xml\n")
    assert robots.site_wide == {
        "license": ("https://www.example-news.com/license.xml",),
        "sitemap": ("https://www.example-news.com/sitemap.xml",),
    }
    assert robots.sitemaps == robots.site_wide["sitemap"]
    assert RobotsTxt.parse("License: /relative.xml\nUser-agent: *\n").site_wide == {}
