"""What a page may be used for: AI usage preferences from robots.txt and HTTP.

A site may say, beside what may be fetched, what fetched content may be used
for. Two syntaxes are in use, and this package reads both into one answer per
usage category, each with the line that decided it:

- ``Content-Usage``, the IETF aipref working group's: the vocabulary of
  draft-ietf-aipref-vocab-08 (14 September 2026: labels such as ``train-ai``,
  values the tokens ``y`` and ``n``, written as an RFC 9651 Dictionary; the
  labels and keys read are ``vocabulary.WORDS``), attached by
  draft-ietf-aipref-attach-05 (August 2026) as an HTTP response header and as
  a path-scoped robots.txt rule;
- ``Content-Signal``, Cloudflare's Content Signals Policy (24 September 2025,
  contentsignals.org; the categories are also in the individual draft
  draft-romm-aipref-contentsignals-00): ``search``, ``ai-input`` and
  ``ai-train`` with ``yes``/``no`` on a robots.txt line.

Neither is an RFC; both vocabulary drafts say their text does not reflect
working-group consensus. docs/usage-preferences.md gives the sources, the
mapping table, the precedence rules and the proposed integration.

Pure, like the rest of the engine: strings in, answers out, nothing raises on
content. A statement that cannot be read states nothing, and says why in
``problems`` (for lint).

The package by job: ``structured_fields`` (the RFC 9651 reader),
``vocabulary`` (labels, keys and what one line or header states),
``preferences`` (answers, and combining them), ``matcher`` (robots.txt rules
matched by path), ``header`` (the HTTP header) and ``compare`` (what changed
between two versions of a group's lines). Import from here.
"""

from __future__ import annotations

from scrapy_rep.engine.usage.compare import UsageChange, usage_changes, usage_said
from scrapy_rep.engine.usage.header import HeaderUsage, header_usage
from scrapy_rep.engine.usage.matcher import UsageMatcher, compile_usage
from scrapy_rep.engine.usage.preferences import Preferences, UsageDecision, combine
from scrapy_rep.engine.usage.structured_fields import (
    Date,
    DisplayString,
    InnerList,
    Item,
    ParsedDictionary,
    Token,
    parse_dictionary,
)
from scrapy_rep.engine.usage.vocabulary import (
    ALLOWED,
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    DENIED,
    HEADER,
    LABELS,
    SIGNAL_KEYS,
    UNSTATED,
    VOCABULARY,
    Problem,
    UsageRule,
    read_rule,
    signal_statement,
    vocabulary_statement,
)

__all__ = [
    "ALLOWED",
    "CONTENT_SIGNAL",
    "CONTENT_USAGE",
    "DENIED",
    "HEADER",
    "LABELS",
    "SIGNAL_KEYS",
    "UNSTATED",
    "VOCABULARY",
    "Date",
    "DisplayString",
    "HeaderUsage",
    "InnerList",
    "Item",
    "ParsedDictionary",
    "Preferences",
    "Problem",
    "Token",
    "UsageChange",
    "UsageDecision",
    "UsageMatcher",
    "UsageRule",
    "combine",
    "compile_usage",
    "header_usage",
    "parse_dictionary",
    "read_rule",
    "signal_statement",
    "usage_changes",
    "usage_said",
    "vocabulary_statement",
]
