"""A URL as the part rules match: path, params and query, normalised (docs/spec.md §6.1-§6.5).

Rules and URLs are compared in one form, RFC 9309 §2.2.2's: escapes of
unreserved and reserved characters decoded, others upper-case, characters
not allowed raw in a URI encoded. The same functions put a rule's pattern in
that form (``normalise``) and a URL's path (``normalise_path``), so the two
sides cannot drift apart.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "NEEDS_NORMALISING",
    "PLAIN_PATH_BYTES",
    "PLAIN_WEB_URL",
    "google_escape_pattern",
    "match_path",
    "normalise",
    "normalise_lines",
    "normalise_path",
    "path_of",
    "path_params_query",
    "without_dot_segments",
]

_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
#: RFC 3986's reserved characters but ``*`` and ``$``: RFC 9309 §2.2.2's
#: table makes ``https://foo.bar`` and ``https%3A%2F%2Ffoo.bar`` equal, so
#: their escapes are decoded on both sides. ``*`` and ``$`` stay apart: in a
#: rule they are special raw and literal escaped (§2.2.3), so their literal
#: form is the escape, in rules and URLs alike.
_DECODED_RESERVED: Final = frozenset(b":/?#[]@!&'()+,;=")
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
# Characters that RFC 3986 does not allow raw in a URL: outside US-ASCII,
# controls, space and " < > \ ^ ` { | }. They are percent-encoded before
# comparison on both sides (docs/spec.md §6.5 names the non-ASCII ones; Scrapy's
# requests carry the others encoded too, so a rule's raw "|" must match them).
_URI_CHARS: Final = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;="
#: The same characters as bytes, for ``bytes.translate``: on a long text, a
#: check in C that nothing needs encoding, faster than a regex.
_URI_BYTES: Final = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;="
)
_PLAIN_LINES: Final = _URI_BYTES + b"%\n"
_NEEDS_ENCODING: Final = re.compile(f"[^{_URI_CHARS}%]+")
_NEEDS_ENCODING_KEEP_LINES: Final = re.compile(f"[^{_URI_CHARS}%\n]+")
#: In a URL, a ``*`` or ``$`` is a literal character: encoded, as in rules.
_URL_CHARS: Final = _URI_CHARS.replace("$", "").replace("*", "")
_URL_NEEDS_ENCODING: Final = re.compile(f"[^{_URL_CHARS}%]+")
#: Anything in a path that normalisation may change: escapes and the above.
NEEDS_NORMALISING: Final = re.compile(f"[^{_URL_CHARS}]")
#: An http(s) URL whose path needs no normalisation: the path in one match.
#: Plain repeats, not possessive ones (Python 3.10's ``re`` has none): giving
#: back a character never lets the rest match (the host's are not "/", the
#: path's not "#"), so the answer is the same and the cost linear.
PLAIN_WEB_URL: Final = re.compile(f"https?://[^/?;#]*(/[{_URL_CHARS.replace('#', '')}]*)(?:#|\\Z)")
#: The characters of such a path, as bytes.
PLAIN_PATH_BYTES: Final = frozenset(_URI_BYTES) - frozenset(b"#$*")
#: A ``$`` that is not a rule's last character: a literal, so encoded.
_INNER_DOLLAR: Final = re.compile(r"\$(?!\n|\Z)")


def match_path(url: str) -> str:
    """``normalise(path_params_query(url))`` without dot segments, with one
    regex match for most URLs."""
    return path_of(PLAIN_WEB_URL.match(url), url)


def path_of(plain: re.Match[str] | None, url: str) -> str:
    """``match_path(url)``, given ``PLAIN_WEB_URL``'s match of it (a caller
    that wants the match too need not make it twice)."""
    path = plain[1] if plain is not None else path_params_query(url)
    if plain is None and NEEDS_NORMALISING.search(path):
        path = normalise_path(path)
    return without_dot_segments(path) if "/." in path else path


def without_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on the path before ``?`` (docs/spec.md §6.5.1): servers serve
    ``/private/x`` for ``/a/../private/x``, so the rules must see it so too.
    Run after escapes are decoded, so ``%2E%2E`` counts as ``..``."""
    query_at = path.find("?")
    head, tail = (path, "") if query_at < 0 else (path[:query_at], path[query_at:])
    if "/." not in head:
        return path
    kept: list[str] = []
    segments = head.split("/")[1:]
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "..":
            if kept:
                kept.pop()
            if last:
                kept.append("")  # "/a/.." is the directory "/"
        elif segment == ".":
            if last:
                kept.append("")  # "/a/." is "/a/"
        else:
            kept.append(segment)
    return "/" + "/".join(kept) + tail


# --- the URL side ------------------------------------------------------------


_ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?;#]*")
_WEB_SCHEMES: Final = ("https://", "http://")


