"""The robots.txt Tester: a local page to edit, test and refetch what a crawl obeys.

``scrapy-rep tester`` (or ``scrapy robots --serve`` in a project) serves it.
Owns: ``server`` (aiohttp's web server on a loop of its own, the bound on
connections), ``room`` (the open-files limit), ``app`` (the routes and the
Tester's own checks, with ``guard``: what is refused before any work),
``calls`` (the API's answers), ``answers`` (what the engine and lint say, as
data for the page), ``report_api`` (the report page's answers),
``versions_api`` (an origin's robots.txt versions and what changed), ``project``
(the Tester of a Scrapy project) and ``static/`` (the page's HTML,
JavaScript and CSS).

May import the engine, the cache, the crawler's settings, and ``lint/``,
``fetch/``, ``check.py``, ``store/`` and ``report/`` (tools/__init__.py gives
the order; tests/test_layers.py). Nothing of the crawl imports this package.
"""
