"""RFC 9651 structured fields: just enough to read a Dictionary.

The vocabulary's statements are Dictionaries (vocab-08 §6, RFC 9651 §3.2).
Only token values matter, but a member of any other type that is malformed
makes the whole field fail (RFC 9651 §4.2), so every bare item type is read.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from decimal import Decimal
from typing import Final, NamedTuple, TypeAlias

__all__ = [
    "Date",
    "DisplayString",
    "InnerList",
    "Item",
    "Member",
    "ParsedDictionary",
    "Token",
    "parse_dictionary",
]


class Token(str):
    """An RFC 9651 Token (§3.3.4), kept apart from a String with the same text."""

    __slots__ = ()


class DisplayString(str):
    """An RFC 9651 Display String (§3.3.8)."""

    __slots__ = ()


class Date(NamedTuple):
    """An RFC 9651 Date (§3.3.7): seconds since the epoch."""

    seconds: int


BareItem: TypeAlias = "int | Decimal | str | bytes | bool | Date"
Parameters: TypeAlias = "dict[str, BareItem]"


class Item(NamedTuple):
    value: BareItem
    params: Parameters


class InnerList(NamedTuple):
    items: tuple[Item, ...]
    params: Parameters


Member: TypeAlias = "Item | InnerList"


class _FieldError(Exception):
    """A structured field that does not parse; caught in ``parse_dictionary``."""


_LCALPHA: Final = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS: Final = frozenset("0123456789")
_ALPHA: Final = _LCALPHA | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEY_CHARS: Final = _LCALPHA | _DIGITS | frozenset("_-.*")
_TOKEN_CHARS: Final = _ALPHA | _DIGITS | frozenset("!#$%&'*+-.^_`|~:/")
_BASE64: Final = _ALPHA | _DIGITS | frozenset("+/=")
_LOWER_HEX: Final = frozenset("0123456789abcdef")


class _FieldParser:
    """RFC 9651 §4.2 parsing, one method per algorithm, over ASCII text."""

    __slots__ = ("at", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, what: str) -> _FieldError:
        return _FieldError(f"{what} at character {self.at + 1}")

    def peek(self) -> str:
        return self.text[self.at : self.at + 1]

    def skip(self, chars: str) -> None:
        while self.at < len(self.text) and self.text[self.at] in chars:
            self.at += 1

    def dictionary(self) -> tuple[dict[str, Member], list[str]]:
        """§4.2.2; also reports repeated keys (the last one applies)."""
        members: dict[str, Member] = {}
        repeated: list[str] = []
        while self.at < len(self.text):
            key = self.key()
            if self.peek() == "=":
                self.at += 1
                member: Member = self.inner_list() if self.peek() == "(" else self.item()
            else:
                member = Item(True, self.parameters())
            if key in members:
                repeated.append(key)
                del members[key]  # §4.2.2: the value is overwritten
            members[key] = member
            self.skip(" \t")
            if self.at >= len(self.text):
                break
            if self.peek() != ",":
                raise self.fail("expected ','")
            self.at += 1
            self.skip(" \t")
            if self.at >= len(self.text):
                raise self.fail("a trailing ','")
        return members, repeated

    def inner_list(self) -> InnerList:
        """§4.2.1.2."""
        self.at += 1  # "("
        items: list[Item] = []
        while self.at < len(self.text):
            self.skip(" ")
            if self.peek() == ")":
                self.at += 1
                return InnerList(tuple(items), self.parameters())
            items.append(self.item())
            if self.peek() not in (" ", ")"):
                raise self.fail("expected ' ' or ')' in an inner list")
        raise self.fail("an inner list without ')'")

    def item(self) -> Item:
        """§4.2.3."""
        return Item(self.bare_item(), self.parameters())

    def bare_item(self) -> BareItem:
        """§4.2.3.1."""
        char = self.peek()
        if char == "-" or char in _DIGITS:
            return self.number()
        if char == '"':
            return self.string()
        if char in _ALPHA or char == "*":
            return self.token()
        if char == ":":
            return self.byte_sequence()
        if char == "?":
            return self.boolean()
        if char == "@":
            self.at += 1
            number = self.number()
            if not isinstance(number, int):
                raise self.fail("a date that is not an integer")
            return Date(number)
        if char == "%":
            return self.display_string()
        raise self.fail(f"no item starts with {char!r}" if char else "a missing item")

    def parameters(self) -> Parameters:
        """§4.2.3.2."""
        params: Parameters = {}
        while self.peek() == ";":
            self.at += 1
            self.skip(" ")
            key = self.key()
            value: BareItem = True
            if self.peek() == "=":
                self.at += 1
                value = self.bare_item()
            params.pop(key, None)
            params[key] = value
        return params

    def key(self) -> str:
        """§4.2.3.3: lower-case only, so ``Train-AI`` fails (vocab-08 §6.5.1)."""
        char = self.peek()
        if not char or (char not in _LCALPHA and char != "*"):
            raise self.fail(f"a key cannot start with {char!r}" if char else "a missing key")
        start = self.at
        while self.at < len(self.text) and self.text[self.at] in _KEY_CHARS:
            self.at += 1
        return self.text[start : self.at]

    def number(self) -> int | Decimal:
        """§4.2.4."""
        start = self.at
        if self.peek() == "-":
            self.at += 1
        if not self.peek() or self.peek() not in _DIGITS:
            raise self.fail("a number without digits")
        digits, decimal = 0, False
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in _DIGITS:
                digits += 1
            elif char == "." and not decimal:
                if digits > 12:
                    raise self.fail("a decimal with more than 12 integer digits")
                decimal = True
            else:
                break
            self.at += 1
            if digits + decimal > (16 if decimal else 15):
                raise self.fail("a number too long")
        text = self.text[start : self.at]
        if not decimal:
            return int(text)
        fraction = text.partition(".")[2]
        if not fraction or len(fraction) > 3:
            raise self.fail("a decimal needs one to three fractional digits")
        return Decimal(text)

    def string(self) -> str:
        """§4.2.5."""
        self.at += 1  # '"'
        out: list[str] = []
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if char == "\\":
                escaped = self.peek()
                if escaped not in ('"', "\\") or not escaped:
                    raise self.fail("a bad escape in a string")
                out.append(escaped)
                self.at += 1
            elif char == '"':
                return "".join(out)
            elif not " " <= char <= "~":
                raise self.fail("a control character in a string")
            else:
                out.append(char)
        raise self.fail("a string without its closing quote")

    def token(self) -> Token:
        """§4.2.6."""
        start = self.at
        self.at += 1
        while self.at < len(self.text) and self.text[self.at] in _TOKEN_CHARS:
            self.at += 1
        return Token(self.text[start : self.at])

    def byte_sequence(self) -> bytes:
        """§4.2.7."""
        end = self.text.find(":", self.at + 1)
        if end < 0:
            raise self.fail("a byte sequence without its closing ':'")
        content = self.text[self.at + 1 : end]
        if not set(content) <= _BASE64:
            raise self.fail("a byte sequence that is not base64")
        self.at = end + 1
        try:
            return b64decode(content + "=" * (-len(content) % 4))
        except (binascii.Error, ValueError):
            raise self.fail("a byte sequence that does not decode") from None

    def boolean(self) -> bool:
        """§4.2.8."""
        value = self.text[self.at + 1 : self.at + 2]
        if value not in ("0", "1"):
            raise self.fail("a boolean is ?0 or ?1")
        self.at += 2
        return value == "1"

    def display_string(self) -> DisplayString:
        """§4.2.10."""
        if self.text[self.at + 1 : self.at + 2] != '"':
            raise self.fail('a display string starts with %"')
        self.at += 2
        out = bytearray()
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if not " " <= char <= "~":
                raise self.fail("a control character in a display string")
            if char == "%":
                octet = self.text[self.at : self.at + 2]
                if len(octet) != 2 or not set(octet) <= _LOWER_HEX:
                    raise self.fail("a display string escape is %xx in lower-case hex")
                out.append(int(octet, 16))
                self.at += 2
            elif char == '"':
                try:
                    return DisplayString(out.decode("utf-8"))
                except UnicodeDecodeError:
                    raise self.fail("a display string that is not UTF-8") from None
            else:
                out.append(ord(char))
        raise self.fail("a display string without its closing quote")


class ParsedDictionary(NamedTuple):
    """A Dictionary's members, or None when it does not parse, and why."""

    members: dict[str, Member] | None
    problems: tuple[str, ...]


def parse_dictionary(field: str | bytes) -> ParsedDictionary:
    """RFC 9651 §4.2 parsing of a Dictionary field value; never raises.

    The value is bytes on the wire (vocab-08 §6.3): anything outside ASCII
    fails, as does any syntax error anywhere (the whole field, not one member).
    """
    if isinstance(field, bytes):
        if not field.isascii():
            return ParsedDictionary(None, ("not a structured field: bytes outside ASCII",))
        field = field.decode("ascii")
    elif not field.isascii():
        return ParsedDictionary(None, ("not a structured field: characters outside ASCII",))
    reader = _FieldParser(field)
    reader.skip(" ")
    try:
        members, repeated = reader.dictionary()
    except _FieldError as error:
        return ParsedDictionary(None, (f"not a structured-field dictionary: {error}",))
    except (ValueError, ArithmeticError) as error:  # defensive: int()/Decimal()
        return ParsedDictionary(None, (f"not a structured-field dictionary: {error}",))
    problems = tuple(f"{key!r} is repeated; the last value applies" for key in repeated)
    return ParsedDictionary(members, problems)
