"""Hudi's Java failures, as PySpark hands them over, become the hudi-ops errors (and exit codes) they mean.

The chains are the (class, message) pairs of real failures of Hudi 1.2 on Spark, shortened.
"""

from __future__ import annotations

import pytest

from hudi_ops.errors import (
    EXIT_BAD_INPUT,
    EXIT_CONFLICT,
    EXIT_FAILED,
    EXIT_LOCK_TIMEOUT,
    EXIT_SOURCE_UNAVAILABLE,
    ConcurrentJobError,
    ConfigError,
    InvalidInputError,
    LockAcquisitionError,
    RollbackRaceError,
    SourceUnavailableError,
    WriteConflictError,
    exit_code,
)
from hudi_ops.spark.java_errors import JavaFailure, JobContext, hudi_ops_error

CONTEXT = JobContext("/data/trips", ("trip_id",))
H = "org.apache.hudi.exception."
CONFLICT = (
    (H + "HoodieWriteConflictException",
     "java.util.ConcurrentModificationException: Cannot resolve conflicts for overlapping writes between first "
     "operation = ConcurrentOperation(actionState=INFLIGHT, actionType=commit, instantTime=20261123215255476), "
     "second operation = ConcurrentOperation(actionState=COMPLETED, actionType=commit, instantTime=20261123215255199)"),
    ("java.util.ConcurrentModificationException", "Cannot resolve conflicts for overlapping writes between ..."),
)
NULL_KEY_TEXT = ('recordKey value: "null" for field: "trip_id" cannot be null or empty.')
NULL_KEY_LOCAL = (
    (H + "HoodieUpsertException", "Failed to upsert for commit time 20261123215921202"),
    ("org.apache.spark.SparkException", "Job aborted due to stage failure: Task 1 in stage 478.0 failed 1 times, "
     f"most recent failure: Lost task 1.0 (TID 673) (127.0.0.1 executor driver): {H}HoodieKeyException: "
     f"{NULL_KEY_TEXT}\n\tat org.apache.hudi.keygen.KeyGenUtils.getRecordKey(KeyGenUtils.java:277)"),
    (H + "HoodieKeyException", NULL_KEY_TEXT),
)
#: on a cluster the executor's exception reaches the driver only as text in Spark's message
NULL_KEY_CLUSTER = NULL_KEY_LOCAL[:2]
LOCK = ((H + "HoodieLockException", "FAILED_TO_ACQUIRE lock atZkBasePath = /hudi/locks, lock key = trips"),)
MISSING_FIELD = ((H + "MissingSchemaFieldException", "Schema validation failed due to missing field. Fields "
                  "missing from incoming schema: {trips_record.fare}\nwriterSchema: {...}"),)
CONFIG = ((H + "HoodieException", "Config conflict(key\tcurrent value\texisting value):\nRecordKey:\tfare\ttrip_id"),)
ROLLBACK_RACE = (
    (H + "HoodieRollbackException", "Failed to rollback /data/trips commits 20261123231635613"),
    (H + "HoodieIOException", "Could not delete instant [==>20261123231635613__commit__INFLIGHT]"),
)
ROLLBACK_RACE_LATE = ((H + "HoodieRollbackException", "No pending rollback instants found to execute rollback"),)
#: Hudi 1.2 (PR #18012): a plan whose last executor's heartbeat is alive, refused under the table's lock
PLAN_HEARTBEAT = ((H + "HoodieLockException", "Cannot execute instant 20261124101010101 due to heartbeat by "
                   "concurrent writer/job"),)
NO_TABLE = ((H + "TableNotFoundException", "Hoodie table not found in path /data/trips/.hoodie"),)
OTHER = ((H + "HoodieUpsertException", "Failed to upsert for commit time 20261123231635613"),
         ("java.lang.ArrayIndexOutOfBoundsException", "Index 9 out of bounds for length 7"))


