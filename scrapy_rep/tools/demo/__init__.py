"""The demo: scrapy_rep at work on local sites, no internet needed (docs/demo.md).

Owns: ``run`` (``python -m scrapy_rep.tools.demo``, ``scrapy-rep demo``: the
example project's spiders crawled against every site, what happened
printed), ``sites`` (one origin on 127.0.0.1 per behaviour) and ``record``
(what the crawl did, from its signals), and ``demo_project/`` in a wheel
(the example project, pyproject.toml's force-include).

May import the engine, the cache, the crawler and every part of the tools
before it (tools/__init__.py gives the order; tests/test_layers.py). Nothing
of a crawl imports it.
"""
