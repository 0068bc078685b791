"""The command lines: ``scrapy-rep`` and ``scrapy robots`` (docs/cli.md).

Owns: ``console`` (the ``scrapy-rep`` console script: ``check``, ``lint``,
``cache show|forget``, ``tester``, ``demo``; ``scrapy-rep report`` is ``report``),
``options`` (what ``argparse`` is told, one builder per command) and
``scrapy_robots`` (``scrapy robots URL``, registered through the
``scrapy.commands`` entry point: Scrapy imports it on every ``scrapy`` call,
so it imports little until it runs).

May import everything: it is the tools' face (tools/__init__.py gives the
order; tests/test_layers.py). ``scrapy-rep`` itself imports no Scrapy until a
project is asked about.
"""
