"""Sphinx extension: the API reference holds every name of ``scrapy_rep.__all__``.

scrapy_rep imports most public names on first use (PEP 562 ``__getattr__``),
so they are not in ``dir(scrapy_rep)`` and autodoc would skip them silently:
load them all as module attributes before autodoc reads the module. A public
name without a docstring would be skipped too: warn (an error under ``-W``).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

import scrapy_rep

logger = logging.getLogger(__name__)


def _load_public_names(app: Sphinx) -> None:
    for name in scrapy_rep.__all__:
        value = getattr(scrapy_rep, name)
        setattr(scrapy_rep, name, value)
        if not (getattr(value, "__doc__", None) or "").strip():
            logger.warning("scrapy_rep.%s has no docstring: the API reference would omit it", name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _load_public_names)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
