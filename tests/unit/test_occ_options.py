"""A backfill's own defaults on a table with several writers, which its options may change."""

from __future__ import annotations

from hudi_ops.locks.occ_options import BACKFILL_APART, CONCURRENCY_MODE, NON_BLOCKING, OPTIMISTIC, backfill_defaults

SMALL_FILE_LIMIT = "hoodie.parquet.small.file.limit"


def test_a_backfill_beside_other_writers_fills_no_small_files_unless_its_options_say_so():
    assert BACKFILL_APART == {SMALL_FILE_LIMIT: "0"}
    for mode in (OPTIMISTIC, NON_BLOCKING):
        assert backfill_defaults({CONCURRENCY_MODE: mode}) == BACKFILL_APART
        assert backfill_defaults({CONCURRENCY_MODE: mode, SMALL_FILE_LIMIT: "1048576"}) == {}
    assert backfill_defaults({}) == {}  # a single writer: Hudi's own default
    assert backfill_defaults({CONCURRENCY_MODE: "SINGLE_WRITER"}) == {}
