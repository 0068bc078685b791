"""Issue 23 §6: the documented by-hand setup (docs/snippets/by_hand_settings.py,
which the docs include) is exactly what ``scrapy_rep.Addon`` does: the same
settings, so the same components run, in the same order."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import BaseSettings
from scrapy.utils.conf import build_component_list
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.addon import DIRECTIVES_MIDDLEWARE, DIRECTIVES_PRIORITY

SNIPPET = Path(__file__).resolve().parents[2] / "docs" / "snippets" / "by_hand_settings.py"
COMPONENTS = ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "EXTENSIONS")


def by_hand() -> dict[str, Any]:
    """The settings the snippet defines (its upper-case names)."""
    return {k: v for k, v in runpy.run_path(str(SNIPPET)).items() if k.isupper()}


def effective(settings: BaseSettings) -> dict[str, Any]:
    """Every setting as the crawl reads it, components as the ordered list
    Scrapy builds from them (base included), ADDONS left out."""
    values = {k: v for k, v in settings.copy_to_dict().items() if k != "ADDONS"}
    for name in COMPONENTS:
        values[name] = build_component_list(settings.getwithbase(name))
    return values


@pytest.mark.parametrize("directives", [False, True], ids=["plain", "REP_PAGE_DIRECTIVES"])
def test_scrapy_by_hand_setup_is_what_the_addon_does(directives: bool) -> None:
    project = {"ROBOTSTXT_OBEY": True, "REP_PAGE_DIRECTIVES": directives}
    with_addon = get_crawler(settings_dict={**project, "ADDONS": {"scrapy_rep.Addon": 0}})
    hand = by_hand()
    if directives:  # the snippet's comment says what to add then
        line = f'# "{DIRECTIVES_MIDDLEWARE}": {DIRECTIVES_PRIORITY},'
        assert line in SNIPPET.read_text()
        hand["SPIDER_MIDDLEWARES"] = {
            **hand["SPIDER_MIDDLEWARES"],
            DIRECTIVES_MIDDLEWARE: DIRECTIVES_PRIORITY,
        }
    by_hand_crawler = get_crawler(settings_dict={**project, **hand})
    assert effective(by_hand_crawler.settings) == effective(with_addon.settings)


def test_scrapy_by_hand_setup_names_every_component_the_addon_adds() -> None:
    """Without anything of ours, the add-on's own changes: all in the snippet."""
    plain = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    with_addon = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_rep.Addon": 0}}
    )
    hand = by_hand()
    for name in COMPONENTS:
        added = {
            path: priority
            for path, priority in with_addon.settings.getdict(name).items()
            if plain.settings.getdict(name).get(path, "absent") != priority
        }
        assert added == hand[name], name
