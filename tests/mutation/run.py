"""A mutation run over the core rooms: how many small changes to the code the fast tests catch.

    .venv/bin/python tests/mutation/run.py                  # every room in scope
    .venv/bin/python tests/mutation/run.py --room engine/agents.py --survivors

Each mutant is one small change to the syntax tree of one module (a room): a
comparison flipped at its edge (``<`` to ``<=``, ``is`` to ``is not``, ...),
``and`` and ``or`` swapped, a ``not`` dropped, a number changed (an int by
+1, a float x10), ``True`` and ``False`` swapped, an arithmetic operator
swapped, ``min`` and ``max`` swapped, a returned value replaced by ``None``,
a statement deleted (a call, an assignment to an attribute, an item or a name
already bound, a guard ``if`` that returns, ``continue``, ``break``). Nothing
is written to the working tree: the room's tests run in a process forked from
this one, where an import hook hands out the mutated source instead of the
file's. The tests stop at the first failure (``-x``); the mutant is killed if
they fail (a crash on import, or a run past the time limit, counts as
killed) and survives if they pass.

Mutants that change nothing anyone could observe are listed, each with its
reason, in ``tests/mutation/equivalent.txt``; the score of a room is its killed
mutants over its non-equivalent ones. The last run's results are kept in
``build/mutation/report.json`` (``--survivors`` reruns only the mutants that
survived there) and each mutant's test output in ``build/mutation/logs/``.

Docstrings, annotations, ``assert``, imports, ``__slots__``, ``__all__``,
type aliases, f-strings and the arguments of log calls and of ``raise`` are
not mutated; strings are not either.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
EQUIVALENT = Path(__file__).resolve().parent / "equivalent.txt"
BUILD = ROOT / "build" / "mutation"
#: Below this share of non-equivalent mutants killed, a room fails the run.
TARGET = 0.90

#: The engine's fast tests, table-driven, the edges first.
ENGINE_TESTS = (
    "tests/engine/test_spec_edges.py",
    "tests/engine/test_spec_engine.py",
    "tests/engine/test_user_agent.py",
    "tests/engine/test_conformance.py",
    "tests/engine/test_peers.py",
    "tests/engine/test_differential.py",
    "tests/engine/test_compiled_group.py",
)
#: The policy's and the lifecycle's, on a hand-moved clock (no reactor, no I/O).
CACHE_TESTS = (
    "tests/cache/test_policy_edges.py",
    "tests/cache/storage/test_storage_policy.py",
    "tests/cache/test_policy_header_values.py",
    "tests/cache/test_lifecycle.py",
    "tests/cache/test_lifecycle_edges.py",
    "tests/cache/test_tampered_records.py::test_storage_tampered_record_is_refused",
    "tests/cache/test_tampered_records.py::"
    "test_storage_loaded_expiry_capped_at_fetch_time_plus_the_longest_life",
    "tests/cache/test_record_consistency.py::"
    "test_storage_record_whose_times_do_not_fit_together_is_refused",
    "tests/cache/test_record_consistency.py::"
    "test_storage_loaded_retry_no_further_than_the_longest_back_off",
    "tests/cache/test_record_consistency.py::test_storage_loaded_site_answer_from_the_future_is_absent",
)


#: The pace's pure steps on a clock given as an argument, then the stores that run them.
PACE_TESTS = ("tests/cache/test_pace_edges.py", "tests/cache/storage/test_storage_pace.py")
_API = "tests/tools/tester/test_tester_api.py::"
_SECURITY = "tests/tools/tester/test_tester_security.py::"
#: The Tester's server (server, app, calls) and its request guard: a real server
#: on 127.0.0.1 driven over HTTP and raw sockets. Not the browser tests (slow),
#: nor those that start the Tester in another process (which never imports the mutant).
TESTER_TESTS = (
    "tests/tools/tester/test_tester_guard.py",
    "tests/tools/tester/test_tester_server.py",
    "tests/tools/tester/test_tester_connections.py",
    "tests/tools/tester/test_tester_terminal.py",
    "tests/tools/tester/test_tester_workers.py",
    *(
        _SECURITY + name
        for name in (
            "test_a_rebound_name_is_refused_on_every_bind_address",
            "test_names_given_to_allow_host_are_answered_and_no_others",
            "test_a_body_without_a_valid_length_is_refused_before_it_is_read",
            "test_a_chunked_body_is_read_within_the_cap",
            "test_the_live_call_asks_for_the_origins_robots_txt_whatever_url_it_is_given",
            "test_idle_and_slow_connections_time_out",
            "test_connections_at_once_are_bounded",
            "test_a_client_that_does_not_read_its_answer_is_let_go",
        )
    ),
    "tests/tools/tester/test_tester_hostile.py::"
    "test_a_test_of_more_rows_than_the_cap_is_refused_with_413_before_any_work",
    *(
        "tests/tools/tester/test_report_api.py::" + name
        for name in (
            "test_the_report_lists_every_origin_with_its_state_and_counts",
            "test_deep_reads_the_stored_files_when_asked_or_a_flag_needs_them",
            "test_refetch_of_a_filter_forgets_its_origins_and_no_others",
        )
    ),
    *(
        _API + name
        for name in (
            "test_every_call_needs_the_runs_token",
            "test_forget_wants_json_and_another_host_is_refused",
            "test_page_is_served_with_a_strict_policy_and_nothing_from_elsewhere",
            "test_every_static_file_is_served_and_the_icon_too",
            "test_a_link_as_long_as_the_limit_opens_and_a_longer_one_is_refused",
            "test_answers_are_the_engines_row_for_row",
            "test_a_lines_class_is_the_worst_of_lints_findings_on_it",
            "test_an_empty_page_reports_no_findings",
            "test_unavailable_and_unreachable_sources_answer_as_the_crawl",
            "test_diff_between_the_compared_file_and_the_edit",
            "test_diff_hunks_carry_their_line_counts_as_diff_u_does",
            "test_live_fetch_shows_status_headers_and_follows_the_crawls_rules",
            "test_live_fetch_is_http_only",
            "test_stored_source_without_a_store_says_so",
            "test_stored_answer_reads_what_the_store_keeps",
            "test_stored_from_a_missing_store_file_says_so",
            "test_usage_says_which_lines_it_came_from",
            "test_licenses_are_shown_and_the_line_is_valid",
        )
    ),
)


# --- the shell: crawler/ and tools/ ---------------------------------------------------
#
# Real crawls against servers on 127.0.0.1, seconds each: each room runs the
# crawls that go through it, the quickest and most telling first (``-x``
# stops a killed mutant at its first failure). Every server takes a free
# port and every file is under the test's own tmp_path, so ``--jobs N`` runs
# N mutants at once; a room marked ``alone`` runs one at a time whatever
# ``--jobs`` says (its tests bind many loopback addresses to one port,
# tests/many_hosts.py: two at once could take each other's).

_EXTRAS = "tests/crawler/extras/"
#: Crawl-delay, Retry-After and a stop while pages wait: the pace's crawls,
#: the quickest first (about 2 s each), the whole of test_retry_after.py last.
_DELAY = _EXTRAS + "test_crawl_delay.py::test_scrapy_"
_GAPS = _EXTRAS + "test_pace_gaps.py::test_crawl_delay_holds_from_the_first_page_when_turns_wait"
TURNS_TESTS = (
    _EXTRAS + "test_pace_alone.py",
    _DELAY + "request_rate_paces_its_origin",
    _EXTRAS + "test_pace_workers.py",
    _GAPS + "_for_a_place[memory-1-1]",
    _DELAY + "crawl_delay_and_request_rate_in_one_group_the_slower_paces",
    _DELAY + "crawl_delay_pages_asked_while_the_slot_is_busy_or_after_the_delay",
    _EXTRAS + "test_pace_stop.py",
    _DELAY + "request_rate_obeyed_is_said_with_its_value_and_waits_summed",
    _DELAY + "crawl_delay_reapplied_when_robots_txt_is_refreshed",
    _DELAY + "retry_after_pauses_the_origin",
    _DELAY + "crawl_delay_86400_is_clamped_and_logged",
    _GAPS + "_for_a_place[memory-3-2]",
    _EXTRAS + "test_retry_after.py",
)
#: The crawl-delay extension: what it counts and warns of, settings first
#: (no crawl), then a crawl per case (2-6 s each).
CRAWL_DELAY_TESTS = (
    _EXTRAS + "test_crawl_delay_counted.py",
    *(
        _DELAY + name
        for name in (
            "crawl_delay_ignored_by_default",
            "crawl_delay_without_robotstxt_obey_warns",
            "crawl_delay_clamp",
            "crawl_delay_of_the_spiders_own_group",
            "request_rate_paces_its_origin",
            "crawl_delay_reapplied_when_robots_txt_is_refreshed",
            "crawl_delay_86400_is_clamped_and_logged",
            "crawl_delay_never_lowers_a_larger_download_delay",
        )
    ),
)
#: The face: what a crawl sees of the downloader middleware, requests that
#: come over the crawl (an outage's retry started before the scheduler) first;
#: its one crawl-delay test (6 s) last.
MIDDLEWARE_TESTS = (
    "tests/crawler/test_early.py",
    "tests/cache/test_arrivals.py",
    "tests/crawler/test_face_edges.py",
    "tests/crawler/test_robots_url_with_query.py",
    "tests/cache/test_spider_robots_learned.py",
    "tests/crawler/test_middleware.py",
    "tests/crawler/test_origins.py",
    "tests/cache/test_cache_spider_robots.py",
    "tests/crawler/test_fail_closed.py",
    "tests/crawler/test_usage.py",
    "tests/crawler/test_status.py",
    "tests/crawler/test_stops.py",
    "tests/cache/test_cache_crawls.py",
    _EXTRAS + "test_crawl_delay.py::test_scrapy_crawl_delay_slows_its_origin_and_no_other",
)
#: The spider middleware: requests dropped before the scheduler (their
#: errbacks' outputs, those Scrapy's offsite filter lets through), robots.txt
#: fetched early, page rules, usage.
SPIDER_MIDDLEWARE_TESTS = (
    "tests/crawler/test_early.py",
    "tests/crawler/test_early_errbacks.py",
    "tests/crawler/test_early_offsite.py",
    "tests/cache/test_arrivals.py",
    "tests/crawler/test_page_directives.py",
    "tests/crawler/test_usage.py",
    "tests/crawler/test_startup.py",
)
#: How a request's origin is resolved: the fetch it waits for, shared or not,
#: the resolver on its own first, then the crawls that go through it.
RESOLVER_TESTS = (
    "tests/cache/test_cache_resolver.py",
    "tests/cache/test_cache_resolver_bounds.py",
    "tests/crawler/test_resolver.py",
    "tests/cache/test_arrivals.py",
    "tests/cache/test_arrivals_resolved.py",
    "tests/cache/test_cache_crawls.py",
    "tests/cache/test_cache_spider_robots.py",
    "tests/cache/test_spider_robots_learned.py",
    "tests/crawler/test_face_edges.py",
    "tests/crawler/test_proxies.py",
    "tests/crawler/test_early.py",
    "tests/crawler/test_fail_closed.py",
    "tests/crawler/test_origins.py",
    "tests/crawler/test_middleware.py",
    "tests/cache/test_forget_watch.py",
    "tests/cache/test_forget_watch_said.py",
    "tests/cache/test_forget_watch_threaded.py",
    "tests/cache/test_forget_watch_without_asyncio.py",
    "tests/crawler/test_gauges.py",
)
#: ``scrapy-rep report``: its rows, filters and sorts, then the command.
REPORT_TESTS = ("tests/tools/cli/test_cli_report.py",)
_TESTER = "tests/tools/tester/"
#: ``scrapy-rep cache show`` / ``forget`` on every store, line by line, then the
#: Tester's looks and Refetches through it (a real Tester, no crawl) and the
#: damaged records it names.
STORE_COMMAND_TESTS = (
    _TESTER + "test_cache_command_output.py",
    _TESTER + "test_report_api.py::test_refetch_of_a_filter_forgets_its_origins_and_no_others",
    _TESTER + "test_report_api.py::test_refetch_and_show_stored_on_redis_close_their_connections",
    _TESTER + "test_cache_command.py",
    _TESTER + "test_cache_command_safety.py",
    _TESTER + "test_store_damage.py::test_every_redis_type_under_the_prefix_is_counted_and_named",
)
_VERDICT = _TESTER + "test_tester_verdict.py::"
#: The Tester's answers through its API (a real Tester on 127.0.0.1), then
#: the pure tests of what the page shows beside a URL and a line.
ANSWERS_TESTS = (
    _TESTER + "test_tester_answers.py",
    *(
        _API + name
        for name in (
            "test_answers_are_the_engines_row_for_row",
            "test_a_lines_class_is_the_worst_of_lints_findings_on_it",
            "test_an_empty_page_reports_no_findings",
            "test_unavailable_and_unreachable_sources_answer_as_the_crawl",
            "test_diff_between_the_compared_file_and_the_edit",
            "test_diff_hunks_carry_their_line_counts_as_diff_u_does",
            "test_usage_says_which_lines_it_came_from",
            "test_licenses_are_shown_and_the_line_is_valid",
        )
    ),
    _VERDICT + "test_scrapy_a_url_that_reads_as_another_path_or_host_is_flagged",
    _VERDICT + "test_scrapy_pacing_and_sitemap_lines_are_explained_where_they_stand",
)
#: The Tester's report API: each filter, sort and Refetch on a store filled
#: as a crawl fills it (a real Tester, no crawl: seconds), then the crawls
#: it reports on (45 s a run, for what the first ones leave alive).
_REPORT_PAGE = _TESTER + "test_report_page.py::"
REPORT_API_TESTS = (
    _TESTER + "test_report_api.py",
    *(
        _REPORT_PAGE + name
        for name in (
            "test_report_api_needs_the_token_and_the_count_the_page_showed",
            "test_report_api_refetches_at_most_max_refetch_origins_at_once",
            "test_report_command_agrees_with_what_the_sites_did",
            "test_gauges_of_the_last_crawl_agree_with_the_report",
        )
    ),
)
#: A REP_REDIS_URL's forms, parsed and shown in messages.
REDIS_URL_TESTS = (
    "tests/cache/storage/test_storage_redis_urls.py",
    "tests/tools/tester/test_cache_command.py::test_cache_command_names_a_missing_store_and_a_bad_url",
)

#: A flight's steps (one per origin, shared through the store, its load, fetch,
#: retry and save): the resolver driven on its own, with a real store and a
#: hand-moved clock (seconds), then the crawls through it.
ACCESS_TESTS = (
    "tests/cache/test_cache_resolver.py",
    "tests/cache/test_resolver_flights.py",
    "tests/cache/test_resolver_quick_retry.py",
    "tests/cache/test_resolver_store_failures.py",
    "tests/cache/test_resolver_page_marks.py",
    "tests/cache/test_cache_resolver_bounds.py",
    "tests/cache/test_finished_flights_are_not_kept.py",
    "tests/cache/test_forget_watch.py",
    "tests/cache/test_forget_watch_said.py",
    "tests/cache/test_forget_watch_threaded.py",
    "tests/cache/test_forget_watch_without_asyncio.py",
    "tests/cache/test_cache_dead_fetcher.py",
    "tests/crawler/test_resolver.py",
    "tests/cache/test_arrivals.py",
)

#: A request waiting for its origin's robots.txt: the one Scrapy's
#: robots_parsed names, its place in CONCURRENT_REQUESTS (parked or holding
#: one), a stop while it waits, then the crawls through the resolver.
WAITING_TESTS = (
    "tests/crawler/test_robots_parsed_request.py",
    "tests/crawler/test_waves.py",
    "tests/crawler/test_waves_next_origin_gets_the_places.py",
    "tests/crawler/test_waves_answered_pages_go_before_robots_txt_waiting.py",
    "tests/crawler/test_stops.py",
    "tests/crawler/test_resolver.py",
    "tests/cache/test_arrivals.py",
    "tests/crawler/test_early.py",
)


@dataclass(frozen=True)
class Room:
    """A module and the fast tests that cover it, the most telling first."""

    path: str
    tests: tuple[str, ...]
    #: Counted by a plain run; False: only when asked for by ``--room``.
    in_scope: bool = True
    #: One mutant at a time, whatever ``--jobs`` says (tests that share an address).
    alone: bool = False

    @property
    def module(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".")

    def selection(self) -> list[str]:
        """The tests to run: each once, those of files that exist (a missing one is said)."""
        found = []
        for test in dict.fromkeys(self.tests):
            if (ROOT / test.split("::")[0]).exists():
                found.append(test)
            else:
                print(f"[{self.path}] no such test file: {test}", file=sys.stderr)
        return found


#: The rooms, by name (the path under ``scrapy_rep/``).
ROOMS: dict[str, Room] = {
    "engine/robotstxt.py": Room(
        "scrapy_rep/engine/robotstxt.py",
        (*ENGINE_TESTS, "tests/engine/test_usage.py", "tests/engine/test_site_wide_lines.py"),
    ),
    "engine/compiled_group.py": Room(
        "scrapy_rep/engine/compiled_group.py",
        (*ENGINE_TESTS, "tests/engine/test_properties.py", "tests/engine/test_cost_usage.py"),
    ),
    "engine/agents.py": Room("scrapy_rep/engine/agents.py", ENGINE_TESTS),
    "engine/user_agent.py": Room("scrapy_rep/engine/user_agent.py", ENGINE_TESTS),
    "cache/policy.py": Room("scrapy_rep/cache/policy.py", CACHE_TESTS),
    "cache/lifecycle.py": Room(
        "scrapy_rep/cache/lifecycle.py",
        (
            "tests/cache/test_lifecycle.py",
            "tests/cache/test_lifecycle_edges.py",
            "tests/cache/test_lifecycle_table.py",
            *CACHE_TESTS,
        ),
    ),
    "cache/pace.py": Room("scrapy_rep/cache/pace.py", PACE_TESTS),
    "tools/tester/server.py": Room("scrapy_rep/tools/tester/server.py", TESTER_TESTS),
    "tools/tester/app.py": Room("scrapy_rep/tools/tester/app.py", TESTER_TESTS),
    "tools/tester/calls.py": Room("scrapy_rep/tools/tester/calls.py", TESTER_TESTS),
    "tools/tester/guard.py": Room("scrapy_rep/tools/tester/guard.py", TESTER_TESTS),
    # the shell
    "cache/storage/redis/urls.py": Room("scrapy_rep/cache/storage/redis/urls.py", REDIS_URL_TESTS),
    "tools/report/rows.py": Room("scrapy_rep/tools/report/rows.py", REPORT_TESTS),
    "tools/store/view.py": Room("scrapy_rep/tools/store/view.py", STORE_COMMAND_TESTS),
    "tools/tester/answers.py": Room("scrapy_rep/tools/tester/answers.py", ANSWERS_TESTS),
    "tools/tester/report_api.py": Room("scrapy_rep/tools/tester/report_api.py", REPORT_API_TESTS),
    "crawler/pace/turns.py": Room("scrapy_rep/crawler/pace/turns.py", TURNS_TESTS),
    "crawler/pace/crawl_delay.py": Room(
        "scrapy_rep/crawler/pace/crawl_delay.py", CRAWL_DELAY_TESTS
    ),
    "crawler/middleware.py": Room("scrapy_rep/crawler/middleware.py", MIDDLEWARE_TESTS),
    "crawler/spider_middleware.py": Room(
        "scrapy_rep/crawler/spider_middleware.py", SPIDER_MIDDLEWARE_TESTS
    ),
    "crawler/access/resolver.py": Room("scrapy_rep/crawler/access/resolver.py", RESOLVER_TESTS),
    "crawler/access/single_flight.py": Room(
        "scrapy_rep/crawler/access/single_flight.py", ACCESS_TESTS
    ),
    "crawler/access/shared_records.py": Room(
        "scrapy_rep/crawler/access/shared_records.py", ACCESS_TESTS
    ),
    "crawler/access/driver.py": Room("scrapy_rep/crawler/access/driver.py", ACCESS_TESTS),
    "crawler/access/waiting.py": Room("scrapy_rep/crawler/access/waiting.py", WAITING_TESTS),
    "crawler/access/forget_watch.py": Room(
        "scrapy_rep/crawler/access/forget_watch.py", ACCESS_TESTS
    ),
    "crawler/page/page_rules.py": Room(
        "scrapy_rep/crawler/page/page_rules.py",
        ("tests/crawler/test_page_directives.py", "tests/crawler/test_page_nofollow.py"),
    ),
    "crawler/page/usage_check.py": Room(
        "scrapy_rep/crawler/page/usage_check.py",
        ("tests/crawler/test_usage.py", "tests/crawler/test_usage_responses.py"),
    ),
    "crawler/page/sitemaps.py": Room(
        "scrapy_rep/crawler/page/sitemaps.py",
        (_EXTRAS + "test_sitemaps.py", _EXTRAS + "test_sitemaps_notes.py"),
    ),
}

PYTEST_ARGS = (
    *("-x", "-q", "-p", "no:cacheprovider", "--no-header"),
    *("-W", "ignore::pytest.PytestAssertRewriteWarning"),  # what _preload imported
)


# --- mutants ----------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One change to one room: the bytes ``start:end`` of the source become ``text``."""

    room: str
    where: str  # the function or class it is in ("<module>" at the top)
    line: int
    change: str  # "before => after", as the equivalents file names it
    start: int
    end: int
    text: bytes

    @property
    def key(self) -> str:
        return f"{self.where}: {self.change}"

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.text + source[self.end :]