def clustering_update(file_group: str) -> tuple[tuple[str, str], ...]:
    return ((H + "HoodieUpsertException", "Failed to upsert for commit time 20261124020101000"),
            (H + "HoodieClusteringUpdateException", f"Not allowed to update the clustering file group {file_group}. "
             "For pending clustering operations, we are not going to support update for now."))


@pytest.mark.parametrize("file_group", [
    "HoodieFileGroupId(partitionPath=2026-11-20, fileId=08582bf1-d324-45b5-82e4-ab802248c989-0)",  # Hudi 1.2
    "HoodieFileGroupId{partitionPath='2026-11-20', fileId='08582bf1-d324-45b5-82e4-ab802248c989-0'}",  # 1.1
], ids=["1.2", "1.1"])
def test_an_update_refused_under_a_pending_clustering_is_a_retryable_conflict_naming_the_file_group(file_group):
    error = hudi_ops_error(JavaFailure(clustering_update(file_group)), CONTEXT)  # no table: the plan stays unnamed
    assert isinstance(error, WriteConflictError) and exit_code(error) == EXIT_CONFLICT
    assert "file group 2026-11-20/08582bf1-d324-45b5-82e4-ab802248c989-0" in str(error)
    assert "retry once the clustering has run" in str(error)


#: Hudi 1.1.1's early conflict detection, thrown in a task while it creates a marker (the message as its
#: source writes it; bench/wasted_work.py meets it for real)
EARLY_CONFLICT = (
    (H + "HoodieUpsertException", "Error upserting bucketType UPDATE for partition :0"),
    (H + "HoodieEarlyConflictDetectionException", "java.util.ConcurrentModificationException: Early conflict "
     "detected but cannot resolve conflicts for overlapping writes"),
    ("java.util.ConcurrentModificationException", "Early conflict detected but cannot resolve conflicts for "
     "overlapping writes"),
)


def test_a_conflict_found_early_is_a_retryable_write_conflict():
    error = hudi_ops_error(JavaFailure(EARLY_CONFLICT), CONTEXT)
    assert isinstance(error, WriteConflictError) and exit_code(error) == EXIT_CONFLICT
    assert "found early" in str(error) and "retry the write" in str(error)


def test_a_conflict_names_our_instant_and_the_one_that_won():
    error = hudi_ops_error(JavaFailure(CONFLICT), CONTEXT)
    assert isinstance(error, WriteConflictError) and exit_code(error) == EXIT_CONFLICT
    assert (error.instant, error.conflicting_instant) == ("20261123215255476", "20261123215255199")
    assert "retry the write" in str(error)


@pytest.mark.parametrize("chain", [NULL_KEY_LOCAL, NULL_KEY_CLUSTER], ids=["local", "cluster"])
def test_a_null_key_found_in_a_task_is_bad_input_naming_the_field(chain):
    error = hudi_ops_error(JavaFailure(chain), CONTEXT)
    assert isinstance(error, InvalidInputError) and exit_code(error) == EXIT_BAD_INPUT
    assert "record key field 'trip_id' is null or empty" in str(error) and "drop or fill those rows" in str(error)


def test_a_lock_not_acquired_is_the_retryable_lock_timeout_naming_the_lock():
    error = hudi_ops_error(JavaFailure(LOCK), CONTEXT)
    assert isinstance(error, LockAcquisitionError) and exit_code(error) == EXIT_LOCK_TIMEOUT
    assert "lock key = trips" in str(error) and "hoodie.write.lock.wait_time_ms" in str(error)


def test_a_source_that_did_not_answer_has_an_exit_code_of_its_own_which_airflow_retries():
    assert exit_code(SourceUnavailableError("Kafka at 127.0.0.1:9092 did not answer")) == EXIT_SOURCE_UNAVAILABLE == 5
    read = (("org.apache.spark.SparkException", "Job aborted due to stage failure: Task 0 in stage 1.0 failed"),
            ("org.apache.kafka.common.errors.TimeoutException",
             "Timeout of 60000ms expired before the position for partition trips-0 could be determined"))
    error = hudi_ops_error(JavaFailure(read), JobContext("/data/trips", ("trip_id",), "Kafka topic trips"))
    assert isinstance(error, SourceUnavailableError) and exit_code(error) == EXIT_SOURCE_UNAVAILABLE
    assert "while the job read Kafka topic trips: Timeout of 60000ms expired" in str(error)


