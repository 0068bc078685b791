"""The ``scrapy-rep`` console script: ``check`` URLs against a robots.txt, ``lint`` one,
``cache show|forget`` an origin's record in a crawl's store, ``report`` every
origin a store keeps (``report``), serve the ``tester``.

It imports only the standard library, the engine and the cache (never
Scrapy), so it answers at once; the tester's modules load only for
``tester``. A robots.txt comes from a file, from standard input (``-``)
or from an http(s) URL; a URL is fetched as a crawler fetches it (docs/spec.md §2,
§4.3): up to 5 redirects, at most 512,000 bytes kept, a 4xx other than 429
means "everything allowed", and a 429, 5xx or network failure is a fetch
error, because a crawler must then not fetch anything from the site.

``check --purpose LABEL`` (repeatable; a label of the usage vocabulary's
``LABELS``) also says, per URL, what robots.txt's ``Content-Usage`` and
``Content-Signal`` lines state for each purpose, with the deciding line; a
URL whose purpose is refused counts as disallowed (a crawl declaring that
purpose in ``REP_PURPOSES`` drops it).

Exit codes: ``check`` 0 when every URL is allowed (and no declared purpose
refused), 1 when one is disallowed (or refused);
``lint`` 0 when there is no error (warnings allowed), 1 when there is one;
both 2 on a usage error or when robots.txt cannot be read or fetched.
``cache`` 0 when a record was kept (and, with ``forget``, deleted), 1 when
none was, 2 on a usage or store error.

JSON output of ``scrapy-rep check --json`` (a list, one object per URL, in
the order given)::

    [
      {
        "url": str,                # as given
        "allowed": bool,
        "reason": str,             # "rule": a rule decided; "no-rule": the group has
                                   # no matching rule; "no-group": no group applies;
                                   # "robots-txt": the robots.txt URL is always allowed;
                                   # "unavailable": robots.txt answered 4xx (or too many
                                   # redirects), so everything is allowed
        "group": str | null,       # the token of the group that applied, "*", or null
        "rule": {"kind": "allow" | "disallow", "pattern": str, "line": int} | null,
        "usage": {                 # only with --purpose: one entry per purpose
          LABEL: {"state": "allowed" | "denied" | "unstated",
                  "by": [{"source": "content-usage" | "content-signal",
                          "line": int, "text": str,
                          "global": bool}]}  # written before any group
        },
        "licenses": [str]          # only when robots.txt has License lines (RSL 1.0):
                                   # the site's licence terms, absolute URLs, file order
                                   # (one list per kind of line outside any group with
                                   # ``about``: its ``values`` in engine/site_wide.py)
      }
    ]

The ``lint --json`` schema is in ``scrapy_rep.tools.lint.lines``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from scrapy_rep.engine.agents import crawler_tokens
from scrapy_rep.engine.origin import origin_of
from scrapy_rep.tools.check import (
    check_json,
    check_urls,
    explanation,
    refused,
    site_wide_lines,
    usage_lines,
)
from scrapy_rep.tools.cli.options import DEFAULT_AGENT, parsers
from scrapy_rep.tools.fetch.source import Source, SourceError, read_source
from scrapy_rep.tools.lint.lines import ERROR, format_text, lint, printable, report

if TYPE_CHECKING:
    from scrapy_rep.cache.policy import PolicyConfig
    from scrapy_rep.tools.store.view import StoreName
    from scrapy_rep.tools.tester.server import TesterConfig

__all__ = ["main"]

EXIT_OK: Final = 0
EXIT_FOUND: Final = 1  # check: a URL is disallowed; lint: an error was found
EXIT_USAGE: Final = 2  # bad arguments, unreadable file, unreachable robots.txt


# --- check ------------------------------------------------------------------------


def run_check(args: argparse.Namespace) -> int:
    agents, google_quirks, said = _check_agents(args)
    source = read_source(args.robots, args.timeout)
    purposes: list[str] = list(dict.fromkeys(args.purpose or ()))
    results = check_urls(source, args.urls, agents, google_quirks, purposes)
    _note_other_origins(source, args.urls)
    tokens = crawler_tokens(agents, google_quirks) if agents else ()
    if said:
        _err(f"note: checking as {said}")
    if args.json:
        data = [check_json(c, purposes) for c in results]
        _out(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for checked in results:
            word = "allowed" if checked.allowed else "disallowed"
            if checked.allowed and refused(checked, purposes):
                word = "refused"
            why = explanation(checked, tokens, source)
            _out(printable(f"{word:<10}  {checked.url}  ({why})"))
            for line in usage_lines(checked, purposes):
                _out(printable(line))
        for line in site_wide_lines(results):
            _out(printable(line))
    ok = all(c.allowed and not refused(c, purposes) for c in results)
    return EXIT_OK if ok else EXIT_FOUND


def _check_agents(args: argparse.Namespace) -> tuple[list[str], bool, str]:
    """The tokens ``check`` asks with, Google's reading or not, and the note
    that names them (empty when ``--agent`` names them as they are read).

    Inside a Scrapy project, without ``--agent``, the project's crawl's
    tokens (``ROBOTSTXT_USER_AGENT`` or ``USER_AGENT``, docs/spec.md §5.7),
    so ``check`` answers as the crawl does; outside one, Scrapy's default.
    """
    if args.agent:
        agents: list[str] = args.agent
        tokens = crawler_tokens(agents, args.google_quirks)
        if list(tokens) == [agent.strip().lower() for agent in agents]:
            return agents, args.google_quirks, ""
        return agents, args.google_quirks, " or ".join(tokens) or "* (the agent names no crawler)"
    from scrapy_rep.tools.store.project import project_agent

    try:
        project = project_agent()
    except ValueError as error:  # a bad setting of the project (SettingError)
        raise SourceError(f"this project's settings: {error}") from None
    if project is None:
        said = (
            f"{DEFAULT_AGENT} (Scrapy's default USER_AGENT: not inside a Scrapy project; "
            "--agent NAME to choose)"
        )
        return [DEFAULT_AGENT], args.google_quirks, said
    return list(project.tokens), args.google_quirks or project.google_quirks, project.said()


def _note_other_origins(source: Source, urls: Sequence[str]) -> None:
    """docs/spec.md §1.1: a fetched robots.txt governs its own origin only."""
    if source.status is None:
        return
    home = origin_of(source.name)
    for url in urls:
        there = origin_of(url)
        if there is not None and there != home:
            _err(f"note: {url} is not on {home}, so that robots.txt does not govern it")


# --- lint -------------------------------------------------------------------------


def run_lint(args: argparse.Namespace) -> int:
    source = read_source(args.robots, args.timeout)
    findings = [] if source.allow_all else lint(source.body)
    result = report(printable(source.name), source.body, findings, source.status)
    if args.json:
        _out(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        if source.allow_all:
            _out(f"{source.name}: {source.allow_all}; there is nothing to lint")
        _out(format_text(result))
    return EXIT_FOUND if any(f.severity == ERROR for f in findings) else EXIT_OK


# --- cache and tester ---------------------------------------------------------------


def run_cache(args: argparse.Namespace) -> int:
    from scrapy_rep.cache.storage import StorageError
    from scrapy_rep.tools.lint.finding import json_safe
    from scrapy_rep.tools.store.view import (
        describe,
        forget_origin,
        format_record,
        read_origin,
    )

    try:
        store, policy, tokens, quirks = _cache_context(args)
        if args.action == "forget":
            key, found = forget_origin(store, args.url)
            if args.json:
                _out(json.dumps({"origin": key, "forgotten": found}))
            else:
                done = "forgotten: every worker sharing the store fetches it again"
                _out(f"{key}: {done if found else 'nothing was kept'} ({store.shown()})")
            return EXIT_OK if found else EXIT_FOUND
        key, record = read_origin(store, args.url)
    except (ValueError, StorageError) as error:
        raise SourceError(str(error)) from None
    data = describe(record, policy=policy, tokens=tokens, google_quirks=quirks)
    if args.json:
        _out(json_safe(json.dumps({"origin": key, **data}, ensure_ascii=False)))
    else:
        _out("\n".join(printable(line) for line in format_record(store, key, data).split("\n")))
    return EXIT_OK if record is not None else EXIT_FOUND


def _cache_context(
    args: argparse.Namespace,
) -> tuple[StoreName, PolicyConfig | None, tuple[str, ...], bool]:
    """The store, and the outage rules and tokens its record is read with:
    inside a Scrapy project, its crawl's (imports Scrapy), with its store
    unless ``--store`` names one; outside, the defaults."""
    from scrapy_rep.tools.store.project import ProjectStoreError, in_a_project, project_view
    from scrapy_rep.tools.store.view import StoreName

    store = StoreName(args.store, args.redis_prefix, args.wait) if args.store else None
    if store is not None and not in_a_project():
        return store, None, (DEFAULT_AGENT,), False
    try:
        view = project_view(store=store)
    except ProjectStoreError as error:
        raise ValueError(str(error)) from None
    return view.store, view.policy, view.tokens, view.google_quirks


def run_tester(args: argparse.Namespace) -> int:
    from scrapy_rep.tools.tester.server import serve

    config, said = tester_config_of(args)
    _err(f"note: testing as {said}")
    return serve(config, args.host, args.port)


def tester_config_of(args: argparse.Namespace) -> tuple[TesterConfig, str]:
    """The Tester's config, and the note naming its tokens: inside a Scrapy
    project, its crawl's tokens, store and fetch rules (``tester.project``),
    each overridden by an option given; outside one, the options alone."""
    from dataclasses import replace

    from scrapy_rep.tools.store.project import in_a_project
    from scrapy_rep.tools.store.view import StoreName
    from scrapy_rep.tools.tester.server import TesterConfig

    store = StoreName(args.store, args.redis_prefix) if args.store else None
    agents = tuple(args.agent or ())
    hosts = tuple(args.allow_host or ())
    if not in_a_project():
        config = TesterConfig(
            agents=agents or (DEFAULT_AGENT,),
            purposes=tuple(args.purpose or ()),
            google_quirks=args.google_quirks,
            store=store,
            timeout=args.timeout,
            allowed_hosts=hosts,
        )
        if agents:
            return config, " and ".join(agents)
        return config, f"{DEFAULT_AGENT} (Scrapy's default USER_AGENT: not inside a Scrapy project)"
    from scrapy.utils.project import get_project_settings

    from scrapy_rep.tools.tester.project import tester_config

    config = tester_config(get_project_settings(), agents, tuple(args.purpose or ()))
    config = replace(
        config,
        google_quirks=args.google_quirks or config.google_quirks,
        store=store or config.store,
        allowed_hosts=hosts,
    )
    if agents:
        return config, " and ".join(agents)
    return config, f"{config.agents[0]} (this project's tokens and store, as its crawl)"


def run_report(args: argparse.Namespace) -> int:
    from scrapy_rep.tools.cli.report import run_report as report

    return report(args)


_RUNS: Final[dict[str, Callable[[argparse.Namespace], int]]] = {
    "check": run_check,
    "lint": run_lint,
    "cache": run_cache,
    "report": run_report,
    "tester": run_tester,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["demo"]:  # Scrapy is imported only for the demo
        from scrapy_rep.tools.demo.run import main as demo_main

        return demo_main(args_list[1:])
    parser, commands = parsers()
    try:
        if args_list and args_list[0] in commands:
            # Options may come between URLs: "check r.txt /a --agent x /b".
            args = commands[args_list[0]].parse_intermixed_args(args_list[1:])
        else:
            args = parser.parse_args(args_list)
    except SystemExit as exit_:  # --help (0) or a usage error (2)
        if exit_.code is None:
            return EXIT_OK
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    func = _RUNS[args_list[0]]  # parse_args exits unless a command was named
    try:
        return func(args)
    except SourceError as error:
        _err(str(error))
        return EXIT_USAGE
    except BrokenPipeError:  # "scrapy-rep lint big.txt | head": stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout again at exit
        return EXIT_OK


def _out(text: str) -> None:
    print(text)


def _err(text: str) -> None:
    print(f"scrapy-rep: {printable(text)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
