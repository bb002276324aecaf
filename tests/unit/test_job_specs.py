"""The job contract: every spec goes to the Spark application's arguments and back unchanged, bad values
fail in the spec (before any spark-submit) naming the flag and the fix, and the job's final JSON line
is read back into the spec's result type."""

from __future__ import annotations

import json

import pytest

from hudi_ops.errors import ConfigError, InvalidInputError
from hudi_ops.job_specs import (
    JOBS,
    ArchiveSpec,
    BackfillSpec,
    CleanSpec,
    ClusterSpec,
    CompactSpec,
    DedupeSpec,
    IngestSpec,
    JobFailure,
    JobResult,
    RestoreSpec,
    RollbackFailedSpec,
    SavepointSpec,
    ServiceResult,
    parse_argv,
)

OPTIONS = {"hoodie.write.lock.wait_time_ms": "20000", "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS"}
SPECS = [
    IngestSpec(base_path="/data/trips", source_path="/landing/trips", source_format="json", table_name="trips",
               table_type="merge_on_read", record_key_field="trip_id,city", partition_path_field="dt",
               ordering_field="ts", operation="bulk_insert", hoodie_conf=OPTIONS, props="/etc/hudi/trips.props"),
    IngestSpec(base_path="s3a://bucket/trips", source_path="/landing"),
    BackfillSpec(base_path="/data/trips", source_path="/history", start="2026-10-01", end="2026-10-31",
                 run_id="manual__2026-11-25T10:00:00+00:00", operation="DELETE"),
    CompactSpec(base_path="/data/trips", mode="execute", instant_time="20261125101010101", wait_seconds=30),
    ClusterSpec(base_path="/data/trips", mode="schedule"),
    CleanSpec(base_path="/data/trips", dry_run=True, hoodie_conf=OPTIONS),
    CleanSpec(base_path="/data/trips", mode="execute"),
    ArchiveSpec(base_path="/data/trips"),
    RollbackFailedSpec(base_path="/data/trips", hoodie_conf=OPTIONS),
    SavepointSpec(base_path="/data/trips", instant_time="20261125101010101", comment="before the fix"),
    SavepointSpec(base_path="/data/trips", delete="20261125101010101"),
    RestoreSpec(base_path="/data/trips", savepoint="20261125101010101"),
    DedupeSpec(base_path="/data/trips", partitions="2026-11-20,2026-11-21", dry_run=True),
]


def test_every_job_has_a_spec_and_the_specs_cover_them_all():
    assert set(JOBS) == {"ingest", "backfill", "compact", "cluster", "clean", "archive", "rollback-failed",
                         "savepoint", "restore", "dedupe"}
    assert {type(s) for s in SPECS} == set(JOBS.values())


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: " ".join(s.to_argv()[:1] + s.to_argv()[3:5]))
def test_a_spec_goes_to_arguments_and_back_unchanged(spec):
    argv = spec.to_argv()
    assert argv[0] == spec.JOB
    assert parse_argv(argv) == spec
    assert type(spec).from_argv(argv) == spec


def test_the_arguments_are_hudi_utilities_flags_with_the_options_last():
    spec = SPECS[0]
    assert spec.to_argv() == [
        "ingest", "--target-base-path", "/data/trips", "--source-path", "/landing/trips", "--source-format", "json",
        "--target-table", "trips", "--table-type", "MERGE_ON_READ", "--record-key-field", "trip_id,city",
        "--partition-path-field", "dt", "--source-ordering-field", "ts", "--op", "BULK_INSERT",
        "--wait-seconds", "900.0", "--source-limit", "0", "--source-limit-files", "0",
        "--source-kind", "files", "--source-limit-events", "0", "--kafka-value-format", "json",
        "--props", "/etc/hudi/trips.props",
        "--hoodie-conf", "hoodie.cleaner.policy=KEEP_LATEST_COMMITS",
        "--hoodie-conf", "hoodie.write.lock.wait_time_ms=20000"]
    assert CleanSpec(base_path="/t", dry_run=True).to_argv() == ["clean", "--base-path", "/t", "--mode",
                                                                 "scheduleAndExecute", "--dry-run"]


def test_hand_written_arguments_parse_as_hudi_users_write_them():
    spec = parse_argv(["compact", "--base-path", "/t", "--mode", "execute", "--hoodie-conf", "a=1",
                       "--hoodie-conf", "a=2", "--hoodie-conf", " b = x=y "])
    assert spec == CompactSpec(base_path="/t", mode="execute", hoodie_conf={"a": "2", "b": "x=y"})


@pytest.mark.parametrize(("make", "message"), [
    (lambda: IngestSpec(base_path="/t", source_path="/s", operation="merge"),
     "ingest: --op 'MERGE' is not valid; use one of UPSERT, INSERT, BULK_INSERT, DELETE"),
    (lambda: IngestSpec(base_path="/t", source_path="/s", source_format="orc"),
     "--source-format 'orc' is not valid; use one of parquet, json, csv"),
    (lambda: IngestSpec(base_path=" ", source_path="/s"), "--target-base-path is empty"),
    (lambda: BackfillSpec(base_path="/t", source_path="/s", start="2026-10-31", end="2026-10-01"),
     "ends (2026-10-01) before it starts (2026-10-31); swap the start and the end"),
    (lambda: BackfillSpec(base_path="/t", source_path="/s", start="yesterday", end="2026-10-01"),
     "--start 'yesterday' is not a date; write YYYY-MM-DD"),
    (lambda: CompactSpec(base_path="/t", mode="run"), "--mode 'run' is not valid"),
    (lambda: CompactSpec(base_path="/t", wait_seconds=-1), "--wait-seconds must be 0 or more seconds"),
    (lambda: IngestSpec(base_path="/t", source_path="/s", source_limit_files=-1),
     "--source-limit-files must be 0 or more"),
    (lambda: SavepointSpec(base_path="/t", instant_time="1", delete="1"), "not both"),
    (lambda: DedupeSpec(base_path="/t", partitions=" , "), "dedupe: --partitions names no partition"),
])
def test_bad_values_fail_in_the_spec_naming_the_flag_and_the_fix(make, message):
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


