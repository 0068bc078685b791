"""The record's fields for the report (docs/cli.md): where a fetch's redirects
ended and whether its file was cut at the size cap, recorded by the policy,
round-tripped through bytes, and absent from records written before them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scrapy_rep.cache.policy import DAY, OriginRecord, record_outcome

from .storage.test_storage_policy import (
    BODY,
    CONFIG,
    T0,
    failure,
    no_jitter,
    record,
    success,
    unavailable,
)


def test_status_2_3_redirect_and_cut_are_recorded_and_round_trip() -> None:
    """The report's "redirected elsewhere" and "cut at the size cap" are
    fields of the record (docs/cli.md), not words of its reason."""
    cut = replace(success(), final_url="https://www.example.com/robots.txt", truncated=True)
    current = record((T0, cut))
    assert (current.final_url, current.truncated) == ("https://www.example.com/robots.txt", True)
    assert OriginRecord.from_bytes(current.to_bytes()) == current
    # A failure says where its own redirects ended, and keeps the copy's cut.
    failed = record_outcome(
        current, replace(failure(503), final_url=None), T0 + DAY, CONFIG, random=no_jitter
    )
    assert (failed.final_url, failed.truncated) == (None, True)
    # A 4xx keeps no body, so nothing of it was cut.
    gone = record((T0, replace(unavailable(404), truncated=True)))
    assert gone.truncated is False


def test_status_2_3_a_record_without_the_new_fields_reads_with_defaults() -> None:
    """Records written before the fields existed (and any record without
    them) read as not redirected, not cut; a plain record is written as
    before, byte for byte, so earlier versions read it too."""
    plain = record((T0, success()))
    head = plain.to_bytes().partition(b"\n")[0]
    assert b'"u"' not in head and b'"t"' not in head
    old = (
        b'{"v":1,"k":"success","s":200,"r":"HTTP 200","f":1700000000.0,"e":1700086400.0,'
        b'"g":1700000000.0,"gs":200,"st":null,"n":null,"c":0,"sr":null,"ns":false,"b":true}\n'
        + BODY
    )
    read = OriginRecord.from_bytes(old)
    assert (read.final_url, read.truncated) == (None, False)
    assert read == plain
    for bad in (b'"u":5', b'"t":"yes"'):
        with pytest.raises(ValueError):
            OriginRecord.from_bytes(old.replace(b'"b":true', b'"b":true,' + bad))
