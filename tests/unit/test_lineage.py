"""Datasets named by OpenLineage's naming spec, and the facets a task's result becomes (the events of real
DAG runs: tests/airflow/test_local_airflow.py)."""

from __future__ import annotations

from hudi_ops.airflow.lineage import dataset_name, lineage
from hudi_ops.job_specs import JobFailure


def test_local_s3_and_hdfs_paths_are_named_as_openlineage_names_them(tmp_path):
    assert dataset_name(str(tmp_path / "trips")) == ("file", str(tmp_path / "trips"))
    assert dataset_name((tmp_path / "trips").as_uri()) == ("file", str(tmp_path / "trips"))
    assert dataset_name("s3a://lake/warehouse/trips") == ("s3://lake", "warehouse/trips")
    assert dataset_name("s3://lake/warehouse/trips") == ("s3://lake", "warehouse/trips")
    assert dataset_name("kafka://127.0.0.1:9092/trips") == ("kafka://127.0.0.1:9092", "trips")  # a topic
    assert dataset_name("hdfs://nn:8020/warehouse/trips") == ("hdfs://nn:8020", "/warehouse/trips")
    # one folder, one name, however it is spelled
    assert dataset_name("s3a://lake/warehouse/trips/") == ("s3://lake", "warehouse/trips")
    assert dataset_name(str(tmp_path / "trips") + "/") == dataset_name(f"file://{tmp_path}/./trips") == \
        dataset_name(f"file://{tmp_path}/tr%69ps") == ("file", str(tmp_path / "trips"))


def test_a_commit_becomes_the_tables_version_and_output_statistics(tmp_path):
    result = {"job": "ingest", "instant": "20261127101010101", "outcome": "committed", "operation": "upsert",
              "rows": 40, "bytes": 4096, "files": 2}
    got = lineage(job="ingest", table="s3a://lake/trips", sources=("s3a://lake/landing",), result=result,
                  with_facets=False)
    ((source,), (table,)) = got.inputs, got.outputs
    assert (source.namespace, source.name) == ("s3://lake", "landing")
    assert (table.namespace, table.name) == ("s3://lake", "trips")
    assert table.facets["version"].datasetVersion == "20261127101010101"
    stats = table.outputFacets["outputStatistics"]
    assert (stats.rowCount, stats.size, stats.fileCount) == (40, 4096, 2)
    hudi = got.run_facets["hudi"]
    assert (hudi.job, hudi.operation, hudi.outcome) == ("ingest", "upsert", "committed")


def test_a_service_reads_and_writes_its_table_and_a_conflict_names_the_instant_that_won(tmp_path):
    failure = JobFailure("compact", 3, "WriteConflictError", "write conflict: instant 20261127101010101 overlaps "
                                                             "instant 20261127090909090, which committed first")
    got = lineage(job="compact", table=str(tmp_path / "t"), sources=(), failure=failure)
    assert [(d.namespace, d.name) for d in (*got.inputs, *got.outputs)] == [("file", str(tmp_path / "t"))] * 2
    assert "schema" not in got.outputs[0].facets  # not a table yet: no schema, and no failure of the task's
    hudi = got.run_facets["hudi"]
    assert (hudi.outcome, hudi.exitCode, hudi.conflictingInstant) == ("failed", 3, "20261127090909090")
    skipped = lineage(job="clean", table=str(tmp_path / "t"), sources=(), skipped="nothing to clean")
    assert (skipped.run_facets["hudi"].outcome, skipped.run_facets["hudi"].reason) == ("skipped", "nothing to clean")
    assert skipped.inputs == [] and skipped.outputs == []  # it read no data and wrote nothing


def test_a_refused_batch_names_the_validator_and_its_query_in_the_lineage_of_the_failed_run(tmp_path):
    refusal = ("pre-commit validator org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator refused "
               "the commit: select count(*) from <TABLE_NAME> where fare < 0: Expected 0 row(s), Found 1")
    failure = JobFailure("ingest", 2, "ValidationFailedError", refusal)
    got = lineage(job="ingest", table=str(tmp_path / "t"), sources=(str(tmp_path / "landing"),), failure=failure)
    hudi = got.run_facets["hudi"]
    assert (hudi.outcome, hudi.exitCode, hudi.error, hudi.reason) == ("failed", 2, "ValidationFailedError", refusal)
    assert hudi.conflictingInstant is None and hudi.instant is None  # nothing was committed
