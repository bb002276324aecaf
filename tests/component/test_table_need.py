"""A table's need for its services, measured in one look, against hudi-rs' own file slices of a MERGE_ON_READ
table written by Apache Hudi (its quickstart trips, with an auto compaction before the last deltacommit)."""

from __future__ import annotations

import hudi

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.table_need import measure

TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"


def test_log_files_per_slice_and_small_files_are_the_latest_slices_hudi_rs_sees(fixture_table):
    path = fixture_table(TRIPS)
    slices = hudi.HudiTable(str(path)).get_file_slices()
    need = measure(MetaClient.open(path), {})
    assert sorted(need.log_files) == sorted(len(s.log_file_names) for s in slices)
    assert need.slices == len(slices) and need.max_log_files == max(len(s.log_file_names) for s in slices) > 0
    # the quickstart's base files are all far under clustering's default limit (300 MB)
    assert need.small_files == need.slices and need.small_file_share == 1.0
    assert need.work == {} and need.due() == ()  # no service asked about


def test_each_service_is_judged_as_its_operator_judges_it_on_the_same_look(fixture_table):
    path = fixture_table(TRIPS)
    meta = MetaClient.open(path)
    eager = measure(meta, {"compaction": {"hoodie.compact.inline.max.delta.commits": "1"},
                           "clean": {"hoodie.cleaner.commits.retained": "100"}, "archive": {}})
    assert eager.due() == ("compaction",), eager.work  # one deltacommit after the last compaction
    assert "1 deltacommit(s) since the last compaction" in eager.work["compaction"].reason
    assert not eager.work["clean"].due and not eager.work["archive"].due
    patient = measure(MetaClient.open(path), {"compaction": {"hoodie.compact.inline.max.delta.commits": "5"}})
    assert patient.due() == () and "fewer than" in patient.work["compaction"].reason
