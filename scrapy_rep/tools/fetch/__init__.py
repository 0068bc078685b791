"""A robots.txt fetched outside a crawl, with the crawl's rules (docs/spec.md §2,
§4.3; docs/tester.md, "Safety").

Owns: ``live`` (the one standard-library fetch of the tools: redirects, the
size cap, one deadline), ``guard`` (what a live fetch may reach, hop by hop)
and ``source`` (the robots.txt a command is given: a file, standard input or
a URL fetched by ``live``).

May import the engine, the cache and ``lint/`` (tools/__init__.py gives the
order; tests/test_layers.py).
"""
