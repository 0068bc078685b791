"""A crawl's store, as people read it: one origin shown or forgotten, every
record scanned, the store a project's crawls use (docs/cli.md, docs/tester.md).

Owns: ``view`` (``scrapy-rep cache show|forget``: a store named as the crawl
names it, opened for one thing and closed), ``scan`` (every record of a
store, as one iterator), ``project`` (the store a Scrapy project's settings
name) and ``answer`` (what that store keeps for one origin, for ``scrapy
robots URL``). A look never writes (``cache/storage/sqlite/once.py``).

May import the engine, the cache, the crawler's settings, ``lint/``,
``fetch/`` and ``check.py`` (tools/__init__.py gives the order;
tests/test_layers.py).
"""
