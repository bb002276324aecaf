"""The typed job specs the Airflow operators build before any Spark job starts."""

from __future__ import annotations

import datetime as dt

import pytest

from hudi_ops.airflow.job_spec import JobSpec, SourceSpec, TableSpec, parse_date
from hudi_ops.errors import InvalidInputError
from hudi_ops.spark.__main__ import _parser

TABLE = TableSpec("/data/trips", "trips", "uuid", "city", "ts")


def test_a_backfill_spec_is_a_command_line_the_spark_application_accepts():
    spec = JobSpec("backfill", TABLE, SourceSpec("/in"), "upsert", {"hoodie.index.type": "BLOOM"},
                   start=dt.date(2026, 1, 1), end=dt.date(2026, 1, 3))
    args = _parser().parse_args(spec.application_args())
    assert (args.job, args.target_base_path, args.target_table, args.record_key_field) == \
        ("backfill", "/data/trips", "trips", "uuid")
    assert (args.partition_path_field, args.source_ordering_field, args.op) == ("city", "ts", "UPSERT")
    assert (args.start, args.end, args.hoodie_conf) == ("2026-01-01", "2026-01-03", ["hoodie.index.type=BLOOM"])


@pytest.mark.parametrize(("make", "message"), [
    (lambda: JobSpec("backfill", TABLE, SourceSpec("/in"), start=dt.date(2026, 2, 1), end=dt.date(2026, 1, 1)),
     "ends .2026-01-01. before it starts"),
    (lambda: JobSpec("ingest", TABLE, SourceSpec("/in"), "merge"), "unknown operation 'MERGE'"),
    (lambda: JobSpec("ingest", TABLE, SourceSpec("")), "source path is empty"),
    (lambda: JobSpec("backfill", TABLE, SourceSpec("/in")), "needs start and end"),
    (lambda: SourceSpec("/in", "avro"), "unknown source format 'avro'"),
    (lambda: parse_date("start", "yesterday"), "start 'yesterday' is not a date"),
])
def test_bad_job_arguments_are_refused_with_the_reason(make, message):
    with pytest.raises(InvalidInputError, match=message):
        make()
