"""Errors of the storage layer, importable without any backend's client."""

from __future__ import annotations

import logging

__all__ = ["StorageError", "StorageUnavailable", "UnreadableRecord", "UnreadableRecords"]

logger = logging.getLogger("scrapy_rep.cache.storage")


class StorageError(Exception):
    """A store cannot be opened or used as configured."""


class StorageUnavailable(StorageError):
    """The store's server cannot be reached (now); a fallback may take over."""


class UnreadableRecord(StorageError):
    """A person's look at one record found a value that is not one (a
    crawl treats it as absent): ``scrapy-rep cache show``, the Tester."""


class UnreadableRecords:
    """Says once per store that it holds records this version cannot trust
    (tampered, foreign, or another version's): they count as absent."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.warned = False

    def seen(self, key: str, error: Exception) -> None:
        if not self.warned:
            self.warned = True
            logger.warning(
                "Ignoring an unreadable cached record for %s in %s (%s); records like it "
                "are treated as absent and fetched again",
                key,
                self.where,
                error,
            )
