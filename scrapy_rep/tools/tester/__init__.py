"""The robots.txt Tester: a local page to edit, test and refetch what a crawl obeys.

``scrapy-rep tester`` (or ``scrapy robots --serve`` in a project) serves it.
Owns: ``server`` (the HTTP side), ``guard`` (what the server refuses before
any work), ``answers`` (what the engine and lint say, as data for the page),
``report_api`` (the report page's answers), ``project`` (the Tester of a
Scrapy project) and ``static/`` (the page's HTML, JavaScript and CSS).

May import the engine, the cache, the crawler's settings, and ``lint/``,
``fetch/``, ``check.py``, ``store/`` and ``report/`` (tools/__init__.py gives
the order; tests/test_layers.py). Nothing of the crawl imports this package.
"""
