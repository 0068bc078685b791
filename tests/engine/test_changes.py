"""What changed for the crawl's tokens between two versions of a robots.txt (docs/spec.md §8.5)."""

from __future__ import annotations

import json

import pytest

from scrapy_rep.engine.changes import Change, RuleChange, SiteWideChange, UsageChange, change_for
from scrapy_rep.engine.robotstxt import RobotsTxt, UserAgent
from scrapy_rep.engine.rules import Rule
from scrapy_rep.engine.site_wide import SITE_WIDE, SiteWide, absolute_url

AGENT = "mybot"


def parse(text: str) -> RobotsTxt:
    return RobotsTxt.parse(text)


def change(old: str | None, new: str | None, agent: UserAgent = AGENT) -> Change:
    return change_for(
        None if old is None else parse(old), None if new is None else parse(new), agent
    )


def said(rules: tuple[RuleChange, ...]) -> list[tuple[str, str, int, bool]]:
    return [(c.rule.kind, c.rule.pattern, c.rule.line, c.added) for c in rules]


BODY = """\
Sitemap: https://example.com/sitemap.xml
User-agent: *
Allow: /public/
Disallow: /private/
Disallow: /tmp/
Crawl-delay: 1
"""


# --- nothing changed -----------------------------------------------------------------


def test_scrapy_the_same_body_is_no_change() -> None:
    found = change(BODY, BODY)
    assert not found
    assert found.summary() == ""
    assert found.group_before == found.group_after == "*"
    assert found.as_dict()["newly_disallowed"] == []


def test_scrapy_rules_that_moved_lines_are_no_change() -> None:
    moved = (
        "User-agent: *\n\nDisallow: /tmp/\nCrawl-delay: 1\nDisallow: /private/\nAllow: /public/\n"
    )
    moved += "Sitemap: https://example.com/sitemap.xml\n"
    assert not change(BODY, moved)


def test_scrapy_a_text_change_that_says_nothing_new_is_no_change() -> None:
    commented = BODY.replace("Disallow: /tmp/", "# keep out\nDISALLOW:   /tmp/   # temp")
    assert not change(BODY, commented)


def test_scrapy_two_nones_are_no_change() -> None:
    assert not change(None, None)
    assert change(None, None).summary() == ""


# --- rules ---------------------------------------------------------------------------


def test_scrapy_a_disallow_added_is_newly_disallowed_with_its_new_line() -> None:
    found = change(BODY, BODY.replace("Crawl-delay: 1", "Crawl-delay: 1\nDisallow: /drafts/"))
    assert said(found.newly_disallowed) == [("disallow", "/drafts/", 7, True)]
    assert found.newly_allowed == ()
    assert found.summary() == "1 path newly disallowed (Disallow: /drafts/ line 7)"


def test_scrapy_an_allow_removed_is_newly_disallowed_with_its_old_line() -> None:
    found = change(BODY, BODY.replace("Allow: /public/\n", ""))
    assert said(found.newly_disallowed) == [("allow", "/public/", 3, False)]
    assert "removed Allow: /public/ line 3" in found.summary()


def test_scrapy_a_disallow_removed_and_an_allow_added_are_newly_allowed() -> None:
    new = BODY.replace("Disallow: /tmp/\n", "").replace("Allow: /public/", "Allow: /private/ok")
    found = change(BODY, new)
    assert said(found.newly_allowed) == [
        ("disallow", "/tmp/", 5, False),
        ("allow", "/private/ok", 3, True),
    ]
    assert said(found.newly_disallowed) == [("allow", "/public/", 3, False)]


def test_scrapy_rules_are_a_multiset_the_later_copy_is_the_one_removed() -> None:
    old = "User-agent: *\nDisallow: /x\nDisallow: /y\nDisallow: /x\n"
    found = change(old, "User-agent: *\nDisallow: /y\nDisallow: /x\n")
    assert said(found.newly_allowed) == [("disallow", "/x", 4, False)]
    assert found.newly_disallowed == ()


def test_scrapy_kind_and_pattern_both_count() -> None:
    found = change("User-agent: *\nDisallow: /a\n", "User-agent: *\nDisallow: /a/\nDisallow: /A\n")
    assert said(found.newly_disallowed) == [
        ("disallow", "/a/", 2, True),
        ("disallow", "/A", 3, True),
    ]
    assert said(found.newly_allowed) == [("disallow", "/a", 2, False)]


