"""Sphinx configuration: MyST Markdown pages, autodoc of the public API, and
the settings reference generated from scrapy_rep.crawler.config.table.SETTINGS.

Build: python -m sphinx -W -b html docs OUT
"""

from __future__ import annotations

import sys
from importlib.metadata import version as installed_version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

from scrapy_inventory import SCRAPY_DOCS, write_inventory

project = "scrapy_rep"
author = "scrapy_rep developers"
copyright = "scrapy_rep developers"
release = installed_version("scrapy-rep")
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "rep_settings",
    "rep_api",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "snippets", "README.md"]

myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]

#: Links into Scrapy's documentation, from an inventory written here (offline).
intersphinx_mapping = {"scrapy": (SCRAPY_DOCS, write_inventory())}
intersphinx_disabled_reftypes = ["*"]  # only explicit inv: links go to Scrapy

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"show-inheritance": True}

html_theme = "sphinx_rtd_theme"
html_title = f"scrapy_rep {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
