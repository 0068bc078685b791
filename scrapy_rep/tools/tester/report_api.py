"""The Tester's report page, its answers: ``GET /api/report`` (a read of the
store) and ``POST /api/forget-many`` (Refetch of every origin a filter
keeps), docs/tester.md, "The report page".

Both read the store through ``report`` (the rows and counts of ``scrapy-rep
report``). The server checks the token and the request first; here, what a
query asks for: the filters, checked as the command line checks them (a bad
value is a 400, never a guess). A Refetch of a filter names the count the
page showed: when the store now holds another number of such origins, it
changes nothing and says so (409), and it forgets at most
``MAX_REFETCH`` at once, the log of forgotten origins a running crawl reads
in one poll (docs/tester.md, "Refetch now").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.storage import StorageError
from scrapy_rep.cache.storage.forgotten import FORGOTTEN_BATCH
from scrapy_rep.tools.report.output import COLUMNS, DEEP_COLUMNS
from scrapy_rep.tools.report.rows import (
    FLAGS,
    SORTS,
    STATES,
    Filters,
    Summary,
    deep_reader,
    report_rows,
    sorted_rows,
)
from scrapy_rep.tools.store.scan import scan_store
from scrapy_rep.tools.store.view import StoreName, forget_origins
from scrapy_rep.tools.tester.guard import Refused

__all__ = ["MAX_REFETCH", "forget_filtered", "report_answer"]

#: Origins one Refetch of a filter forgets at most (one read of the forget log).
MAX_REFETCH: Final = FORGOTTEN_BATCH
#: Rows an answer lists at most (the counts cover every origin).
MAX_ROWS: Final = 1_000
_DEFAULT_ROWS: Final = 200
_UNITS: Final = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}

Query = Mapping[str, Sequence[str]]


def _values(query: Query, name: str, allowed: Sequence[str]) -> frozenset[str]:
    chosen = {part.strip() for value in query.get(name, ()) for part in value.split(",")}
    chosen.discard("")
    wrong = chosen - set(allowed)
    if wrong:
        raise Refused(400, f"{name}: {', '.join(sorted(wrong))} is not one of {', '.join(allowed)}")
    return frozenset(chosen)


def _one(query: Query, name: str) -> str:
    values = query.get(name) or [""]
    return values[0].strip()


def _age(query: Query, name: str) -> float | None:
    text = _one(query, name).lower()
    if not text:
        return None
    unit = _UNITS.get(text[-1], 0.0)
    try:
        number = float(text[:-1] if unit else text)
    except ValueError:
        number = -1.0
    if not 0 <= number < float("inf"):
        raise Refused(400, f"{name}: {text!r} is not an age such as 90s, 15m, 12h or 7d")
    return number * (unit or 1.0)


def filters_of(query: Query) -> Filters:
    """The filters a page's query asks for (the command line's ``--state``...)."""
    return Filters(
        states=_values(query, "state", STATES),
        flags=_values(query, "flag", tuple(FLAGS)),
        host=_one(query, "host") or None,
        older_than=_age(query, "older"),
        newer_than=_age(query, "newer"),
    )


def _rows_wanted(query: Query) -> int:
    text = _one(query, "limit") or str(_DEFAULT_ROWS)
    if not text.isdigit() or not 1 <= int(text) <= MAX_ROWS:
        raise Refused(400, f"limit: a number from 1 to {MAX_ROWS}")
    return int(text)


def _store_call(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except StorageError as exc:
        raise Refused(503, str(exc)) from None
    except ValueError as exc:
        raise Refused(400, str(exc)) from None


def _scan(
    store: StoreName, query: Query, policy: PolicyConfig, tokens: Sequence[str], quirks: bool
) -> tuple[Summary, Any, bool]:
    """The rows every filter but the states keeps (counted by state: the
    page's summary), then those the states keep too, and whether files are
    read (deep)."""
    filters = filters_of(query)
    deep = _one(query, "deep") in ("1", "true") or filters.deep
    facets = Filters(
        frozenset(), filters.flags, filters.host, filters.older_than, filters.newer_than
    )
    summary = Summary()
    now = time.time()
    reader = deep_reader(tokens, quirks) if deep else None
    rows = report_rows(scan_store(store, now, bodies=deep), now, policy, facets, summary, reader)
    kept = (row for row in rows if not filters.states or filters.keeps(row))
    return summary, kept, deep


def report_answer(
    store: StoreName,
    query: Query,
    policy: PolicyConfig,
    tokens: Sequence[str],
    google_quirks: bool = False,
) -> dict[str, Any]:
    """The page's table: the counts by state and flag of every origin the
    filters other than the states keep, and the first ``limit`` rows of
    those the states keep too, sorted as asked."""
    limit = _rows_wanted(query)
    sort = _one(query, "sort") or "origin"
    if sort not in SORTS:
        raise Refused(400, f"sort: one of {', '.join(SORTS)}")
    reverse = _one(query, "reverse") in ("1", "true")

    def read() -> dict[str, Any]:
        summary, kept, deep = _scan(store, query, policy, tokens, google_quirks)
        matched = [0]

        def counted(rows: Any) -> Any:
            for row in rows:
                matched[0] += 1
                yield row

        shown = list(sorted_rows(counted(kept), sort, reverse=reverse, limit=limit))
        columns = COLUMNS + DEEP_COLUMNS if deep else COLUMNS
        return {
            "store": store.shown(),
            "now": time.time(),
            "summary": summary.as_data(),
            "matched": matched[0],
            "deep": deep,
            "max_refetch": MAX_REFETCH,
            "rows": [{column: row.get(column) for column in columns} for row in shown],
        }

    answer: dict[str, Any] = _store_call(read)
    return answer


def forget_filtered(
    store: StoreName,
    data: Mapping[str, Any],
    policy: PolicyConfig,
    tokens: Sequence[str],
    google_quirks: bool = False,
) -> dict[str, Any]:
    """Refetch every origin the filters in ``data`` keep, if there are
    ``data["expect"]`` of them (what the page showed) and at most ``MAX_REFETCH``."""
    expect = data.get("expect")
    if not isinstance(expect, int) or isinstance(expect, bool) or expect < 0:
        raise Refused(400, "expect: the number of origins the page showed for this filter")
    query = {
        name: [value] if isinstance(value, str) else value
        for name, value in data.items()
        if name in ("state", "flag", "host", "older", "newer", "deep")
    }
    for values in query.values():
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise Refused(400, "filters are strings or lists of strings")

    def read_and_forget() -> dict[str, Any]:
        _, kept, _ = _scan(store, query, policy, tokens, google_quirks)
        keys: list[str] = []  # counted all, kept up to the cap: a filter may match millions
        matched = 0
        for row in kept:
            matched += 1
            if matched <= MAX_REFETCH:
                keys.append(row["origin"])
        if matched != expect:
            raise Refused(
                409,
                f"{matched} origins match this filter now, not {expect}: nothing was "
                "changed; look at the report again",
            )
        if matched > MAX_REFETCH:
            raise Refused(
                413,
                f"{matched} origins: at most {MAX_REFETCH} are refetched at once (a running "
                "crawl reads that many forgotten origins at a time); narrow the filter",
            )
        forgotten = forget_origins(store, keys)
        return {
            "origins": len(keys),
            "forgotten": forgotten,
            "at": time.time(),
            "store": store.shown(),
        }

    answer: dict[str, Any] = _store_call(read_and_forget)
    return answer