def test_scrapy_the_summary_names_three_rules_then_says_there_are_more() -> None:
    new = "User-agent: *\n" + "".join(f"Disallow: /p{i}\n" for i in range(5))
    summary = change("User-agent: *\nDisallow: /x\n", new).summary()
    assert summary.startswith(
        "5 paths newly disallowed (Disallow: /p0 line 2, Disallow: /p1 line 3,"
        " Disallow: /p2 line 4, ...), 1 path newly allowed (removed Disallow: /x line 2)"
    )


# --- no rules: a 4xx answer, no group, no Disallow -------------------------------------


def test_scrapy_from_a_body_to_none_newly_allows_what_it_disallowed() -> None:
    found = change(BODY, None)
    assert said(found.newly_allowed) == [
        ("disallow", "/private/", 4, False),
        ("disallow", "/tmp/", 5, False),
    ]
    assert found.newly_disallowed == ()  # the Allow removed disallows nothing
    assert (found.group_before, found.group_after) == ("*", None)
    assert found.crawl_delay == (1.0, None)
    assert found.sitemaps_removed == ("https://example.com/sitemap.xml",)


def test_scrapy_from_none_to_a_body_newly_disallows_what_it_disallows() -> None:
    found = change(None, BODY)
    assert said(found.newly_disallowed) == [
        ("disallow", "/private/", 4, True),
        ("disallow", "/tmp/", 5, True),
    ]
    assert found.newly_allowed == ()  # the Allow added allows nothing new
    assert "group none -> *" in found.summary()


def test_scrapy_a_group_of_allows_only_is_no_rules() -> None:
    found = change("User-agent: *\nAllow: /a\n", "User-agent: *\nAllow: /b\nDisallow: /c\n")
    assert said(found.newly_disallowed) == [("disallow", "/c", 3, True)]
    assert found.newly_allowed == ()


def test_scrapy_tokens_with_no_group_see_no_change() -> None:
    old = "User-agent: otherbot\nDisallow: /\n"
    found = change(old, "User-agent: otherbot\nAllow: /\nDisallow: /x\n")
    assert not found
    assert found.group_before is found.group_after is None


def test_scrapy_a_malformed_body_is_no_rules_and_never_raises() -> None:
    garbage = RobotsTxt.parse(b"\xff\xfe\x00<html><body>Disallow /x</body></html>\x00\x80")
    found = change_for(garbage, parse(BODY), AGENT)
    assert [c.rule.pattern for c in found.newly_disallowed] == ["/private/", "/tmp/"]
    assert found.group_before is None
    assert not change_for(garbage, garbage, AGENT)
    assert not change_for(garbage, None, AGENT)


# --- the group -------------------------------------------------------------------------


def test_scrapy_a_group_switching_from_star_to_the_crawlers_own() -> None:
    own = "User-agent: mybot\nAllow: /public/\nDisallow: /private/\nDisallow: /news/\n"
    found = change(BODY, BODY + "\n" + own)
    assert (found.group_before, found.group_after) == ("*", "mybot")
    # Its rules against the old group's: /tmp/ no longer, /news/ now; the rest unchanged.
    assert said(found.newly_disallowed) == [("disallow", "/news/", 11, True)]
    assert said(found.newly_allowed) == [("disallow", "/tmp/", 5, False)]
    assert found.crawl_delay == (1.0, None)  # the new group writes none
    assert "group * -> mybot" in found.summary()


def test_scrapy_a_group_switch_with_the_same_rules_is_still_a_change() -> None:
    found = change("User-agent: *\nDisallow: /x\n", "User-agent: mybot\nDisallow: /x\n")
    assert found
    assert found.summary() == "group * -> mybot"


def test_scrapy_another_crawlers_group_changing_is_no_change_for_this_one() -> None:
    old = BODY + "\nUser-agent: otherbot\nDisallow: /\n"
    assert not change(old, BODY + "\nUser-agent: otherbot\nDisallow: /other\n")


def test_scrapy_a_full_user_agent_string_is_read_as_the_crawl_reads_it() -> None:
    own = "User-agent: mybot\nDisallow: /mine\n"
    found = change(BODY, BODY + own, "MyBot/1.0 (+https://example.com/bot)")
    assert found.group_after == "mybot"


def test_scrapy_tokens_in_preference_order() -> None:
    old = "User-agent: news\nDisallow: /a\n"
    found = change(old, old + "User-agent: mybot\nDisallow: /b\n", ["mybot", "news"])
    assert (found.group_before, found.group_after) == ("news", "mybot")


# --- pacing, site-wide lines -------------------------------------------------------------


def test_scrapy_crawl_delay_and_request_rate_changes() -> None:
    new = BODY.replace("Crawl-delay: 1", "Crawl-delay: 5\nRequest-rate: 1/10")
    found = change(BODY, new)
    assert found.crawl_delay == (1.0, 5.0)
    assert found.request_rate == (None, 10.0)
    assert found.summary() == "crawl-delay 1 -> 5, request-rate none -> 10 s per request"


