"""A spider whose output trains a generative AI model: it declares that purpose.

``REP_PURPOSES = ["train-ai"]`` makes scrapy_rep read what each site's
robots.txt says about that use (``Content-Usage`` and ``Content-Signal``
lines, draft-ietf-aipref-attach-05 and Cloudflare's Content Signals): a page
whose use for training is refused is never downloaded, even where crawling
it is allowed; a page whose ``Content-Usage`` response header refuses it is
dropped on arrival. Every page it does get carries ``response.meta
["rep_usage"]``, the preferences and the lines that stated them, which the
items keep as provenance.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Response

from rep_example.spiders.base import ExampleSpider


class TrainerSpider(ExampleSpider):
    name = "trainer"
    custom_settings = {"REP_PURPOSES": ["train-ai"]}  # noqa: RUF012 (Scrapy idiom)

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        usage = response.meta.get("rep_usage") or {}
        train_ai = usage.get("labels", {}).get("train-ai", {})
        yield {
            "spider": self.name,
            "url": response.url,
            "train_ai": train_ai.get("state", "unstated"),
            "stated_by": train_ai.get("by", []),  # provenance: source, line, text
        }
