"""What the Tester's ``/api/test`` answers in the cases a page meets less
often (docs/tester.md): a site closed or without rules, for several URLs and
agents at once; rows without usage purposes; the diff of a long file whose
lines repeat. A real Tester on 127.0.0.1, called as the page calls it.
"""

from __future__ import annotations

from collections.abc import Callable

from .conftest import Running

FORBIDS = "User-agent: *\nDisallow: /\n"


def test_a_closed_site_gives_one_disallowed_row_per_url_and_agent(
    start_tester: Callable[..., Running],
) -> None:
    """docs/spec.md §2.2: during an outage every request is dropped, whatever
    the text in the editor says; one row each, as for a site that answered."""
    tester = start_tester()
    ask = {"robots": "User-agent: *\nAllow: /\n", "urls": ["/a", "/b"], "agents": ["x", "y"],
           "access": "closed", "access_reason": "HTTP 503"}  # fmt: skip
    status, answer = tester.call("/api/test", ask)
    assert status == 200
    assert [(r["agent"], r["url"], r["verdict"], r["reason"]) for r in answer["rows"]] == [
        ("x", "/a", "disallowed", "HTTP 503"),
        ("x", "/b", "disallowed", "HTTP 503"),
        ("y", "/a", "disallowed", "HTTP 503"),
        ("y", "/b", "disallowed", "HTTP 503"),
    ]
    assert all(r["rule"] is None and r["line"] is None for r in answer["rows"])


def test_a_site_without_rules_allows_everything_whatever_the_text_says(
    start_tester: Callable[..., Running],
) -> None:
    """docs/spec.md §2: a 4xx (here with no reason given) is allow-all:
    the body, an error page, is no robots.txt."""
    tester = start_tester()
    for reason in ("", "HTTP 404"):
        ask = {"robots": FORBIDS, "urls": ["/a"], "agents": ["x"], "access": "allow-all",
               "access_reason": reason}  # fmt: skip
        _, answer = tester.call("/api/test", ask)
        (row,) = answer["rows"]
        assert (row["verdict"], row["reason"], row["rule"]) == ("allowed", reason, None)
    _, answer = tester.call("/api/test", {"robots": FORBIDS, "urls": ["/a"], "agents": ["x"]})
    assert answer["rows"][0]["verdict"] == "disallowed"  # the same text, read as rules


def test_rows_without_purposes_state_no_usage(start_tester: Callable[..., Running]) -> None:
    tester = start_tester()
    text = "User-agent: *\nContent-Usage: train-ai=n\nAllow: /\n"
    _, answer = tester.call("/api/test", {"robots": text, "urls": ["/a"], "agents": ["x"]})
    assert answer["rows"][0]["usage"] == {}
    ask = {"robots": text, "urls": ["/a"], "agents": ["x"], "purposes": ["train-ai"]}
    _, answer = tester.call("/api/test", ask)
    assert answer["rows"][0]["usage"]["train-ai"]["state"] == "denied"


def test_the_diff_of_a_long_file_of_repeated_lines_shows_only_the_line_added(
    start_tester: Callable[..., Running],
) -> None:
    """A file of 150 groups of the same lines (a generated robots.txt): one
    line added at the top is one "+" line, not the whole file replaced (the
    standard library's heuristic for long inputs drops lines that repeat)."""
    tester = start_tester()
    before = "User-agent: *\n" + "Disallow: /x\n\n" * 150
    after = "User-agent: *\nSitemap: https://shop.example/s.xml\n" + "Disallow: /x\n\n" * 150
    _, answer = tester.call("/api/test", {"robots": after, "compare": before, "urls": []})
    changed = [(d["op"], d["text"]) for d in answer["diff"] if d["op"] in "+-@"]
    assert changed == [
        ("@", "@@ -1,4 +1,5 @@"),
        ("+", "Sitemap: https://shop.example/s.xml"),
    ]
