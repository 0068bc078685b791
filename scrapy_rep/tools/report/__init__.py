"""The report of a whole store: every origin it keeps, with its state now
(docs/cli.md, "scrapy-rep report"; docs/tester.md, "The report page").

Owns: ``rows`` (a row per record, filtered, counted and sorted within bounded
memory) and ``output`` (text, CSV, JSON Lines, the summary); ``changed``
and ``changed_output``, the same for ``--changed`` (what changed for the
crawler between an origin's robots.txt versions, docs/versions.md). The
command line around them is ``cli/report.py`` (``cli/report_changed.py``);
the Tester's page is ``tester/report_api.py``.

May import the engine, the cache, ``lint/``, ``fetch/``, ``check.py`` and
``store/`` (tools/__init__.py gives the order; tests/test_layers.py).
"""
