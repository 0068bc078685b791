"""A robots.txt body as lines: its size limit, its encoding, its line ends (docs/spec.md §4.1-§4.3).

What each line says is ``grammar.py``'s business.
"""

from __future__ import annotations

from typing import Final

#: RFC 9309 §2.5 / docs/spec.md §4.3: only this many bytes of a body are parsed.
MAX_BODY_BYTES: Final = 512_000

#: Google's library cuts each line to this many bytes (2083 * 8 - 1).
GOOGLE_MAX_LINE_BYTES: Final = 16_663

#: A rule's kind is its field's key (``grammar.Field``, ``rules.Rule.kind``).
ALLOW: Final = "allow"
DISALLOW: Final = "disallow"

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
