"""Which group real crawler User-Agent strings get: scrapy_rep beside Protego.

The workload is the public list of crawler User-Agent patterns with real
strings (github.com/monperrus/crawler-user-agents, MIT), passed by path. For
each entry a site's name for the crawler is derived from its pattern (below);
for each of its strings that names the crawler as a word, a robots.txt with a
group for that name (``Disallow: /``) and a ``*`` group (``Allow: /``) is
asked about a page: the crawler's group is found when the page is refused.

Then ordinary browser strings (tests/data/user-agents/browsers.txt) are
asked against groups named after browser words (``Mozilla``, ``Chrome``, ...):
a browser never is a crawler, so such a group must never apply.

    .venv/bin/python benchmarks/user_agents.py ../shared/user-agents/crawler-user-agents.json
    .venv/bin/python benchmarks/user_agents.py LIST --subset tests/data/user-agents/crawlers.tsv

How a site's name is derived from a pattern (a regular expression written
for spotting the crawler in logs): anchors and ``(^| )`` go; a group of
alternatives or a top-level ``|`` keeps its first alternative; a character
class keeps its first character; the pattern is cut at ``[\\s\\S]*``, ``\\d``
and any other remaining operator; escapes are undone; leading spaces and
``;`` go. The name a site writes is then the pattern's leading letters,
``-`` and ``_`` (RFC 9309 §2.2.1 reads a ``User-agent`` line so). Left out,
and counted: entries whose pattern starts with a digit (a site cannot name
``360Spider``: RFC 9309 reads that line as no token), strings that do not
contain the name as a word outside URLs and e-mail addresses (the name is
part of a longer word, ``Slackbot`` in ``Slackbot-LinkExpanding``, or not
there at all), and entries without strings.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from protego import Protego  # noqa: E402

from scrapy_rep import RobotsTxt  # noqa: E402

BROWSERS = ROOT / "tests" / "data" / "user-agents" / "browsers.txt"
#: Groups named after what browsers write: never a crawler's group.
BROWSER_GROUPS = (
    "Mozilla", "Chrome", "Safari", "AppleWebKit", "Gecko", "Firefox", "Edge", "Opera",
    "KHTML", "Mobile", "Android", "Windows", "Linux", "iPhone", "Macintosh", "Version",
)  # fmt: skip
PAGE = "https://example.com/page"
_ADDRESS_WORD = re.compile(r"\S*(?:://|@|www\.)\S*", re.IGNORECASE)


def site_name(pattern: str) -> str:
    """The token a site writes for the crawler a pattern spots ("" when none)."""
    p = re.sub(r"\(\^\| \)|^\^|\$$", "", pattern)
    p = re.sub(r"\(\[\^[^\]]*\]\|\$\)", "", p)
    p = re.sub(r"\(([^|()]*)\|[^()]*\)", r"\1", p)
    p = re.sub(r"\[\\?(.)[^\]]*\]", r"\1", p)
    p = re.split(r"\\[dswSDW]|[*+?{(\[]", p, maxsplit=1)[0]
    p = re.sub(r"\\(.)", r"\1", p).split("|", 1)[0].lstrip(" ;")
    match = re.match(r"[A-Za-z_-]+", p)
    return match.group(0) if match else ""


def names_as_word(user_agent: str, name: str) -> bool:
    """``name`` is a whole word of the string, outside URLs and e-mail addresses."""
    text = _ADDRESS_WORD.sub(" ", user_agent).lower()
    return name.lower() in re.findall(r"[a-z_-]+", text)


def workload(path: Path) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """(site name, User-Agent string) pairs, and what was left out and why."""
    pairs: list[tuple[str, str]] = []
    left = {"no strings": 0, "name starts with a digit": 0, "name not a word of the string": 0}
    for entry in json.loads(path.read_text(encoding="utf-8")):
        name = site_name(entry["pattern"])
        instances = entry.get("instances") or []
        if not instances:
            left["no strings"] += 1
        elif not name:
            left["name starts with a digit"] += len(instances)
        for user_agent in instances if name else ():
            if names_as_word(user_agent, name):
                pairs.append((name, user_agent))
            else:
                left["name not a word of the string"] += 1
    return pairs, left


def robots_for(name: str) -> str:
    return f"User-agent: {name}\nDisallow: /\n\nUser-agent: *\nAllow: /\n"


def found_by_rep(name: str, user_agent: str) -> bool:
    return not RobotsTxt.parse(robots_for(name)).allowed(PAGE, user_agent)


def found_by_protego(name: str, user_agent: str) -> bool:
    return not Protego.parse(robots_for(name)).can_fetch(PAGE, user_agent)


def browsers() -> list[str]:
    lines = BROWSERS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def browser_matches(found: object) -> Iterator[tuple[str, str]]:
    """(group, browser string) where a browser-named group applied to a browser."""
    for user_agent in browsers():
        for group in BROWSER_GROUPS:
            if found(group, user_agent):  # type: ignore[operator]
                yield group, user_agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("list", type=Path, help="crawler-user-agents.json")
    parser.add_argument("--subset", type=Path, help="write every 8th pair here (TSV)")
    parser.add_argument("--misses", action="store_true", help="print scrapy_rep's misses")
    args = parser.parse_args()
    pairs, left = workload(args.list)
    print(f"{len(pairs)} strings name their crawler as a word; left out: {left}")
    for label, found in (("scrapy_rep", found_by_rep), ("Protego", found_by_protego)):
        hits = [pair for pair in pairs if found(*pair)]
        wrong = list(browser_matches(found))
        tries = len(browsers()) * len(BROWSER_GROUPS)
        print(
            f"{label:<10}  crawler's group found {len(hits)}/{len(pairs)} "
            f"({100 * len(hits) / len(pairs):.1f}%);  browser-named group applied to a "
            f"browser {len(wrong)}/{tries}"
        )
        if args.misses and label == "scrapy_rep":
            for name, user_agent in pairs:
                if not found(name, user_agent):
                    print(f"    miss  {name:<24} {user_agent}")
    if args.subset:
        rows = [f"{name}\t{user_agent}" for name, user_agent in pairs[::8]]
        args.subset.write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"wrote {len(rows)} pairs to {args.subset}")


if __name__ == "__main__":
    main()
