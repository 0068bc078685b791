"""Page-level indexing rules: the ``X-Robots-Tag`` header and robots ``meta`` tags.

robots.txt says what may be fetched; these say what may be done with a page
once fetched (index it, follow its links, show a snippet...). They are read
as Google documents them in "Robots meta tag, data-nosnippet, and
X-Robots-Tag specifications" (developers.google.com, page updated
2026-03-24):

- a header value is a comma-separated list of rules, optionally after a
  user agent (``googlebot: nofollow``); several headers add up; header name,
  agent and values are case-insensitive;
- ``<meta name="robots">`` addresses every crawler, ``<meta name="TOKEN">``
  one; name and content are case-insensitive; tags in the body count too;
- rules add up across headers and tags ("the sum of the negative rules"),
  and of conflicting rules the more restrictive applies.

A response is read within a bound, as robots.txt is within its byte cap:
at most ``MAX_PAGE_RULES`` rules of each source (its headers, its meta
tags), read lazily and added up in one linear pass. Google documents no
limit; past this one the response counts as ``none`` (noindex, nofollow),
failing closed as a robots.txt check that runs out of steps does (docs/spec.md §6.8):
what the rest said cannot be known without reading it all.

Pure: no HTML parser, no clock (``unavailable_after`` is kept as written; the
shell compares it with its own time).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Final, NamedTuple

__all__ = [
    "KNOWN_RULES",
    "MAX_HTML_BYTES",
    "MAX_PAGE_RULES",
    "META",
    "X_ROBOTS_TAG",
    "PageDirectives",
    "PageRule",
    "combine_directives",
    "directives_for",
    "meta_robots",
    "meta_tags",
    "parse_meta_content",
    "parse_x_robots_tag",
    "x_robots_tag",
]

X_ROBOTS_TAG: Final = "x-robots-tag"
META: Final = "meta"

#: Rules that carry a value after a colon (``max-snippet: 20``): a colon after
#: any other word is a user agent (``googlebot: noindex``).
VALUE_RULES: Final = frozenset(
    {"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"}
)
#: Every rule in Google's list, the historical ones included (``noarchive``,
#: ``nocache``, ``nositelinkssearchbox``: no longer used by Google, but other
#: crawlers may read them, so they are reported like the rest).
KNOWN_RULES: Final = VALUE_RULES | frozenset(
    {"all", "noindex", "nofollow", "none", "nosnippet", "indexifembedded", "notranslate",
     "noimageindex", "noarchive", "nocache", "nositelinkssearchbox"}
)  # fmt: skip
#: ``max-image-preview`` settings, least to most permissive.
IMAGE_PREVIEWS: Final = ("none", "standard", "large")
#: How much of an HTML body is searched for meta tags: Google reads them in
#: the body too, so the head alone is not enough; a bound keeps a hostile
#: page cheap.
MAX_HTML_BYTES: Final = 1_048_576
#: How many rules of one source (the ``X-Robots-Tag`` headers, or the meta
#: tags for the crawler) of a response are read; a header rule counts
#: whoever it addresses, since that is known only once it is read. A real
#: page writes a handful, a hostile one a rule per few bytes of a 1 MiB page
#: or tens of thousands of header lines. Past it, the response counts as ``none``.
MAX_PAGE_RULES: Final = 1000

_WEEKDAYS: Final = frozenset(
    {"mon", "tue", "wed", "thu", "fri", "sat", "sun", "monday", "tuesday", "wednesday",
     "thursday", "friday", "saturday", "sunday"}
)  # fmt: skip
#: ``agent: rest``: a user agent prefix (a product token, RFC 9309 §2.2.1,
#: with digits and dots allowed as crawlers write them).
_AGENT_PREFIX: Final = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*:(.*)\Z", re.DOTALL)


class PageRule(NamedTuple):
    """One rule as read, with where it came from."""

    name: str  # lower-cased: "noindex", "max-snippet", ...
    value: str | None  # the text after the colon of a value rule, stripped
    agent: str | None  # the agent it addresses (lower-cased); None: every crawler
    source: str  # X_ROBOTS_TAG or META
    text: str  # the item as written


# --- reading rules ---------------------------------------------------------------


def _items(value: str) -> Iterator[str]:
    """A comma-separated list, item by item; a date written with a weekday
    (``unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT``, RFC 822/850)
    keeps its comma."""
    item: str | None = None
    for part in value.split(","):
        if item is not None and _dangling_weekday(item):
            item += "," + part
            continue
        if item is not None and item.strip():
            yield item.strip()
        item = part
    if item is not None and item.strip():
        yield item.strip()


def _dangling_weekday(item: str) -> bool:
    """``unavailable_after: Wed`` (after an optional agent): a date cut at its comma."""
    prefixed = _AGENT_PREFIX.match(item)
    rest = item
    if prefixed is not None and prefixed[1].lower() not in VALUE_RULES:
        rest = prefixed[2]
    name, colon, value = rest.partition(":")
    return (
        bool(colon)
        and name.strip().lower() == "unavailable_after"
        and (value.strip().lower() in _WEEKDAYS)
    )


def _rule(item: str, agent: str | None, source: str, text: str) -> PageRule:
    name, colon, value = item.partition(":")
    name = name.strip().lower()
    if colon and name in VALUE_RULES:
        return PageRule(name, value.strip(), agent, source, text)
    return PageRule(item.strip().lower(), None, agent, source, text)


def parse_x_robots_tag(values: Iterable[str | bytes]) -> list[PageRule]:
    """Every rule of every ``X-Robots-Tag`` header value, in order.

    A user agent before a rule addresses it and the rules after it in the
    same header value, up to the next agent (``BadBot: noindex, nofollow,
    googlebot: nofollow``, as MDN's X-Robots-Tag page reads Google's form);
    each header value starts addressed to every crawler. Pass the header
    values one by one: joined with commas, two values cannot be told apart.
    """
    return [rule for rule in _header_rules(values) if rule.name]


def _header_rules(values: Iterable[str | bytes]) -> Iterator[PageRule]:
    """``parse_x_robots_tag``, one rule at a time, and an agent with no rule
    (``googlebot:``) as a rule without a name: read, so counted, but no rule."""
    for value in values:
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        agent: str | None = None
        for item in _items(text):
            prefixed = _AGENT_PREFIX.match(item)
            rest = item
            if prefixed is not None and prefixed[1].lower() not in VALUE_RULES:
                agent, rest = prefixed[1].lower(), prefixed[2]
                if not rest.strip():  # "googlebot:" alone: an agent with no rule yet
                    yield PageRule("", None, agent, X_ROBOTS_TAG, item)
                    continue
            yield _rule(rest, agent, X_ROBOTS_TAG, item)


def parse_meta_content(name: str, content: str) -> list[PageRule]:
    """The rules of one ``<meta name=... content=...>``: ``robots`` addresses
    every crawler, any other name the crawler with that token."""
    return list(_meta_rules(name, content))


def _meta_rules(name: str, content: str) -> Iterator[PageRule]:
    agent = None if name.strip().lower() == "robots" else name.strip().lower()
    for item in _items(content):
        yield _rule(item, agent, META, item)


# --- meta tags in HTML -------------------------------------------------------------

#: One pass over the page: comments and the raw-text elements are matched (and
#: skipped) so that a tag inside them is not read; an unclosed one runs to the
#: end, as a browser reads it. Each alternative is linear (no nested repeats).
_HTML_SCAN: Final = re.compile(
    r"<!--.*?(?:-->|\Z)"
    r"|<(script|style|textarea|title|template|xmp|noembed|noframes)(?=[\s/>])[^>]*>"
    r".*?(?:</\1\s*>|\Z)"
    r"|<meta(?=[\s/>])((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>?",
    re.IGNORECASE | re.DOTALL,
)
_ATTRIBUTE: Final = re.compile(
    r"([^\s\"'>/=]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?"
)


def meta_tags(page: bytes | str, *, max_bytes: int = MAX_HTML_BYTES) -> list[tuple[str, str]]:
    """(name, content) of each ``<meta>`` with both, in the first ``max_bytes``.

    Attribute names are case-insensitive and in any order; the first of a
    repeated attribute counts (as in HTML); character references in values
    are decoded. Bytes are read as UTF-8, bad bytes replaced.
    """
    return list(_meta_tags(page, max_bytes))


def _meta_tags(page: bytes | str, max_bytes: int) -> Iterator[tuple[str, str]]:
    """``meta_tags``, one tag at a time."""
    if isinstance(page, bytes):
        page = page[:max_bytes].decode("utf-8", "replace")
    else:
        page = page[:max_bytes]
    if "<meta" not in page.lower():
        return
    for match in _HTML_SCAN.finditer(page):
        attributes_text = match[2]
        if attributes_text is None:
            continue  # a comment or a raw-text element
        attributes: dict[str, str] = {}
        for attribute in _ATTRIBUTE.finditer(attributes_text):
            key = attribute[1].lower()
            if key not in attributes:
                raw = next((v for v in attribute.groups()[1:] if v is not None), "")
                attributes[key] = html.unescape(raw)
        if "name" in attributes and "content" in attributes:
            yield attributes["name"], attributes["content"]


def meta_robots(
    page: bytes | str, tokens: Sequence[str], *, max_bytes: int = MAX_HTML_BYTES
) -> PageDirectives:
    """The robots ``meta`` rules of a page that apply to a crawler with ``tokens``.

    Tags are read only until ``MAX_PAGE_RULES`` rules are (``directives_for``).
    """
    wanted = {"robots", *(token.lower() for token in tokens)}
    rules = (
        rule
        for name, content in _meta_tags(page, max_bytes)
        if name.strip().lower() in wanted
        for rule in _meta_rules(name, content)
    )
    return directives_for(rules, tokens)


def x_robots_tag(values: Iterable[str | bytes], tokens: Sequence[str]) -> PageDirectives:
    """The ``X-Robots-Tag`` rules of a response that apply to ``tokens``,
    read only until ``MAX_PAGE_RULES`` are (``directives_for``)."""
    return directives_for(_header_rules(values), tokens)


# --- what applies ----------------------------------------------------------------


class PageDirectives(NamedTuple):
    """The rules that apply to one crawler, added up ("sum of the negative rules")."""

    flags: frozenset[str]  # rules without a value: "noindex", "nofollow", ...
    max_snippet: int | None  # characters; -1 no limit; None unstated
    max_image_preview: str | None  # "none", "standard" or "large"
    max_video_preview: int | None  # seconds; -1 no limit
    unavailable_after: tuple[str, ...]  # dates as written
    rules: tuple[PageRule, ...]  # every rule that applies, in order (provenance)
    problems: tuple[str, ...]  # rules that were ignored, and why

    @property
    def noindex(self) -> bool:
        return "noindex" in self.flags

    @property
    def nofollow(self) -> bool:
        return "nofollow" in self.flags

    @property
    def nosnippet(self) -> bool:
        """``nosnippet``, or ``max-snippet:0`` (Google: equivalent)."""
        return "nosnippet" in self.flags or self.max_snippet == 0


EMPTY: Final = PageDirectives(frozenset(), None, None, None, (), (), ())


def _tighter(old: int | None, new: int) -> int:
    """The more restrictive of two limits where -1 means none."""
    if old is None or old < 0:
        return new
    return old if new < 0 else min(old, new)


def directives_for(rules: Iterable[PageRule], tokens: Sequence[str]) -> PageDirectives:
    """Add up the rules addressed to every crawler or to one of ``tokens``.

    ``none`` is ``noindex, nofollow``; ``all`` adds nothing; of two limits the
    tighter wins (``max-snippet:50`` with ``nosnippet`` gives no snippet); a
    value rule without a parseable value is ignored, as Google ignores it.

    One pass, at most ``MAX_PAGE_RULES`` rules taken from ``rules`` (lazy:
    the rest is never read). If there are more, the result has ``noindex``
    and ``nofollow`` too, and a problem says why.
    """
    own = {token.lower() for token in tokens}
    flags: set[str] = set()
    snippet: int | None = None
    image: str | None = None
    video: int | None = None
    dates: dict[str, None] = {}  # ordered, and a lookup that does not grow with it
    kept: list[PageRule] = []
    problems: list[str] = []
    read = islice(rules, MAX_PAGE_RULES + 1)
    for count, rule in enumerate(read):
        if count == MAX_PAGE_RULES:
            flags.update(("noindex", "nofollow"))
            problems.append(
                f"more than {MAX_PAGE_RULES} rules: the rest is not read, and the"
                " response counts as none (noindex, nofollow)"
            )
            break
        if not rule.name or (rule.agent is not None and rule.agent not in own):
            continue
        kept.append(rule)
        name, value = rule.name, rule.value
        if value is None:
            if name == "none":
                flags.update(("noindex", "nofollow"))
            elif name != "all" and name:
                flags.add(name)
                if name not in KNOWN_RULES:
                    problems.append(f"{rule.text!r}: not a rule Google documents")
        elif name in ("max-snippet", "max-video-preview"):
            number = _integer(value)
            if number is None:
                problems.append(f"{rule.text!r}: no number, ignored")
            elif name == "max-snippet":
                snippet = _tighter(snippet, number)
            else:
                video = _tighter(video, number)
        elif name == "max-image-preview":
            setting = value.lower()
            if setting not in IMAGE_PREVIEWS:
                problems.append(f"{rule.text!r}: not none, standard or large, ignored")
            elif image is None or IMAGE_PREVIEWS.index(setting) < IMAGE_PREVIEWS.index(image):
                image = setting
        elif value:  # unavailable_after
            dates[value] = None
        else:
            problems.append(f"{rule.text!r}: no date, ignored")
    return PageDirectives(
        frozenset(flags), snippet, image, video, tuple(dates), tuple(kept), tuple(problems)
    )


def _integer(text: str) -> int | None:
    text = text.strip()
    digits = text[1:] if text[:1] == "-" else text
    if not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        return None
    return int(text)


def combine_directives(*parts: PageDirectives) -> PageDirectives:
    """Header and meta rules together: they add up like the rules of each."""
    flags: set[str] = set()
    snippet = video = None
    image: str | None = None
    dates: dict[str, None] = {}
    for part in parts:
        flags |= part.flags
        if part.max_snippet is not None:
            snippet = _tighter(snippet, part.max_snippet)
        if part.max_video_preview is not None:
            video = _tighter(video, part.max_video_preview)
        if part.max_image_preview is not None and (
            image is None
            or IMAGE_PREVIEWS.index(part.max_image_preview) < IMAGE_PREVIEWS.index(image)
        ):
            image = part.max_image_preview
        dates.update(dict.fromkeys(part.unavailable_after))
    return PageDirectives(
        frozenset(flags),
        snippet,
        image,
        video,
        tuple(dates),
        tuple(rule for part in parts for rule in part.rules),
        tuple(problem for part in parts for problem in part.problems),
    )
