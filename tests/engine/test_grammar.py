"""The grammar's two readings of a line agree (``engine/grammar.py``).

The parser's hot loop reads the documented syntax with a regex and a memo of
keys; ``read_line`` reads every line the way lint and Google's quirks need.
Without typos and missing colons they must be the same reading.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.engine import grammar
from scrapy_rep.engine.grammar import KEYS, Field, read_line

_WS = " \t\v\f"
_IGNORED = (Field.UNKNOWN, Field.OTHER)
PIECES = st.sampled_from(
    [*KEYS, "User-Agent", "DISALLOW", "disallowed", "crawl-delays", "x", "İ", ":", "#", " ", "\t",
     "\v", "\x1c", "\xa0", "/a", "*", "$", "foo bar", ""]
)  # fmt: skip


@settings(max_examples=2000)
@given(st.lists(PIECES, max_size=6).map("".join))
def test_scrapy_property_strict_reading_is_read_line_without_quirks(line: str) -> None:
    match = grammar._LINE.match(line)
    strict = None
    if match is not None:
        field = grammar._strict_field(match[1])
        if field not in _IGNORED:
            strict = (field, match[2].strip(_WS))
    found = read_line(line)
    documented = None
    if found and not (found.typo or found.missing_colon) and found.field not in _IGNORED:
        documented = (found.field, found.value)
    assert strict == documented


def test_google_typos_are_in_the_one_key_table() -> None:
    typos = {key: entry.field for key, entry in KEYS.items() if entry.typo}
    assert typos == {
        "useragent": Field.USER_AGENT,
        "user agent": Field.USER_AGENT,
        "dissallow": Field.DISALLOW,
        "dissalow": Field.DISALLOW,
        "disalow": Field.DISALLOW,
        "diasllow": Field.DISALLOW,
        "disallaw": Field.DISALLOW,
        "site-map": Field.SITEMAP,
    }
    found = read_line("Disallowed: /x")  # a prefix of a field's key: Google reads it
    assert found is not None and (found.field, found.typo) == (Field.DISALLOW, True)
