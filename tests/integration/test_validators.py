"""Hudi's SQL pre-commit validators from the tables config: a batch they refuse is never visible, and the
job's failure names the validator and its query (hudi-ops' subclasses carry them up; Hudi's runner says
only that one failed). Hudi's validators read the partitions a commit writes, before and after it, from
their base files: COPY_ON_WRITE tables (the tables config refuses them on MERGE_ON_READ)."""

from __future__ import annotations

from hudi_ops.airflow.dag_factory.tables_config import ValidatorsConfig
from hudi_ops.format.meta_client import MetaClient
from tests.integration.test_spark_jobs import DAY1, DAY2, ingest_args, run
from tests.tables import Model, read_hudi_rs, read_spark, trips, write_source

NO_NEGATIVE_FARES = "select count(*) from <TABLE_NAME> where fare < 0#0"
DAY1_UNCHANGED = f"select count(*), sum(fare) from <TABLE_NAME> where dt = '{DAY1}'"


def test_a_refused_batch_exits_2_naming_the_query_and_leaves_the_table_as_it_was(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    validators = ValidatorsConfig(single_result=[NO_NEGATIVE_FARES]).hoodie_conf()
    good = trips(DAY1, range(5), ts=1)
    write_source(source / "a.parquet", good)
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=validators), spark)
    assert code == 0 and result["outcome"] == "committed", result  # a passing batch commits
    model = Model().upsert(good)
    commits = MetaClient.open(table).timeline().completed

    write_source(source / "b.parquet", [*trips(DAY2, range(3), ts=2), {**trips(DAY2, [9], ts=2)[0], "fare": -4.0}])
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=validators), spark)
    assert code == 2 and result["error"] == "ValidationFailedError", result
    assert "SqlQuerySingleResultPreCommitValidator" in result["message"], result
    assert "select count(*) from <TABLE_NAME> where fare < 0" in result["message"], result
    assert "Expected 0 row(s), Found 1" in result["message"], result
    # nothing of the refused batch is visible, to either reader, and no commit was added
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
    assert MetaClient.open(table).timeline().completed == commits


def test_an_equality_validator_lets_other_days_through_and_refuses_a_change_to_its_day(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    validators = ValidatorsConfig(equality=[DAY1_UNCHANGED]).hoodie_conf()
    first = trips(DAY1, range(4), ts=1)
    write_source(source / "a.parquet", first)
    assert run(capsys, ingest_args(table, source), spark)[0] == 0  # the day, written before it was closed
    other_day = trips(DAY2, range(4), ts=1)
    write_source(source / "b.parquet", other_day)
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=validators), spark)
    assert code == 0 and result["outcome"] == "committed", result
    model = Model().upsert(first).upsert(other_day)

    write_source(source / "c.parquet", trips(DAY1, range(2), ts=5, fare=99.0))  # rewrites the guarded day
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=validators), spark)
    assert code == 2 and "SqlQueryEqualityPreCommitValidator" in result["message"], result
    assert DAY1_UNCHANGED in result["message"], result
    assert read_hudi_rs(table) == model.expected()