def path_params_query(url: str) -> str:
    """The part of a URL that rules match: path, ``;params`` and ``?query``.

    Accepts absolute URLs and ``/path?query``; the fragment is dropped and an
    empty path is ``/`` (docs/spec.md §6.1). Other input is read as Google's library
    reads it (``GetPathParamsQuery``): a leading token is the authority.
    """
    if url.startswith(_WEB_SCHEMES):  # the common case, without a regex
        start = url.find("//") + 2
        slash = url.find("/", start)
        if slash < 0 or "?" in url[start:slash] or ";" in url[start:slash]:
            rest = url[_ABSOLUTE.match(url).end() :]  # type: ignore[union-attr]
        else:
            rest = url[slash:]
    elif (absolute := _ABSOLUTE.match(url)) is not None:
        rest = url[absolute.end() :]
    elif url[:1] == "/" and url[1:2] != "/":
        rest = url
    else:
        return _google_path_params_query(url)
    hash_at = rest.find("#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    if not rest:
        return "/"
    return rest if rest[0] == "/" else "/" + rest


def _google_path_params_query(url: str) -> str:
    start = 2 if url.startswith("//") else 0
    early_path = _find_first(url, "/?;", start)
    scheme_end = url.find("://", start)
    if scheme_end < 0 or (0 <= early_path < scheme_end):
        authority = start
    else:
        authority = scheme_end + 3
    path_start = _find_first(url, "/?;", authority)
    if path_start < 0:
        return "/"
    hash_at = url.find("#", start)
    if 0 <= hash_at < path_start:
        return "/"
    path = url[path_start:] if hash_at < 0 else url[path_start:hash_at]
    return path if path[0] == "/" else "/" + path


def _find_first(text: str, chars: str, start: int) -> int:
    best = -1
    for char in chars:
        found = text.find(char, start)
        if found >= 0 and (best < 0 or found < best):
            best = found
    return best


# --- percent-encoding ----------------------------------------------------------


def _encode_raw(match: re.Match[str]) -> str:
    raw = match.group(0).encode("utf-8", "surrogateescape")
    return "%" + raw.hex("%").upper()


def _escape_forms() -> dict[str, str]:
    """Every two-hex-digit escape body, in any case, -> its RFC 9309 form."""
    digits = "0123456789abcdefABCDEF"
    forms = {}
    for high in digits:
        for low in digits:
            byte = int(high + low, 16)
            decoded = byte in _UNRESERVED or byte in _DECODED_RESERVED
            forms[high + low] = chr(byte) if decoded else f"%{byte:02X}"
    return forms


_ESCAPE_FORMS: Final = _escape_forms()


#: Escapes whose RFC 9309 form differs from how they are written: lower-case
#: hex, or an unreserved or reserved character (decoded; not ``*``, ``$``).
#: Most escapes in the wild are in form (%20, %C3), so such a file costs one scan.
_CHANGING_ESCAPE: Final = re.compile(
    "%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-F]|2[136-9B-F]|3[0-9ABDF]|4[0-9A-F]|5[0-9ABDF]"
    "|6[1-9A-F]|7[0-9AE])"
)


def _normalise_escape(match: re.Match[str]) -> str:
    return _ESCAPE_FORMS[match.group()[1:]]


def normalise(text: str) -> str:
    """RFC 9309 §2.2.2 form of a rule's pattern.

    Characters not allowed raw in a URI (non-ASCII, space, controls, ``|``...)
    become upper-case %XX of their UTF-8 bytes; escapes of unreserved and
    reserved characters are decoded (``%7E`` is ``~``, ``%2F`` is ``/``);
    other escapes keep their encoding with upper-case hex. A raw ``*`` and a
    final ``$`` keep their meaning; ``%2A``, ``%24`` and an inner ``$`` are
    literals, written ``%2A`` and ``%24`` as in a URL (``normalise_path``).
    """
    if "%" in text:
        text = _CHANGING_ESCAPE.sub(_normalise_escape, text)
    if "$" in text:
        text = _INNER_DOLLAR.sub("%24", text)
    return _NEEDS_ENCODING.sub(_encode_raw, text)


def normalise_path(path: str) -> str:
    """RFC 9309 §2.2.2 form of a URL's path and query: as ``normalise``, and a
    ``*`` or ``$`` in a URL is the character itself (``%2A``, ``%24``)."""
    if "%" in path:
        path = _CHANGING_ESCAPE.sub(_normalise_escape, path)
    return _URL_NEEDS_ENCODING.sub(_encode_raw, path)


def normalise_lines(text: str) -> str:
    """``normalise`` applied to each line of ``text`` in one pass."""
    if "%" in text:
        text = _CHANGING_ESCAPE.sub(_normalise_escape, text)
    if "$" in text:
        text = _INNER_DOLLAR.sub("%24", text)
    if not text.isascii():
        return _NEEDS_ENCODING_KEEP_LINES.sub(_encode_raw, text)
    # Two passes in C instead of a regex: what is left once the allowed bytes
    # are deleted is the few characters to encode, each replaced in one pass.
    for char in set(text.encode("ascii").translate(None, _PLAIN_LINES).decode("ascii")):
        text = text.replace(char, f"%{ord(char):02X}")
    return text


def _upper_escape(match: re.Match[str]) -> str:
    return "%" + match.group(1).upper()


def google_escape_pattern(pattern: str) -> str:
    """Google's MaybeEscapePattern: encode bytes >= 0x80, upper-case escapes."""
    if "%" in pattern:
        pattern = _ESCAPE.sub(_upper_escape, pattern)
    if not pattern.isascii():
        pattern = re.sub(r"[^\x00-\x7f]+", _encode_raw, pattern)
    return pattern
