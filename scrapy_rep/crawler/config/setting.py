"""What the settings table (``table.py``) says of each setting: one row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Setting"]


@dataclass(frozen=True)
class Setting:
    """One setting scrapy_rep reads: ``Config`` validates it, the docs print it.

    The settings reference (docs/settings.md) is generated from ``SETTINGS``
    by ``docs/_ext/rep_settings.py``, so what is documented is what is read.
    """

    name: str
    #: The values it takes, in words.
    accepted: str
    #: What it does, in a sentence or two (``code`` in backquotes).
    doc: str
    #: The field it fills, of ``Config`` or of ``PolicyConfig`` (whose default
    #: it takes), and the parser that validates it. None for a setting read
    #: for an extension (``read_by``).
    attribute: str | None = None
    parse: Callable[[object], Any] | None = None
    #: The default in words, when the field's default does not say it.
    default: str | None = None
    #: A setting read instead when this one is unset (scrapy-redis's REDIS_URL).
    fallback: str | None = None
    #: The module that reads a setting ``Config`` does not (an extension's).
    read_by: str | None = None
