"""The tools: everything a person runs, beside a crawl (docs/cli.md, docs/tester.md).

Its parts, in the order they may import each other (a part imports only the
parts before it; tests/test_layers.py):

- ``lint/``: what a webmaster should fix in a robots.txt (``scrapy-rep lint``),
  and the findings' one vocabulary;
- ``fetch/``: a robots.txt fetched outside a crawl (and what that fetch may
  reach), read from a file or standard input;
- ``check.py``: the verdict for each URL, with why (``scrapy-rep check``);
- ``store/``: what a crawl's store holds, read, scanned or forgotten by people;
- ``report/``: every origin a store keeps, its rows and its outputs;
- ``tester/``: the robots.txt Tester, a local page;
- ``demo/``: scrapy_rep at work on local sites;
- ``cli/``: the command lines, ``scrapy-rep`` and ``scrapy robots``.

Each sub-package's ``__init__.py`` says what it owns.
"""
