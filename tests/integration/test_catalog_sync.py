"""A table synced to a real Hive Metastore (thrift, from PySpark's jars) after its commits: Spark SQL with
Hive support reads it by name, as an analyst would, and sees what hudi-rs reads and the model says."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ops.job_specs import BackfillSpec, ClusterSpec, RestoreSpec, SavepointSpec
from local_platform.ports import free_port
from tests.integration.processes import Job
from tests.integration.test_concurrent_writers import Table
from tests.integration.test_spark_jobs import DAY1, DAY2, ingest_args, run
from tests.tables import COLUMNS, TRIPS, Model, read_hudi_rs, trips, write_source

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

DAY3 = "2026-11-22"


def catalog_options(uri: str, database: str, **more: str) -> dict[str, str]:
    """What the tables config's `catalog:` becomes (hudi_ops.airflow.dag_factory.tables_config)."""
    return {"hoodie.datasource.meta.sync.enable": "true", "hoodie.datasource.hive_sync.mode": "hms",
            "hoodie.datasource.hive_sync.metastore.uris": uri, "hoodie.datasource.hive_sync.database": database,
            **more}


def by_name(spark, table: str, columns=COLUMNS) -> list[tuple]:
    spark.catalog.refreshTable(table)  # Spark caches a table's files; another process changed them
    return sorted(tuple(r) for r in spark.table(table).select(*columns).collect())


def partitions(spark, table: str) -> list[str]:
    return sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect())


def test_a_merge_on_read_tables_ro_and_rt_read_their_models_by_name_after_each_commit(
        spark, hive_metastore, database, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    catalog = catalog_options(hive_metastore.uri, database)
    first = trips(DAY1, range(10), ts=1) + trips(DAY2, range(10), ts=1)
    write_source(source / "a.parquet", first)
    code, result = run(capsys, ingest_args(table, source, table_type="MERGE_ON_READ", hoodie_conf=catalog), spark)
    assert code == 0 and result["catalog"] == f"{database}.trips", result
    assert {r[1] for r in spark.sql(f"SHOW TABLES IN {database}").collect()} >= {"trips_ro", "trips_rt"}
    model = Model().upsert(first)
    assert by_name(spark, f"{database}.trips_rt") == by_name(spark, f"{database}.trips_ro") == model.expected()

    # updates go to log files: the snapshot (_rt) has them, read-optimized (_ro) reads the base files
    changed = trips(DAY1, range(5), ts=2, fare=50.0) + trips(DAY3, range(3), ts=2)
    write_source(source / "b.parquet", changed)
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=catalog), spark)
    assert code == 0 and result["catalog"] == f"{database}.trips", result
    model.upsert(changed)
    assert by_name(spark, f"{database}.trips_rt") == read_hudi_rs(table) == model.expected()
    assert by_name(spark, f"{database}.trips_ro") == read_hudi_rs(table, read_optimized=True)
    assert len(partitions(spark, f"{database}.trips_rt")) == 3


def test_a_new_column_reaches_the_catalogs_schema(spark, hive_metastore, database, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    catalog = catalog_options(hive_metastore.uri, database)
    write_source(source / "a.parquet", trips(DAY1, range(4), ts=1))
    assert run(capsys, ingest_args(table, source, hoodie_conf=catalog), spark)[0] == 0
    wider = TRIPS.append(pa.field("tip", pa.float64()))
    rows = [{**r, "tip": 1.5} for r in trips(DAY2, range(4), ts=1)]
    write_source(source / "b.parquet", rows, wider)
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=catalog), spark)
    assert code == 0 and result["catalog"] == f"{database}.trips", result
    spark.catalog.refreshTable(f"{database}.trips")
    assert "tip" in [c.name for c in spark.catalog.listColumns(f"{database}.trips")]
    tips = by_name(spark, f"{database}.trips", ("trip_id", "tip"))
    assert tips == sorted([(f"{DAY1}-{i:04d}", None) for i in range(4)] + [(f"{DAY2}-{i:04d}", 1.5) for i in range(4)])


