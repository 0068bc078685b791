"""atheris fuzz target: parsing and checking never raise, and agree with explain.

Run alone:  python tests/fuzz/fuzz_engine.py -max_total_time=60
The test suite runs it for a few seconds (tests/fuzz/test_fuzz.py).
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from scrapy_rep import RobotsTxt


def one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    quirks = provider.ConsumeBool()
    url = provider.ConsumeUnicodeNoSurrogates(64)
    agent = provider.ConsumeUnicodeNoSurrogates(16)
    body = provider.ConsumeBytes(provider.remaining_bytes())
    robots = RobotsTxt.parse(body, google_quirks=quirks)
    verdict = robots.explain(url, agent)
    if robots.allowed(url, agent) is not verdict.allowed:
        raise AssertionError(f"allowed() and explain() disagree on {url!r} for {agent!r}")
    if verdict.rule is not None and verdict.allowed is not (verdict.rule.kind == "allow"):
        raise AssertionError(f"verdict {verdict} contradicts its rule")
    for sitemap in robots.sitemaps:
        if "://" not in sitemap:
            raise AssertionError(f"relative sitemap surfaced: {sitemap!r}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
