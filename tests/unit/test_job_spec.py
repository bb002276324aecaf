"""The typed job specs the Airflow operators build before any Spark job starts."""

from __future__ import annotations

import pytest

from hudi_ops.airflow.job_spec import JobSpec, SourceSpec, TableSpec
from hudi_ops.errors import InvalidInputError
from hudi_ops.spark.__main__ import _parser

TABLE = TableSpec("/data/trips", "trips", "uuid", "city", "ts")


def test_a_backfill_spec_is_a_command_line_the_spark_application_accepts():
    spec = JobSpec("backfill", TABLE, SourceSpec("/in"), "upsert", {"hoodie.index.type": "BLOOM"},
                   start="2026-01-01", end="2026-01-03", run_id="manual__1")
    args = _parser().parse_args(spec.application_args())
    assert (args.job, args.target_base_path, args.target_table, args.record_key_field) == \
        ("backfill", "/data/trips", "trips", "uuid")
    assert (args.partition_path_field, args.source_ordering_field, args.op) == ("city", "ts", "UPSERT")
    assert (args.start, args.end, args.run_id, args.hoodie_conf) == \
        ("2026-01-01", "2026-01-03", "manual__1", ["hoodie.index.type=BLOOM"])
    assert args.table_type is None  # the table's own type, unless the spec names one


def test_a_table_type_given_is_passed_on():
    spec = JobSpec("ingest", TableSpec("/t", "t", "id", table_type="MERGE_ON_READ"), SourceSpec("/in"))
    assert _parser().parse_args(spec.application_args()).table_type == "MERGE_ON_READ"


@pytest.mark.parametrize(("make", "message"), [
    (lambda: JobSpec("backfill", TABLE, SourceSpec("/in"), start="2026-02-01", end="2026-01-01"),
     "ends .2026-01-01. before it starts"),
    (lambda: JobSpec("ingest", TABLE, SourceSpec("/in"), "merge"), "unknown operation 'MERGE'"),
    (lambda: JobSpec("ingest", TABLE, SourceSpec("")), "source path is empty"),
    (lambda: JobSpec("backfill", TABLE, SourceSpec("/in")), "needs start and end"),
    (lambda: JobSpec("backfill", TABLE, SourceSpec("/in"), start="yesterday", end="2026-01-01"),
     "--start 'yesterday' is not a date"),
    (lambda: SourceSpec("/in", "avro"), "unknown source format 'avro'"),
    (lambda: TableSpec("/t", "t", "id", table_type="COPY"), "unknown table_type 'COPY'"),
])
def test_bad_job_arguments_are_refused_with_the_reason(make, message):
    with pytest.raises(InvalidInputError, match=message):
        make()