def test_a_metastore_that_does_not_answer_leaves_the_commit_done_with_a_warning_and_the_next_sync_catches_up(
        spark, hive_metastore, database, tmp_path, capsys):
    """The run reports its commit (a failed task would be retried, find nothing new and be skipped, and the
    commit's Asset event would be lost), saying the sync failed; the next commit's sync registers both."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(4), ts=1))
    nobody = catalog_options(f"thrift://127.0.0.1:{free_port()}", database,
                             **{"hive.metastore.connect.retries": "1"})
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=nobody), spark)
    assert code == 0 and result["outcome"] == "committed" and result["catalog"] is None, result
    (warning,) = result["warnings"]
    assert warning.startswith("catalog sync failed: ingest committed ") and "stands as committed" in warning
    assert "hoodie.datasource.hive_sync.metastore.uris" in warning, warning
    model = Model().upsert(trips(DAY1, range(4), ts=1))
    assert read_hudi_rs(table) == model.expected()  # the commit is there

    write_source(source / "b.parquet", trips(DAY2, range(4), ts=1))
    catalog = catalog_options(hive_metastore.uri, database)
    assert run(capsys, ingest_args(table, source, hoodie_conf=catalog), spark)[0] == 0
    model.upsert(trips(DAY2, range(4), ts=1))
    assert by_name(spark, f"{database}.trips") == model.expected()
    assert len(partitions(spark, f"{database}.trips")) == 2


def test_an_ingest_and_two_backfills_at_once_each_sync_and_every_partition_is_registered(
        spark, hive_metastore, zookeeper, database, tmp_path, capsys):
    """Three spark-submits released together from behind the held table lock: their syncs take turns under
    the table's catalog lock, each comparing every partition, so none loses another's (apache/hudi#7570)."""
    catalog = catalog_options(hive_metastore.uri, database)
    table = Table(tmp_path, zookeeper, spark, capsys, "MERGE_ON_READ", table_options=catalog)
    history = tmp_path / "history"
    old = {day: trips(day, range(6), ts=1) for day in ("2026-11-01", "2026-11-02", "2026-11-05")}
    for day, rows in old.items():
        write_source(history / f"dt={day}" / "part-0.parquet", rows)
    fresh = trips(DAY3, range(8), ts=3)
    table.land("new", fresh)
    backfills = [BackfillSpec(base_path=str(table.path), source_path=str(history), start=start, end=end,
                              run_id=f"bf-{start}", hoodie_conf=table.options).to_argv()
                 for start, end in (("2026-11-01", "2026-11-02"), ("2026-11-05", "2026-11-05"))]
    with table.held() as lock:
        jobs = [Job.start(table.args("new"), tmp_path / "ingest.log"),
                *(Job.start(argv, tmp_path / f"backfill-{n}.log") for n, argv in enumerate(backfills))]
        lock.line_up_writers(len(jobs), timeout_s=240)
    results = [job.finish() for job in jobs]
    assert [code for code, _ in results] == [0, 0, 0], results
    assert {r["catalog"] for _, r in results} == {f"{database}.trips"}, results
    for rows in (fresh, *old.values()):
        table.model.upsert(rows)
    expected_days = sorted({DAY1, DAY2, DAY3, *old})
    for name in ("trips_ro", "trips_rt"):
        assert partitions(spark, f"{database}.{name}") == expected_days
    assert by_name(spark, f"{database}.trips_rt") == table.read() == table.model.expected()


def test_a_clustering_keeps_and_a_restore_removes_what_the_catalog_serves(
        spark, hive_metastore, database, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    catalog = catalog_options(hive_metastore.uri, database)
    model = Model()
    for n, day in enumerate((DAY1, DAY1, DAY2)):  # small files to cluster
        rows = trips(day, range(n * 10, n * 10 + 10), ts=1)
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source, hoodie_conf=catalog), spark)[0] == 0
        model.upsert(rows)
    code, saved = run(capsys, SavepointSpec(base_path=str(table)).to_argv(), spark)
    assert code == 0, saved
    code, clustered = run(capsys, ClusterSpec(base_path=str(table), hoodie_conf={
        **catalog, "hoodie.clustering.plan.strategy.small.file.limit": str(64 * 1024 * 1024)}).to_argv(), spark)
    # a clustering changes no partition and no column: no sync, and the catalog reads the table as it is
    assert code == 0 and clustered["outcome"] == "completed" and clustered["catalog"] is None, clustered
    assert by_name(spark, f"{database}.trips") == read_hudi_rs(table) == model.expected()

    write_source(source / "late.parquet", trips(DAY3, range(5), ts=2))
    assert run(capsys, ingest_args(table, source, hoodie_conf=catalog), spark)[0] == 0
    assert partitions(spark, f"{database}.trips") == [DAY1, DAY2, DAY3]
    code, restored = run(capsys, RestoreSpec(base_path=str(table), savepoint=saved["instant"],
                                             hoodie_conf=catalog).to_argv(), spark)
    assert code == 0 and restored["catalog"] == f"{database}.trips", restored
    assert partitions(spark, f"{database}.trips") == [DAY1, DAY2]  # the restore removed DAY3's partition
    assert by_name(spark, f"{database}.trips") == read_hudi_rs(table) == model.expected()


def test_a_sync_tool_that_is_not_on_the_class_path_is_named_with_its_jar(spark, database, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(3), ts=1))
    glue = catalog_options("", database, **{"hoodie.meta.sync.client.tool.class":
                                            "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool"})
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=glue), spark)
    assert code == 0 and result["catalog"] is None, result
    (warning,) = result["warnings"]
    assert "AwsGlueCatalogSyncTool, which is not on the job's class path" in warning and "hudi-aws-bundle" in warning
    assert read_hudi_rs(table) == Model().upsert(trips(DAY1, range(3), ts=1)).expected()


def test_a_sync_without_a_metastore_address_is_refused_before_anything_is_written(spark, database, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(3), ts=1))
    nowhere = {k: v for k, v in catalog_options("", database).items() if not k.endswith("metastore.uris")}
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=nowhere), spark)
    assert code == 2 and "hoodie.datasource.hive_sync.metastore.uris is not set" in result["message"], result
    assert not table.exists()
