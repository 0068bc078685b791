"""Page: what a site says beyond fetching, once a page or robots.txt is in.

``usage_check`` (what robots.txt and the Content-Usage header let a page be
used for, docs/usage-preferences.md), ``page_rules`` (X-Robots-Tag and
robots meta tags), ``sitemaps`` (following the sitemaps robots.txt lists).
May import config/, access/, pace/ and the crawler's ground, never the face
(CONTRIBUTING.md).
"""
