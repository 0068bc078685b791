"""Page-level rules: ``X-Robots-Tag`` and robots ``meta`` tags.

Every example of Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag
specifications" (developers.google.com, updated 2026-03-24) is a
``test_google_...`` case; MDN's X-Robots-Tag examples (a secondary source for
one header naming several agents) are ``test_mdn_...``; our own choices are
``test_scrapy_...``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.engine.page_directives import (
    META,
    X_ROBOTS_TAG,
    PageDirectives,
    combine_directives,
    meta_robots,
    meta_tags,
    parse_x_robots_tag,
    x_robots_tag,
)


def page(*tags: str, head: bool = True) -> bytes:
    inside = "\n".join(tags)
    if head:
        return (
            f"<!DOCTYPE html>\n<html><head>\n{inside}\n</head>\n<body>(…)</body>\n</html>".encode()
        )
    return f"<!DOCTYPE html>\n<html><head></head><body>\n{inside}\n</body></html>".encode()


# --- Google: the robots meta tag ------------------------------------------------------


def test_google_meta_robots_noindex_applies_to_all_crawlers() -> None:
    found = meta_robots(page('<meta name="robots" content="noindex">'), ["anybot"])
    assert found.noindex and found.flags == {"noindex"}
    assert found.rules[0].source == META and found.rules[0].agent is None


def test_google_meta_adsbot_addressed_alone() -> None:
    html = page('<meta name="AdsBot-Google" content="noindex">')
    assert meta_robots(html, ["adsbot-google"]).noindex
    assert not meta_robots(html, ["googlebot"]).noindex


def test_google_meta_name_and_content_are_case_insensitive() -> None:
    html = page('<META NAME="ROBOTS" CONTENT="NOINDEX">')
    assert meta_robots(html, ["x"]).noindex


@pytest.mark.parametrize(
    ("tags", "tokens", "flags"),
    [
        (['<meta name="googlebot" content="nosnippet">'], ["googlebot"], {"nosnippet"}),
        (['<meta name="googlebot" content="nosnippet">'], ["otherbot"], set()),
        (['<meta name="googlebot-news" content="nosnippet">'], ["googlebot-news"], {"nosnippet"}),
        (['<meta name="googlebot-news" content="nosnippet">'], ["googlebot"], set()),
        (['<meta name="googlebot" content="notranslate">',
          '<meta name="googlebot-news" content="nosnippet">'], ["googlebot"], {"notranslate"}),
        (['<meta name="googlebot" content="notranslate">',
          '<meta name="googlebot-news" content="nosnippet">'], ["googlebot-news"], {"nosnippet"}),
        # A crawler with several tokens reads the tags of each.
        (['<meta name="googlebot" content="notranslate">',
          '<meta name="googlebot-news" content="nosnippet">'],
         ["googlebot-news", "googlebot"], {"nosnippet", "notranslate"}),
    ],
)  # fmt: skip
def test_google_meta_specific_crawlers(tags: list[str], tokens: list[str], flags: set[str]) -> None:
    assert meta_robots(page(*tags), tokens).flags == flags


def test_google_meta_in_body_is_respected() -> None:
    html = page('<meta name="robots" content="noindex">', head=False)
    assert meta_robots(html, ["x"]).noindex


# --- Google: the X-Robots-Tag header ----------------------------------------------------


def test_google_xrobots_noindex() -> None:
    found = x_robots_tag(["noindex"], ["anybot"])
    assert found.noindex and found.rules[0].source == X_ROBOTS_TAG


def test_google_xrobots_several_headers_combine() -> None:
    found = x_robots_tag(["noimageindex", "unavailable_after: 25 Jun 2010 15:00:00 PST"], ["x"])
    assert found.flags == {"noimageindex"}
    assert found.unavailable_after == ("25 Jun 2010 15:00:00 PST",)


def test_google_xrobots_user_agent_prefix() -> None:
    headers = ["googlebot: nofollow", "otherbot: noindex, nofollow"]
    assert x_robots_tag(headers, ["googlebot"]).flags == {"nofollow"}
    assert x_robots_tag(headers, ["otherbot"]).flags == {"noindex", "nofollow"}
    assert x_robots_tag(headers, ["thirdbot"]).flags == frozenset()


def test_google_xrobots_case_insensitive() -> None:
    """Header name, user agent name and values are not case sensitive."""
    assert x_robots_tag(["GoogleBot: NoIndex"], ["googlebot"]).noindex
    assert x_robots_tag(["NOINDEX"], ["Googlebot"]).noindex


def test_google_xrobots_rules_without_agent_apply_to_all() -> None:
    found = x_robots_tag(["googlebot: nofollow", "noindex"], ["otherbot"])
    assert found.flags == {"noindex"}


def test_google_conflicting_rules_more_restrictive_applies() -> None:
    found = x_robots_tag(["max-snippet:50, nosnippet"], ["x"])
    assert found.nosnippet and found.max_snippet == 50


# --- Google: the valid rules ---------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "flags"),
    [
        ("all", set()),  # the default, no effect when listed
        ("noindex", {"noindex"}),
        ("nofollow", {"nofollow"}),
        ("none", {"noindex", "nofollow"}),
        ("nosnippet", {"nosnippet"}),
        ("noindex, indexifembedded", {"noindex", "indexifembedded"}),
        ("notranslate", {"notranslate"}),
        ("noimageindex", {"noimageindex"}),
        # Historical and unused by Google, still reported (other crawlers).
        ("noarchive", {"noarchive"}),
        ("nocache", {"nocache"}),
        ("nositelinkssearchbox", {"nositelinkssearchbox"}),
    ],
)
def test_google_valid_rules(content: str, flags: set[str]) -> None:
    for found in (
        meta_robots(page(f'<meta name="robots" content="{content}">'), ["x"]),
        x_robots_tag([content], ["x"]),
    ):
        assert found.flags == flags
        assert found.problems == ()


@pytest.mark.parametrize(
    ("content", "snippet", "nosnippet"),
    [("max-snippet:0", 0, True), ("max-snippet:20", 20, False), ("max-snippet:-1", -1, False),
     ("max-snippet:", None, False), ("max-snippet: lots", None, False)],
)  # fmt: skip
def test_google_max_snippet(content: str, snippet: int | None, nosnippet: bool) -> None:
    found = meta_robots(page(f'<meta name="robots" content="{content}">'), ["x"])
    assert (found.max_snippet, found.nosnippet) == (snippet, nosnippet)
    assert bool(found.problems) == (snippet is None)  # unparseable: ignored


@pytest.mark.parametrize(
    ("content", "setting"),
    [("max-image-preview:none", "none"), ("max-image-preview:standard", "standard"),
     ("max-image-preview:large", "large"), ("max-image-preview:huge", None)],
)  # fmt: skip
def test_google_max_image_preview(content: str, setting: str | None) -> None:
    assert (
        meta_robots(page(f'<meta name="robots" content="{content}">'), ["x"]).max_image_preview
        == setting
    )


@pytest.mark.parametrize(
    ("content", "seconds"),
    [("max-video-preview:-1", -1), ("max-video-preview:0", 0), ("max-video-preview:15", 15)],
)
def test_google_max_video_preview(content: str, seconds: int) -> None:
    assert (
        meta_robots(page(f'<meta name="robots" content="{content}">'), ["x"]).max_video_preview
        == seconds
    )


def test_google_unavailable_after_kept_as_written() -> None:
    found = meta_robots(page('<meta name="robots" content="unavailable_after: 2020-09-21">'), ["x"])
    assert found.unavailable_after == ("2020-09-21",)
    assert found.flags == frozenset()


# --- Google: combined rules -----------------------------------------------------------


def test_google_combined_comma_separated_list() -> None:
    found = meta_robots(page('<meta name="robots" content="noindex, nofollow">'), ["x"])
    assert found.flags == {"noindex", "nofollow"}


def test_google_combined_multiple_meta_tags() -> None:
    html = page('<meta name="robots" content="noindex">', '<meta name="robots" content="nofollow">')
    assert meta_robots(html, ["x"]).flags == {"noindex", "nofollow"}


def test_google_combined_snippet_and_image_preview() -> None:
    found = meta_robots(
        page('<meta name="robots" content="max-snippet:20, max-image-preview:large">'), ["x"]
    )
    assert (found.max_snippet, found.max_image_preview) == (20, "large")


def test_google_combined_sum_of_negative_rules() -> None:
    html = page(
        '<meta name="robots" content="nofollow">', '<meta name="googlebot" content="noindex">'
    )
    assert meta_robots(html, ["googlebot"]).flags == {"noindex", "nofollow"}
    assert meta_robots(html, ["otherbot"]).flags == {"nofollow"}


@pytest.mark.parametrize("value", ["noindex, nofollow", "noindex"])
def test_google_practical_server_examples(value: str) -> None:
    """The Apache and NGINX snippets set ``X-Robots-Tag "noindex, nofollow"``."""
    assert x_robots_tag([value], ["x"]).noindex


# --- MDN: several agents in one header -------------------------------------------------


def test_mdn_xrobots_one_header_several_agents() -> None:
    """Each rule applies to the user agent written before it."""
    headers = ["BadBot: noindex, nofollow, googlebot: nofollow"]
    assert x_robots_tag(headers, ["badbot"]).flags == {"noindex", "nofollow"}
    assert x_robots_tag(headers, ["googlebot"]).flags == {"nofollow"}


def test_mdn_xrobots_sum_of_negative_rules() -> None:
    assert x_robots_tag(["nofollow", "googlebot: noindex"], ["googlebot"]).flags == {
        "noindex",
        "nofollow",
    }


def test_mdn_xrobots_date_with_a_comma() -> None:
    found = x_robots_tag(["unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT"], ["x"])
    assert found.unavailable_after == ("Wed, 03 Dec 2025 13:09:53 GMT",)
    assert found.problems == ()
    found = x_robots_tag(
        ["googlebot: unavailable_after: Friday, 25-Jun-10 15:00:00 PST, noindex"], ["googlebot"]
    )
    assert found.unavailable_after == ("Friday, 25-Jun-10 15:00:00 PST",)
    assert found.flags == {"noindex"}


# --- our own choices --------------------------------------------------------------------


def test_scrapy_each_header_value_starts_for_all_crawlers() -> None:
    """An agent prefix holds to the end of its own header value only."""
    rules = parse_x_robots_tag(["googlebot: nofollow, noarchive", "noindex"])
    assert [(r.name, r.agent) for r in rules] == [
        ("nofollow", "googlebot"),
        ("noarchive", "googlebot"),
        ("noindex", None),
    ]


def test_scrapy_value_rule_with_agent_prefix() -> None:
    found = x_robots_tag(["googlebot: max-snippet: 30", "max-snippet:10"], ["googlebot"])
    assert found.max_snippet == 10
    assert x_robots_tag(["googlebot: max-snippet: 30"], ["googlebot"]).max_snippet == 30


def test_scrapy_bytes_headers() -> None:
    assert x_robots_tag([b"noindex", b"mybot: nofollow"], ["mybot"]).flags == {
        "noindex",
        "nofollow",
    }


def test_scrapy_limits_take_the_tighter() -> None:
    headers = [
        "max-snippet:-1, max-snippet:40, max-video-preview:-1",
        "max-image-preview:large, max-image-preview:standard",
    ]
    found = x_robots_tag(headers, ["x"])
    assert (found.max_snippet, found.max_video_preview, found.max_image_preview) == (
        40,
        -1,
        "standard",
    )


def test_scrapy_unknown_rules_kept_and_reported() -> None:
    found = x_robots_tag(["noai, noimageai"], ["x"])
    assert found.flags == {"noai", "noimageai"}
    assert len(found.problems) == 2


def test_scrapy_header_and_meta_combine() -> None:
    header = x_robots_tag(["max-snippet:50"], ["x"])
    meta = meta_robots(page('<meta name="robots" content="nofollow, max-snippet:20">'), ["x"])
    both = combine_directives(header, meta)
    assert both.flags == {"nofollow"} and both.max_snippet == 20
    assert {rule.source for rule in both.rules} == {X_ROBOTS_TAG, META}
    assert combine_directives() == PageDirectives(frozenset(), None, None, None, (), (), ())


@pytest.mark.parametrize(
    "tag",
    [
        '<meta name="robots" content="noindex">',
        '<meta content="noindex" name="robots">',
        "<meta name='robots' content='noindex'>",
        "<meta name=robots content=noindex>",
        '<meta name="robots" content="noindex"/>',
        '<meta\nname="robots"\ncontent="noindex"\n>',
        '<meta charset="utf-8" name="Robots" content="NoIndex" data-x="a>b">',
        '<meta name="robots" content="noindex&#44; nofollow">',
        '<meta name="robots" name="other" content="noindex">',  # first name counts
    ],
)
def test_scrapy_meta_attribute_forms(tag: str) -> None:
    assert meta_robots(page(tag), ["x"]).noindex


@pytest.mark.parametrize(
    "html",
    [
        '<!-- <meta name="robots" content="noindex"> -->',
        '<script>document.write(\'<meta name="robots" content="noindex">\')</script>',
        '<SCRIPT type="x">var a = "<meta name=robots content=noindex>";</SCRIPT >',
        '<style>/* <meta name="robots" content="noindex"> */</style>',
        '<title><meta name="robots" content="noindex"></title>',
        '<textarea><meta name="robots" content="noindex"></textarea>',
        '<template><meta name="robots" content="noindex"></template>',
        '<meta name="robots">',  # no content
        '<meta content="noindex">',  # no name
        '<meta name="description" content="noindex">',
        '<metadata name="robots" content="noindex">',
        '<!-- unclosed comment <meta name="robots" content="noindex">',
    ],
)
def test_scrapy_meta_not_a_robots_tag(html: str) -> None:
    assert not meta_robots(html.encode(), ["x"]).noindex


def test_scrapy_meta_after_closed_script_still_read() -> None:
    html = '<script>if (a < b) {}</script><meta name="robots" content="noindex">'
    assert meta_robots(html, ["x"]).noindex


def test_scrapy_meta_byte_bound() -> None:
    filler = b"<p>" + b"x" * 5000 + b"</p>"
    html = filler + b'<meta name="robots" content="noindex">'
    assert meta_robots(html, ["x"]).noindex
    assert not meta_robots(html, ["x"], max_bytes=len(filler) + 10).noindex
    assert meta_tags(html, max_bytes=len(filler)) == []


def test_scrapy_meta_bad_utf8_and_text() -> None:
    html = b'\xff\xfe<meta name="robots" content="nofollow">\xc3'
    assert meta_robots(html, ["x"]).nofollow
    assert meta_robots('<meta name="robots" content="nofollow">', ["x"]).nofollow


# --- properties ----------------------------------------------------------------------------


@settings(max_examples=500)
@given(st.lists(st.one_of(st.text(max_size=60), st.binary(max_size=60)), max_size=4),
       st.lists(st.text(max_size=12), max_size=3))  # fmt: skip
def test_scrapy_property_x_robots_tag_never_raises(
    values: list[str | bytes], tokens: list[str]
) -> None:
    found = x_robots_tag(values, tokens)
    assert found.max_image_preview in (None, "none", "standard", "large")
    for rule in found.rules:
        assert rule.agent is None or rule.agent in {token.lower() for token in tokens}


near_html = st.text(alphabet="<>!-/=\"' metanamcontrobsidxfl,:;&#script", max_size=200)


@settings(max_examples=500)
@given(st.one_of(st.binary(max_size=400), st.text(max_size=200), near_html),
       st.integers(0, 500))  # fmt: skip
def test_scrapy_property_meta_never_raises(html: str | bytes, bound: int) -> None:
    meta_robots(html, ["mybot"], max_bytes=bound)
    combine_directives(meta_robots(html, ["robots"]), x_robots_tag([html[:40]], ["mybot"]))


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["noindex", "nofollow", "none", "all", "max-snippet:5",
                                 "max-snippet:-1", "nosnippet", "max-image-preview:large",
                                 "max-image-preview:none"]), max_size=6),
       st.randoms(use_true_random=False))  # fmt: skip
def test_scrapy_property_rule_order_does_not_matter(rules: list[str], rng: object) -> None:
    shuffled = list(rules)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    one, other = x_robots_tag([", ".join(rules)], ["x"]), x_robots_tag([", ".join(shuffled)], ["x"])
    assert one[:5] == other[:5]