def test_schema_and_config_refusals_are_bad_input():
    missing = hudi_ops_error(JavaFailure(MISSING_FIELD), CONTEXT)
    assert isinstance(missing, InvalidInputError) and "trips_record.fare" in str(missing)
    config = hudi_ops_error(JavaFailure(CONFIG), CONTEXT)
    assert isinstance(config, ConfigError) and "RecordKey:\tfare\ttrip_id" in str(config)


def test_anything_else_fails_plainly_naming_the_root_cause():
    error = hudi_ops_error(JavaFailure(OTHER), CONTEXT)
    assert exit_code(error) == EXIT_FAILED
    assert str(error).startswith("the Spark job failed: java.lang.ArrayIndexOutOfBoundsException: Index 9")
    assert f"in {H}HoodieUpsertException" in str(error)


def table_with_pending(path, *pending: str) -> JobContext:
    """A bare table folder whose timeline holds the given pending commits."""
    (path / ".hoodie" / "timeline").mkdir(parents=True)
    (path / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=trips\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n"
        "hoodie.timeline.layout.version=2\nhoodie.timeline.path=timeline\n")
    for instant in pending:
        (path / ".hoodie" / "timeline" / f"{instant}.commit.requested").write_bytes(b"")
    return JobContext(str(path))


@pytest.mark.parametrize("chain", [ROLLBACK_RACE, ROLLBACK_RACE_LATE], ids=["instant gone", "rollback done"])
def test_a_rollback_another_process_finished_first_is_a_race_the_rolling_back_jobs_accept(chain, tmp_path):
    context = table_with_pending(tmp_path / "trips")  # the failed write is no longer pending
    error = hudi_ops_error(JavaFailure(chain), context)
    # clean and rollback-failed report success with it as a warning; any other job (whose own work was
    # not done) retries
    assert isinstance(error, RollbackRaceError) and exit_code(error) == EXIT_CONFLICT
    assert f"rolled back the same failed write of {context.base_path}" in str(error)
    assert "nothing is lost" in str(error)


def test_an_instant_file_the_storage_would_not_delete_is_no_race(tmp_path):
    context = table_with_pending(tmp_path / "trips", "20261123231635613")  # still pending: nobody rolled it back
    error = hudi_ops_error(JavaFailure(ROLLBACK_RACE), context)
    assert exit_code(error) == EXIT_FAILED and "Could not delete instant" in str(error)


def test_a_write_that_completed_is_no_race_whatever_the_rollback_said(tmp_path):
    context = table_with_pending(tmp_path / "trips")
    timeline = tmp_path / "trips" / ".hoodie" / "timeline"
    (timeline / "20261123231635613_20261123231636000.commit").write_text("{}")
    error = hudi_ops_error(JavaFailure(ROLLBACK_RACE), context)
    assert exit_code(error) == EXIT_FAILED and "Could not delete instant" in str(error)


def test_a_clean_or_rollback_instant_that_could_not_be_deleted_is_no_race(tmp_path):
    context = table_with_pending(tmp_path / "trips")
    chain = ((H + "HoodieRollbackException", "Failed to rollback /data/trips commits 20261123231635613"),
             (H + "HoodieIOException", "Could not delete instant [==>20261123231635613__rollback__INFLIGHT]"))
    assert exit_code(hudi_ops_error(JavaFailure(chain), context)) == EXIT_FAILED


