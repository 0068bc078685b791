"""Lines of a robots.txt body: splitting, and what each line says (SPEC §4).

The parser (``document.py``) asks ``directive()`` for the field and value of a
line on its hot path; ``classify()`` gives the full per-line report that the
lint command and the conformance tests read. Both share one tokenizer, so they
cannot disagree about what a line is.
"""

from __future__ import annotations

from typing import Final, NamedTuple

#: RFC 9309 §2.5 / SPEC §4.3: only this many bytes of a body are parsed.
MAX_BODY_BYTES: Final = 512_000

#: Google's library cuts each line to this many bytes (2083 * 8 - 1).
GOOGLE_MAX_LINE_BYTES: Final = 16_663

USER_AGENT: Final = "user-agent"
ALLOW: Final = "allow"
DISALLOW: Final = "disallow"
SITEMAP: Final = "sitemap"
UNUSED: Final = "unused"
UNKNOWN: Final = "unknown"

KNOWN_FIELDS: Final = {USER_AGENT: USER_AGENT, ALLOW: ALLOW, DISALLOW: DISALLOW, SITEMAP: SITEMAP}

# Google's library matches keys by prefix, in this order, and accepts these
# misspellings (none for allow). The documented rule accepts neither.
_GOOGLE_PREFIXES: Final = (
    (USER_AGENT, USER_AGENT),
    ("useragent", USER_AGENT),
    ("user agent", USER_AGENT),
    (ALLOW, ALLOW),
    (DISALLOW, DISALLOW),
    ("dissallow", DISALLOW),
    ("dissalow", DISALLOW),
    ("disalow", DISALLOW),
    ("diasllow", DISALLOW),
    ("disallaw", DISALLOW),
    (SITEMAP, SITEMAP),
    ("site-map", SITEMAP),
)

#: Recognised fields that take no part in the access decision (SPEC §4.5).
UNUSED_FIELDS: Final = frozenset(
    {
        "clean-param",
        "content-signal",
        "content-usage",
        "crawl-delay",
        "domain",
        "host",
        "noarchive",
        "nofollow",
        "noindex",
        "request-rate",
        "revisit-after",
        "visit-time",
    }
)

_WS: Final = " \t\v\f"
_BOMS: Final = (b"\xef\xbb\xbf", b"\xef\xbb", b"\xef")


def body_text(body: bytes | str) -> str:
    """Decode the parsed part of a body: at most 512,000 bytes, BOM skipped.

    Invalid UTF-8 is kept as surrogate escapes, so that a rule's raw bytes can
    be percent-encoded exactly as they were sent.
    """
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogateescape")
    body = body[:MAX_BODY_BYTES]
    for bom in _BOMS:
        if body.startswith(bom):
            body = body[len(bom) :]
            break
    return body.decode("utf-8", "surrogateescape")


def split_lines(text: str) -> list[str]:
    """Split at CR, LF or CR LF only (str.splitlines knows far more breaks)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def cut_line(line: str) -> str:
    """Google's line-length cut, in bytes of UTF-8."""
    if len(line) * 4 <= GOOGLE_MAX_LINE_BYTES:
        return line
    raw = line.encode("utf-8", "surrogateescape")
    if len(raw) <= GOOGLE_MAX_LINE_BYTES:
        return line
    return raw[:GOOGLE_MAX_LINE_BYTES].decode("utf-8", "surrogateescape")


class Directive(NamedTuple):
    """What a line says: its field, its value, and how leniently it was read."""

    field: str  # one of USER_AGENT, ALLOW, DISALLOW, SITEMAP, UNUSED, UNKNOWN
    key: str  # the key as written, lower-cased
    value: str
    typo: bool  # misspelt or prefixed key that only Google's library accepts
    missing_colon: bool  # "disallow /x": whitespace instead of the colon


def _split_key_value(content: str) -> tuple[str, str, bool] | None:
    colon = content.find(":")
    if colon >= 0:
        return content[:colon].strip(_WS), content[colon + 1 :].strip(_WS), False
    # Google accepts "key value" when the line has exactly two tokens.
    parts = content.split(None, 2)
    if len(parts) == 2:
        return parts[0], parts[1], True
    return None


def _field_of(key: str) -> tuple[str, bool]:
    known = KNOWN_FIELDS.get(key)
    if known is not None:
        return known, False
    if key in UNUSED_FIELDS:
        return UNUSED, False
    for prefix, field in _GOOGLE_PREFIXES:
        if key.startswith(prefix):
            return field, True
    return UNKNOWN, False


def directive(line: str) -> Directive | None:
    """The field and value of one line, or None for a line with no key."""
    hash_at = line.find("#")
    content = line if hash_at < 0 else line[:hash_at]
    split = _split_key_value(content)
    if split is None:
        return None
    key, value, missing_colon = split
    key = key.lower()
    field, typo = _field_of(key)
    return Directive(field, key, value, typo, missing_colon)


class LineReport(NamedTuple):
    """Per-line classification, the shape of Google's parsing reporter."""

    line: int
    tag: str  # "UserAgent", "Allow", "Disallow", "Sitemap", "Unused", "Unknown"
    is_typo: bool
    is_empty: bool
    has_comment: bool
    is_comment: bool
    has_directive: bool
    is_acceptable_typo: bool
    is_line_too_long: bool
    is_missing_colon_separator: bool
    directive: Directive | None


_TAGS: Final = {
    USER_AGENT: "UserAgent",
    ALLOW: "Allow",
    DISALLOW: "Disallow",
    SITEMAP: "Sitemap",
    UNUSED: "Unused",
    UNKNOWN: "Unknown",
}


def classify(line: str, number: int) -> LineReport:
    """Everything a webmaster might want to know about one line."""
    too_long = len(line.encode("utf-8", "surrogateescape")) > GOOGLE_MAX_LINE_BYTES
    stripped = line.strip(_WS)
    found = directive(cut_line(line))
    if found is not None and not found.key:
        found = None
    typo = found is not None and found.typo
    return LineReport(
        line=number,
        tag=_TAGS[found.field] if found is not None else "Unknown",
        is_typo=typo,
        is_empty=not stripped,
        has_comment="#" in line,
        is_comment=stripped.startswith("#"),
        has_directive=found is not None,
        is_acceptable_typo=typo,
        is_line_too_long=too_long,
        is_missing_colon_separator=found is not None and found.missing_colon,
        directive=found,
    )


def classify_body(body: bytes | str) -> list[LineReport]:
    """Classify every line of a body (the seed of ``scrapy-rep lint``)."""
    lines = split_lines(body_text(body))
    return [classify(line, number) for number, line in enumerate(lines, 1)]