def test_scrapy_an_unchanged_pacing_value_is_none() -> None:
    found = change(BODY, BODY + "Disallow: /x\n")
    assert found.crawl_delay is None
    assert found.request_rate is None


def test_scrapy_sitemaps_and_licences_added_and_removed_in_file_order() -> None:
    old = "Sitemap: https://e.com/a.xml\nSitemap: https://e.com/b.xml\nLicense: https://e.com/l1\n"
    new = (
        "License: https://e.com/l2\nSitemap: https://e.com/d.xml\nSitemap: https://e.com/b.xml\n"
        "Sitemap: https://e.com/c.xml\nSitemap: relative.xml\n"
    )
    found = change(old, new)
    assert found.sitemaps_added == ("https://e.com/d.xml", "https://e.com/c.xml")
    assert found.sitemaps_removed == ("https://e.com/a.xml",)
    assert found.licenses_added == ("https://e.com/l2",)
    assert found.licenses_removed == ("https://e.com/l1",)
    assert found.summary() == (
        "1 licence added, 1 licence removed, 2 sitemaps added, 1 sitemap removed"
    )
    assert found.newly_disallowed == found.newly_allowed == ()


# --- usage preferences ------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "User-agent: *\nContent-Usage: train-ai=n\n",
        "Content-Signal: ai-train=no\nUser-agent: *\n",  # global, mapped
        "User-agent: *\nContent-Signal: ai-train=no, search=yes\n",
    ],
)
def test_scrapy_train_ai_now_refused(line: str) -> None:
    found = change("User-agent: *\nDisallow: /x\n", line + "Disallow: /x\n")
    train = [usage for usage in found.usage if usage.key == "train-ai"]
    assert train == [UsageChange("train-ai", None, "n")]
    assert "train-ai now refused" in found.summary()


def test_scrapy_a_preference_turned_from_y_to_n() -> None:
    found = change(
        "User-agent: *\nContent-Usage: train-ai=y\n", "User-agent: *\nContent-Usage: train-ai=n\n"
    )
    assert found.usage == (UsageChange("train-ai", "y", "n"),)
    assert found.as_dict()["usage"] == [
        {"key": "train-ai", "before": "y", "after": "n", "path": None}
    ]


def test_scrapy_the_same_preference_in_the_other_syntax_is_no_change() -> None:
    old = "User-agent: *\nContent-Usage: train-ai=n\n"
    assert not change(old, "User-agent: *\nContent-Signal: ai-train=no\n")


def test_scrapy_a_preference_no_longer_stated() -> None:
    found = change("User-agent: *\nContent-Usage: search=y\n", "User-agent: *\nDisallow:\n")
    assert found.usage == (UsageChange("search", "y", None),)
    assert found.summary() == "search no longer stated"


def test_scrapy_a_path_scoped_preference_names_its_path() -> None:
    old = "User-agent: *\nContent-Usage: train-ai=y\n"
    found = change(old, old + "Content-Usage: /news/ train-ai=n\n")
    assert found.usage == (UsageChange("train-ai", "y", "n", "/news/"),)
    assert found.summary() == "train-ai now refused for /news/"


def test_scrapy_a_site_wide_change_is_said_once_not_per_path() -> None:
    old = "User-agent: *\nContent-Signal: ai-train=yes\nContent-Usage: /news/ search=y\n"
    found = change(old, old.replace("ai-train=yes", "ai-train=no"))
    assert found.usage == (UsageChange("train-ai", "y", "n"),)


def test_scrapy_usage_changes_of_many_paths_are_gathered_in_the_summary() -> None:
    old = "User-agent: *\n" + "".join(f"Content-Usage: /p{i}/ search=y\n" for i in range(6))
    found = change(old, old.replace("search=y", "search=n") + "Content-Usage: ai-use=n\n")
    # ai-use speaks for ai-input too (docs/usage-preferences.md)
    assert found.usage[:2] == (UsageChange("ai-use", None, "n"), UsageChange("ai-input", None, "n"))
    assert [usage.path for usage in found.usage[2:]] == [f"/p{i}/" for i in range(6)]
    assert found.summary() == (
        "ai-use now refused, ai-input now refused,"
        " search now refused for /p0/, /p1/, /p2/ and 3 more paths"
    )


def test_scrapy_usage_lines_that_moved_are_no_change() -> None:
    old = "User-agent: *\nContent-Usage: /a/ train-ai=n\nDisallow: /x\nContent-Signal: search=yes\n"
    new = (
        "User-agent: *\nContent-Signal: search=yes\nDisallow: /x\n\nContent-Usage: /a/ train-ai=n\n"
    )
    assert not change(old, new)