def test_a_plan_held_by_a_live_executor_heartbeat_is_retry_later_not_a_lock_timeout():
    error = hudi_ops_error(JavaFailure(PLAN_HEARTBEAT), CONTEXT)
    assert isinstance(error, ConcurrentJobError) and exit_code(error) == EXIT_CONFLICT
    assert "plan 20261124101010101" in str(error) and "heartbeat has not expired" in str(error)
    assert "wait_time_ms" not in str(error)


def test_a_table_half_created_by_another_writer_is_retryable_and_a_missing_one_bad_input(tmp_path):
    missing = hudi_ops_error(JavaFailure(NO_TABLE), JobContext(str(tmp_path / "t")))
    assert exit_code(missing) == EXIT_BAD_INPUT
    (tmp_path / "t" / ".hoodie").mkdir(parents=True)  # the other writer's first step
    creating = hudi_ops_error(JavaFailure(NO_TABLE), JobContext(str(tmp_path / "t")))
    assert isinstance(creating, ConcurrentJobError) and exit_code(creating) == EXIT_CONFLICT
    assert "another writer is creating the table" in str(creating)


def test_a_python_error_is_not_a_java_failure():
    assert JavaFailure.of(ValueError("no Java here")) is None


def archived_under_the_job(table_path) -> tuple[tuple[str, str], ...]:
    """What Hudi 1.1.1 raised in a chaos run: a compaction read a commit that a writer had just archived."""
    missing = f"File file:{table_path}/.hoodie/timeline/20261125092701051_20261125092719915.deltacommit does not exist"
    return ((H + "HoodieCompactionException", "Could not compact /t"),
            (H + "HoodieIOException", "Could not read commit details from /t/.hoodie/timeline/2026..."),
            ("java.io.FileNotFoundException", missing))


def test_a_commit_archived_while_the_job_read_the_timeline_is_a_retryable_concurrent_job(tmp_path):
    context = table_with_pending(tmp_path / "trips")
    error = hudi_ops_error(JavaFailure(archived_under_the_job(context.base_path)), context)
    assert isinstance(error, ConcurrentJobError) and exit_code(error) == EXIT_CONFLICT
    assert "archived instant 20261125092701051" in str(error) and "retry" in str(error)


def test_an_instant_file_missing_while_still_on_the_timeline_is_no_archival(tmp_path):
    context = table_with_pending(tmp_path / "trips", "20261125092701051")
    error = hudi_ops_error(JavaFailure(archived_under_the_job(context.base_path)), context)
    assert exit_code(error) == EXIT_FAILED


def plan_withdrawn_under_the_job(table_path) -> tuple[tuple[str, str], ...]:
    """What Hudi 1.1.1 raised in a contention run: a backfill read the pending clustering plans (which
    writers allowed to update read) just as a clustering that had yielded to a writer withdrew its plan."""
    missing = f"File file:{table_path}/.hoodie/timeline/20261126023415849.clustering.requested does not exist"
    return ((H + "HoodieUpsertException", "Failed to upsert for commit time 20261126023433060"),
            (H + "HoodieException", "Error getting all file groups in pending clustering"),
            (H + "HoodieIOException", "Failed to check emptiness of instant "
                                      "[==>20261126023415849__clustering__REQUESTED]"),
            ("java.io.FileNotFoundException", missing))


def test_a_plan_withdrawn_while_the_job_read_it_is_a_retryable_concurrent_job(tmp_path):
    context = table_with_pending(tmp_path / "trips")
    error = hudi_ops_error(JavaFailure(plan_withdrawn_under_the_job(context.base_path)), context)
    assert isinstance(error, ConcurrentJobError) and exit_code(error) == EXIT_CONFLICT
    assert "rolled back pending instant 20261126023415849" in str(error) and "retry" in str(error)
    still = table_with_pending(tmp_path / "other", "20261126023415849")  # still pending: the storage lost it
    assert exit_code(hudi_ops_error(JavaFailure(plan_withdrawn_under_the_job(still.base_path)), still)) == EXIT_FAILED


