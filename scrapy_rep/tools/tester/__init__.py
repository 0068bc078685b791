"""The robots.txt Tester: a local page to edit, test and refetch what a crawl obeys.

``scrapy-rep tester`` (or ``scrapy robots --serve`` in a project) serves it:
``server`` runs aiohttp's web server on a loop of its own, ``app`` holds the
routes and the Tester's own checks (with ``guard``), ``calls`` the API's
answers, ``answers`` what the engine and lint say, and ``static/`` the page's
HTML, JavaScript and CSS. Nothing of the crawl imports this package.
"""