_COMPARE_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_ARITHMETIC_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.Mult,
    ast.Pow: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
#: Names whose assignment at the top of a module or a class is not mutated.
_UNMUTATED_NAMES = frozenset({"__all__", "__slots__"})
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _short(node: ast.AST) -> str:
    """A node's source as one short line (the key of a mutant)."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 70 else text[:67] + "..."


class _Finder(ast.NodeVisitor):
    """Walks a module and collects its mutants."""

    def __init__(self, room: str, source: bytes) -> None:
        self.room = room
        self.source = source
        self.line_starts = [0]
        for line in source.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.scope: list[str] = []
        self.bound: list[set[str]] = [set()]  # names bound so far, per function
        self.mutants: list[Mutant] = []
        self.parents: list[ast.AST] = []

    def visit(self, node: ast.AST) -> None:
        self.parents.append(node)
        try:
            super().visit(node)
        finally:
            self.parents.pop()

    # -- positions

    def _span(self, node: ast.AST) -> tuple[int, int]:
        start = self.line_starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        return start, self.line_starts[end_line - 1] + end_col

    def _add(self, node: ast.AST, before: str, after: str, text: str) -> None:
        start, end = self._span(node)
        where = ".".join(self.scope) or "<module>"
        self.mutants.append(
            Mutant(
                self.room,
                where,
                node.lineno,  # type: ignore[attr-defined]
                f"{before} => {after}",
                start,
                end,
                text.encode(),
            )
        )

    def _expression(self, node: ast.expr, mutated: ast.expr) -> None:
        after = ast.unparse(mutated)
        self._add(node, _short(node), " ".join(after.split()), f"({after})")

    def _statement(self, node: ast.stmt, mutated: ast.stmt | None) -> None:
        after = "pass" if mutated is None else ast.unparse(mutated)
        self._add(node, _short(node), after, after)

    # -- scopes

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(f"{node.name} default")  # evaluated outside the function
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.scope[-1] = node.name
        arguments = node.args
        names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
        names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
        self.bound.append(set(names))
        self._body(node.body)
        self.bound.pop()
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self._body(node.body)
        self.scope.pop()

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def _body(self, body: Sequence[ast.stmt]) -> None:
        for index, statement in enumerate(body):
            docstring = (
                index == 0
                and isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            )
            if not docstring:
                self.visit(statement)

    # -- statements

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt) and isinstance(
            node, ast.Import | ast.ImportFrom | ast.Assert | ast.Global | ast.Nonlocal
        ):
            return
        super().generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call | ast.Await | ast.Yield | ast.YieldFrom):
            self._statement(node, None)
        if not _is_log_call(node.value):
            self.visit(node.value)

    def visit_Raise(self, node: ast.Raise) -> None:
        return  # its arguments are a message

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        if self._skipped_assignment([node.target], node.value):
            return
        self._assignment(node, [node.target])
        self._value(node.value, [node.target])

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._skipped_assignment(node.targets, node.value):
            return
        self._assignment(node, node.targets)
        self._value(node.value, node.targets)
        for target in node.targets:
            if not isinstance(target, ast.Name):
                self.visit(target)

    def _value(self, value: ast.expr, targets: Sequence[ast.expr]) -> None:
        """Visit an assigned value; one outside functions is named after its name."""
        named = len(self.bound) == 1 and len(targets) == 1 and isinstance(targets[0], ast.Name)
        if named:
            assert isinstance(targets[0], ast.Name)
            self.scope.append(targets[0].id)
        self.visit(value)
        if named:
            self.scope.pop()

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bound[-1].add(node.target.id)
        self.visit(node.value)

    def _skipped_assignment(self, targets: Sequence[ast.expr], value: ast.expr) -> bool:
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if names & _UNMUTATED_NAMES:
            return True
        at_top = len(self.scope) == 0 or (len(self.bound) == 1)
        type_alias = isinstance(value, ast.Subscript | ast.BinOp) and _is_type(value)
        typevar = isinstance(value, ast.Call) and _called(value) == "TypeVar"
        return at_top and (type_alias or typevar)

    def _assignment(self, node: ast.stmt, targets: Sequence[ast.expr]) -> None:
        """Delete it when what it sets was set before or lives on (an attribute, an item)."""
        function = len(self.bound) > 1
        names: set[str] = set()
        for target in targets:
            for item in ast.walk(target):
                if isinstance(item, ast.Name):
                    names.add(item.id)
        lasting = any(isinstance(t, ast.Attribute | ast.Subscript) for t in targets)
        rebound = function and bool(names) and names <= self.bound[-1]
        if function and (lasting or rebound):
            self._statement(node, None)
        if function:
            self.bound[-1] |= names

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        swap = _ARITHMETIC_SWAP.get(type(node.op))
        if swap is not None:
            mutated = ast.AugAssign(node.target, swap(), node.value)
            self._statement(node, mutated)
        self.visit(node.value)

    def visit_For(self, node: ast.For) -> None:
        for item in ast.walk(node.target):
            if isinstance(item, ast.Name):
                self.bound[-1].add(item.id)
        self.visit(node.iter)
        self._body(node.body)
        self._body(node.orelse)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
        self._body(node.body)

    def visit_Try(self, node: ast.Try) -> None:
        self._body(node.body)
        for handler in node.handlers:
            if handler.name:
                self.bound[-1].add(handler.name)
            self._body(handler.body)
        self._body(node.orelse)
        self._body(node.finalbody)

    def visit_If(self, node: ast.If) -> None:
        if not node.orelse and isinstance(node.body[-1], _EXITS):
            self._statement(node, None)  # a guard: drop it
        self.visit(node.test)
        self._body(node.body)
        self._body(node.orelse)

    def visit_While(self, node: ast.While) -> None:
        self.visit(node.test)
        self._body(node.body)
        self._body(node.orelse)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not isinstance(node.value, ast.Constant):
            self._statement(node, ast.Return(ast.Constant(None)))
        if node.value is not None:
            self.visit(node.value)

    def visit_Continue(self, node: ast.Continue) -> None:
        self._statement(node, None)

    def visit_Break(self, node: ast.Break) -> None:
        self._statement(node, None)

    # -- expressions

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # a message

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)

    def visit_Compare(self, node: ast.Compare) -> None:
        for index, op in enumerate(node.ops):
            flip = _COMPARE_FLIP.get(type(op))
            if flip is not None:
                ops = list(node.ops)
                ops[index] = flip()
                self._expression(node, ast.Compare(node.left, ops, node.comparators))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._expression(node, ast.BoolOp(other, node.values))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._expression(node, node.operand)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = _ARITHMETIC_SWAP.get(type(node.op))
        formatting = isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
        if swap is not None and not formatting and not _is_type(node):
            self._expression(node, ast.BinOp(node.left, swap(), node.right))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _called(node)
        if name in ("min", "max") and isinstance(node.func, ast.Name):
            other = ast.Name("max" if name == "min" else "min")
            swapped = ast.Call(other, node.args, node.keywords)
            self._expression(node, swapped)
        if _is_log_call(node):
            return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        new: object
        if isinstance(value, bool):
            new = not value
        elif isinstance(value, int):
            new = value + 1
        elif isinstance(value, float):
            new = value * 10 if value else 1.0
        else:
            return
        # Named in its context (``key[-1] == '$' => key[-2] == '$'``), a bare
        # number being no name; only the number changes.
        context: ast.AST = node
        for parent in reversed(self.parents[:-1]):
            if not isinstance(parent, ast.expr):
                break
            context = parent
            if not isinstance(parent, ast.UnaryOp):
                break
        changed = copy.deepcopy(context)
        for old, twin in zip(ast.walk(context), ast.walk(changed)):
            if old is node:
                assert isinstance(twin, ast.Constant)
                twin.value = new
        self._add(node, _short(context), _short(changed), f"({new!r})")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not _is_type(node):
            self.generic_visit(node)


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _is_log_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "logger"
    )


_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "bytes", "tuple", "list", "dict", "set"})


def _is_type(node: ast.expr) -> bool:
    """A type written as a value (``str | None``, ``tuple[int, ...]``)."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.BitOr) and _is_type(node.left) and _is_type(node.right)
    if isinstance(node, ast.Subscript):
        return _is_type(node.value)
    if isinstance(node, ast.Name):
        name = node.id
        camel = name.lstrip("_")[:1].isupper() and not name.isupper()
        return name in _TYPE_NAMES or camel or name in ("T", "_T")
    if isinstance(node, ast.Attribute):
        return node.attr[:1].isupper()
    return isinstance(node, ast.Constant) and node.value is None


