"""Lint: what a webmaster should fix in a robots.txt (``scrapy-rep lint``,
the Tester's line classes; docs/cli.md).

Owns: ``lines`` (``lint(body)``: each line read as the engine reads it, then
the other two), ``groups`` (what the groups the grammar makes say),
``usage`` (``Content-Usage`` and ``Content-Signal`` lines) and ``finding``
(one finding, its severities and how it quotes the file: the vocabulary
``scrapy-rep lint``, the report and the Tester share). Pure: bytes in,
findings out.

May import the engine and the cache; no other part of the tools
(tools/__init__.py gives the order; tests/test_layers.py).
"""
