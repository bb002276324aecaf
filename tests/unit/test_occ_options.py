"""A backfill's own defaults on a table with several writers, which its options may change."""

from __future__ import annotations

from hudi_ops.locks.occ_options import BACKFILL_APART, backfill_defaults, zookeeper_lock_options

SMALL_FILE_LIMIT = "hoodie.parquet.small.file.limit"


def test_a_backfill_beside_other_writers_fills_no_small_files_unless_its_options_say_so():
    lock = zookeeper_lock_options("127.0.0.1", 2181, {}, "trips")
    assert BACKFILL_APART == {SMALL_FILE_LIMIT: "0"}
    assert backfill_defaults(lock) == BACKFILL_APART
    assert backfill_defaults({**lock, SMALL_FILE_LIMIT: "1048576"}) == {}
    assert backfill_defaults({}) == {}  # a single writer: Hudi's own default