#: what Hudi 1.1.1 raised in a contention run: a clustering's commit under the prefer-writer check, while
#: writers were in flight
WRITES_IN_FLIGHT = (
    (H + "HoodieClusteringException", "unable to transition clustering inflight to complete: 20261126025257893"),
    ("java.lang.NullPointerException", 'Cannot invoke "java.lang.Comparable.compareTo(Object)" because the return '
     'value of "java.util.function.Function.apply(Object)" is null'),
)


def test_a_clustering_that_hudi_1_1_1_cannot_check_against_writes_in_flight_is_a_conflict_with_them(tmp_path):
    context = table_with_pending(tmp_path / "trips", "20261126025301000")
    error = hudi_ops_error(JavaFailure(WRITES_IN_FLIGHT), context)
    assert isinstance(error, WriteConflictError) and exit_code(error) == EXIT_CONFLICT
    assert "clustering 20261126025257893 met write(s) in flight at its commit (20261126025301000)" in str(error)
    # the writes may have completed before the job read the timeline: the failure alone says they were there
    done = hudi_ops_error(JavaFailure(WRITES_IN_FLIGHT), table_with_pending(tmp_path / "done"))
    assert exit_code(done) == EXIT_CONFLICT and "(since done)" in str(done)
    # another NullPointerException at a clustering's commit is no such conflict
    other = ((WRITES_IN_FLIGHT[0]), ("java.lang.NullPointerException", "Cannot invoke \"Object.toString()\""))
    assert exit_code(hudi_ops_error(JavaFailure(other), context)) == EXIT_FAILED


def metadata_log_gone(table_path) -> tuple[tuple[str, str], ...]:
    """What Hudi 1.1.1 raised in a chaos run: a backfill's metadata reader opened a log that a concurrent
    rollback of a failed write had just deleted."""
    log = f"{table_path}/.hoodie/metadata/files/.files-0000-0_20261126003257297.log.1_3-23-33"
    return ((H + "HoodieUpsertException", "Failed to upsert for commit time 20261126003301000"),
            ("java.io.FileNotFoundException", f"File file:{log} does not exist"))


def test_a_metadata_table_log_rolled_back_while_the_job_read_it_is_a_retryable_concurrent_job(tmp_path):
    context = table_with_pending(tmp_path / "trips")
    (tmp_path / "trips" / ".hoodie" / "metadata" / ".hoodie" / "timeline").mkdir(parents=True)
    error = hudi_ops_error(JavaFailure(metadata_log_gone(context.base_path)), context)
    assert isinstance(error, ConcurrentJobError) and exit_code(error) == EXIT_CONFLICT
    assert "rolled back metadata-table deltacommit 20261126003257297" in str(error) and "retry" in str(error)


def test_a_metadata_table_log_missing_while_its_deltacommit_stands_is_no_rollback(tmp_path):
    context = table_with_pending(tmp_path / "trips")
    timeline = tmp_path / "trips" / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "20261126003257297_20261126003259000.deltacommit").write_text("{}")
    error = hudi_ops_error(JavaFailure(metadata_log_gone(context.base_path)), context)
    assert exit_code(error) == EXIT_FAILED


#: Hudi 1.1.1's check at commit, as a chaos run met it: a Kafka ingest that began before the table's
#: first commit completed, with its source's column order
SCHEMA_CHANGED = ((H + "HoodieSchemaEvolutionConflictException", "Detected incompatible concurrent schema "
                   "evolution. Schema when transaction starts: Not exists as no commited txn at that time, schema "
                   "when transaction enters validation phase: Option{val={...}}"),)


def test_a_schema_changed_by_a_concurrent_commit_is_a_retryable_concurrent_job():
    error = hudi_ops_error(JavaFailure(SCHEMA_CHANGED), CONTEXT)
    assert isinstance(error, ConcurrentJobError) and exit_code(error) == EXIT_CONFLICT
    assert "a concurrent commit changed the schema of" in str(error) and "Detected incompatible" in str(error)
    assert "its retry writes with the table's schema" in str(error)
