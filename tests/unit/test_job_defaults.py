"""hudi-ops' defaults under a job's options: one resolver, whatever started the job."""

from __future__ import annotations

from hudi_ops.options.job_defaults import (
    BACKFILL_APART,
    INGESTION_FIRST,
    LOCK_WAIT,
    SINGLE_WRITER_HEARTBEATS,
    hudi_ops_defaults,
    resolve_job_options,
)
from hudi_ops.options.keys import LockConfig
from hudi_ops.options.occ import LOCK_IMPLIES, zookeeper_lock_options

SMALL_FILE_LIMIT = "hoodie.parquet.small.file.limit"
URL = {"hoodie.write.lock.zookeeper.url": "127.0.0.1:2181"}


def test_a_backfill_beside_other_writers_fills_no_small_files_unless_its_options_say_so():
    lock = zookeeper_lock_options("127.0.0.1", 2181, {}, "trips")
    assert BACKFILL_APART == {SMALL_FILE_LIMIT: "0"}
    assert resolve_job_options("backfill", lock)[SMALL_FILE_LIMIT] == "0"
    assert resolve_job_options("backfill", {**lock, SMALL_FILE_LIMIT: "1048576"})[SMALL_FILE_LIMIT] == "1048576"
    assert SMALL_FILE_LIMIT not in resolve_job_options("ingest", lock)  # the ingest fills small files
    assert SMALL_FILE_LIMIT not in resolve_job_options("backfill", {})  # a single writer: Hudi's own default


def test_a_plain_spark_submit_with_a_zookeeper_url_runs_ingestion_first_and_one_lock_try():
    """The documented Spark interface: the lock's url alone gets what the Airflow hook's options get."""
    for job in ("ingest", "backfill", "compact", "cluster", "clean"):
        resolved = resolve_job_options(job, URL)
        assert {**LOCK_IMPLIES, **LOCK_WAIT, **INGESTION_FIRST}.items() <= resolved.items()


def test_the_jobs_own_options_win_and_resolving_twice_changes_nothing():
    mine = {**URL, LockConfig.CONFLICT_RESOLUTION_STRATEGY.name: "my.Strategy",
            "hoodie.write.lock.client.num_retries": "3"}
    resolved = resolve_job_options("ingest", mine)
    assert mine.items() <= resolved.items()
    assert resolve_job_options("ingest", resolved) == resolved
    assert hudi_ops_defaults("ingest", resolved) == {}


def test_a_bucket_index_keeps_hudis_own_conflict_check_and_update_strategy():
    resolved = resolve_job_options("ingest", {**URL, "hoodie.index.type": "BUCKET"})
    assert not INGESTION_FIRST.keys() & resolved.keys() and LOCK_WAIT.items() <= resolved.items()


def test_the_writers_of_a_table_without_a_lock_beat_and_leave_failed_writes_to_a_lazy_rollback():
    for job in ("ingest", "backfill"):
        assert resolve_job_options(job, {}) == SINGLE_WRITER_HEARTBEATS
    eager = {"hoodie.cleaner.policy.failed.writes": "EAGER"}
    assert resolve_job_options("ingest", eager)["hoodie.cleaner.policy.failed.writes"] == "EAGER"
    # its services keep Hudi's defaults: a writer outside hudi-ops beats no heartbeat for them to judge
    for job in ("clean", "rollback-failed", "compact", "cluster", "archive"):
        assert resolve_job_options(job, {}) == {}
