"""Corrections that remove rows: a backfill day written with Hudi's insert_overwrite (the day's partition
replaced by the day's source) or delete_partition, judged by hudi-rs and Spark's Hudi reader against a
model, beside an ingest of the same day under the table's lock, and in the catalog."""

from __future__ import annotations

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec
from hudi_ops.locks.held_lock import HeldLock
from tests.integration.lock_options import await_stopped_writes_expired, occ_options
from tests.integration.processes import Job
from tests.integration.test_catalog_sync import catalog_options, partitions
from tests.integration.test_spark_jobs import DAY1, DAY2, ingest_args, run
from tests.tables import Model, read_hudi_rs, read_spark, trips, write_source

pytestmark = pytest.mark.spark  # spark-submit jobs of its own


def seeded(spark, capsys, tmp_path, options=None):
    """A trips table with 10 trips on each of two days; its model."""
    table, landing = tmp_path / "trips", tmp_path / "landing"
    rows = trips(DAY1, range(10), ts=1) + trips(DAY2, range(10), ts=1)
    write_source(landing / "a.parquet", rows)
    assert run(capsys, ingest_args(table, landing, hoodie_conf=options or {}), spark)[0] == 0
    return table, Model().upsert(rows)


def day_model(model: Model, day: str, rows) -> Model:
    """`model` with the day's rows replaced by `rows`."""
    kept = Model()
    kept.upsert(r for r in model.rows.values() if r["dt"] != day)
    return kept.upsert(rows)


def backfill(table, history, day, operation, **more):
    return BackfillSpec(base_path=str(table), source_path=str(history), start=day, end=day, operation=operation,
                        **more).to_argv()


def test_an_overwrite_backfill_of_a_day_whose_source_lost_rows_leaves_the_new_days_model(spark, tmp_path, capsys):
    table, model = seeded(spark, capsys, tmp_path)
    history = tmp_path / "history"
    corrected = trips(DAY1, range(0, 10, 2), ts=0, fare=70.0)  # five trips left upstream, older values
    write_source(history / f"dt={DAY1}" / "part-0.parquet", corrected)
    code, result = run(capsys, backfill(table, history, DAY1, "INSERT_OVERWRITE"), spark)
    assert code == 0 and result["outcome"] == "committed" and result["operation"] == "INSERT_OVERWRITE", result
    model = day_model(model, DAY1, corrected)  # ordering does not keep old rows: the partition is the source's
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
    assert MetaClient.open(table).timeline().completed_instant(result["instant"]).action == "replacecommit"
    # the run's day is done: an attempt of the same run writes nothing
    code, again = run(capsys, backfill(table, history, DAY1, "INSERT_OVERWRITE"), spark)
    assert code == 0 and again["outcome"] == "already committed", again


def test_delete_partition_removes_the_windows_days_and_the_catalog_drops_them(
        spark, hive_metastore, database, tmp_path, capsys):
    catalog = catalog_options(hive_metastore.uri, database)
    table, model = seeded(spark, capsys, tmp_path, catalog)
    assert partitions(spark, f"{database}.trips") == [DAY1, DAY2]
    deletion = BackfillSpec(base_path=str(table), start=DAY1, end=DAY1, operation="DELETE_PARTITION",
                            hoodie_conf=catalog)
    code, result = run(capsys, deletion.to_argv(), spark)
    assert code == 0 and result["operation"] == "DELETE_PARTITION" and result["catalog"] == f"{database}.trips", result
    assert read_hudi_rs(table) == read_spark(spark, table) == day_model(model, DAY1, []).expected()
    assert partitions(spark, f"{database}.trips") == [DAY2]
    code, idle = run(capsys, BackfillSpec(base_path=str(table), start=DAY1, end=DAY1,
                                          operation="DELETE_PARTITION", run_id="again").to_argv(), spark)
    assert code == 0 and idle["instant"] is None and "no partitions to delete" in idle["reason"], idle


def test_a_partition_operation_on_a_table_not_partitioned_by_day_is_refused_before_writing(spark, tmp_path, capsys):
    table, landing = tmp_path / "trips", tmp_path / "landing"
    write_source(landing / "a.parquet", trips(DAY1, range(3), ts=1))
    assert run(capsys, ingest_args(table, landing, partition_path_field="trip_id"), spark)[0] == 0
    code, result = run(capsys, BackfillSpec(base_path=str(table), start=DAY1, end=DAY1,
                                            operation="DELETE_PARTITION").to_argv(), spark)
    assert code == 2 and "needs a table partitioned by `dt` alone" in result["message"], result
    assert "partitioned by trip_id" in result["message"], result


def test_an_overwrite_racing_an_ingest_of_its_day_one_retries_and_the_table_follows_the_commit_order(
        spark, zookeeper, tmp_path, capsys):
    options = occ_options(zookeeper.url)
    table, model = seeded(spark, capsys, tmp_path, options)
    history, landing = tmp_path / "history", tmp_path / "landing"
    corrected = trips(DAY1, range(0, 10, 3), ts=0, fare=80.0)
    write_source(history / f"dt={DAY1}" / "part-0.parquet", corrected)
    updates = trips(DAY1, range(5, 12), ts=5, fare=30.0)  # two new trips, five updated
    write_source(landing / "b.parquet", updates)
    jobs = {"overwrite": backfill(table, history, DAY1, "INSERT_OVERWRITE", run_id="r", hoodie_conf=options),
            "ingest": ingest_args(table, landing, hoodie_conf=options)}
    lock_key = options["hoodie.write.lock.zookeeper.lock_key"]
    with HeldLock({**options, "hoodie.write.lock.wait_time_ms": "60000"}, lock_key) as lock:
        started = {name: Job.start(argv, tmp_path / f"{name}.log") for name, argv in jobs.items()}
        lock.line_up_writers(2, timeout_s=240)
    results = {name: job.finish() for name, job in started.items()}
    codes = sorted(code for code, _ in results.values())
    assert codes == [0, 3], results  # the replaced file groups are the ingest's: one of them conflicts
    (loser,) = [name for name, (code, _) in results.items() if code == 3]
    winner = "ingest" if loser == "overwrite" else "overwrite"
    await_stopped_writes_expired(table)
    code, retried = run(capsys, jobs[loser], spark)  # the retry in the shared session: the race is the processes'
    assert code == 0 and retried["outcome"] == "committed", retried
    for name in (winner, loser):  # the table's rows follow the order the two committed in
        model = day_model(model, DAY1, corrected) if name == "overwrite" else model.upsert(updates)
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