def mutants_of(room: str) -> list[Mutant]:
    """Every mutant of a room, in source order, each key once (``#2``... for repeats)."""
    path = ROOT / ROOMS[room].path
    source = path.read_bytes()
    finder = _Finder(room, source)
    finder.visit(ast.parse(source))
    original = ast.dump(ast.parse(source))
    seen_sources: set[str] = set()
    seen_keys: dict[str, int] = {}
    found: list[Mutant] = []
    for mutant in sorted(finder.mutants, key=lambda m: (m.start, -m.end, m.change)):
        mutated = mutant.apply(source)
        try:
            tree = ast.dump(ast.parse(mutated))
        except SyntaxError:
            print(f"skipped (not Python): {room}:{mutant.line} {mutant.key}", file=sys.stderr)
            continue
        digest = hashlib.sha1(tree.encode()).hexdigest()
        if tree == original or digest in seen_sources:
            continue
        seen_sources.add(digest)
        count = seen_keys[mutant.key] = seen_keys.get(mutant.key, 0) + 1
        if count > 1:
            mutant = Mutant(
                mutant.room,
                mutant.where,
                mutant.line,
                f"{mutant.change} #{count}",
                mutant.start,
                mutant.end,
                mutant.text,
            )
        found.append(mutant)
    return found


