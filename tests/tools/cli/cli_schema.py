"""Plain assertions that ``--json`` output has the documented shape.

The schemas are written in the docstrings of ``scrapy_rep.tools.cli.console`` (check) and
``scrapy_rep.tools.lint.lines`` (lint); these functions are those schemas as code.
"""

from __future__ import annotations

from typing import Any

from scrapy_rep.engine.site_wide import SITE_WIDE
from scrapy_rep.tools.lint.lines import SEVERITIES

CHECK_REASONS = {"rule", "no-rule", "no-group", "robots-txt", "unavailable"}
#: The lists each URL's object may have (``licenses``): a kind of line outside
#: any group shown beside the verdicts, by its entry in SITE_WIDE.
BESIDE_VERDICTS = {kind.values for kind in SITE_WIDE.values() if kind.about}


def assert_check_schema(data: Any) -> None:
    assert isinstance(data, list)
    for item in data:
        assert isinstance(item, dict)
        optional = {"usage", *BESIDE_VERDICTS}
        assert set(item) - optional == {"url", "allowed", "reason", "group", "rule"}
        for decision in item.get("usage", {}).values():  # with --purpose only
            assert decision["state"] in ("allowed", "denied", "unstated")
            assert all(set(by) == {"source", "line", "text", "global"} for by in decision["by"])
            assert all(isinstance(by["global"], bool) for by in decision["by"])
        for values in BESIDE_VERDICTS & set(item):  # only when robots.txt has such lines
            assert item[values] and all(isinstance(url, str) for url in item[values])
        assert isinstance(item["url"], str)
        assert isinstance(item["allowed"], bool)
        assert item["reason"] in CHECK_REASONS
        assert item["group"] is None or isinstance(item["group"], str)
        rule = item["rule"]
        if rule is None:
            assert item["reason"] != "rule"
        else:
            assert item["reason"] == "rule"
            assert set(rule) == {"kind", "pattern", "line"}
            assert rule["kind"] in ("allow", "disallow")
            assert item["allowed"] == (rule["kind"] == "allow")
            assert isinstance(rule["pattern"], str)
            assert type(rule["line"]) is int and rule["line"] >= 1


def assert_lint_schema(data: Any) -> None:
    assert isinstance(data, dict)
    assert set(data) == {"source", "status", "findings", "summary"}
    assert isinstance(data["source"], str)
    assert data["status"] is None or type(data["status"]) is int
    assert isinstance(data["findings"], list)
    lines = []
    for finding in data["findings"]:
        assert isinstance(finding, dict)
        assert set(finding) == {"line", "code", "severity", "message", "hint"}
        assert type(finding["line"]) is int and finding["line"] >= 1
        assert finding["code"] in SEVERITIES
        assert finding["severity"] == SEVERITIES[finding["code"]]
        assert isinstance(finding["message"], str) and finding["message"]
        assert isinstance(finding["hint"], str)
        lines.append(finding["line"])
    assert lines == sorted(lines)
    summary = data["summary"]
    # one count per kind of line outside any group, as the schema says: a new
    # kind (its entry in SITE_WIDE) needs no edit here
    outside = {kind.values for kind in SITE_WIDE.values()}
    assert {"sitemaps", "licenses"} <= outside
    assert set(summary) == {
        "errors",
        "warnings",
        "lines",
        "bytes",
        "truncated",
        "agents",
        "rules",
        *outside,
    }
    for key in ("errors", "warnings", "lines", "bytes", "rules", *sorted(outside)):
        assert type(summary[key]) is int and summary[key] >= 0, key
    assert isinstance(summary["truncated"], bool)
    assert isinstance(summary["agents"], list)
    assert all(isinstance(agent, str) for agent in summary["agents"])
    severities = [finding["severity"] for finding in data["findings"]]
    assert summary["errors"] == severities.count("error")
    assert summary["warnings"] == severities.count("warning")
