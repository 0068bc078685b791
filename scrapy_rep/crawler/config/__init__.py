"""Config: every setting scrapy_rep reads, read once at start-up.

``table`` is the schema (each setting's name, accepted values, default and
parser, by the reference's sections; the settings reference is generated
from it), ``setting`` the shape of one of its rows, ``defaults`` the floors,
defaults and choices it states, ``values`` the value parsers, ``settings``
the readers (``Config`` and the extensions' configs), ``unknown`` the
warning for a name of our prefixes that nothing reads.
Imports nothing else of the crawler: every other wing reads its settings
from here (CONTRIBUTING.md, "The map").
"""
