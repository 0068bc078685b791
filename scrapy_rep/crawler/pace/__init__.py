"""Pace: how fast an origin's pages go (docs/crawl-delay.md, docs/politeness.md).

``crawl_delay`` (the extension: which delay robots.txt asks of an origin),
``turns`` (one pace per origin for every process: turns and Retry-After
pauses), ``turn_store`` (where the turns come from: the store, or this
process alone), ``seat`` (a waiting request's place in CONCURRENT_REQUESTS).
The pure rules are ``cache/pace.py``. May import config/, access/ and the
crawler's ground, never page/ or the face (CONTRIBUTING.md).
"""