# --- the equivalents ----------------------------------------------------------------


def read_equivalents(path: Path = EQUIVALENT) -> dict[str, dict[str, str]]:
    """room -> mutant key -> why it is equivalent.

    ``[room]`` starts a room; a line at the margin is a mutant's key; the
    indented line under it says why no test can tell it from the code.
    """
    found: dict[str, dict[str, str]] = {}
    room: str | None = None
    key: str | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            room, key = line[1:-1], None
            found.setdefault(room, {})
        elif room is None:
            raise SystemExit(f"{path}:{number}: a mutant before any [room]")
        elif not line[0].isspace():
            key = line
            found[room][key] = ""
        elif key is None or found[room][key]:
            raise SystemExit(f"{path}:{number}: a reason with no mutant, or a second one")
        else:
            found[room][key] = line.strip()
    for room_name, keys in found.items():
        for key_name, reason in keys.items():
            if not reason:
                raise SystemExit(f"{path}: [{room_name}] {key_name}: no reason given")
    return found


# --- running ------------------------------------------------------------------------


class _MutatedSource(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Hands out one module's mutated source in place of its file's."""

    def __init__(self, module: str, path: Path, source: bytes) -> None:
        self.module, self.path, self.source = module, path, source

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        code = compile(self.source, str(self.path), "exec", dont_inherit=True)
        exec(code, module.__dict__)


class _Settled:
    """A pytest plugin: property tests draw the same examples on every run and
    remember none (a mutant's failing example must not kill the next one)."""

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        from hypothesis import settings

        settings.register_profile(
            "mutation", parent=settings.default, database=None, derandomize=True
        )
        settings.load_profile("mutation")


@dataclass
class Result:
    mutant: Mutant | None
    status: str  # "killed", "survived", "timeout", "error"; "passed"/"failed" for a baseline
    seconds: float
    by: str = ""  # the first test that failed


def _first_failure(log: Path) -> str:
    """The test that failed first, from pytest's summary (``-ra``) in a child's log."""
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" ", 2)[1]
    return ""


@dataclass
class _Child:
    pid: int
    mutant: Mutant | None
    started: float
    limit: float
    log: Path


def _fork(
    room: Room, tests: Sequence[str], mutant: Mutant | None, log: Path, limit: float
) -> _Child:
    """Run ``tests`` in a child, against ``mutant`` (None: the room as it is)."""
    source = (ROOT / room.path).read_bytes()
    pid = os.fork()
    if pid == 0:  # the child
        code = 3
        try:
            os.setpgid(0, 0)  # its own group: a timeout kills what it started too
            descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(descriptor, 1)
            os.dup2(descriptor, 2)
            if mutant is not None:
                hook = _MutatedSource(room.module, ROOT / room.path, mutant.apply(source))
                sys.meta_path.insert(0, hook)
            code = int(pytest.main([*PYTEST_ARGS, *tests], plugins=[_Settled()]))
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return _Child(pid, mutant, time.monotonic(), limit, log)


def _status(exit_code: int | None, baseline: bool) -> str:
    if exit_code is None:
        return "timeout"
    if baseline:
        return "passed" if exit_code == 0 else "failed"
    if exit_code == 0:
        return "survived"
    if exit_code in (1, 2):  # tests failed; collection failed (an import error)
        return "killed"
    return "error"  # pytest's usage error, no tests collected, or the child broke


def run_all(
    room: Room, mutants: Sequence[Mutant | None], jobs: int, limit: float
) -> Iterator[Result]:
    """Run the room's tests once per mutant, ``jobs`` children at a time."""
    logs = BUILD / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    tests = room.selection()
    waiting = list(reversed(mutants))
    running: list[_Child] = []
    while waiting or running:
        while waiting and len(running) < jobs:
            mutant = waiting.pop()
            name = "baseline" if mutant is None else f"{mutant.line}-{_slug(mutant.key)}"
            log = logs / f"{Path(room.path).stem}-{name}.log"
            running.append(_fork(room, tests, mutant, log, limit))
        time.sleep(0.02)
        for child in list(running):
            pid, status = os.waitpid(child.pid, os.WNOHANG)
            elapsed = time.monotonic() - child.started
            if pid == 0 and elapsed <= child.limit:
                continue
            exit_code: int | None
            if pid == 0:  # past its time: stop it and all it started
                os.killpg(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
                exit_code = None
            else:
                exit_code = os.waitstatus_to_exitcode(status)
            running.remove(child)
            said = _status(exit_code, child.mutant is None)
            yield Result(child.mutant, said, elapsed, _first_failure(child.log))


def _slug(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _preload() -> None:
    """Import what every child imports, once, here: never the package itself,
    nor a reactor (pytest-twisted installs one in each child)."""
    for name in ("_pytest.assertion.rewrite", "_pytest.python", "hypothesis", "pytest_twisted"):
        __import__(name)
    with contextlib.suppress(ImportError):  # what the conftests import
        __import__("scrapy.http")
    assert not any(name.split(".")[0] == "scrapy_rep" for name in sys.modules)
    assert "twisted.internet.reactor" not in sys.modules


# --- the report ---------------------------------------------------------------------


@dataclass
class Score:
    room: str
    mutants: int = 0
    equivalent: int = 0
    killed: int = 0
    wrongly_listed: int = 0  # listed as equivalent, yet killed
    survivors: list[Mutant] = field(default_factory=list)
    errors: list[Mutant] = field(default_factory=list)

    @property
    def counted(self) -> int:
        return self.mutants - self.equivalent

    @property
    def share(self) -> float:
        return self.killed / self.counted if self.counted else 1.0


#: room -> mutant key -> (status, the test that killed it).
Report = dict[str, dict[str, tuple[str, str]]]


def _load_report(path: Path) -> Report:
    """What an earlier run found."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    report: Report = {}
    for item in data["mutants"]:
        report.setdefault(item["room"], {})[item["key"]] = (item["status"], item.get("by", ""))
    return report


def _save_report(path: Path, report: Report, lines: dict[str, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [
        {"room": room, "key": key, "line": lines.get(f"{room} {key}", 0), "status": status}
        | ({"by": by} if by else {})
        for room, statuses in sorted(report.items())
        for key, (status, by) in statuses.items()
    ]
    path.write_text(json.dumps({"mutants": items}, indent=1) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--room",
        action="append",
        choices=sorted(ROOMS),
        help="a room to mutate (repeatable); default: every room in scope",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument(
        "--survivors", action="store_true", help="rerun only the last report's survivors"
    )
    parser.add_argument("--match", help="only the mutants whose key contains this text")
    parser.add_argument(
        "--keys", type=Path, help="only the mutants listed in this file (room, tab, key per line)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="children at a time (default 1)")
    parser.add_argument(
        "--equivalents",
        action="store_true",
        help="run only the mutants listed as equivalent (each should survive)",
    )
    parser.add_argument(
        "--score", action="store_true", help="print the scores of the report, run nothing"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        help="seconds after which a mutant's run counts as killed (default: five times "
        "the room's run, at least 30): a mutant that stalls a crawl costs no more",
    )
    parser.add_argument("--report", type=Path, default=BUILD / "report.json")
    args = parser.parse_args(argv)

    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    names = args.room or [name for name, room in ROOMS.items() if room.in_scope]
    equivalents = read_equivalents()
    report = _load_report(args.report)
    lines: dict[str, int] = {}
    scores: list[Score] = []
    if not (args.list or args.score):
        _preload()
    for name in names:
        room = ROOMS[name]
        mutants = mutants_of(name)
        known = {mutant.key for mutant in mutants}
        listed = equivalents.get(name, {})
        for stale in sorted(set(listed) - known):
            print(f"[{name}] listed as equivalent, but no such mutant now: {stale}")
        for mutant in mutants:
            lines[f"{name} {mutant.key}"] = mutant.line
        if args.list:
            for mutant in mutants:
                mark = "  (equivalent)" if mutant.key in listed else ""
                print(f"{room.path}:{mutant.line}: {mutant.key}{mark}")
            continue
        statuses = report.setdefault(name, {})
        for key in set(statuses) - known:
            del statuses[key]
        chosen = [m for m in mutants if (m.key in listed) is args.equivalents]
        if args.score:
            chosen = []
        if args.survivors:
            chosen = [m for m in chosen if statuses.get(m.key, ("",))[0] != "killed"]
        if args.match:
            chosen = [m for m in chosen if args.match in m.key]
        if args.keys:
            wanted = set(args.keys.read_text(encoding="utf-8").splitlines())
            chosen = [m for m in chosen if f"{name}\t{m.key}" in wanted]
        limit = 0.0
        if chosen:
            baseline = next(iter(run_all(room, [None], 1, 600.0)))
            if baseline.status != "passed":
                print(f"[{name}] the tests fail on the code as it is: see {BUILD / 'logs'}")
                return 2
            limit = args.timeout or max(30.0, 5 * baseline.seconds)
            print(f"[{name}] {len(chosen)} mutants to run; the tests take {baseline.seconds:.1f} s")
        jobs = 1 if room.alone else args.jobs
        for result in run_all(room, chosen, jobs, limit) if chosen else ():
            assert result.mutant is not None
            status = "killed" if result.status == "timeout" else result.status
            statuses[result.mutant.key] = (status, result.by if status == "killed" else "")
            if status != ("survived" if args.equivalents else "killed"):  # news
                print(f"  {status}: {room.path}:{result.mutant.line}: {result.mutant.key}")
        _save_report(args.report, report, lines)
        score = Score(name, len(mutants))
        for mutant in mutants:
            status = statuses.get(mutant.key, ("not run", ""))[0]
            if mutant.key in listed and status == "killed":
                print(f"listed as equivalent, but the tests kill it: {mutant.key}")
                score.killed += 1
                score.wrongly_listed += 1
            elif mutant.key in listed:
                score.equivalent += 1
            elif status == "killed":
                score.killed += 1
            elif status == "error":
                score.errors.append(mutant)
            else:
                score.survivors.append(mutant)
        scores.append(score)
    if args.list:
        return 0
    if args.equivalents:
        wrong = sum(score.wrongly_listed for score in scores)
        print(f"listed as equivalent and killed: {wrong} (each should survive)")
        return 1 if wrong else 0
    print()
    print(f"{'room':28} {'mutants':>7} {'equiv.':>6} {'killed':>6} {'alive':>6} {'score':>6}")
    for score in scores:
        alive = len(score.survivors) + len(score.errors)
        print(
            f"{score.room:28} {score.mutants:7} {score.equivalent:6} {score.killed:6} "
            f"{alive:6} {score.share:6.1%}"
        )
    for score in scores:
        for mutant in score.survivors + score.errors:
            state = "error" if mutant in score.errors else "survived"
            print(f"{state}: {ROOMS[score.room].path}:{mutant.line}: {mutant.key}")
    return 0 if all(score.share >= TARGET for score in scores) else 1


if __name__ == "__main__":
    sys.exit(main())
