"""The report of a whole store: every origin it keeps, with its state now
(docs/cli.md, "scrapy-rep report"; docs/tester.md, "The report page").

Owns: ``rows`` (a row per record, filtered, counted and sorted within bounded
memory) and ``output`` (text, CSV, JSON Lines, the summary). The command
line around them is ``cli/report.py``; the Tester's page is
``tester/report_api.py``.

May import the engine, the cache, ``lint/``, ``fetch/``, ``check.py`` and
``store/`` (tools/__init__.py gives the order; tests/test_layers.py).
"""