def test_scrapy_another_crawlers_usage_lines_are_no_change() -> None:
    old = "User-agent: *\nDisallow: /x\nUser-agent: otherbot\nDisallow: /y\n"
    assert not change(old, old + "Content-Usage: train-ai=n\n")


# --- the shapes --------------------------------------------------------------------------


def test_scrapy_as_dict_is_json_ready_and_says_every_field() -> None:
    new = (
        "License: https://e.com/l\nUser-agent: mybot\nAllow: /public/\nDisallow: /private/\n"
        "Disallow: /x\n"
        "Crawl-delay: 3\nContent-Usage: train-ai=n\n"
    )
    found = change(BODY, new)
    data = json.loads(json.dumps(found.as_dict()))
    assert data == {
        "newly_disallowed": [{"kind": "disallow", "pattern": "/x", "line": 5, "added": True}],
        "newly_allowed": [{"kind": "disallow", "pattern": "/tmp/", "line": 5, "added": False}],
        "group_before": "*",
        "group_after": "mybot",
        "crawl_delay": [1.0, 3.0],
        "request_rate": None,
        "usage": [{"key": "train-ai", "before": None, "after": "n", "path": None}],
        "licenses_added": ["https://e.com/l"],
        "licenses_removed": [],
        "sitemaps_added": [],
        "sitemaps_removed": ["https://example.com/sitemap.xml"],
        **{  # every other kind of line outside any group, by its table entry
            f"{kind.values}_{how}": []
            for kind in SITE_WIDE.values()
            if kind.key not in ("sitemap", "license")
            for how in ("added", "removed")
        },
        "summary": found.summary(),
    }
    assert found.summary() == (
        "1 path newly disallowed (Disallow: /x line 5),"
        " 1 path newly allowed (removed Disallow: /tmp/ line 5),"
        " group * -> mybot, crawl-delay 1 -> 3, train-ai now refused,"
        " 1 licence added, 1 sitemap removed"
    )


def test_scrapy_a_change_is_frozen_and_compares_by_value() -> None:
    found = change(BODY, None)
    assert found == change(BODY, None)
    with pytest.raises(AttributeError):
        found.group_after = "x"  # type: ignore[misc]
    assert RuleChange(Rule("disallow", "/a", 2), True) == RuleChange(
        Rule("disallow", "/a", 2), True
    )


# --- a big file ----------------------------------------------------------------------------


def test_scrapy_a_huge_file_with_one_rule_changed_says_that_one() -> None:
    lines = [f"Disallow: /section{i}/page" for i in range(15_000)]
    usage = [f"Content-Usage: /area{i}/ train-ai=n" for i in range(2_000)]
    old = "User-agent: *\n" + "\n".join(lines + usage) + "\n"
    assert len(old) < 500_000  # within the size limit (docs/spec.md §4.3)
    new = old.replace("Disallow: /section7000/page\n", "") + "Disallow: /new\n"
    found = change(old, new)
    assert said(found.newly_disallowed) == [("disallow", "/new", 17_001, True)]
    assert said(found.newly_allowed) == [("disallow", "/section7000/page", 7_002, False)]
    assert found.usage == ()


def test_scrapy_a_new_kind_of_line_outside_groups_is_in_the_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kind of ``SITE_WIDE`` without fields of its own (a made-up ``X-Example``)
    is compared, said and given as data from its table entry alone."""
    kind = SiteWide(
        "x-example", "examples", "example", "examples", absolute_url, "an absolute URL",
        "example-not-absolute", "write the full URL",
    )  # fmt: skip
    monkeypatch.setitem(SITE_WIDE, kind.key, kind)
    found = change(
        "X-Example: https://e.com/a\nUser-agent: *\nDisallow: /x\n",
        "X-Example: https://e.com/b\nUser-agent: *\nDisallow: /x\nX-Example: https://e.com/c\n",
    )
    assert found.site_wide == (
        SiteWideChange("x-example", ("https://e.com/b", "https://e.com/c"), ("https://e.com/a",)),
    )
    assert found
    assert found.summary() == "2 examples added, 1 example removed"
    data = found.as_dict()
    assert (data["examples_added"], data["examples_removed"]) == (
        ["https://e.com/b", "https://e.com/c"],
        ["https://e.com/a"],
    )
    assert (found.sitemaps_added, found.licenses_added) == ((), ())
    unchanged = change("X-Example: https://e.com/a\n", "X-Example: https://e.com/a\n")
    assert not unchanged
    assert unchanged.as_dict()["examples_added"] == []