@pytest.mark.parametrize(("argv", "message"), [
    ([], "name the job first: one of ingest, backfill"),
    (["ingest", "--target-base-path", "/t"], "--source-path is required: the landing folder"),
    (["ingest", "--target-base-path", "/t", "--source-kind", "kafka"], "--source-kind kafka needs --kafka-topic"),
    (["ingest", "--target-base-path", "/t", "--source-kind", "kafka", "--kafka-topic", "t", "--source-path", "/l"],
     "a Kafka ingest does not read"),
    (["backfill", "--target-base-path", "/t", "--start", "2026-11-01", "--end", "2026-11-02"],
     "--source-path is required"),
    (["restore", "--base-path", "/t"], "required: --savepoint"),
    (["clean", "--base-path", "/t", "--instant-time", "1"], "unrecognized arguments: --instant-time 1"),
    (["ingest", "--target-base-path", "/t", "--source-path", "/s", "--source-limit", "1GB"],
     "argument --source-limit: invalid int value: '1GB'"),
])
def test_bad_arguments_are_bad_input(argv, message):
    with pytest.raises(InvalidInputError, match=message):
        parse_argv(argv)


def test_a_malformed_option_names_the_form():
    with pytest.raises(ConfigError, match="is not key=value"):
        parse_argv(["archive", "--base-path", "/t", "--hoodie-conf", "no-equals-sign"])


def test_the_options_are_the_props_file_then_the_command_line(tmp_path):
    props = tmp_path / "trips.props"
    props.write_text("hoodie.write.lock.wait_time_ms=5000\nhoodie.table.name=trips\n")
    spec = ArchiveSpec(base_path="/t", props=str(props), hoodie_conf={"hoodie.write.lock.wait_time_ms": "9"})
    assert spec.options() == {"hoodie.write.lock.wait_time_ms": "9", "hoodie.table.name": "trips"}


def test_the_final_line_reads_back_as_the_specs_result():
    ingest, clean = SPECS[1], SPECS[5]
    done = JobResult("ingest", instant="20261125101010101", operation="upsert", commits=1, rows=5, inserts=5,
                     warnings=("late",), durations_ms={"total": 1.5})
    assert ingest.parse_result(json.dumps(done.to_dict())) == done
    service = ServiceResult("clean", mode="dry-run", outcome="planned", files=2, details={"files": ["a", "b"]})
    assert clean.parse_result(json.dumps(service.to_dict())) == service
    failed = JobFailure("clean", 3, "RollbackRaceError", "another process rolled back")
    assert clean.parse_result(json.dumps(failed.to_dict())) == failed
    # another job's line, or a log line, is not this job's result
    assert ingest.parse_result(json.dumps(service.to_dict())) is None
    assert ingest.parse_result("26/11/25 11:43:17 INFO TransactionManager: {x}") is None


def test_the_final_line_goes_whole_into_the_operators_result_file_and_to_stdout(tmp_path, monkeypatch, capsys):
    from hudi_ops.job_specs.results import RESULT_FILE_ENV, parse_result_line, report

    result_file = tmp_path / "result.json"
    monkeypatch.setenv(RESULT_FILE_ENV, str(result_file))
    outcome = JobResult(job="ingest", instant="20261125101010101", commits=1, rows=3)
    report(outcome)
    assert parse_result_line(result_file.read_text(), "ingest", JobResult) == outcome
    assert parse_result_line(capsys.readouterr().out, "ingest", JobResult) == outcome
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]  # no partial file left


def test_a_result_file_goes_to_a_folder_made_for_it_reads_back_and_is_removed(tmp_path, monkeypatch, capsys):
    from hudi_ops.job_specs.results import (
        RESULT_FILE_ENV,
        parse_result_line,
        read_result_file,
        remove_result_file,
        report,
    )

    target = tmp_path / "table" / ".hudi-ops" / "results" / "run.json"  # a cluster-mode job's, on the table's storage
    monkeypatch.setenv(RESULT_FILE_ENV, target.as_uri())
    outcome = JobResult(job="ingest", instant="20261125101010101", commits=1)
    report(outcome)
    line = read_result_file(target.as_uri())
    assert parse_result_line(line, "ingest", JobResult) == outcome
    assert read_result_file(target.as_uri()) == line  # read again by a retry, until the task removes it
    remove_result_file(target.as_uri())
    assert not target.exists() and read_result_file(target.as_uri()) is None
    remove_result_file(target.as_uri())  # gone already: nothing to do


def test_a_result_file_that_cannot_be_written_does_not_fail_the_job(tmp_path, monkeypatch, capsys):
    from hudi_ops.job_specs.results import RESULT_FILE_ENV, parse_result_line, report

    (tmp_path / "a-file").write_text("")  # no folder can be made where a file is
    monkeypatch.setenv(RESULT_FILE_ENV, str(tmp_path / "a-file" / "result.json"))
    outcome = JobResult(job="ingest", instant="20261125101010101", commits=1)
    report(outcome)  # the commit is done: the line still reaches stdout
    out, err = capsys.readouterr()
    assert parse_result_line(out, "ingest", JobResult) == outcome and f"${RESULT_FILE_ENV}" in err
