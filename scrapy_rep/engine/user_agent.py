"""The crawler's names in a User-Agent header (docs/spec.md §5.7).

RFC 9110 §10.1.5 writes a User-Agent as products (``token["/"version]``)
and comments (``(...)``), separated by spaces. A crawler names itself as a
product (``shop (+http://example.com)``, ``AcmeBot/1.0``, a product after a
browser's ``... Safari/537.36 PerplexityBot/1.0``) or inside a comment, as
the first item after ``compatible`` (``Mozilla/5.0 (compatible; Foobot/1.0;
+url)``) or as a ``Name/version`` item (``(X11; Linux; WanscannerBot/1.2)``).
Browser, engine and platform names are never a crawler's, so a browser's
string names none and only the ``*`` group applies to it.

Real strings bend the grammar (``robot;Owler;mail``, ``FediDB/0.5; +url``):
``;`` and ``,`` also end a product, and URLs, e-mail addresses and words
without a leading letter are not names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

__all__ = ["BROWSER_NAMES", "user_agent_names"]

#: A name's robots.txt token: its leading letters, ``-`` and ``_`` (RFC 9309 §2.2.1).
_TOKEN: Final = re.compile(r"[A-Za-z_-]*")
#: Words that are addresses, not names: URLs, ``www.``, e-mail, ``+http``.
_ADDRESS: Final = re.compile(r"://|@|^\+?(?:www\.|https?:)", re.IGNORECASE)
#: Language tags in old browser strings (``en``, ``en-US``).
_LANGUAGE: Final = re.compile(r"[A-Za-z]{2}(?:-[A-Za-z]{2})?")
#: A word of a comment that is a platform's or device's code, not a name:
#: a digit within its first six characters (``Win64``, ``SLCC2``), or capitals
#: only and short (``MDDR``, ``LYF/F300B``).
_SHORT_CAPITALS: Final = re.compile(r"[A-Z]{1,5}(?:/|$)")
_PLATFORM_CODE: Final = re.compile(rf"[A-Za-z_-]{{0,5}}\d|{_SHORT_CAPITALS.pattern}")
#: A comment item that is one product: ``Name/version``.
_PRODUCT_ITEM: Final = re.compile(r"[^\s/]+/\S*")

#: Browser, engine, platform and device-family names that browsers and
#: crawlers write before the crawler's own (``Mozilla/5.0 (compatible; ...)``).
BROWSER_NAMES: Final = frozenset(
    {
        "mozilla", "applewebkit", "khtml", "like", "gecko", "chrome", "chromium",
        "headlesschrome", "safari", "version", "mobile", "compatible", "firefox", "edge",
        "edg", "edga", "edgios", "opr", "opera", "presto", "msie", "trident", "iemobile",
        "windows", "win", "nt", "linux", "android", "iphone", "ipad", "ipod", "macintosh",
        "intel", "mac", "cpu", "os", "x", "u", "i", "n", "wow", "rv", "ubuntu", "fedora",
        "build", "crios", "fxios", "vivaldi", "brave", "webview", "wv", "silk", "kaios",
        "cros", "tablet", "touch", "konqueror", "seamonkey", "thunderbird", "epiphany",
        "midori", "maxthon", "iron", "puffin", "focus", "electron", "yowser", "arm",
        "mobi", "ucweb", "sv", "clr", "net", "media", "center", "pc", "tv", "smart",
        "samsungbrowser", "ucbrowser", "miuibrowser", "huaweibrowser", "qqbrowser",
        "mqqbrowser", "yabrowser", "nintendobrowser", "heytapbrowser", "whale", "xiaomi",
        "phone", "lumia", "nokia", "blackberry", "xbox", "one", "playstation", "nintendo",
        "switch", "nf", "netfront", "tizen", "smart-tv", "smarttv", "webos", "kindle",
        "harmonyos", "hmscore", "infopath",
    }
)  # fmt: skip


def user_agent_names(value: str) -> tuple[str, ...]:
    """The crawler's names in a User-Agent string, lower-cased, in order, each once.

    ``shop (+http://www.yourdomain.com)`` -> ``("shop",)``; ``Mozilla/5.0
    (compatible; Yahoo! Slurp; +url)`` -> ``("yahoo", "slurp")``; a browser's
    string -> ``()``.
    """
    return tuple(dict.fromkeys(filter(None, _names(value))))


def _names(value: str) -> Iterator[str]:
    """Products and the comments' clear names first, then the comments' other
    words (``Mozilla/5.0 (X11; Linux x86_64; Rigor) ...``) but platform codes,
    languages and labels (``contact:``)."""
    loose: list[str] = []
    for text, is_comment in _parts(value):
        if is_comment:
            clear, other = _comment_words(text)
            loose.extend(other)
        else:
            clear = _product_words(text)
        yield from map(_name_of, clear)
    for word in loose:
        if not (_PLATFORM_CODE.match(word) or _LANGUAGE.fullmatch(word) or word[-1] == ":"):
            yield _name_of(word)


def _parts(value: str) -> Iterator[tuple[str, bool]]:
    """Top-level products and whole comments, as RFC 9110 §5.6.5 nests them."""
    depth = start = 0
    escaped = False
    for index, char in enumerate(value):
        if depth and escaped:
            escaped = False
        elif depth and char == "\\":
            escaped = True
        elif char == "(":
            if depth == 0:
                yield value[start:index], False
                start = index + 1
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                yield value[start:index], True
                start = index + 1
    yield value[start:], depth > 0


def _product_words(text: str) -> list[str]:
    return text.replace(";", " ").replace(",", " ").split()


def _comment_words(text: str) -> tuple[list[str], list[str]]:
    """A comment's clear names (``Name/version`` items, the words of the item
    after ``compatible``) and its other words, but a device's after ``Android``."""
    clear: list[str] = []
    other: list[str] = []
    after_compatible = after_android = False
    for item in re.split(r"[;,]", text):
        item = item.strip()
        if after_compatible:
            clear.extend(item.split())
        elif _PRODUCT_ITEM.fullmatch(item) and not _SHORT_CAPITALS.match(item):
            clear.append(item)
        elif not after_android:
            other.extend(item.split())
        after_compatible = item.lower() == "compatible"
        after_android = after_android or item.lower().startswith("android")
    return clear, other


def _name_of(word: str) -> str:
    """A word's robots.txt token, or ``""`` when it names no crawler."""
    if _ADDRESS.search(word):
        return ""
    product = word.split("/", 1)[0]
    token = _TOKEN.match(product.lstrip("+"))
    name = token.group(0).lower() if token else ""
    if not name[:1].isalpha() or name in BROWSER_NAMES:
        return ""
    return name
