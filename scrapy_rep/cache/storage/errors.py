"""Errors of the storage layer, importable without any backend's client."""

from __future__ import annotations

__all__ = ["StorageError", "StorageUnavailable"]


class StorageError(Exception):
    """A store cannot be opened or used as configured."""


class StorageUnavailable(StorageError):
    """The store's server cannot be reached (now); a fallback may take over."""
